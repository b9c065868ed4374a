"""gpusim.record and gpusim.recording (python/gpusim/record_trace.py) on PyTorch's CPU build:
the storages a program allocates and frees, in program order, with the byte counts the CUDA
build would request, and each rule of python/gpusim/record_rules.py with its arithmetic.
The card is given by its compute capability so that no libgpusim.so is needed."""

import json
import os
import sys
import tempfile

from _smoke import check, finish, need

torch = need("torch")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpusim  # noqa: E402

tmp = tempfile.mkdtemp(prefix="gpusim-record-")


def events(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return lines[0], lines[1:]


def allocs(evs, after_mark="model loaded"):
    seen = after_mark is None
    out = []
    for e in evs:
        if e["op"] == "mark" and e["name"] == after_mark:
            seen = True
        elif seen and e["op"] == "alloc":
            out.append((e["size"], e.get("tag", "")))
    return out


def run(name, fn, *args, cc="8.0", env=None, **kw):
    path = os.path.join(tmp, name + ".jsonl")
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        counts = gpusim.record(path, fn, *args, device="A100-80GB", compute_capability=cc, **kw)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    header, evs = events(path)
    return counts, header, evs


# --- one Linear layer: the parameters first, then a mark, then the step -----------------------
with torch.device("meta"):
    lin = torch.nn.Linear(64, 256)  # weight 256*64*4 = 65536 B, bias 256*4 = 1024 B


def forward(model):
    x = torch.randn(32, 64, device="cuda")  # 32*64*4 = 8192 B
    return model(x)  # addmm with a 1-D bias: cuBLASLt; output 32*256*4 = 32768 B


counts, header, evs = run("linear", forward, lin)
check(header["format"] == "gpusim-trace" and header["version"] == 1, "a trace v1 header")
check(header["device"] == {"name": "A100-80GB", "capacity_bytes": 80 << 30, "compute_capability": "8.0"}
      or header["device"]["compute_capability"] == "8.0", "the header's device: %s" % header["device"])
first = [(e["size"], e["tag"]) for e in evs[:2]]
check(first == [(65536, "parameter weight"), (1024, "parameter bias")],
      "parameters first, named: %s" % first)
check(evs[2] == {"op": "mark", "name": "model loaded"}, "then the mark: %s" % evs[2])
# the kernel allocates its output, then calls cuBLAS, whose handle takes its workspaces:
# rule cublas_workspace on 8.0: 4096 KiB x 2 + 16 KiB x 8 = 8388608 + 131072 = 8519680 B;
# rule cublaslt_workspace: 1024 KiB = 1048576 B (below the cuBLAS one, so not capped)
got = allocs(evs)
want = [(8192, "randn"), (32768, "addmm"), (8519680, "cuBLAS workspace"), (1048576, "cuBLASLt workspace")]
check(got == want, "linear forward on 8.0: %s, want %s" % (got, want))
# peak: 65536 + 1024 + 8192 + 8519680 + 1048576 + 32768 = 9675776
check(counts["peak_allocated_bytes"] == 9675776, "peak %d, want 9675776" % counts["peak_allocated_bytes"])

# 9.0 (Hopper): 4096 KiB x 8 = 33554432 B
_, _, evs = run("linear_h100", forward, lin, cc="9.0")
check(allocs(evs)[2] == (33554432, "cuBLAS workspace"), "9.0 workspace: %s" % (allocs(evs)[2],))
# CUBLAS_WORKSPACE_CONFIG=:4096:8 on 8.0: 4096 KiB x 8 = 33554432; :16:8 = 16 KiB x 8 = 131072,
# which also caps the cuBLASLt workspace at 131072
_, _, evs = run("linear_conf", forward, lin, env={"CUBLAS_WORKSPACE_CONFIG": ":4096:8"})
check(allocs(evs)[2] == (33554432, "cuBLAS workspace"), ":4096:8: %s" % (allocs(evs)[2],))
_, _, evs = run("linear_small", forward, lin, env={"CUBLAS_WORKSPACE_CONFIG": ":16:8"})
check(allocs(evs)[2:4] == [(131072, "cuBLAS workspace"), (131072, "cuBLASLt workspace")],
      ":16:8: %s" % (allocs(evs)[2:4],))
# TORCH_CUBLASLT_UNIFIED_WORKSPACE=1: cuBLASLt shares the cuBLAS workspace, no second block
_, _, evs = run("linear_unified", forward, lin, env={"TORCH_CUBLASLT_UNIFIED_WORKSPACE": "1"})
check([t for _, t in allocs(evs)] == ["randn", "addmm", "cuBLAS workspace"], "unified: %s" % allocs(evs))


# one workspace per stream, not per call: two matmuls, one workspace
def two_mm():
    a = torch.randn(16, 16, device="cuda")
    return a @ a @ a


_, _, evs = run("two_mm", two_mm)
check([t for _, t in allocs(evs)].count("cuBLAS workspace") == 1, "one workspace per stream: %s" % allocs(evs))


# backward runs on the autograd engine's device thread, whose cuBLAS handle is another one: a
# second workspace at backward's first matmul, and none after it


def fwd_bwd(model):
    model(torch.randn(32, 64, device="cuda")).sum().backward()
    model(torch.randn(32, 64, device="cuda")).sum().backward()


_, _, evs = run("threads", fwd_bwd, lin)
ws = [t for _, t in allocs(evs) if "workspace" in t]
check(ws == ["cuBLAS workspace", "cuBLASLt workspace", "cuBLAS workspace"],
      "main thread cuBLAS + cuBLASLt, backward thread cuBLAS (mm, no bias): %s" % ws)


# rule cublas_operand_copy: an expanded operand (stride 0) is copied contiguous for the call,
# after the output and before the workspace: 16*16*4 = 1024 B, freed after the call
def expanded():
    a = torch.randn(16, 16, device="cuda")
    b = torch.ones(1, 1, device="cuda").expand(16, 16)
    return a @ b


_, _, evs = run("expanded", expanded)
body = evs[evs.index({"op": "mark", "name": "model loaded"}) + 1:]
seq = [(e["op"], e.get("size"), e.get("tag", "")) for e in body]
check(seq[2:6] == [("alloc", 1024, "mm"), ("alloc", 1024, "mm (operand copy)"),
                   ("alloc", 8519680, "cuBLAS workspace"), ("free", None, "")],
      "operand copy: %s" % seq)


# rule subclass_like_branch and grad_accumulate_in_place: max's backward fills a zeros buffer in
# place, and the engine sums e's two gradients into one of them: softmax over 4 x 8 float32
# (128 B a tensor). Backward allocates ones(4 B), then per node: div 128 + 128 + neg 128 +
# mul 128, sum 16; exp 128; sub 128... but never a second 128 B buffer for max (zeros + scatter)
# and never an "add" of two 128 B gradients
def softmax():
    x = torch.randn(4, 8, device="cuda", requires_grad=True)
    top = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - top)
    (e / e.sum(-1, keepdim=True)).sum().backward()


_, _, evs = run("softmax", softmax)
tags = [t for _, t in allocs(evs)]
check(not any(t.endswith(":add") for t in tags), "gradients summed in place: %s" % tags)
check(not any(t.endswith(":scatter") for t in tags) and any(t.endswith(":new_zeros") for t in tags),
      "max's backward scatters into its zeros in place: %s" % tags)


# rule autocast: under autocast("cuda", bfloat16) a Linear 64 -> 256 casts its input
# (32*64*2 = 4096 B), its weight (256*64*2 = 32768 B) and bias (256*2 = 512 B) to bfloat16 and
# writes a bfloat16 output (32*256*2 = 16384 B); the weight's and bias's casts are cached: a second
# call in the same region casts only the new input
def amp(model):
    x = torch.randn(32, 64, device="cuda")  # float32: 8192 B
    with torch.autocast("cuda", dtype=torch.bfloat16):
        a = model(x)
        b = model(x)
    return a, b


_, _, evs = run("autocast", amp, lin)
got = [(sz, t) for sz, t in allocs(evs) if "workspace" not in t]
want = [(8192, "randn"), (4096, "_to_copy"), (32768, "_to_copy"), (512, "_to_copy"), (16384, "addmm"),
        (4096, "_to_copy"), (16384, "addmm")]
check(got == want, "autocast casts: %s, want %s" % (got, want))


# activation checkpointing recomputes in backward under the recorder: with autocast, the
# recomputation casts the input, weight and bias again (4096, 32768, 512 B; no CheckpointError)
# and stops there, as the addmm saved nothing else (checkpoint's early stop): the output
# (32*256*2 = 16384 B) is allocated once, in forward
def ckpt(model):
    x = torch.randn(32, 64, device="cuda", requires_grad=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = torch.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
    y.float().sum().backward()


_, _, evs = run("checkpoint", ckpt, lin)
got = allocs(evs)
outs = [t for sz, t in got if sz == 16384 and t.endswith("addmm")]
recast = [sz for sz, t in got if t == "backward:_to_copy"]
check(outs == ["addmm"] and recast[1:4] == [4096, 32768, 512], "recomputation: %s" % got)


# --- frees in program order, views share the storage, resize_ ----------------------------------
def lifetimes():
    a = torch.empty(1000, device="cuda")      # 4000 B
    v = a.view(10, 100).t()                   # a view: no allocation
    b = torch.empty(10, device="cuda")        # 40 B
    del a
    del v                                     # a's storage dies with its last view
    b.resize_(500)                            # 2000 B: a new block, then the old one freed
    c = torch.empty(3, device="cuda")         # 12 B
    c.add_(1)                                 # in place: nothing
    return b, c


_, _, evs = run("lifetimes", lifetimes)
body = evs[evs.index({"op": "mark", "name": "model loaded"}) + 1:]
# ids as the order of allocation in the step (the tensors live before, lin's parameters, come first)
first_id = next(e["id"] for e in body if e["op"] == "alloc") - 1
ops = [(e["op"], e.get("size"), e["id"] - first_id) for e in body if e["op"] in ("alloc", "free")]
want = [("alloc", 4000, 1), ("alloc", 40, 2), ("free", None, 1), ("alloc", 2000, 3), ("free", None, 2),
        ("alloc", 12, 4)]
check(ops[:6] == want, "lifetimes: %s, want %s" % (ops[:6], want))


# --- rule host_memory: CPU and pinned tensors are not device memory -----------------------------
def host():
    h = torch.empty(1 << 20).pin_memory()
    return h.sum(), torch.ones(4, device="cuda")


_, _, evs = run("host", host)
check(allocs(evs) == [(16, "ones")], "only the device tensor (4*4 = 16 B): %s" % allocs(evs))


# --- rule composite_in_inference: under inference_mode a composite op runs as its parts -------
def inference():
    x = torch.randn(4, 16, 32, device="cuda")  # 4*16*32*4 = 8192 B
    w = torch.randn(64, 32, device="cuda")  # 64*32*4 = 8192 B
    p = torch.randn(2, 3, 8, 16, device="cuda")  # 2*3*8*16*4 = 3072 B
    v = torch.randn(2, 16, 96, device="cuda").unflatten(-1, (3, 32)).transpose(1, 2)  # 12288 B
    with torch.inference_mode():
        y = torch.einsum("...a,ba->...b", x, w)  # bmm: 4*16*64*4 = 16384 B, then the workspace
        # v's batch dimensions (2, 3) have strides (1536, 32): not one dimension, so einsum
        # copies it contiguous (12288 B) for bmm (2*3*8*32*4 = 6144 B) and frees the copy
        z = torch.einsum("...ab,...bc->...ac", p, v)
        m = torch.where(torch.ones(8, 32, dtype=torch.bool, device="cuda"), z, float("-inf"))
    return y, z, m


_, _, evs = run("inference", inference)
start = next(i for i, e in enumerate(evs) if e.get("name") == "model loaded")
sizes = [(e["op"], e.get("size"), e.get("tag", "")) for e in evs[start:] if e["op"] in ("alloc", "free")][4:]
# 8.0: cuBLAS workspace 4096 KiB x 2 + 16 KiB x 8 = 8519680 B; the mask 8*32 = 256 B; where's
# -inf a 0-d float32 device tensor (4 B), freed once where (6144 B) ran. Without the rule:
# one "einsum" block each, no workspace, no copy, no 4 B
want = [("alloc", 16384, "bmm"), ("alloc", 8519680, "cuBLAS workspace"), ("alloc", 12288, "clone"),
        ("alloc", 6144, "bmm"), ("free", None, ""), ("alloc", 256, "ones"), ("alloc", 4, "scalar_tensor"),
        ("alloc", 6144, "where"), ("free", None, "")]
check(sizes[:9] == want, "inference_mode: %s,\nwant %s" % (sizes[:9], want))


# --- rule sdpa_backend and sdpa_rng_host --------------------------------------------------------
def attention(dtype, mask=False):
    def fn():
        # B=2, H=4, L=128, D=64
        q, k, v = (torch.randn(2, 4, 128, 64, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
        m = torch.zeros(128, 128, device="cuda", dtype=dtype) if mask else None
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=not mask)
        out.sum().backward()
    return fn


# 8.0, bfloat16, no mask: flash. Output 2*4*128*64*2 = 131072 B, log-sum-exp float32
# 2*4*128*4 = 4096 B; the seed and offset stay on the host (no 16 and 8 B blocks); the math
# path's attention matrix 2*4*128*128*2 = 262144 B never appears
_, _, evs = run("flash", attention(torch.bfloat16))
tags = allocs(evs)
fwd = [s for s, t in tags if t.startswith("_scaled_dot_product_flash_attention")]
check(fwd == [131072, 4096], "flash forward: %s" % tags)
check(not any(s == 262144 for s, _ in tags), "flash: no attention matrix: %s" % tags)
check(any(t.startswith("backward:") and "flash_attention_backward" in t for _, t in tags),
      "flash backward: %s" % tags)
# 7.0 (V100), float16: no flash (needs 8.0), memory-efficient: output 131072 B, log-sum-exp
# 2*4*128*4 = 4096 B (L = 128 is already a multiple of 32)
_, _, evs = run("efficient", attention(torch.float16), cc="7.0")
fwd = [s for s, t in allocs(evs) if t.startswith("_scaled_dot_product_efficient_attention")]
check(fwd == [131072, 4096], "efficient forward on 7.0: %s" % allocs(evs))
# 8.0 with a mask: flash takes none, memory-efficient does
_, _, evs = run("masked", attention(torch.bfloat16, mask=True))
check(any(t.startswith("_scaled_dot_product_efficient_attention") for _, t in allocs(evs)),
      "mask on 8.0: memory-efficient: %s" % allocs(evs))
# 7.0, bfloat16: neither kernel (bfloat16 needs 8.0): math, which materialises the 2*4*128*128
# scores (bfloat16: 262144 B)
_, _, evs = run("math", attention(torch.bfloat16), cc="7.0")
check(any(s == 262144 for s, _ in allocs(evs)), "math on 7.0 bfloat16 has the score matrix: %s" % allocs(evs))


# --- rule optimizer_foreach: AdamW's foreach temporaries, all live together ---------------------
with torch.device("meta"):
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
opt = torch.optim.AdamW(mlp.parameters())


def train(model):
    loss = model(torch.randn(32, 64, device="cuda")).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()


counts, _, evs = run("adamw", train, mlp)
sq = [s for s, t in allocs(evs) if t == "_foreach_sqrt"]
# one temporary per parameter: 65536 + 1024 + 65536 + 256 B, allocated before any is freed
check(sorted(sq) == sorted([65536, 1024, 65536, 256]), "foreach sqrt temporaries: %s" % sq)
names = [e["name"] for e in evs if e["op"] == "mark"]
check(names == ["model loaded", "optimizer step 1"], "marks: %s" % names)
check(counts["optimizer_steps"] == 1, "one optimizer step: %s" % counts)
check(any(t == "0:addmm" for _, t in allocs(evs)), "tags by module path: %s" % allocs(evs)[:6])
check(any(t.startswith("backward:2:") for _, t in allocs(evs)), "backward tags by module: %s" % allocs(evs))


# --- recording(): mark(stop=True) ends it and still writes; a failure writes nothing ------------
path = os.path.join(tmp, "stopped.jsonl")
with gpusim.recording(path, compute_capability="8.0") as rec:
    kept = torch.empty(8, device="cuda")  # 32 B
    gpusim.mark("here", stop=True)
    torch.empty(16, device="cuda")  # never runs
_, evs = events(path)
check(allocs(evs) == [(32, "empty")] and evs[-1] == {"op": "mark", "name": "here"},
      "stopped at the mark: %s" % evs[-3:])
# side streams: an allocation under torch.cuda.stream(s) carries s's number, and a matmul there
# takes that stream's own cuBLAS workspace; torch.cuda.Event and the memory-history calls of
# profiling scripts answer without a GPU
path = os.path.join(tmp, "streams.jsonl")
with gpusim.recording(path, compute_capability="8.0"):
    a = torch.randn(16, 16, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        b = a @ a
    c = a @ a
    torch.cuda.Event(enable_timing=True).record()
    torch.cuda.memory._record_memory_history(max_entries=10)
    torch.cuda.empty_cache()
_, evs = events(path)
check(evs[-1] == {"op": "empty_cache"}, "torch.cuda.empty_cache() is an event: %s" % evs[-1])
body = evs[evs.index({"op": "mark", "name": "model loaded"}) + 1:]
got = [(e["size"], e.get("stream", 0), e.get("tag")) for e in body if e["op"] == "alloc"]
want = [(1024, 0, "randn"), (1024, 1, "mm"), (8519680, 1, "cuBLAS workspace"), (1024, 0, "mm"),
        (8519680, 0, "cuBLAS workspace")]
check(got == want, "streams: %s, want %s" % (got, want))


# the program's own `except Exception` does not stop the stop (StopRecording is a BaseException)
path = os.path.join(tmp, "caught.jsonl")
with gpusim.recording(path, compute_capability="8.0"):
    try:
        gpusim.mark("stop", stop=True)
    except Exception:
        check(False, "StopRecording was caught by except Exception")
check(os.path.exists(path), "the stopped recording wrote its trace")
path = os.path.join(tmp, "failed.jsonl")
try:
    with gpusim.recording(path, compute_capability="8.0"):
        torch.empty(8, device="cuda")
        raise ValueError("the program failed")
except ValueError:
    pass
check(not os.path.exists(path), "a failed recording writes no trace")
check(sorted(os.listdir(tmp)) == sorted(f for f in os.listdir(tmp) if not f.startswith(".gpusim-record-")),
      "no temporary file left: %s" % os.listdir(tmp))


# .item() on a recorded tensor: RecordError naming the op
try:
    with gpusim.recording(os.path.join(tmp, "item.jsonl"), compute_capability="8.0"):
        torch.ones(3, device="cuda").sum().item()
    check(False, ".item() raised nothing")
except gpusim.RecordError as e:
    check("_local_scalar_dense" in str(e) and "values" in str(e), "the message names the op: %s" % e)

# nonzero's size depends on the values; a CPU tensor where the CUDA build has a GPU one
for body, words in ((lambda: torch.ones(3, device="cuda").nonzero(), "aten.nonzero.default on a CUDA tensor: its result "
                     "depends on the tensor's values"),
                    (lambda: torch.ones(3, device="cuda") + torch.ones(3), "aten.add.Tensor on a CUDA tensor: it met a "
                     "tensor on another device")):
    try:
        with gpusim.recording(os.path.join(tmp, "bad.jsonl"), compute_capability="8.0"):
            body()
        check(False, "%s raised nothing" % words)
    except gpusim.RecordError as e:
        check(words in str(e), "message: %s" % e)
check(not os.path.exists(os.path.join(tmp, "bad.jsonl")), "no trace after a RecordError")

finish()
