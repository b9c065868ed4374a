"""gpusim.record(..., ranks=N) (python/gpusim/record_dist.py) on PyTorch's CPU build: FSDP2,
DDP and tensor-parallel programs recorded rank by rank on torch.distributed's fake process
group, into a directory laid out as `gpusim synth --ranks` writes one. Checks each rank's
sharded parameter, gradient and optimizer bytes, the collectives' buffers and their streams,
and the header's NCCL bytes, with the arithmetic in comments. The card is given by its
compute capability so that no libgpusim.so is needed."""

import json
import os
import sys
import tempfile

from _smoke import check, finish, need

torch = need("torch")
need("torch.distributed.fsdp")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpusim  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

tmp = tempfile.mkdtemp(prefix="gpusim-record-dist-")
VOCAB, D, FFN, HEAD = 1003, 64, 172, 32  # 1003 and 172 rows do not divide by 8: uneven shards


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm, self.mlp_norm = RMSNorm(D), RMSNorm(D)
        self.q, self.k, self.v, self.o = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(D, FFN, bias=False), nn.Linear(D, FFN, bias=False)
        self.down = nn.Linear(FFN, D, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        y = self.attn_norm(x)
        q, k, v = (m(y).view(b, t, -1, HEAD).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o(a)
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList(Block() for _ in range(layers))
        self.norm = RMSNorm(D)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def train(model, opt, steps=1):
    for _ in range(steps):
        ids = torch.randint(0, VOCAB, (2, 32), device="cuda")
        F.cross_entropy(model(ids).flatten(0, 1).float(), ids.flatten()).backward()
        opt.step()
        opt.zero_grad()


def trace(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return lines[0], lines[1:]


def allocs(evs, tag=None):
    return [(e["size"], e.get("stream", 0)) for e in evs if e["op"] == "alloc" and (tag is None or e.get("tag") == tag)]


def record(name, fn, ranks):
    out = os.path.join(tmp, name)
    counts = gpusim.record(out, fn, ranks=ranks, device="A100-80GB", compute_capability="8.0")
    return out, counts


# --- FSDP2 on 8 ranks: a Llama-like model in bf16, AdamW, one step ----------------------------
def fsdp2():
    from torch.distributed.fsdp import fully_shard
    import torch.distributed as dist
    dist.init_process_group("nccl")  # the recorder makes it the fake group of 8 ranks
    model = Llama().to(torch.bfloat16).cuda()
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    train(model, torch.optim.AdamW(model.parameters(), lr=1e-4))


out, counts = record("fsdp2", fsdp2, 8)
with open(os.path.join(out, "job.json")) as f:
    job = json.load(f)
check(sorted(os.listdir(out)) == ["job.json"] + ["rank-%05d.jsonl" % r for r in range(8)],
      "the directory as synth --ranks writes it: %s" % sorted(os.listdir(out)))
check(job["format"] == "gpusim-job" and job["version"] == 1 and job["ranks"] == 8 and job["name"] == "fsdp2"
      and [t["file"] for t in job["traces"]] == ["rank-%05d.jsonl" % r for r in range(8)]
      and [t["rank"] for t in job["traces"]] == list(range(8)), "job.json: %s" % job)
check(len(counts["ranks"]) == 8 and counts["optimizer_steps"] == 1, "counts: %s" % counts)
# each rank holds ceil(rows / 8) rows of every parameter (FSDP2 shards dim 0 and pads every
# rank's shard to rank 0's, _fsdp_param.py _init_sharded_param), in bf16 (2 B):
#   a block: norms 64 -> 8 elements each; q, k, v, o [64, 64] -> 8 x 64 = 512 each;
#            gate, up [172, 64] -> 22 x 64 = 1408 each (rank 7 has 172 - 7 x 22 = 18 rows, padded
#            to 22); down [64, 172] -> 8 x 172 = 1376
#            = 8 + 8 + 4 x 512 + 2 x 1408 + 1376 = 6256 elements = 12512 B
#   the root: embed and lm_head [1003, 64] -> 126 x 64 = 8064 each (rank 7: 1003 - 7 x 126 = 121
#            rows, padded to 126); norm 64 -> 8: 16136 elements = 32272 B
BLOCK_SHARDS = [16, 16, 1024, 1024, 1024, 1024, 2816, 2816, 2752]  # the order of named_parameters()
ROOT_SHARDS = [16128, 16, 16128]                                   # embed, norm, lm_head
BLOCK, ROOT = sum(BLOCK_SHARDS), sum(ROOT_SHARDS)
check((BLOCK, ROOT) == (12512, 32272), "shard sums %d, %d" % (BLOCK, ROOT))
first = None
for r in range(8):
    header, evs = trace(os.path.join(out, "rank-%05d.jsonl" % r))
    meta = header["meta"]
    # one communicator of 8 ranks (the default group FSDP2's mesh uses): NCCL's ring of 24
    # channels x 10 MiB = 251658240 B outside the allocator (traces/synth/nccl.c, as synth)
    check(header["name"] == "fsdp2 rank %d/8" % r and meta["rank"] == r and meta["ranks"] == 8
          and meta["nccl_bytes"] == 251658240 and meta["non_pytorch_bytes"] == 251658240
          and meta["nccl_channels"] == 24 and meta["communicators"] == [{"name": "0", "ranks": 8}],
          "rank %d header: %s" % (r, header))
    check(job["traces"][r]["nccl_bytes"] == 251658240, "job.json rank %d nccl_bytes" % r)
    shards = [s for s, _ in allocs(evs, "new_zeros")]
    check(shards == BLOCK_SHARDS * 2 + ROOT_SHARDS, "rank %d shards: %s" % (r, shards))
    # the all-gather output: 8 ranks x the group's padded shards, on the all-gather copy-in
    # stream (FSDP2's first torch.cuda.Stream: 1): the root's 8 x 32272 = 258176 B before the
    # forward (FSDP2 keeps the root unsharded after forward), each block's 8 x 12512 = 100096 B
    # before its forward and again before its backward
    gathers = [e for e in evs if e["op"] == "alloc" and e.get("stream") == 1]
    check(sorted(e["size"] for e in gathers) == [100096] * 4 + [258176],
          "rank %d all-gathers: %s" % (r, [(e["size"], e.get("tag")) for e in gathers]))
    # the reduce-scatter: its input (8 x the shards: 100096 B a block, 258176 B the root) on the
    # current stream, its output (the sharded gradients: 12512 B, 32272 B) on FSDP2's
    # reduce-scatter stream (its third: 3), live until zero_grad
    outputs = sorted(s for s, st in allocs(evs) if st == 3)
    check(outputs == [12512, 12512, 32272], "rank %d reduce-scatter outputs: %s" % (r, outputs))
    # AdamW's state: exp_avg and exp_avg_sq (zeros_like) of each parameter's local shard, which
    # is the padded one without its padding, bf16: 2 x (2 x 12512 + 32272) = 114592 B on ranks
    # 0-6; rank 7's embed and lm_head have 121 rows of 126 and its gate and up 18 of 22:
    # 2 x 2 B x ((126 - 121) x 64 x 2 + (22 - 18) x 64 x 2 x 2) = 6656 B less, 107936 B
    states = sum(s for s, _ in allocs(evs, "zeros_like"))
    want = 2 * (2 * BLOCK + ROOT) - (6656 if r == 7 else 0)
    check(states == want == (107936 if r == 7 else 114592), "rank %d optimizer state %d B" % (r, states))
    # the CPU run's DTensor wrappers hold nothing: no allocation for them (they were "detach"es
    # of the whole parameter's size)
    check(allocs(evs, "detach") == [], "rank %d: a wrapper recorded: %s" % (r, allocs(evs, "detach")))
    sizes = [(e["op"], e.get("size"), e.get("stream", 0)) for e in evs]
    first = first or sizes
    # FSDP2 pads every shard to rank 0's, so the ranks' traces have the same sizes but for the
    # optimizer's state and temporaries of rank 7's uneven shards
    check((sizes == first) == (r != 7), "rank %d's sizes against rank 0's" % r)


# --- DDP on 2 ranks: fp32, AdamW, two steps ---------------------------------------------------
def ddp():
    from torch.nn.parallel import DistributedDataParallel as DDP
    import torch.distributed as dist
    dist.init_process_group("nccl")
    model = DDP(Llama().cuda(), device_ids=[0])
    train(model, torch.optim.AdamW(model.parameters(), lr=1e-4), steps=2)


out, counts = record("ddp", ddp, 2)
# parameters: embed and lm_head 1003 x 64 = 64192 each, a block 64 + 4 x 4096 + 64 + 3 x 11008
# = 49536 (two), norm 64: 227520 elements x 4 B = 910080 B
for r in range(2):
    header, evs = trace(os.path.join(out, "rank-%05d.jsonl" % r))
    # construction: _sync_module_states broadcasts the states flattened (one 910080 B buffer,
    # below its 250 MiB bucket), then the reducer's one gradient bucket (below 25 MiB); after the
    # first iteration the buckets are rebuilt in gradient order, the first capped at 1 MiB
    # (dist._DEFAULT_FIRST_BUCKET_BYTES): 910080 B is still one bucket, a new one
    check(allocs(evs, "cat") == [(910080, 0)], "rank %d broadcast buffer: %s" % (r, allocs(evs, "cat")))
    buckets = [s for s, _ in allocs(evs, "empty") if s == 910080]
    check(len(buckets) == 2, "rank %d buckets: %s" % (r, allocs(evs, "empty")))
    check(header["meta"]["nccl_bytes"] == 251658240 and header["meta"]["optimizer_steps"] == 2,
          "rank %d: %s" % (r, header["meta"]))


# a DDP communication hook cannot run on the fake group: the message says so, nothing written
def ddp_hook():
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    import torch.distributed as dist
    dist.init_process_group("nccl")
    model = DDP(Llama().cuda(), device_ids=[0])
    model.register_comm_hook(None, default_hooks.allreduce_hook)


try:
    record("ddp_hook", ddp_hook, 2)
    check(False, "a DDP communication hook recorded")
except gpusim.RecordError as e:
    check("communication hooks cannot run on the fake process group" in str(e), "message: %s" % e)
check(not os.path.exists(os.path.join(tmp, "ddp_hook")), "no directory after a failed rank")
check([n for n in os.listdir(tmp) if n.startswith(".gpusim-record-")] == [], "no temporary directory left")


# --- tensor parallelism on 2 ranks: q, k, v, gate, up by columns, o and down by rows --------
def tp():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
    mesh = init_device_mesh("cuda", (2,))  # initializes the (fake) default group itself
    model = Llama().cuda()
    for block in model.layers:
        parallelize_module(block, mesh, {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(),
                                         "o": RowwiseParallel(), "gate": ColwiseParallel(),
                                         "up": ColwiseParallel(), "down": RowwiseParallel()})
    # DTensor and plain parameters cannot share a foreach kernel (on CUDA too)
    train(model, torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False))


out, counts = record("tp", tp, 2)
for r in range(2):
    header, evs = trace(os.path.join(out, "rank-%05d.jsonl" % r))
    # each block's row-parallel o and down end in an all-reduce of [2, 32, 64] fp32 = 16384 B
    # (_c10d_functional.all_reduce clones its input), 2 blocks; its autograd wrap is an alias
    # on CUDA (rule collective_wrap_alias), no second 16384 B
    check(allocs(evs, "layers.0:all_reduce") == [(16384, 0)] * 2 and
          allocs(evs, "layers.1:all_reduce") == [(16384, 0)] * 2,
          "rank %d all-reduces: %s" % (r, [(e.get("tag"), e["size"]) for e in evs if "all_reduce" in e.get("tag", "")]))
    check(not any("_wrap_tensor_autograd" in e.get("tag", "") for e in evs), "rank %d: a wrap allocated" % r)
    # the local shards, fp32: q, k, v [32, 64] and o [64, 32] = 8192 B (8 of them in 2 blocks);
    # gate, up [86, 64] and down [64, 86] = 22016 B (6); replicated: the 5 norms 64 x 4 = 256 B,
    # embed and lm_head 1003 x 64 x 4 = 256768 B. AdamW (foreach=False) keeps exp_avg and
    # exp_avg_sq of each
    state = sorted(s for s, _ in allocs(evs, "zeros_like"))
    want = sorted(([8192] * 8 + [22016] * 6 + [256] * 5 + [256768] * 2) * 2)
    check(state == want, "rank %d optimizer state: %s" % (r, state))
    check(header["meta"]["communicators"] == [{"name": "0", "ranks": 2}] and header["meta"]["nccl_bytes"] == 251658240,
          "rank %d communicators: %s" % (r, header["meta"]))


# --- FSDP2 over tensor parallelism, a 2 x 2 mesh: two communicators per rank -----------------
def fsdp_tp():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
    mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("dp", "tp"))
    model = Llama().cuda()
    for block in model.layers:
        parallelize_module(block, mesh["tp"], {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(),
                                               "o": RowwiseParallel(), "gate": ColwiseParallel(),
                                               "up": ColwiseParallel(), "down": RowwiseParallel()})
        fully_shard(block, mesh=mesh["dp"])
    fully_shard(model, mesh=mesh["dp"])
    train(model, torch.optim.AdamW(model.parameters(), lr=1e-4))


out, counts = record("fsdp_tp", fsdp_tp, 4)
for r in range(4):
    header, evs = trace(os.path.join(out, "rank-%05d.jsonl" % r))
    meta = header["meta"]
    # every rank all-gathers over its data-parallel group (FSDP2) and all-reduces over its
    # tensor-parallel group: two rings, 2 x 251658240 = 503316480 B, what synth writes for
    # --ranks=4 --tp=2 (python/tests/test_record_dist.py checks the two agree)
    check(len(meta["communicators"]) == 2 and {c["ranks"] for c in meta["communicators"]} == {2}
          and meta["nccl_bytes"] == 503316480, "rank %d communicators: %s" % (r, meta))
    # q: columns over tp (32 of 64 rows), then rows over dp: 16 x 64 x 4 B = 4096 B; gate: 86
    # rows over tp, 43 over dp: 43 x 64 x 4 = 11008 B; the embedding (not tensor-parallel):
    # 502 of 1003 rows over dp (padded): 502 x 64 x 4 = 128512 B
    shards = [s for s, _ in allocs(evs, "new_zeros")]
    check(shards[2] == 4096 and shards[6] == 11008 and 128512 in shards, "rank %d shards: %s" % (r, shards))

finish()
