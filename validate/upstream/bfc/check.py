#!/usr/bin/env python3
"""check.py — generates seeded random traces and configurations, replays each
through gpusim's BFC model (gpusim_side) and through the real bfc_allocator.cc
(replay, built by run.sh against stubs/), and compares every key the real side
prints. Usage: check.py GPUSIM_SIDE REPLAY VERSION RUNS SEED
VERSION is tsl2024 or xla2026: the --bfc-version given to gpusim. Prints one line
per disagreement (with the trace kept under $BFC_UPSTREAM_KEEP if set) and a
summary line: "VERSION: N runs, A agree (S of them spatially partitioned), B agree
on an abort, D differ, H hang, C check-fail". A run agrees when every key matches; it agrees on an abort when the
real allocator CHECK-fails at the event where gpusim says XLA aborts."""
import os
import random
import subprocess
import sys

MiB = 1 << 20


def trace(rng, capacity):
    """A trace of allocs and frees sized against capacity; some stay live at the end."""
    kind = rng.choice(["tensors", "loguniform", "repeat", "small"])
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


def config(rng, version, capacity):
    strategy = rng.choice(["greedy", "growth", "limit"])
    opts = ["bfc_version=" + version]
    preset = rng.choice(["tf", "jax"]) if strategy != "limit" else "tf"
    opts.append("bfc_preset=" + preset)
    if strategy != "limit":
        opts.append("mem_fraction=%.3f" % rng.uniform(0.05, 1.0))
    else:  # 0.3–2x of the device: a device smaller than the limit too
        opts.append("limit=%d" % max(256, int(capacity * rng.uniform(0.05, 2.0))))
    if rng.random() < 0.4:
        opts.append("bfc_gc=" + rng.choice(["on", "off"]))
    if rng.random() < 0.3:
        opts.append("bfc_fragmentation_fraction=%.3f" % rng.choice([0.0, 0.01, 0.05, 0.2, 0.5]))
    if version == "xla2026":
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


def main():
    side, replay, version, runs, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(seed)
    keep = os.environ.get("BFC_UPSTREAM_KEEP")
    agree = differ = hang = check_fail = aborts = spatial = 0
    for run in range(runs):
        capacity = rng.choice([16, 32, 64, 128, 256, 512]) * MiB
        text = trace(rng, capacity)
        strategy, opts, stop = config(rng, version, capacity)
        g = subprocess.run([side, strategy, str(capacity), str(stop)] + opts, input=text, capture_output=True,
                           text=True)
        if g.returncode != 0:
            print("run %d: gpusim_side failed: %s" % (run, g.stderr.strip()))
            differ += 1
            continue
        gk = keys(g.stdout)
        s = {k[len("setting."):]: v for k, v in gk.items() if k.startswith("setting.")}
        frag = [o.split("=", 1)[1] for o in opts if o.startswith("bfc_fragmentation_fraction=")]
        args = [replay, s["limit_bytes"], str(capacity), "1" if s["allow_growth"] == "true" else "0",
                "1" if s["bfc_gc"] == "on" else "0", frag[0] if frag else "0",
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
        bad = [k for k in rk if gk.get(k) != rk[k]]
        if r.returncode != 0 or not rk or bad:
            differ += 1
            print("run %d (seed %d): %s %s stop=%d: %s" % (run, seed, strategy, " ".join(opts), stop,
                  ", ".join("%s gpusim %s real %s" % (k, gk.get(k), rk[k]) for k in bad) or r.stderr.strip()))
            if keep:
                with open(os.path.join(keep, "run%d.txt" % run), "w") as f:
                    f.write(text)
        else:
            agree += 1
            if s.get("bfc_spatial") == "on":
                spatial += 1
    print("%s: %d runs, %d agree (%d of them spatially partitioned), %d agree on an abort, %d differ, "
          "%d hang, %d check-fail" % (version, runs, agree, spatial, aborts, differ, hang, check_fail))
    return 0 if differ == 0 and check_fail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
