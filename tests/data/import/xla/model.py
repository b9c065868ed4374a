"""XLA's heap simulator with colocations, in Python, over the dumps of this folder.

    python3 tests/data/import/xla/model.py [DUMP.hlo.pb ...]

The evidence for traces/IMPORT.md ("Five real programs, and why the offsets
differ"): GlobalDecreasingSizeBestFitHeap as plan_xla.c has it (alignment 64,
ChooseBestHeapAlgorithm over the spatial and temporal orders, ties broken by
allocation order as gpusim numbers buffers), plus what trace v1 cannot carry: a
SHARE_WITH buffer is colocated with the buffer it shares (same offset; the set's
free space avoids every member's interval; spatial order uses the canonical
buffer's own size and interval, temporal order its interval extended to the last
end of its colocations; the chunk is the largest member). Prints, per dump, XLA's
heap and offsets against the model's. Plain python3: the dump is read with
make.py's wire-format reader, no protobuf package.
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make import fields, varint  # noqa: E402

ALIGN = 64


def ints(msg):
    """{field number: last varint value} of a message."""
    out = {}
    for num, raw, payload in fields(msg):
        if payload is None and raw:
            i = 0
            _, i = varint(raw, i)
            out[num] = varint(raw, i)[0] if (raw[0] & 7) == 0 else None
    return out


def subs(msg, num):
    return [p for n, _, p in fields(msg) if n == num and p is not None]


def load(path):
    with open(path, "rb") as f:
        (ba,) = subs(f.read(), 3)
    sizes = {ints(b).get(1, 0): ints(b).get(2, 0) for b in subs(ba, 1)}
    offsets, alloc_of = {}, {}
    for a in subs(ba, 3):
        for x in subs(a, 9):
            v = ints(x)
            offsets[v.get(1, 0)] = v.get(2, 0)
            alloc_of[v.get(1, 0)] = ints(a).get(1, 0)
    events = [ints(e) for e in subs(subs(ba, 4)[0], 1)]
    return sizes, offsets, events


def place(groups, order):
    def key(g):
        own = g["ivs"][0]
        if order == "spatial":
            return (-own[2], -(own[1] - own[0]), g["n"])
        return (-(g["end"] - own[0]), -own[2], g["n"])

    placed, offs, heap = [], {}, 0
    for g in sorted(groups, key=key):
        size = max(s for _, _, s in g["ivs"])
        used = sorted({(o, o + s) for (a, e, o, s) in placed for (b, f, _) in g["ivs"] if a <= f and b <= e})
        best, free = None, 0

        def consider(lo, hi):
            nonlocal best
            at = -(-lo // ALIGN) * ALIGN
            if hi - lo >= size and hi - size >= at and (best is None or hi - lo < best[1]):
                best = (at, hi - lo)

        if used:
            run_off, run_end = used[0]
            for o, e in used[1:]:
                if o < run_end:
                    run_end = max(run_end, e)
                    continue
                consider(free, run_off)
                free = max(free, -(-run_end // ALIGN) * ALIGN)
                run_off, run_end = o, e
            consider(free, run_off)
            free = max(free, -(-run_end // ALIGN) * ALIGN)
            consider(free, 1 << 62)
        off = best[0] if used else 0
        placed += [(a, e, off, s) for (a, e, s) in g["ivs"]]
        offs[g["canon"]] = off
        heap = max(heap, off + size)
    return heap, offs


def model(path):
    sizes, offsets, events = load(path)
    clock, iv, canon, groups = 0, {}, {}, {}
    for e in events:
        kind, buf = e.get(1, 0), e.get(2, 0)
        if kind == 1:  # FREE
            iv[buf][1] = clock
        else:
            size = sizes[e.get(5, 0)] if kind == 2 else sizes[buf]
            iv[buf] = [clock, None, size]
            if kind == 2:  # SHARE_WITH
                canon[buf] = canon[e.get(5, 0)]
                groups[canon[buf]].append(buf)
            else:
                canon[buf] = buf
                groups[buf] = [buf]
        if iv[buf][2]:
            clock += 1
    sets = []
    for n, (c, members) in enumerate(groups.items()):
        ivs = [tuple(iv[m]) for m in members]
        sets.append({"canon": c, "n": n, "ivs": ivs, "end": max(e for _, e, _ in ivs)})
    (hs, os_), (ht, ot) = place(sets, "spatial"), place(sets, "temporal")
    heap, offs = (hs, os_) if hs <= ht else (ht, ot)
    bufs = [b for b in iv]
    xla_heap = max(offsets[b] + sizes[b] for b in bufs)
    matched = sum(offsets[b] == offs[canon[b]] for b in bufs)
    return xla_heap, heap, matched, len(bufs)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sys.argv[1:] or sorted(glob.glob(os.path.join(here, "*.hlo.pb"))):
        xla_heap, heap, matched, n = model(path)
        print("%-26s XLA heap %9d  model heap %9d  offsets %d of %d" % (os.path.basename(path), xla_heap, heap,
                                                                         matched, n))


if __name__ == "__main__":
    main()
