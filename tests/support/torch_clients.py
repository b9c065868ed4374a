"""PyTorch's own readers of allocator statistics and snapshots, run on gpusim's outputs
(tests/cli_torch_clients.sh). The files come from a release's wheel, unpacked by
scripts/frameworks into $GPUSIM_TORCH_CUDA_DIR/python/torch/cuda; nothing here imports
torch, so no GPU and no install of that release are needed.

  torch_clients.py summary MEMORY_PY STATS_JSON
      print memory_summary() of that release, its memory_stats() answering STATS_JSON
      (gpusim's `--summary --format=json`): the function is taken out of memory.py
      as written and run with memory_stats and the device lookup standing in for the GPU
  torch_clients.py viz VIZ_PY SNAPSHOT RESULT_JSON [EMPTY_SNAPSHOT]
      run _memory_viz.py's stats, trace, segments, memory (and compare, against
      EMPTY_SNAPSHOT: an export that holds no segment) on gpusim's export and check each
      figure they print against the replay's result (gpusim's --format=json); prints
      one line per disagreement and exits 1 on any
"""

import ast
import contextlib
import importlib.util
import io
import json
import pickle
import re
import sys


def summary(memory_py, stats_json):
    src = open(memory_py).read()
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "memory_summary")
    # annotations name torch's types (Device, Union in older releases): not needed to run it
    for a in fn.args.args + fn.args.kwonlyargs:
        a.annotation = None
    fn.returns = None
    stats = json.load(open(stats_json))
    env = {
        "memory_stats": lambda device=None: stats,
        "_get_device_index": lambda device, optional=False: 0,
    }
    exec(compile(ast.Module(body=[fn], type_ignores=[]), memory_py, "exec"), env)
    sys.stdout.write(env["memory_summary"]())


def load_viz(path):
    spec = importlib.util.spec_from_file_location("torch_memory_viz", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def flame_total(lines, state=None):
    """The bytes of flamegraph input lines ("stack;...;frame SIZE"), of one block state"""
    total = 0
    for ln in lines.splitlines():
        stack, _, size = ln.rpartition(" ")
        if state is None or (";%s;" % state) in stack:
            total += int(size)
    return total


def viz(viz_py, snapshot, result_json, empty=None):
    mv = load_viz(viz_py)
    data = pickle.load(open(snapshot, "rb"))
    r = json.load(open(result_json))["result"]
    bad = []

    def want(what, got, expected):
        if got != expected:
            bad.append("%s: the viewer says %r, gpusim %r" % (what, got, expected))

    held = sum(b["size"] for s in data["segments"] for b in s["blocks"] if b["state"] == "active_allocated")
    requested = sum(b.get("requested_size", b["size"]) for s in data["segments"] for b in s["blocks"]
                    if b["state"] == "active_allocated")

    # stats: segsum's totals
    text = mv.segsum(data)
    got = dict(re.findall(r"^(segments|total_reserved|total_allocated): (.*)$", text, re.M))
    want("stats: total_reserved", got.get("total_reserved"), repr(mv.Bytes(r["final_reserved_bytes"])))
    want("stats: segments", got.get("segments"), str(len(data["segments"])))
    want("stats: total_allocated", got.get("total_allocated"), repr(mv.Bytes(requested)))
    oom = r.get("first_oom")
    if oom:
        # at an OOM the export holds what the allocator held then: gpusim's live bytes
        want("stats: total_allocated at the OOM", got.get("total_allocated"),
             repr(mv.Bytes(oom["live_requested_bytes"])))

    # trace: one line per device call and per allocation, the OOM last
    text = mv.trace(data)
    # expandable segments map and unmap pages (PyTorch's segment_map/segment_unmap
    # entries, which trace() prints as they are) where the others call cudaMalloc/cudaFree
    maps = len(re.findall(r"^\{'action': 'segment_map'", text, re.M))
    unmaps = len(re.findall(r"^\{'action': 'segment_unmap'", text, re.M))
    want("trace: cudaMalloc and segment_map lines", len(re.findall(r"= cudaMalloc\(", text)) + maps,
         r["num_device_allocs"])
    want("trace: cudaFree and segment_unmap lines", len(re.findall(r"^cudaFree\(", text, re.M)) + unmaps,
         r["num_device_frees"])
    allocs = sum(1 for e in data["device_traces"][0] if e["action"] == "alloc")
    want("trace: allocation lines", len(re.findall(r"^\w+ = \w+\[", text, re.M)), allocs)
    if oom:
        line = [ln for ln in text.splitlines() if ln.startswith("raise OutOfMemoryError")]
        want("trace: the OOM line", line, ["raise OutOfMemoryError # %r requested, %r free in CUDA" %
                                           (mv.Bytes(oom["size"]), mv.Bytes(oom["device_free_bytes"]))])
    else:
        want("trace: OOM lines", text.count("raise OutOfMemoryError"), 0)

    # segments and memory: the flamegraphs' input (no flamegraph.pl: the lines themselves)
    lines = mv.segments(data, format_flamegraph=lambda s: s)
    want("segments: bytes", flame_total(lines), r["final_reserved_bytes"])
    lines = mv.memory(data, format_flamegraph=lambda s: s)
    want("memory: bytes", flame_total(lines), r["final_reserved_bytes"])
    want("memory: active bytes", flame_total(lines, "active_allocated"), held)

    # compare: from an export holding nothing, every segment is only_after
    if empty:
        before = pickle.load(open(empty, "rb"))["segments"]
        with contextlib.redirect_stdout(io.StringIO()):  # its lists of addresses
            lines = mv.compare(before, data["segments"], format_flamegraph=lambda s: s)
        want("compare: only_after bytes", flame_total(lines), r["final_reserved_bytes"])

    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2], sys.argv[3])
    else:
        sys.exit(viz(*sys.argv[2:]))
