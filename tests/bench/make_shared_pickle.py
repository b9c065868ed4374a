#!/usr/bin/env python3
"""Writes a PyTorch-style memory snapshot pickle with millions of shared (memoized)
references, for timing gpusim's pickle reader (traces/IMPORT.md, "Reading pickles").
Usage: python3 make_shared_pickle.py OUT.pickle [PAIRS]
PAIRS alloc/free_completed pairs (default 500000) on device 0, every entry holding
the same 16-frame `frames` list, as _dump_snapshot writes when many allocations
share a call stack: each entry is a few bytes of pickle (memo GETs) but, copied out,
a hundred values. Python's pickle memoizes the shared list and the repeated key
strings by itself."""
import pickle
import sys

out = sys.argv[1]
pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 500000
frames = [{"filename": "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", "line": 1500 + i,
           "name": "_call_impl"} for i in range(16)]
base = 0x7F0000000000
seg = 2 * 1024 * 1024 * 1024
trace = []
t = 1700000000000000
trace.append({"action": "segment_alloc", "addr": base, "size": seg, "stream": 0, "time_us": t,
              "frames": frames, "compile_context": "", "user_metadata": ""})
for i in range(pairs):
    size = 512 * (1 + i % 4096)
    for action in ("alloc", "free_requested", "free_completed"):
        t += 1
        trace.append({"action": action, "addr": base, "size": size, "stream": 0, "time_us": t,
                      "frames": frames, "compile_context": "", "user_metadata": ""})
snapshot = {
    "segments": [{"device": 0, "address": base, "total_size": seg, "allocated_size": 0, "active_size": 0,
                  "requested_size": 0, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
                  "is_expandable": False, "frames": frames,
                  "blocks": [{"address": base, "size": seg, "requested_size": 0, "state": "inactive",
                              "frames": []}]}],
    "device_traces": [trace],
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                           "garbage_collection_threshold": 0.0, "expandable_segments": False,
                           "roundup_power2_divisions": {str(2**i): 0 for i in range(16)}},
    "external_annotations": [],
}
with open(out, "wb") as f:
    pickle.dump(snapshot, f, protocol=4)
