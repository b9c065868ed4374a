#!/usr/bin/env python3
"""Writes pools_upstream.jsonl, a native trace of a serving start-up with CUDA graph
captures, and says how snapshot_pools_upstream.json is made from it: replayed through
PyTorch 2.6's own caching allocator (built from source under the mock CUDA runtime,
validate/upstream/torch/snapshot_tool.cpp), which writes what
torch.cuda.memory._snapshot() returns. Run from this directory:
    python3 make_pools_upstream.py
    BUILD/validate/upstream/torch/torch_snapshot pools_upstream.jsonl \\
        snapshot_pools_upstream.json --max-entries=60
    BUILD/validate/upstream/torch/torch_snapshot pools_upstream.jsonl \\
        snapshot_pools_upstream_full.json
(BUILD configured with -DGPUSIM_TORCH_SRC=<PyTorch 2.6 source>, as
validate/upstream/torch/check.sh does.) With at most 60 trace entries the ring buffer
loses the warm-up and the first capture: the snapshot is recorded mid-run, and the
shared pool's segments exist at its first entry; the _full one holds every entry.
The trace: weights and a profiling pass in the default pool; three decode graphs
captured largest first (batch 4, 2, 1) on stream 1 into one shared pool, (0, 1) =
pool 1 (graph_pool_handle), each freeing its temporaries inside the capture and
keeping its output; a graph captured into its own pool, (1, 0) = pool 2^52 + 1; the
KV cache and serving steps in the default pool; a fourth capture into the shared
pool; more steps. (No empty_cache: a snapshot does not record one, only the
segment_free entries it made, so its import could not replay it.)"""
import json

MiB = 1 << 20
ev = []
t = [0]
nid = [0]


def tick():
    t[0] += 1000
    return t[0]


def alloc(size, stream=0):
    nid[0] += 1
    e = {"op": "alloc", "id": nid[0], "size": size, "t": tick()}
    if stream:
        e["stream"] = stream
    ev.append(e)
    return nid[0]


def free(i):
    ev.append({"op": "free", "id": i, "t": tick()})


def begin(pool, stream):
    ev.append({"op": "pool_begin", "pool": pool, "t": tick(), "stream": stream})


def end(pool):
    ev.append({"op": "pool_end", "pool": pool, "t": tick()})


weights = [alloc(8 * MiB) for _ in range(3)]
for k in range(3):
    a = alloc(6 * MiB + k * 512 * 1024)
    b = alloc(300 * 1024)
    free(a)
    free(b)
outs = []
for bs in (4, 2, 1):
    begin(1, 1)
    x = alloc(bs * MiB + 4096, 1)
    h = alloc(bs * 2 * MiB, 1)
    s = alloc(bs * 64 * 1024, 1)
    free(x)
    outs.append(alloc(bs * MiB, 1))
    free(h)
    free(s)
    end(1)
GRAPH = (1 << 52) + 1
begin(GRAPH, 1)
y = alloc(200 * 1024, 1)
z = alloc(700 * 1024, 1)
free(y)
end(GRAPH)
kv = alloc(40 * MiB)
for k in range(4):
    a = alloc(3 * MiB + k * 4096)
    b = alloc(100 * 1024)
    free(b)
    free(a)
begin(1, 1)
x = alloc(3 * MiB, 1)
o = alloc(MiB // 2, 1)
free(x)
end(1)
for k in range(3):
    free(alloc(5 * MiB))
with open("pools_upstream.jsonl", "w") as f:
    f.write(json.dumps({"format": "gpusim-trace", "version": 1, "name": "pools_upstream", "time_unit": "ns"}) + "\n")
    for e in ev:
        f.write(json.dumps(e) + "\n")
