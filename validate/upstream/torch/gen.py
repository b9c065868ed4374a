#!/usr/bin/env python3
"""gen.py - writes the randomized traces of the upstream differential check
(validate/upstream/README.md): OUTDIR COUNT [SEED]. Each trace mixes request
sizes around the allocator's thresholds (512 B, 1 MiB, 10 MiB, the max_split_size
values the check uses, powers of two and the roundup division points), several
streams, deferred (record_stream) frees, frees of blocks on other streams and
empty_cache calls, with a live set that rises and falls. A trace's deferred frees
name the stream their event is recorded on (ready_stream) in one of three shapes,
by the trace's index: one shared side stream (7, no allocation's), the stream that
used the block (a trace stream other than the block's own, or 1 or 2 when the trace
has one), or none (each waits for its own ready_t; the driver records each on a
stream of its own). The shapes come from a second generator, so the traces are
otherwise those of earlier versions but for this: in the last shape a deferred free
made while another is still pending becomes a plain free: two frees of different streams that
complete together (at one poll, an empty_cache, or the synchronize of the
out-of-memory ladder) complete in the order of PyTorch's hash map of streams, which
only the inactive_split counters can tell and no model follows. Deterministic for a
seed; prints the seed so that a failing run can be regenerated."""
import json
import os
import random
import sys

KiB = 1 << 10
MiB = 1 << 20


def size_of(rng, scale):
    r = rng.random()
    if r < 0.25:
        return rng.randint(1, 1 * MiB)
    if r < 0.35:
        return rng.choice([512, 511, 513, 1 * MiB, 1 * MiB - 512, 1 * MiB + 1, 2 * MiB, 10 * MiB - 1,
                           10 * MiB, 10 * MiB + 1, 20 * MiB, 32 * MiB, 32 * MiB + 4096, 128 * MiB,
                           128 * MiB + 1, 256 * MiB, 512 * MiB + 7, 1100 * MiB])
    if r < 0.65:
        return rng.randint(1 * MiB, 12 * MiB)
    if r < 0.9:
        return rng.randint(12 * MiB, int(160 * MiB * scale))
    return rng.randint(160 * MiB, int(900 * MiB * scale))


SHAPES = ("side", "usage", "none")
SIDE_STREAM = 7


def trace(rng, idx, seed):
    shape = SHAPES[idx % len(SHAPES)]
    wrng = random.Random(seed * 1000003 + idx)
    n = rng.randint(150, 450)
    streams = rng.choice([1, 1, 2, 3])
    deferred = rng.choice([0.0, 0.0, 0.1, 0.3])
    empty = rng.choice([0.0, 0.005, 0.02])
    scale = rng.choice([0.25, 0.5, 1.0, 1.5])
    target = rng.choice([1, 2, 3, 6]) * (1 << 30)
    t = 0
    next_id = 1
    live = {}
    stream_of = {}
    live_bytes = 0
    ev = []
    for _ in range(n):
        t += rng.randint(1, 20)
        r = rng.random()
        if r < empty:
            ev.append({"op": "empty_cache", "t": t})
            continue
        want_free = live and (live_bytes > target or rng.random() < 0.45)
        if want_free:
            i = rng.choice(list(live)) if rng.random() < 0.7 else min(live)
            size = live.pop(i)
            live_bytes -= size
            e = {"op": "free", "id": i, "t": t}
            if rng.random() < deferred:
                e["ready_t"] = t + rng.randint(1, 400)
                if shape == "side":
                    e["ready_stream"] = SIDE_STREAM
                elif shape == "usage":
                    own = stream_of[i]
                    others = [s for s in range(streams) if s != own] or [1, 2]
                    e["ready_stream"] = wrng.choice(others)
            stream_of.pop(i)
            ev.append(e)
        else:
            size = size_of(rng, scale)
            s = rng.randrange(streams)
            ev.append({"op": "alloc", "id": next_id, "size": size, "t": t, "stream": s})
            live[next_id] = size
            stream_of[next_id] = s
            live_bytes += size
            next_id += 1
        if rng.random() < 0.01:
            ev.append({"op": "mark", "name": "step", "t": t})
    if shape == "none":
        one_at_a_time(ev)
    return {"format": "gpusim-trace", "version": 1, "name": "upstream-%03d" % idx, "time_unit": "ns",
            "events": ev}


def one_at_a_time(ev):
    """The "none" shape: at most one deferred free pending at a time (until an
    allocation after its ready_t polls it, or an empty_cache)."""
    pending = None
    for e in ev:
        if e["op"] == "alloc" and pending is not None and pending["ready_t"] <= e["t"]:
            pending = None
        elif e["op"] == "empty_cache":
            pending = None
        elif e["op"] == "free" and "ready_t" in e:
            if pending is None:
                pending = e
            else:
                del e["ready_t"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, count = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    print("gen.py: seed %d" % seed, file=sys.stderr)
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    for i in range(count):
        with open(os.path.join(out, "u%03d.json" % i), "w") as f:
            json.dump(trace(rng, i, seed), f, separators=(",", ":"))


if __name__ == "__main__":
    main()
