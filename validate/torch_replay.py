#!/usr/bin/env python3
"""torch_replay.py - replay a gpusim v1 trace through the real PyTorch CUDA caching
allocator and write a measured JSON for `gpusim validate-report`.

Each alloc is torch.empty(size, dtype=torch.uint8, device='cuda') on the trace's
stream (stream 0 = the default stream, others = one torch.cuda.Stream each); each
free drops the last reference (del). A free with ready_t > t is PyTorch's
record_stream case: the tensor is record_stream()'d on a side stream whose work
(torch.cuda._sleep, --gate-ms long) is still running, so the block stays active
and unusable; at ready_t the harness synchronizes that side stream, and the next
malloc reclaims the block. empty_cache is torch.cuda.empty_cache(). The allocator
settings (PYTORCH_CUDA_ALLOC_CONF, set_per_process_memory_fraction) are applied
before CUDA is initialised. An OOM (torch.OutOfMemoryError) is recorded as data
and ends the replay, as it ends a real program.

--check-only reads and checks the trace and prints the plan without importing
torch (for machines without a GPU).
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
    p.add_argument("--alloc-conf", default="", help="PYTORCH_CUDA_ALLOC_CONF for this run (default: none)")
    p.add_argument("--memory-fraction", default=None,
                   help="torch.cuda.set_per_process_memory_fraction(F), F as a decimal string")
    p.add_argument("--every", type=int, default=1, help="one curve row every N events (default 1)")
    p.add_argument("--gate-ms", type=float, default=50.0,
                   help="how long a side stream stays busy for a deferred free (default 50 ms)")
    p.add_argument("--history", default=None,
                   help="record _record_memory_history and dump the snapshot (pickle) here")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--check-only", action="store_true", help="check the trace and print the plan; no torch")
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args(argv)
    if a.every < 1:
        p.error("--every must be >= 1")
    if a.memory_fraction is not None:
        f = float(a.memory_fraction)
        if not 0.0 <= f <= 1.0:
            p.error("--memory-fraction must be in [0, 1]")
    return a


def predict_options(a):
    opts = {}
    if a.alloc_conf:
        opts["alloc_conf"] = a.alloc_conf
    if a.memory_fraction is not None:
        opts["memory_fraction"] = a.memory_fraction
    return opts


def main(argv=None):
    started = vcommon.start("torch_replay.py", parse_args, argv)
    if started is None:
        return 3
    a, header, events, s = started
    if a.check_only:
        vcommon.print_plan("torch_replay.py", a.trace, s, True,
                           "PYTORCH_CUDA_ALLOC_CONF=%r memory_fraction=%s" % (a.alloc_conf, a.memory_fraction),
                           "torch", predict_options(a))
        return 0

    # Settings must be in place before torch initialises CUDA.
    os.environ.pop("PYTORCH_ALLOC_CONF", None)  # newest PyTorch reads it before PYTORCH_CUDA_ALLOC_CONF
    if a.alloc_conf:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = a.alloc_conf
    else:
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    os.environ.pop("PYTORCH_NO_CUDA_MEMORY_CACHING", None)
    import torch  # noqa: E402

    dev = torch.device("cuda", a.device)
    torch.cuda.set_device(dev)
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info(dev)
    context_bare = total - free0
    if a.memory_fraction is not None:
        torch.cuda.set_per_process_memory_fraction(float(a.memory_fraction), dev)

    doc = vtrace.measured_skeleton("torch_replay.py", "torch", a.trace, header, events, "torch", predict_options(a))
    notes = doc["notes"]

    # Streams, side streams for deferred frees, and the sleep kernel: created (and
    # its module loaded) before the context is measured, so none of it lands in the replay.
    streams = {0: torch.cuda.current_stream(dev)}
    for sid in s["streams"]:
        if sid not in streams:
            streams[sid] = torch.cuda.Stream(dev)
    side = [torch.cuda.Stream(dev) for _ in range(32)]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(side[0])
    torch.cuda._sleep(1000000)
    with torch.cuda.stream(side[0]):
        torch.cuda._sleep(1000000)
    end.record(side[0])
    torch.cuda.synchronize()
    ms = max(start.elapsed_time(end), 1e-3)
    cycles_per_ms = 1000000 / ms
    gate_cycles = int(cycles_per_ms * a.gate_ms)
    if torch.cuda.memory_reserved(dev) != 0:
        notes.append("PyTorch held %d B reserved before the replay (warm-up)" % torch.cuda.memory_reserved(dev))
    torch.cuda.reset_peak_memory_stats(dev)
    free1, _ = torch.cuda.mem_get_info(dev)
    context = total - free1
    props = torch.cuda.get_device_properties(dev)
    doc["device"] = {
        "name": props.name, "total_bytes": total, "total_global_mem": props.total_memory,
        "context_bytes": context, "context_bare_bytes": context_bare,
        "driver_version": None, "runtime_version": torch.version.cuda,
        "compute_capability": "%d.%d" % (props.major, props.minor),
    }
    doc["settings"] = {"PYTORCH_CUDA_ALLOC_CONF": a.alloc_conf, "memory_fraction": a.memory_fraction,
                       "every": a.every, "gate_ms": a.gate_ms, "torch": torch.__version__,
                       "allocator_backend": torch.cuda.get_allocator_backend()}
    doc["how"] = {
        "context_bytes": "cudaMemGetInfo total - free after CUDA init, the streams and the sleep kernel's "
                         "module load, before the first allocation (context_bare_bytes: right after init)",
        "peak_allocated_bytes": "memory_stats allocated_bytes.all.peak",
        "peak_reserved_bytes": "memory_stats reserved_bytes.all.peak",
        "peak_device_bytes": "max over readings of cudaMemGetInfo total - free",
        "deferred frees": "record_stream on a side stream busy with torch.cuda._sleep; synchronized at ready_t",
    }
    if a.history:
        try:
            torch.cuda.memory._record_memory_history(max_entries=1000000, context=None, stacks="python")
        except TypeError:
            torch.cuda.memory._record_memory_history(max_entries=1000000)

    live = {}
    pending = {}   # free event index -> side stream
    side_next = 0
    early = 0
    rows = doc["curve"]["rows"]
    peak_dev = context
    oom = None
    t0 = time.time()

    def reading(n, t):
        nonlocal peak_dev
        f, _ = torch.cuda.mem_get_info(dev)
        used = total - f
        peak_dev = max(peak_dev, used)
        rows.append([n, t, used, torch.cuda.memory_reserved(dev), torch.cuda.memory_allocated(dev)])

    rising = False
    for n, kind, ev in vtrace.schedule(events):
        op = ev["op"] if kind == "event" else "ready"
        if op in ("free", "ready", "empty_cache") and rising and a.every > 1:
            f, _ = torch.cuda.mem_get_info(dev)
            peak_dev = max(peak_dev, total - f)
        if op == "alloc":
            try:
                with torch.cuda.stream(streams[ev["stream"]]):
                    live[ev["id"]] = torch.empty(ev["size"], dtype=torch.uint8, device=dev)
            except torch.cuda.OutOfMemoryError as e:
                f, _ = torch.cuda.mem_get_info(dev)
                oom = {"event": ev["index"], "t": ev["t"], "id": ev["id"], "size": ev["size"],
                       "device_free_bytes": f, "cause": "allocator", "message": str(e)[:1000]}
                reading(n, ev["t"])
                break
            rising = True
        elif op == "free":
            x = live.pop(ev["id"])
            if ev["ready_t"] > ev["t"]:
                st = side[side_next % len(side)]
                side_next += 1
                with torch.cuda.stream(st):
                    torch.cuda._sleep(gate_cycles)
                x.record_stream(st)
                pending[ev["index"]] = st
            del x
            rising = False
        elif op == "ready":
            st = pending.pop(ev["index"])
            if st.query():
                early += 1
            st.synchronize()
            rising = False
        elif op == "empty_cache":
            torch.cuda.empty_cache()
            rising = False
        if n % a.every == 0:
            reading(n, ev["t"])
    elapsed = time.time() - t0
    f, _ = torch.cuda.mem_get_info(dev)
    final_used = total - f
    stats = torch.cuda.memory_stats(dev)
    doc["stats"] = vcommon.counters(stats)
    doc["measured"] = {
        "completed": oom is None,
        "events": rows[-1][0] if rows else 0,
        "peak_allocated_bytes": stats.get("allocated_bytes.all.peak", 0),
        "peak_reserved_bytes": stats.get("reserved_bytes.all.peak", 0),
        "peak_device_bytes": max(peak_dev, final_used),
        "peak_requested_bytes": stats.get("requested_bytes.all.peak", 0),
        "final_reserved_bytes": stats.get("reserved_bytes.all.current", 0),
        "final_device_bytes": final_used,
        "num_device_allocs": stats.get("num_device_alloc", 0),
        "num_device_frees": stats.get("num_device_free", 0),
        "first_oom": oom,
    }
    doc["extra"] = {"replay_seconds": round(elapsed, 3), "deferred_gates_expired_early": early,
                    "gate_cycles": gate_cycles}
    if early:
        notes.append("%d deferred frees completed before their ready_t (the side stream's sleep ended early); "
                     "raise --gate-ms" % early)
    if a.history:
        try:
            torch.cuda.memory._dump_snapshot(a.history)
            doc["extra"]["snapshot"] = a.history
        except Exception as e:  # a snapshot is a bonus: never lose the measurement for it
            notes.append("snapshot failed: %s" % e)
    vtrace.write_json(a.output, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
