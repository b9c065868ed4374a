"""CUDA graphs and memory pools under gpusim's recorder (python/gpusim/record_graphs.py) on
PyTorch's CPU build: torch.cuda.graph, graph_pool_handle, CUDAGraph.replay/reset, MemPool and
use_mem_pool write the trace's pool events, the captures' allocations carry the capture
stream, and the recording replays under `torch` to the reserved bytes worked out below
(PyTorch 2.6's pool rules, docs/allocators.md §2.16)."""

import json
import os
import sys
import tempfile

from _smoke import check, finish, need

torch = need("torch")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpusim  # noqa: E402

tmp = tempfile.mkdtemp(prefix="gpusim-record-graphs-")
MiB = 1 << 20
WIDTH = 8192  # fp32: a batch row is 32 KiB


def events(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return lines[1:]


def serve(shared):
    """Capture one graph per batch size, largest first: a = 2x, b = relu(a), a dies, b is the
    graph's output. Then two replays, a MemPool used twice, and one graph reset."""
    pool = torch.cuda.graph_pool_handle() if shared else None
    graphs, outs = [], []
    for bs in (64, 32, 16, 8):
        x = torch.zeros(bs, WIDTH, device="cuda")  # outside the capture: the default pools
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            outs.append((x * 2).relu())
        graphs.append((g, x))
    graphs[3][0].replay()
    graphs[0][0].replay()
    mp = torch.cuda.MemPool(use_on_oom=True)
    with torch.cuda.use_mem_pool(mp):
        y = torch.empty(256 * 1024, device="cuda")  # 1 MiB: the pool's small half
    with torch.cuda.use_mem_pool(mp):
        z = torch.empty(1024, device="cuda")
    del y, z, mp
    graphs[0][0].reset()
    return graphs, outs


def record(name, shared):
    path = os.path.join(tmp, name + ".jsonl")
    gpusim.record(path, serve, shared, device="A100-80GB", compute_capability="8.0")
    return path, events(path)


path, evs = record("shared", True)
pool_evs = [e for e in evs if e["op"].startswith("pool") or e["op"] == "graph_replay"]
ops = [(e["op"], e["pool"]) for e in pool_evs]
# four captures into the handle's pool 1, each on the capture stream, each after an empty_cache
check(ops[:8] == [("pool_begin", 1), ("pool_end", 1)] * 4, "four captures into one shared pool: %r" % ops[:8])
check(all(e.get("stream", 0) != 0 and e.get("capture", True) for e in pool_evs if e["op"] == "pool_begin" and e["pool"] == 1),
      "a capture's pool_begin names the capture stream")
begin_at = [i for i, e in enumerate(evs) if e["op"] == "pool_begin" and e["pool"] == 1]
check(all(evs[i - 1]["op"] == "empty_cache" for i in begin_at), "torch.cuda.graph empties the cache before capturing")
# inside a capture: a = x*2, b = relu(a), free a — all on the capture stream
first = evs[begin_at[0]:evs.index({"op": "pool_end", "pool": 1})]
inside = [e for e in first if e["op"] == "alloc"]
check([e["size"] for e in inside] == [64 * WIDTH * 4] * 2, "capture 1 allocates a and b of 2 MiB: %r" % inside)
check(all(e.get("stream") == pool_evs[0]["stream"] for e in inside), "capture allocations carry the capture stream")
check(ops[8:10] == [("graph_replay", 1), ("graph_replay", 1)], "replay() is a graph_replay mark: %r" % ops[8:10])
mem = [(e["op"], e["pool"]) for e in pool_evs if e["pool"] == 2]
check(mem == [("pool_begin", 2), ("pool_end", 2), ("pool_begin", 2), ("pool_end", 2), ("pool_release", 2),
              ("pool_release", 2)], "MemPool: the first scope stands for its own use: %r" % mem)
mp_begin = [e for e in pool_evs if e["op"] == "pool_begin" and e["pool"] == 2]
check(mp_begin[0].get("use_on_oom") is True and mp_begin[0].get("capture") is False and "stream" not in mp_begin[0],
      "use_mem_pool routes every stream, with the MemPool's options first: %r" % mp_begin[0])
releases = [e for e in pool_evs if e["op"] == "pool_release" and e["pool"] == 1]
check(len(releases) == 4, "every captured graph releases its use once (reset, then the rest at the end): %d" % len(releases))

# Replayed under torch (PyTorch 2.6's rules). Inputs x in the default pools: 2 MiB (a 20 MiB
# large segment), 1 MiB + 512 KiB + 256 KiB (one 2 MiB small segment) = 22 MiB. The shared
# pool: capture 64 takes a 20 MiB segment (a 2, b 2, a freed); 32 a 2 MiB small segment (a 1,
# b 1); 16 and 8 fit in it again once a is freed (512 K then 256 K reuse the freed 1 MiB) =
# 22 MiB. The MemPool: 1 MiB in a 2 MiB small segment, 4 KiB from the rest of that segment = 2 MiB.
# Peak reserved 22 + 22 + 2 = 46 MiB.
r = gpusim.replay(path, strategy="torch", capacity="80GiB")
check(r["result"]["peak_reserved_bytes"] == 46 * MiB, "shared pool: peak reserved %d" % r["result"]["peak_reserved_bytes"])
# One pool per graph: 20 + 2 + 2 + 2 = 26 MiB for the graphs, 50 MiB in all.
path2, _ = record("separate", False)
r2 = gpusim.replay(path2, strategy="torch", capacity="80GiB")
check(r2["result"]["peak_reserved_bytes"] == 50 * MiB, "separate pools: peak reserved %d" % r2["result"]["peak_reserved_bytes"])
finish()
