#!/usr/bin/env python3
"""gen_traces.py - writes the fixed suite of validation traces (deterministic, no
randomness) and suite.json, which says for each trace what it exercises and, for
the traces meant to run out of memory, the cap in bytes that the run must set with
a memory fraction (never the whole card). Usage: gen_traces.py OUTDIR"""
import json
import os
import sys

MiB = 1 << 20
KiB = 1 << 10


class T:
    def __init__(self, name):
        self.name = name
        self.ev = []
        self.t = 0
        self.next_id = 1

    def alloc(self, size, stream=0):
        i = self.next_id
        self.next_id += 1
        self.t += 10
        self.ev.append({"op": "alloc", "id": i, "size": size, "t": self.t, "stream": stream})
        return i

    def free(self, i, delay=0):
        self.t += 10
        e = {"op": "free", "id": i, "t": self.t}
        if delay:
            e["ready_t"] = self.t + delay
        self.ev.append(e)

    def empty_cache(self):
        self.t += 10
        self.ev.append({"op": "empty_cache", "t": self.t})

    def mark(self, name):
        self.ev.append({"op": "mark", "name": name, "t": self.t})

    def write(self, path):
        with open(path, "w") as f:
            f.write(json.dumps({"format": "gpusim-trace", "version": 1, "name": self.name, "time_unit": "ns",
                                "meta": {"generator": "validate/gen_traces.py"}}) + "\n")
            for e in self.ev:
                f.write(json.dumps(e) + "\n")


def growth():
    """Requests from 1 KiB to 300 MiB, all live: BFC region doubling (2, 4, 8 ... MiB), PyTorch's three
    segment sizes (2 MiB, 20 MiB, rounded), cudaMalloc granularity; then all freed and a second wave."""
    t = T("validate-growth")
    ids = []
    size = KiB
    while size <= 300 * MiB:
        ids.append(t.alloc(size + 1))
        size = size * 3 // 2
    for i in ids:
        t.free(i)
    t.mark("second wave")
    ids = [t.alloc(s * MiB + 512) for s in (5, 50, 9, 90, 1, 19, 21, 200)]
    for i in reversed(ids):
        t.free(i)
    return t


def split():
    """One large block freed and carved: splitting, best fit, coalescing, small and large pools."""
    t = T("validate-split")
    big = t.alloc(512 * MiB)
    t.free(big)
    pieces = [t.alloc(3 * MiB + 100 * (k % 7)) for k in range(60)]
    small = [t.alloc(700 * KiB - 13 * k) for k in range(40)]
    odd = [t.alloc(11 * MiB + 1) for _ in range(10)]
    for k, i in enumerate(pieces):
        if k % 2 == 0:
            t.free(i)
    for k, i in enumerate(small):
        if k % 3 == 0:
            t.free(i)
    refill = [t.alloc(2 * MiB + 4096 * k) for k in range(25)]
    more_small = [t.alloc(100 * KiB + 512 * k) for k in range(30)]
    for i in refill + more_small + odd:
        t.free(i)
    for k, i in enumerate(pieces):
        if k % 2 == 1:
            t.free(i)
    for k, i in enumerate(small):
        if k % 3 != 0:
            t.free(i)
    return t


def streams():
    """Three streams, stream-ordered frees (ready_t, PyTorch's record_stream) and empty_cache."""
    t = T("validate-streams")
    live = []
    for step in range(6):
        t.mark("step %d" % step)
        for s in (0, 1, 2):
            live.append(t.alloc((4 + 3 * s + step) * MiB, stream=s))
            live.append(t.alloc((300 + 50 * s) * KiB, stream=s))
        for k, i in enumerate(live[:-4]):
            t.free(i, delay=25 if k % 2 else 0)
        live = live[-4:]
        if step % 3 == 2:
            t.empty_cache()
    for i in live:
        t.free(i)
    t.empty_cache()
    return t


def ladder(cap):
    """Under a 1 GiB cap (memory fraction): cached 100 MiB segments that no later request fits, so a
    600 MiB request needs PyTorch's release-and-retry step; then requests until the cap is hit."""
    t = T("validate-ladder")
    ids = [t.alloc(100 * MiB) for _ in range(8)]
    for i in ids:
        t.free(i)
    big = t.alloc(600 * MiB)
    more = [t.alloc(150 * MiB) for _ in range(4)]  # 600 + 4*150 > 1024: OOM on the 3rd
    for i in more:
        t.free(i)
    t.free(big)
    return t


def frag(cap):
    """Under a 2 GiB cap: 20 blocks of 90 MiB, every other one freed (900 MiB free in pieces), then
    150 MiB requests: fragmentation in BFC, release-and-retry in PyTorch, then OOM."""
    t = T("validate-frag")
    ids = [t.alloc(90 * MiB) for _ in range(20)]
    for k, i in enumerate(ids):
        if k % 2 == 0:
            t.free(i)
    extra = [t.alloc(150 * MiB) for _ in range(6)]
    for i in extra:
        t.free(i)
    for k, i in enumerate(ids):
        if k % 2 == 1:
            t.free(i)
    return t


def small_many():
    """Many small requests (< 1 MiB): PyTorch's small pool (2 MiB segments), BFC's small bins, and how
    the driver packs small cudaMallocs."""
    t = T("validate-small")
    ids = []
    for k in range(600):
        ids.append(t.alloc(512 * (1 + (k * 37) % 1500)))
        if k % 5 == 4:
            t.free(ids.pop(len(ids) // 2))
    for i in ids:
        t.free(i)
    return t


SUITE = [
    # name, builder, cap_bytes (None: no cap), what
    ("growth", growth, None, "region growth, segment sizes, cudaMalloc granularity"),
    ("split", split, None, "splitting, best fit, coalescing, small/large pools"),
    ("streams", streams, None, "several streams, deferred frees (ready_t), empty_cache"),
    ("small", small_many, None, "small allocations"),
    ("ladder", lambda: ladder(1024 * MiB), 1024 * MiB, "OOM ladder (release cached, retry), OOM at a 1 GiB cap"),
    ("frag", lambda: frag(2048 * MiB), 2048 * MiB, "fragmentation, OOM at a 2 GiB cap"),
]


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    manifest = []
    for name, build, cap, what in SUITE:
        path = os.path.join(out, "validate-%s.jsonl" % name)
        build().write(path)
        manifest.append({"trace": os.path.basename(path), "cap_bytes": cap, "what": what})
    with open(os.path.join(out, "suite.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
