#!/usr/bin/env python3
"""check.py — generates seeded random traces and configurations, replays each
through gpusim's BFC model (gpusim_side) and through the real bfc_allocator.cc
(replay, built by run.sh against stubs/, or by check-tf.sh against TensorFlow's
shipped library), and compares every key the real side prints: the final results
and, after every event, the block handed out and the statistics (event.N lines).
Usage: check.py GPUSIM_SIDE REPLAY VERSION RUNS SEED [--tf-wheel [--draw-alignment]]
VERSION is tsl2024 or xla2026: the --bfc-version given to gpusim. Prints one line
per disagreement, naming the first event that differs and its differing fields
(with the trace kept under $BFC_UPSTREAM_KEEP if set), and a summary line: "VERSION:
N runs, A agree (S of them spatially partitioned), B agree on an abort, D differ, H
hang, C check-fail". A run agrees when every key matches; it agrees on an abort when
the real allocator CHECK-fails at the event where gpusim says XLA aborts.

--tf-wheel: the real side is TensorFlow's shipped BFCAllocator, which has no spatial
partitioning and ignores the alignment: the configurations draw neither (under xla2026
spatial partitioning is switched off explicitly) and do not depend on VERSION (one
seed, the same runs against both versions); a third of the traces are of a fifth kind,
phases(), where garbage collection has regions to give back; garbage collection is on,
off or left to the framework (gpusim's preset default against TensorFlow's own
GPUBFCAllocator default under the tf preset, tsl::BFCAllocator::Options' under jax);
and the AllocatorStats fields gpusim keeps no counter for (tf.N lines) are checked
too. --draw-alignment draws a request alignment (1 B to 2 MiB) for every run as well.
The summary line is then "tf-wheel vs VERSION: N runs, M differ (...)", followed by
the runs per strategy, preset and garbage collection, the runs in which garbage
collection gave a region back, and what GetStats says of the largest free block."""
import os
import random
import subprocess
import sys

MiB = 1 << 20


def phases(rng, capacity):
    """Steps of a growing size unit, each freeing most of what it allocated: under
    growth the early regions fall empty and a later step's Extend runs into the limit,
    which is where garbage collection gives regions back."""
    events, next_id = [], 1
    unit, grow = max(512, capacity // rng.choice([128, 256, 512, 1024, 2048])), rng.choice([2, 4])
    for _ in range(rng.randint(3, 8)):
        unit *= grow
        step = []
        for _ in range(rng.randint(2, 40)):
            events.append("a %d %d" % (next_id, rng.randint(unit // 2, unit)))
            step.append(next_id)
            next_id += 1
        for i in step:
            if rng.random() < 0.85:
                events.append("f %d" % i)
    return "\n".join(events) + "\n"


def trace(rng, capacity, wheel=False):
    """A trace of allocs and frees sized against capacity; some stay live at the end."""
    kind = rng.choice(["tensors", "loguniform", "repeat", "small"] + (["phases"] * 2 if wheel else []))
    if kind == "phases":
        return phases(rng, capacity)
    n = rng.randint(20, 400)
    top = max(4096, capacity // rng.choice([4, 8, 16, 64]))
    menu = [rng.randint(1, top) for _ in range(6)]
    live, events, next_id = [], [], 1
    for _ in range(n):
        if live and rng.random() < (0.45 if kind != "small" else 0.5):
            k = rng.randrange(len(live))
            events.append("f %d" % live.pop(k))
            continue
        if rng.random() < 0.02 and live:  # end of a step: free most of what is live
            keep = [i for i in live if rng.random() < 0.1]
            for i in live:
                if i not in keep:
                    events.append("f %d" % i)
            live = keep
            continue
        if kind == "tensors":
            size = rng.choice(menu) - rng.randint(0, 511)
        elif kind == "loguniform":
            size = rng.randint(1, 1 << rng.randint(1, max(2, top.bit_length())))
        elif kind == "repeat":
            size = menu[0] if rng.random() < 0.7 else rng.choice(menu)
        else:
            size = rng.randint(1, 12000)
        size = max(0, min(size, capacity))
        if rng.random() < 0.01:
            size = 0
        events.append("a %d %d" % (next_id, size))
        live.append(next_id)
        next_id += 1
    return "\n".join(events) + "\n"


def config(rng, version, capacity, wheel, align=False):
    strategy = rng.choice(["greedy", "growth", "limit"])
    opts = ["bfc_version=" + version]
    preset = rng.choice(["tf", "jax"]) if strategy != "limit" else "tf"
    opts.append("bfc_preset=" + preset)
    if strategy != "limit":
        opts.append("mem_fraction=%.3f" % rng.uniform(0.05, 1.0))
    else:  # 0.3–2x of the device: a device smaller than the limit too
        opts.append("limit=%d" % max(256, int(capacity * rng.uniform(0.05, 2.0))))
    if wheel:  # left unset: the replayer takes TF's or XLA's own default
        gc = rng.choice(["on", "off", "default"])
        if gc != "default":
            opts.append("bfc_gc=" + gc)
    elif rng.random() < 0.4:
        opts.append("bfc_gc=" + rng.choice(["on", "off"]))
    if rng.random() < 0.3:
        opts.append("bfc_fragmentation_fraction=%.3f" % rng.choice([0.0, 0.01, 0.05, 0.2, 0.5]))
    if wheel:
        if version == "xla2026" and strategy != "growth":
            opts.append("bfc_spatial=off")
        if align:
            opts.append("bfc_alignment=%d" % (1 << rng.randint(0, 21)))
    elif version == "xla2026":
        if strategy != "growth" and rng.random() < 0.3:
            opts.append("bfc_spatial=" + rng.choice(["on", "off"]))
        if rng.random() < 0.2:
            opts.append("bfc_alignment=%d" % (1 << rng.randint(0, 21)))
    stop = 1 if rng.random() < 0.5 else 0
    return strategy, opts, stop


def keys(text):
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


def fields(v):
    """An event.N or tf.N value: its comma-separated name:value fields."""
    return dict(f.split(":", 1) for f in v.split(",") if ":" in f) if v else {}


def first_event(gk, rk, events):
    """The first event.N whose line differs, as text naming the event and each field."""
    bad = sorted(int(k.split(".", 1)[1]) for k in set(gk) | set(rk)
                 if k.startswith("event.") and gk.get(k) != rk.get(k))
    if not bad:
        return None
    n = bad[0]
    g, r = fields(gk.get("event.%d" % n)), fields(rk.get("event.%d" % n))
    diff = ["%s gpusim %s real %s" % (f, g.get(f, "-"), r.get(f, "-")) for f in list(r) + [f for f in g if f not in r]
            if g.get(f) != r.get(f)]
    return "first at event %d (%s): %s (%d events differ)" % (n, events[n - 1] if n <= len(events) else "?",
                                                             ", ".join(diff), len(bad))


def tfstat_rule(rk):
    """The tf.N lines of the wheel build: the AllocatorStats fields gpusim keeps no
    counter for. TF's BFC leaves bytes_reserved and peak_bytes_reserved at 0 and
    bytes_reservable_limit unset (docs/allocators.md section 1.8); its
    largest_free_block_bytes is 0 (not filled) or the largest free chunk of the memory
    map. Returns (problems, how largest_free_block_bytes was filled: a set)."""
    bad, filled = [], set()
    for k in sorted((k for k in rk if k.startswith("tf.")), key=lambda k: int(k.split(".", 1)[1])):
        t, e = fields(rk[k]), fields(rk.get("event." + k.split(".", 1)[1]))
        for f, want in (("bytes_reserved", "0"), ("peak_bytes_reserved", "0"), ("bytes_reservable_limit", "none")):
            if t.get(f) != want:
                bad.append("%s: %s is %s, not %s" % (k, f, t.get(f), want))
        lf = t.get("largest_free_block_bytes")
        if lf == "0":
            if e.get("largest_free_block_bytes") != "0":
                filled.add("0 (not filled)")
        elif lf == e.get("largest_free_block_bytes"):
            filled.add("the largest free chunk")
        else:
            bad.append("%s: largest_free_block_bytes %s, the memory map's largest free chunk %s"
                       % (k, lf, e.get("largest_free_block_bytes")))
    return bad, filled


def main():
    wheel, align = "--tf-wheel" in sys.argv[6:], "--draw-alignment" in sys.argv[6:]
    side, replay, version, runs, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(seed)
    keep = os.environ.get("BFC_UPSTREAM_KEEP")
    agree = differ = hang = check_fail = aborts = spatial = 0
    grid, lfb, gave_back = {}, set(), {}
    for run in range(runs):
        capacity = rng.choice([16, 32, 64, 128, 256, 512]) * MiB
        text = trace(rng, capacity, wheel)
        strategy, opts, stop = config(rng, version, capacity, wheel, align)
        g = subprocess.run([side, strategy, str(capacity), str(stop)] + opts, input=text, capture_output=True,
                           text=True)
        if g.returncode != 0:
            print("run %d: gpusim_side failed: %s" % (run, g.stderr.strip()))
            differ += 1
            continue
        gk = keys(g.stdout)
        s = {k[len("setting."):]: v for k, v in gk.items() if k.startswith("setting.")}
        frag = [o.split("=", 1)[1] for o in opts if o.startswith("bfc_fragmentation_fraction=")]
        gc = "1" if s["bfc_gc"] == "on" else "0"
        if wheel and not any(o.startswith("bfc_gc=") for o in opts):
            gc = "xla" if s["bfc_preset"] == "jax" else "tf"  # the framework's own default
        args = [replay, s["limit_bytes"], str(capacity), "1" if s["allow_growth"] == "true" else "0",
                gc, frag[0] if frag else "0",
                "1" if s.get("bfc_spatial") == "on" else "0", s.get("bfc_alignment", "64"), str(stop)]
        try:
            r = subprocess.run(args, input=text, capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            hang += 1
            print("run %d (seed %d): the real allocator did not finish (%s %s)" % (run, seed, strategy, " ".join(opts)))
            continue
        if r.returncode == 70:
            # gpusim reports the one case XLA aborts on as an OOM that says so; the
            # CHECK must hit at that very event
            at = r.stderr.split("event ", 1)[1].split(",", 1)[0] if "event " in r.stderr else "?"
            if gk.get("upstream_abort.event") == at:
                aborts += 1
                continue
            check_fail += 1
            print("run %d (seed %d): the real allocator CHECK-failed: %s" % (run, seed, r.stderr.strip()))
            continue
        rk = keys(r.stdout)
        cell = (strategy, s["bfc_preset"], s["bfc_gc"] if gc in ("0", "1") else "default(%s)" % s["bfc_gc"])
        grid[cell] = grid.get(cell, 0) + 1
        if rk.get("result.num_device_frees", "0") != "0":  # garbage collection gave a region back
            gave_back[cell[2]] = gave_back.get(cell[2], 0) + 1
        bad = [k for k in rk if not k.startswith(("event.", "tf.")) and gk.get(k) != rk[k]]
        ev = first_event(gk, rk, text.splitlines()) if rk else None
        tf_bad = []
        if wheel:
            tf_bad, filled = tfstat_rule(rk)
            lfb |= filled
        if r.returncode != 0 or not rk or bad or ev or tf_bad:
            differ += 1
            what = ["%s gpusim %s real %s" % (k, gk.get(k), rk[k]) for k in bad]
            what += [ev] if ev else []
            what += tf_bad[:3]
            print("run %d (seed %d): %s %s stop=%d: %s" % (run, seed, strategy, " ".join(opts), stop,
                  "; ".join(what) or r.stderr.strip()))
            if keep:
                with open(os.path.join(keep, "run%d.txt" % run), "w") as f:
                    f.write(text)
        else:
            agree += 1
            if s.get("bfc_spatial") == "on":
                spatial += 1
    if wheel:
        print("tf-wheel vs %s: %d runs, %d differ (%d agree, %d differ in a key, %d hang, %d check-fail)"
              % (version, runs, differ + hang + check_fail, agree, differ, hang, check_fail))
        print("  runs by strategy/preset/gc: " + ", ".join("%s/%s/%s %d" % (c + (grid[c],)) for c in sorted(grid)))
        print("  runs in which garbage collection gave a region back, by gc: "
              + (", ".join("%s %d" % (g, gave_back[g]) for g in sorted(gave_back)) or "none"))
        print("  TF's GetStats largest_free_block_bytes: " + (" or ".join(sorted(lfb)) or "never read"))
    else:
        print("%s: %d runs, %d agree (%d of them spatially partitioned), %d agree on an abort, %d differ, "
              "%d hang, %d check-fail" % (version, runs, agree, spatial, aborts, differ, hang, check_fail))
    return 0 if differ == 0 and check_fail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
