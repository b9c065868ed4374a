#!/usr/bin/env python3
"""Writes the synthetic inputs of tests/test_import.c (the real excerpts are cut by
hand from the upstream recordings that LICENSES.md names). Run from this directory:
    python3 make_synthetic.py
snapshot_small.json / .pickle (protocol 4) / _p2.pickle (protocol 2): a PyTorch
memory snapshot with a lost allocation at the start of the ring buffer, address
reuse, free_requested -> free_completed delays, addresses next to 2^64 that a
double would merge, segment events, an oom, an unknown action and a pending free
at the end. tf_profile_small.json: a TensorFlow memory profile wrapped in a
one-element array, int64 values as strings, out-of-order snapshots."""
import json
import pickle

T = 1700000000000000            # time_us of the first entry (µs since the epoch)
XB = 2**64 - 2 * 1024 * 1024    # a segment base above 2^53: XB and XB+512 are one double
S = 94000000000000              # a cudaStream_t pointer value
A = 0x7F0000000000

def e(action, addr, size, dt, stream=0, **kw):
    d = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": T + dt}
    d.update(kw)
    return d

trace1 = [
    e("free_requested", A + 0x600000, 1048576, 0),       # never seen allocated: a lost allocation
    e("free_completed", A + 0x600000, 1048576, 5),
    e("alloc", A + 0x400000, 2097152, 10),
    e("segment_alloc", XB, 2097152, 20, S),
    e("alloc", XB, 100, 21, S),
    e("alloc", XB + 512, 300, 22, S),
    e("free_requested", XB + 512, 300, 30, S),
    e("alloc", A + 0x600000, 3000000, 31),                # address reused
    e("free_completed", XB + 512, 300, 40, S),
    e("free_completed", A + 0x600000, 3000000, 50),       # completed without a request entry
    {"action": "oom", "device_free": 1234, "size": 10737418240, "stream": 0, "time_us": T + 60},
    e("alloc", A + 0x600000, 1000, 70),                   # reused again
    e("free_requested", A + 0x600000, 1000, 80),
    e("free_completed", A + 0x600000, 1000, 80),          # same time: not deferred
    e("snapshot", 0, 0, 90),
    e("segment_free", A + 0x1000000, 2097152, 95),
    e("alloc", A + 0x700000, 512, 100, frames=[{"filename": "train.py", "line": 12, "name": "step"}]),
    e("annotate", 0, 0, 105),                             # a known action gpusim skips
    e("free_requested", A + 0x700000, 512, 110),          # still pending at the end
    e("snapshot", 0, 0, 120),
]

def blk(addr, size, req, state):
    return {"address": addr, "size": size, "requested_size": req, "state": state, "frames": []}

segments = [
    {"device": 1, "address": A, "total_size": 20971520, "allocated_size": 6291456, "active_size": 7340032,
     "requested_size": 6097152, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
     "is_expandable": False, "frames": [],
     "blocks": [blk(A, 4194304, 4000000, "active_allocated"),          # lost: live since before the trace
                blk(A + 0x400000, 2097152, 2097152, "active_allocated"),
                blk(A + 0x600000, 1048576, 0, "inactive"),
                blk(A + 0x700000, 1048576, 512, "active_pending_free"),
                blk(A + 0x800000, 12582912, 0, "inactive")]},
    {"device": 1, "address": XB, "total_size": 2097152, "allocated_size": 512, "active_size": 512,
     "requested_size": 100, "stream": S, "segment_type": "small", "segment_pool_id": (0, 0),
     "is_expandable": False, "frames": [],
     "blocks": [blk(XB, 512, 100, "active_allocated"), blk(XB + 512, 2096640, 0, "inactive")]},
    {"device": 0, "address": A + 0x40000000, "total_size": 2097152, "allocated_size": 2097152,
     "active_size": 2097152, "requested_size": 2000000, "stream": 0, "segment_type": "large",
     "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
     "blocks": [blk(A + 0x40000000, 2097152, 2000000, "active_allocated")]},
]

snapshot = {
    "segments": segments,
    "device_traces": [[], trace1],
    "allocator_settings": {
        "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:256", "max_split_size": 268435456,
        "garbage_collection_threshold": 0.0, "expandable_segments": False,
        "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
        "pinned_use_cuda_host_register": False,
        "roundup_power2_divisions": {str(2**i): 0 for i in range(16)},
    },
    "external_annotations": [],
}

with open("snapshot_small.json", "w") as f:
    json.dump(snapshot, f, indent=1)
with open("snapshot_small.pickle", "wb") as f:
    pickle.dump(snapshot, f, protocol=4)      # what torch.cuda.memory._dump_snapshot does
with open("snapshot_small_p2.pickle", "wb") as f:
    pickle.dump(snapshot, f, protocol=2)

def snap(ps, act, req, alloc, addr, heap, op=""):
    return {"timeOffsetPs": str(ps),
            "aggregationStats": {"stackReservedBytes": "0", "heapAllocatedBytes": str(heap),
                                 "freeMemoryBytes": str(16000000000 - heap), "fragmentation": 0,
                                 "peakBytesInUse": "6144"},
            "activityMetadata": {"memoryActivity": act, "requestedBytes": str(req),
                                 "allocationBytes": str(alloc), "address": str(addr), "tfOpName": op,
                                 "stepId": "3", "regionType": "output", "dataType": "float",
                                 "tensorShape": "[10]"}}

A0, A1, A2 = 139999999999000, 140000000000000, 140000000001024
gpu = [
    snap(1000000, "DEALLOCATION", 256, 256, A0, 1024),            # never seen allocated
    snap(3000000, "ALLOCATION", 4000, 4096, A2, 6144, "dense/BiasAdd"),  # file order != time order
    snap(2000000, "ALLOCATION", 1000, 1024, A1, 2048, "dense/MatMul"),
    snap(4000000, "DEALLOCATION", 1000, 1024, A1, 5120, "dense/MatMul"),
    snap(5000000, "ALLOCATION", 500, 512, A1, 5632),
    snap(6000000, "ALLOCATION", 700, 768, A1, 5888),              # its deallocation was not sampled
    snap(6500000, "ALLOCATION", 64, 64, 0, 5888, "unused preallocated device memory"),
    snap(7000000, "RESERVATION", 0, 0, 0, 5888),
]
profile = [{
    "memoryProfilePerAllocator": {
        "gpu_host_bfc": {"memoryProfileSnapshots": [snap(10, "ALLOCATION", 8, 8, 77, 8)],
                         "profileSummary": {"memoryCapacity": "68719476736"}},
        "GPU_0_bfc": {
            "memoryProfileSnapshots": gpu,
            "profileSummary": {"peakBytesUsageLifetime": "9000",
                               "peakStats": {"stackReservedBytes": "0", "heapAllocatedBytes": "6144",
                                             "freeMemoryBytes": "15999993856", "fragmentation": 0.25,
                                             "peakBytesInUse": "6144"},
                               "peakStatsTimePs": "3000000", "memoryCapacity": "16000000000"},
            "activeAllocations": [{"snapshotIndex": "1", "specialIndex": "-1", "numOccurrences": "1"}],
            "specialAllocations": [], "sampledTimelineSnapshots": []},
    },
    "numHosts": 1, "memoryIds": ["GPU_0_bfc", "gpu_host_bfc"], "version": 1,
}]
with open("tf_profile_small.json", "w") as f:
    json.dump(profile, f, indent=1)

# ---- snapshot_midrun.json: recorded mid-run (what the real CS336 files lack) ----
# Device 1 starts with two segments the trace never allocates: A (20 MiB, large
# pool, stream 0) holding a 4 MiB block the trace frees (its alloc was lost, so
# its size comes from its request, 4000000 B: rounded to 4000256, and the 194048 B
# left before the next block a large-pool block keeps unsplit: 4 MiB) and a 2 MiB
# block live to the end; and B (2 MiB, small pool, stream S) with a 512 B block
# live to the end. The trace: allocations on two streams, a free_requested long
# before its free_completed (10 -> 1000), a segment_alloc, an oom, a free still
# pending at the end. Device 0 has a trace of its own (several devices).
MiB = 1 << 20
A, B, C, D = 0x7F2000000000, 0x7F2001400000, 0x7F3000000000, 0x7F4000000000
trace_mid = [
    e("alloc", A + 6 * MiB, 3 * MiB, 0),                       # best fit: the free 14 MiB at A + 6 MiB
    e("free_requested", A, 4000000, 10),                      # the lost block: pending until +1000
    e("alloc", B + 512, 1000, 20, S),                          # small pool, stream S: 1024 B at B + 512
    e("alloc", A + 9 * MiB, 2 * MiB, 30),                      # the rest of A after the 3 MiB block
    e("segment_alloc", C, 30 * MiB, 40),                       # nothing free holds 30000128 B
    e("alloc", C, 30000000, 41),
    e("free_completed", A + 6 * MiB, 3 * MiB, 50),             # no request entry: a plain free
    e("free_completed", A, 4000000, 1000),                     # 990 µs after its request
    e("alloc", A, 4 * MiB, 1100),                              # best fit: the 4 MiB block it left
    {"action": "oom", "device_free": 1 << 30, "size": 200 << 30, "stream": 0, "time_us": T + 1200},
    e("free_requested", B + 512, 1000, 1300, S),               # still pending at the end
]
trace_dev0 = [e("alloc", D, 512, 0), e("free_requested", D, 512, 1), e("free_completed", D, 512, 2)]

def seg(device, addr, total, stream, kind, blocks, expandable=False, pool=(0, 0)):
    alloc = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    active = sum(b["size"] for b in blocks if b["state"] != "inactive")
    return {"device": device, "address": addr, "total_size": total, "allocated_size": alloc, "active_size": active,
            "requested_size": sum(b["requested_size"] for b in blocks), "stream": stream, "segment_type": kind,
            "segment_pool_id": pool, "is_expandable": expandable, "frames": [], "blocks": blocks}

mid = {
    "segments": [
        seg(1, A, 20 * MiB, 0, "large", [blk(A, 4 * MiB, 4 * MiB, "active_allocated"),
                                         blk(A + 4 * MiB, 2 * MiB, 2 * MiB, "active_allocated"),
                                         blk(A + 6 * MiB, 3 * MiB, 0, "inactive"),
                                         blk(A + 9 * MiB, 2 * MiB, 2 * MiB, "active_allocated"),
                                         blk(A + 11 * MiB, 9 * MiB, 0, "inactive")]),
        seg(1, B, 2 * MiB, S, "small", [blk(B, 512, 100, "active_allocated"),
                                        blk(B + 512, 1024, 1000, "active_pending_free"),
                                        blk(B + 1536, 2 * MiB - 1536, 0, "inactive")]),
        seg(1, C, 30 * MiB, 0, "large", [blk(C, 30000128, 30000000, "active_allocated"),
                                         blk(C + 30000128, 30 * MiB - 30000128, 0, "inactive")]),
        seg(0, D, 2 * MiB, 0, "small", [blk(D, 2 * MiB, 0, "inactive")]),
    ],
    "device_traces": [trace_dev0, trace_mid],
    "allocator_settings": {"PYTORCH_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
                           "expandable_segments": False,
                           "roundup_power2_divisions": {str(2**i): 0 for i in range(16)}},
    "external_annotations": [{"device": 1, "time_us": T, "stage": "START", "name": "ProfilerStep#7"}],
}
with open("snapshot_midrun.json", "w") as f:
    json.dump(mid, f, indent=1)

# ---- snapshot_expandable.json: expandable segments (segment_map / segment_unmap) ----
# From an empty allocator: one expandable range E in pages of 20 MiB. A 15 MiB
# block maps the first page; a 10 MiB block after it needs the second; it is
# freed, and the second page, now wholly free, is unmapped (as empty_cache does).
# The recorded reserved curve is 20, 40, 40, 20 MiB at the alloc, alloc, free and
# the end; the segments at the end hold the one mapped page.
E = 0x7F5000000000
trace_exp = [
    e("segment_map", E, 20 * MiB, 0),
    e("alloc", E, 15 * MiB, 1),
    e("segment_map", E + 20 * MiB, 20 * MiB, 2),
    e("alloc", E + 15 * MiB, 10 * MiB, 3),
    e("free_completed", E + 15 * MiB, 10 * MiB, 4),
    e("segment_unmap", E + 20 * MiB, 20 * MiB, 5),
]
expandable = {
    "segments": [seg(0, E, 20 * MiB, 0, "large", [blk(E, 15 * MiB, 15 * MiB, "active_allocated"),
                                                 blk(E + 15 * MiB, 5 * MiB, 0, "inactive")], expandable=True)],
    "device_traces": [trace_exp],
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "max_split_size": -1,
                           "garbage_collection_threshold": 0.0, "expandable_segments": True,
                           "roundup_power2_divisions": {str(2**i): 0 for i in range(16)}},
}
with open("snapshot_expandable.json", "w") as f:
    json.dump(expandable, f, indent=1)

# ---- snapshot_remainder.json: blocks known only by their free, and what later addresses tell ----
# Mid-run, device 0, default settings. Segment R (20 MiB, large pool) holds at the
# start one block L at R that the trace frees; its request, 3 MiB + 1 B, rounds to
# 3 MiB + 512, but PyTorch had cut it from a free block of 3.5 MiB and left the
# 523776 B rest on it (≤ 1 MiB: not split): L is 3.5 MiB, the rest of R one free
# 16.5 MiB block. The first allocation (4 MiB) lands at its low end, R + 3.5 MiB:
# that address is the evidence. L is freed; a 3 MiB request then takes L's 3.5 MiB
# block whole (the 523776 B rest again unsplit). Segment Q (40 MiB: its free 35 MiB
# is no better fit than R's 16.5) holds a block M of 5 MiB (request 5 MiB) the trace
# frees with nothing allocated in Q before: M may have kept a remainder of up to
# 1 MiB that nothing tells about (undetermined).
# End: R = [3.5 MiB allocated (3 MiB asked)][4 MiB allocated][12.5 MiB free], Q free.
R, Q = 0x7F6000000000, 0x7F6001400000
trace_rem = [
    e("alloc", R + 3 * MiB + MiB // 2, 4 * MiB, 0),
    e("free_requested", R, 3 * MiB + 1, 10),
    e("free_completed", R, 3 * MiB + 1, 11),
    e("free_requested", Q, 5 * MiB, 20),
    e("free_completed", Q, 5 * MiB, 20),
    e("alloc", R, 3 * MiB, 30),
]
remainder = {
    "segments": [
        seg(0, R, 20 * MiB, 0, "large", [blk(R, 3 * MiB + MiB // 2, 3 * MiB, "active_allocated"),
                                         blk(R + 3 * MiB + MiB // 2, 4 * MiB, 4 * MiB, "active_allocated"),
                                         blk(R + 7 * MiB + MiB // 2, 12 * MiB + MiB // 2, 0, "inactive")]),
        seg(0, Q, 40 * MiB, 0, "large", [blk(Q, 40 * MiB, 0, "inactive")]),
    ],
    "device_traces": [trace_rem],
    "allocator_settings": {"PYTORCH_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
                           "expandable_segments": False,
                           "roundup_power2_divisions": {str(2**i): 0 for i in range(16)}},
}
with open("snapshot_remainder.json", "w") as f:
    json.dump(remainder, f, indent=1)

# ---- snapshot_pools.json: private memory pools (CUDA graphs, MemPool) ----
# Mid-run, device 0, default settings, PyTorch 2.6's layout (no pool_id on trace
# entries: each allocation's pool is the pool of the segment it lies in).
# Segments: P (20 MiB, large, the default pool) holds a live 8 MiB block X at the
# start; H (2 MiB, small, stream S) belongs to a CUDA graph's own pool (1, 0), id
# 2^52 + 1 (traces/pool_id.h), and holds a live 512 B block Y; G (20 MiB) of the
# pool graph_pool_handle() made, (0, 1), id 1, is allocated by the trace.
# The trace: a capture into pool 1 allocates a (4 MiB, the new segment G: 20 MiB
# for a request of 1 to 10 MiB) and b (2 MiB, split off G after a) and frees b
# (back into pool 1's free 16 MiB at G + 4 MiB); a capture on stream S into the
# graph's pool allocates e (1000 B, 1024 rounded) after Y in H; the default pool's c
# (6 MiB) takes P's free 12 MiB at P + 8 MiB; a second capture into pool 1 gives d
# (2 MiB) the low end of pool 1's free 16 MiB, G + 4 MiB. Three runs, three scopes:
# [a b] pool 1, [e] pool 2^52 + 1 on stream S, [d] pool 1. Reserved: 22 MiB at the
# start, 42 MiB from the segment_alloc on. Replayed without pools, a would land in
# P at P + 8 MiB and nothing would need G: reserved would stay 22 MiB.
# snapshot_pools_28.json is the same recording in 2.8's layout: every alloc and
# segment entry names its pool_id.
P, G, H = 0x7F7000000000, 0x7F7001400000, 0x7F7002800000
trace_pools = [
    e("segment_alloc", G, 20 * MiB, 0),
    e("alloc", G, 4 * MiB, 1),
    e("alloc", G + 4 * MiB, 2 * MiB, 2),
    e("free_requested", G + 4 * MiB, 2 * MiB, 3),
    e("free_completed", G + 4 * MiB, 2 * MiB, 3),
    e("alloc", H + 512, 1000, 4, S),
    e("alloc", P + 8 * MiB, 6 * MiB, 5),
    e("alloc", G + 4 * MiB, 2 * MiB, 6),
]
pool_of = {G: (0, 1), H: (1, 0), P: (0, 0)}
pools = {
    "segments": [
        seg(0, P, 20 * MiB, 0, "large", [blk(P, 8 * MiB, 8 * MiB, "active_allocated"),
                                         blk(P + 8 * MiB, 6 * MiB, 6 * MiB, "active_allocated"),
                                         blk(P + 14 * MiB, 6 * MiB, 0, "inactive")]),
        seg(0, G, 20 * MiB, 0, "large", [blk(G, 4 * MiB, 4 * MiB, "active_allocated"),
                                         blk(G + 4 * MiB, 2 * MiB, 2 * MiB, "active_allocated"),
                                         blk(G + 6 * MiB, 14 * MiB, 0, "inactive")], pool=(0, 1)),
        seg(0, H, 2 * MiB, S, "small", [blk(H, 512, 512, "active_allocated"),
                                        blk(H + 512, 1024, 1000, "active_allocated"),
                                        blk(H + 1536, 2 * MiB - 1536, 0, "inactive")], pool=(1, 0)),
    ],
    "device_traces": [trace_pools],
    "allocator_settings": {"PYTORCH_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
                           "expandable_segments": False,
                           "roundup_power2_divisions": {str(2**i): 0 for i in range(16)}},
}
with open("snapshot_pools.json", "w") as f:
    json.dump(pools, f, indent=1)
for x in trace_pools:
    base = max(b for b in pool_of if b <= x["addr"])
    x["pool_id"] = pool_of[base]
with open("snapshot_pools_28.json", "w") as f:
    json.dump(pools, f, indent=1)
