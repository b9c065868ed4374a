"""A torchrun-style FSDP2 training script, unmodified for gpusim record --ranks: a Llama-like
model (RMSNorm, attention, SwiGLU MLP) sharded per layer with fully_shard, bf16 parameters,
AdamW. On a cluster: torchrun --nproc-per-node=8 fsdp2_llama.py [--layers=N --dim=D ...]."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import fully_shard

p = argparse.ArgumentParser()
p.add_argument("--vocab", type=int, default=1003)
p.add_argument("--dim", type=int, default=64)
p.add_argument("--ffn", type=int, default=172)
p.add_argument("--head-dim", type=int, default=32)
p.add_argument("--layers", type=int, default=2)
p.add_argument("--batch", type=int, default=2)
p.add_argument("--seq", type=int, default=32)
p.add_argument("--steps", type=int, default=2)
args = p.parse_args()


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Block(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.attn_norm, self.mlp_norm = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up, self.down = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False), nn.Linear(f, d, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        y = self.attn_norm(x)
        q, k, v = (m(y).view(b, t, -1, args.head_dim).transpose(1, 2) for m in (self.q, self.k, self.v))
        x = x + self.o(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, -1))
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(args.vocab, args.dim)
        self.layers = nn.ModuleList(Block(args.dim, args.ffn) for _ in range(args.layers))
        self.norm = RMSNorm(args.dim)
        self.lm_head = nn.Linear(args.dim, args.vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
with torch.device("cuda"):
    model = Llama().to(torch.bfloat16)
for layer in model.layers:
    fully_shard(layer)
fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(args.steps):
    ids = torch.randint(0, args.vocab, (args.batch, args.seq), device="cuda")
    F.cross_entropy(model(ids).flatten(0, 1).float(), ids.flatten()).backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
