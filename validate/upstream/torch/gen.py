#!/usr/bin/env python3
"""gen.py - writes the randomized traces of the upstream differential check
(validate/upstream/README.md): OUTDIR COUNT [SEED [POOL_COUNT]] (POOL_COUNT
pool traces, default COUNT). Each trace mixes request
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
only the inactive_split counters can tell and no model follows. 
The pool traces (p*.json, after the others, from a generator of their own so that
the u*.json traces stay as they were) add private pools (trace v1 pool events):
CUDA graph captures on a side stream (pool_begin with a stream: the allocations of
that stream go to the pool while the capture lasts), several captures sharing one
pool or each its own, two captures at once on two streams, use_mem_pool scopes (every
stream) with the MemPool options use_on_oom and no_split (in the mixed kind only), frees inside and outside
the scopes, deferred frees recorded on another stream during a capture, graph
replays, graph releases (pool_release) followed by empty_cache, and empty_cache
between captures (never while a pool is routed: PyTorch asserts there is no capture
underway when it synchronizes). Four kinds by the trace's index: shared, separate,
mempool, mixed. Deterministic for a seed; prints the seed so that a failing run can
be regenerated."""
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


POOL_KINDS = ("shared", "separate", "mempool", "mixed")


def pool_trace(rng, idx):
    """A trace with private pools (the module's docstring)."""
    kind = POOL_KINDS[idx % len(POOL_KINDS)]
    n = rng.randint(200, 420)
    streams = rng.choice([2, 3, 3])
    deferred = rng.choice([0.0, 0.15, 0.3])
    # every deferred free of the trace is recorded on one stream, the default stream
    # or a side stream (SIDE_STREAM), never a capture's: frees recorded on different
    # streams that complete at one poll complete in PyTorch's hash map order of
    # streams, which no model follows (README.md), and from 2.13 PyTorch may record a
    # free's event on a capturing stream, an event CUDA then refuses to query
    ready_stream = rng.choice([0, SIDE_STREAM])
    empty = rng.choice([0.0, 0.01])
    scale = rng.choice([0.25, 0.5, 1.0])
    target = rng.choice([1, 2, 4]) * (1 << 30)
    t = 0
    ev = []
    live, stream_of = {}, {}
    live_bytes = 0
    next_id = 1
    pools = {}      # id -> uses left
    active = {}     # routed pool id -> its capture stream, or None for every stream
    graphs = []     # one entry per use not yet released: its pool id
    next_pool = 1
    shared = None
    # a deferred free made while a scope is open is parked until PyTorch next polls
    # with no capture on the stream; 2.9 on unpark their events in the order of a hash
    # map keyed by the block's address, which no model follows: one at a time
    parked = False
    on_oom = set()

    def new_pool():
        nonlocal next_pool
        p = next_pool
        next_pool += 1
        return p

    def begin(pool, stream, options):
        e = {"op": "pool_begin", "pool": pool, "t": t}
        if stream is not None:
            e["stream"] = stream
        e.update(options)
        ev.append(e)
        pools[pool] = pools.get(pool, 0) + 1
        active[pool] = stream
        graphs.append(pool)

    def release(pool):
        ev.append({"op": "pool_release", "pool": pool, "t": t})
        pools[pool] -= 1
        graphs.remove(pool)

    for _ in range(n):
        t += rng.randint(1, 20)
        r = rng.random()
        captures = [s for s in active.values() if s is not None]
        every = None in active.values()
        if r < 0.05 and not every and len(captures) < 2 and len(captures) < streams - 1:
            mempool = kind == "mempool" or (kind == "mixed" and rng.random() < 0.4)
            if mempool and not active:
                # a use_mem_pool scope: every stream; a pool with a use left, or a new
                # one with its options
                alive = [p for p, u in pools.items() if u > 0 and p not in active]
                if alive and rng.random() < 0.5:
                    begin(rng.choice(alive), None, {})
                else:
                    # the options only in the mixed kind: releases before 2.10 have no
                    # setUseOnOOM/setNoSplit, and skip those traces
                    opts = {}
                    if kind == "mixed" and rng.random() < 0.5:
                        opts["use_on_oom"] = True
                        on_oom.add(next_pool)
                    if kind == "mixed" and rng.random() < 0.5:
                        opts["no_split"] = True
                    begin(new_pool(), None, opts)
                continue
            if not mempool:
                stream = rng.choice([s for s in range(1, streams) if s not in captures])
                if kind == "separate" or (kind == "mixed" and rng.random() < 0.5):
                    pool = new_pool()
                else:
                    if shared is None or pools.get(shared, 0) == 0:
                        shared = new_pool()
                    pool = shared if shared not in active else new_pool()
                begin(pool, stream, {})
                continue
        if r < 0.11 and active and rng.random() < 0.5:
            pool = rng.choice(sorted(active))
            del active[pool]
            ev.append({"op": "pool_end", "pool": pool, "t": t})
            continue
        if r < 0.13 and graphs:
            done = [p for p in graphs if p not in active]
            if done:
                ev.append({"op": "graph_replay", "pool": rng.choice(done), "t": t})
                continue
        if r < 0.16 and graphs:
            # a use_on_oom pool keeps its uses: PyTorch (2.14.1) aborts when its OOM
            # fallback meets such a pool with none left
            done = [p for p in graphs if p not in active and p not in on_oom]
            if done:
                release(rng.choice(done))
                if not active and rng.random() < 0.5:
                    ev.append({"op": "empty_cache", "t": t})
                    parked = False
                continue
        if r < 0.16 + empty and not active:
            ev.append({"op": "empty_cache", "t": t})
            parked = False
            continue
        want_free = live and (live_bytes > target or rng.random() < 0.45)
        if want_free:
            i = rng.choice(list(live)) if rng.random() < 0.7 else min(live)
            size = live.pop(i)
            live_bytes -= size
            e = {"op": "free", "id": i, "t": t}
            if rng.random() < deferred and stream_of[i] != ready_stream and not (active and parked):
                parked = parked or bool(active)
                e["ready_t"] = t + rng.randint(1, 400)
                e["ready_stream"] = ready_stream
            stream_of.pop(i)
            ev.append(e)
        else:
            size = size_of(rng, scale)
            if captures and rng.random() < 0.7:
                s = rng.choice(captures)
            else:
                s = rng.randrange(streams)
            ev.append({"op": "alloc", "id": next_id, "size": size, "t": t, "stream": s})
            if not active:
                parked = False
            live[next_id] = size
            stream_of[next_id] = s
            live_bytes += size
            next_id += 1
    t += 1
    for pool in sorted(active):
        ev.append({"op": "pool_end", "pool": pool, "t": t})
    active.clear()
    if rng.random() < 0.6:
        for pool in [p for p in graphs if p not in on_oom]:
            release(pool)
        ev.append({"op": "empty_cache", "t": t})
    return {"format": "gpusim-trace", "version": 1, "name": "upstream-pools-%03d" % idx, "time_unit": "ns",
            "events": ev}


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
    pools = int(sys.argv[4]) if len(sys.argv) > 4 else count
    prng = random.Random(seed * 7919 + 1)
    for i in range(pools):
        with open(os.path.join(out, "p%03d.json" % i), "w") as f:
            json.dump(pool_trace(prng, i), f, separators=(",", ":"))


if __name__ == "__main__":
    main()
