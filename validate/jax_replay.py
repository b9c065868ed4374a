#!/usr/bin/env python3
"""jax_replay.py - replay a gpusim v1 trace through XLA's BFC allocator via JAX and
write a measured JSON for `gpusim validate-report`.

Each alloc is jax.device_put of a host uint8 array of exactly `size` bytes (a view
of one reusable host buffer), waited for with block_until_ready; each free is
.delete() (at ready_t for deferred frees: XLA's BFC frees when the buffer's
events are done, which is the model's rule). empty_cache has no JAX equivalent and
is skipped (counted in the notes); streams have none either (one compute stream).
The allocator is configured through XLA_PYTHON_CLIENT_PREALLOCATE,
XLA_PYTHON_CLIENT_MEM_FRACTION and XLA_PYTHON_CLIENT_ALLOCATOR=bfc before JAX is
imported. What JAX itself holds is read from device.memory_stats() before the
first allocation and written under extra.jax_baseline; nothing is subtracted.
A failed allocation (RESOURCE_EXHAUSTED; XLA's BFC first waits up to 10 s for
other threads to free memory) is recorded as data and ends the replay.

--check-only reads and checks the trace and prints the plan without importing jax.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vcommon  # noqa: E402
import vtrace  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--preallocate", choices=["true", "false"], default="false",
                   help="XLA_PYTHON_CLIENT_PREALLOCATE (true: gpusim 'greedy', false: 'growth')")
    p.add_argument("--mem-fraction", required=False, default="0.75",
                   help="XLA_PYTHON_CLIENT_MEM_FRACTION as a decimal string (default 0.75)")
    p.add_argument("--every", type=int, default=1)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--check-only", action="store_true")
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args(argv)
    f = float(a.mem_fraction)
    if not 0.0 < f <= 1.0:
        p.error("--mem-fraction must be in (0, 1]")
    if a.every < 1:
        p.error("--every must be >= 1")
    return a


def predict(a):
    return ("greedy" if a.preallocate == "true" else "growth",
            {"bfc_preset": "jax", "mem_fraction": a.mem_fraction})


def is_oom(e):
    m = str(e)
    return "RESOURCE_EXHAUSTED" in m or "Out of memory" in m or "out of memory" in m


def main(argv=None):
    started = vcommon.start("jax_replay.py", parse_args, argv)
    if started is None:
        return 3
    a, header, events, s = started
    strategy, opts = predict(a)
    if a.check_only:
        vcommon.print_plan("jax_replay.py", a.trace, s, False,
                           "XLA_PYTHON_CLIENT_PREALLOCATE=%s XLA_PYTHON_CLIENT_MEM_FRACTION=%s"
                           % (a.preallocate, a.mem_fraction), strategy, opts)
        return 0

    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = a.preallocate
    os.environ.pop("XLA_CLIENT_MEM_FRACTION", None)  # setting both names is an error
    os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = a.mem_fraction
    os.environ["XLA_PYTHON_CLIENT_ALLOCATOR"] = "bfc"
    import numpy as np  # noqa: E402
    import jax  # noqa: E402

    dev = jax.devices("gpu")[a.device]
    doc = vtrace.measured_skeleton("jax_replay.py", "jax-bfc", a.trace, header, events, strategy, opts)
    notes = doc["notes"]
    base = dict(dev.memory_stats() or {})
    # cudaMemGetInfo through CuPy if present (same process, same primary context)
    meminfo = None
    try:
        import cupy  # noqa: E402
        meminfo = cupy.cuda.runtime.memGetInfo
    except Exception as e:  # the BFC's own counters are the measurement; device totals are a bonus
        notes.append("no cudaMemGetInfo readings (CuPy unavailable: %s)" % e)
    total = base.get("bytes_limit", 0)
    free0 = None
    if meminfo:
        free0, total = meminfo()
    used0 = (total - free0) if free0 is not None else 0
    pool0 = base.get("pool_bytes", 0) or 0
    doc["device"] = {"name": dev.device_kind, "total_bytes": total,
                     "context_bytes": max(used0 - pool0, 0), "used_before_replay_bytes": used0,
                     "baseline_pool_bytes": pool0, "runtime_version": None, "driver_version": None}
    if pool0:
        notes.append("the BFC pool already held %d B before the first replayed allocation (preallocation at "
                     "start-up); context_bytes = used_before_replay_bytes - that pool, stated here, not hidden"
                     % pool0)
    doc["settings"] = {"XLA_PYTHON_CLIENT_PREALLOCATE": a.preallocate,
                       "XLA_PYTHON_CLIENT_MEM_FRACTION": a.mem_fraction,
                       "XLA_PYTHON_CLIENT_ALLOCATOR": "bfc", "jax": jax.__version__, "every": a.every}
    doc["extra"]["jax_baseline"] = base
    if base.get("bytes_in_use", 0) or base.get("num_allocs", 0):
        notes.append("JAX itself held bytes_in_use=%d (num_allocs=%d, pool_bytes=%s) before the first replayed "
                     "allocation; included in the measured numbers, nothing subtracted"
                     % (base.get("bytes_in_use", 0), base.get("num_allocs", 0), base.get("pool_bytes")))
    doc["how"] = {"peak_allocated_bytes": "memory_stats peak_bytes_in_use",
                  "peak_reserved_bytes": "memory_stats peak_pool_bytes",
                  "final_reserved_bytes": "memory_stats pool_bytes",
                  "peak_device_bytes": "max over readings of cudaMemGetInfo total - free (CuPy), if available"}

    host = np.empty(max(s["max_size"], 1), dtype=np.uint8)
    live = {}
    rows = doc["curve"]["rows"]
    oom = None
    skipped = 0
    peak_dev = doc["device"]["context_bytes"]
    t0 = time.time()

    def reading(n, t):
        nonlocal peak_dev
        st = dev.memory_stats() or {}
        used = 0
        if meminfo:
            f, _ = meminfo()
            used = total - f
            peak_dev = max(peak_dev, used)
        rows.append([n, t, used, st.get("pool_bytes", 0), st.get("bytes_in_use", 0)])

    for n, kind, ev in vtrace.schedule(events):
        op = ev["op"] if kind == "event" else "ready"
        if op == "alloc":
            try:
                x = jax.device_put(host[:ev["size"]], dev)
                x.block_until_ready()
                live[ev["id"]] = x
            except Exception as e:
                if not is_oom(e):
                    raise
                oom = {"event": ev["index"], "t": ev["t"], "id": ev["id"], "size": ev["size"],
                       "cause": "allocator", "message": str(e)[:1000]}
                if meminfo:
                    oom["device_free_bytes"] = meminfo()[0]
                reading(n, ev["t"])
                break
        elif op == "free":
            if ev["ready_t"] == ev["t"]:
                live.pop(ev["id"]).delete()
        elif op == "ready":
            live.pop(ev["id"]).delete()
        elif op == "empty_cache":
            skipped += 1
        if n % a.every == 0:
            reading(n, ev["t"])
    elapsed = time.time() - t0
    st = dict(dev.memory_stats() or {})
    doc["stats"] = vcommon.counters(st)
    final_used = (total - meminfo()[0]) if meminfo else 0
    doc["measured"] = {
        "completed": oom is None,
        "events": rows[-1][0] if rows else 0,
        "peak_allocated_bytes": st.get("peak_bytes_in_use", 0),
        "final_reserved_bytes": st.get("pool_bytes", 0),
        "first_oom": oom,
    }
    if "peak_pool_bytes" in st:
        doc["measured"]["peak_reserved_bytes"] = st["peak_pool_bytes"]
    if meminfo:
        doc["measured"]["peak_device_bytes"] = max(peak_dev, final_used)
        doc["measured"]["final_device_bytes"] = final_used
    if skipped:
        notes.append("%d empty_cache events skipped (JAX has no equivalent)" % skipped)
    doc["extra"]["replay_seconds"] = round(elapsed, 3)
    vtrace.write_json(a.output, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
