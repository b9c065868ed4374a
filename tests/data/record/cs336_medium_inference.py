"""The workload of ../shared/realtraces/torch_snapshot_cs336_midrun_inference.pickle (also
tests/data/import/), written anew: Stanford CS336 assignment 2 (github.com/Wedsonlin/
assignment2-systems at 8630bcf, which added the snapshot; MIT, "Copyright 2025 Stanford
University", tests/data/import/LICENSE.cs336-wedsonlin.txt). Its cs336_systems/nsys_profile.py
(memory_profile, pattern forward-only) builds the assignment's Transformer LM
(cs336-basics/cs336_basics/model.py: pre-norm blocks of RMSNorm, attention with rotary
positions and a causal mask written by hand, SwiGLU, no weight tying) on the CPU, moves it to
the card, makes the token ids of 5 warm-up passes and 1 measured pass (batch 4), runs the
warm-ups under torch.inference_mode in eval mode with autocast off (the script's default;
every activation in the snapshot is float32), and turns on _record_memory_history just before
the measured pass. "medium" is scripts/run_profile_configs.sh's d_model 1024, d_ff 4096,
24 layers, 16 heads; vocabulary 10000; context 128 for this snapshot.

The model's einsum and rearrange calls come from einops: the einsum strings below are the
ones einops hands to torch.einsum for its patterns (axis names become letters in order of
appearance), and each rearrange is the reshape and permute einops makes of it. Local
variables keep the upstream names and order: CPython frees a frame's locals in that order,
and the snapshot's frees follow it."""
import argparse
import contextlib
import math

import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        std = math.sqrt(2 / (d_in + d_out))
        w = torch.empty(d_out, d_in)
        self.weight = nn.Parameter(nn.init.trunc_normal_(w, std=std, a=-3 * std, b=3 * std))

    def forward(self, x):
        # einops "... d_in, d_out d_in -> ... d_out"
        return torch.einsum("...a,ba->...b", x, self.weight)


class Embedding(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        w = torch.empty(vocab_size, d_model)
        self.weight = nn.Parameter(nn.init.trunc_normal_(w, std=1.0, a=-3.0, b=3.0))

    def forward(self, token_ids):
        return self.weight[token_ids, :]


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x):
        in_dtype = x.dtype
        x = x.to(torch.float32)
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        x = x * rms
        return (self.weight * x).to(in_dtype)


class RotaryEmbedding(nn.Module):
    def __init__(self, context_length, dim, theta=10000.0):
        super().__init__()
        half = torch.arange(0, dim, 2) / dim
        angles = torch.outer(torch.arange(context_length).float(), torch.tensor(theta) ** -half)
        self.register_buffer("_freq_cis_cache", torch.stack((torch.cos(angles), torch.sin(angles))),
                             persistent=False)

    def forward(self, x, pos_ids):
        # einops "... (half_d xy) -> xy ... half_d" with xy=2, then unbind: views of x
        x1, x2 = x.unflatten(-1, (-1, 2)).movedim(-1, 0).unbind(0)
        seq_len = x.size(-2)
        cos, sin = self._freq_cis_cache[:, :seq_len, :].unbind(0)
        x1_rot = cos * x1 - sin * x2
        x2_rot = sin * x1 + cos * x2
        result = torch.concat((x1_rot, x2_rot), dim=-1)
        return result


def softmax(x, dim=-1):
    rescaled_input = x - torch.max(x, dim=dim, keepdim=True)[0]
    exponentiated_rescaled_input = torch.exp(rescaled_input)
    return exponentiated_rescaled_input / torch.sum(exponentiated_rescaled_input, dim=dim, keepdim=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = K.shape[-1]
    # einops "... query d_k, ... key d_k -> ... query key"
    attention_scores = torch.einsum("...ab,...cb->...ac", Q, K) / math.sqrt(d_k)
    if mask is not None:
        attention_scores = torch.where(mask, attention_scores, float("-inf"))
    attention_weights = softmax(attention_scores, dim=-1)
    # einops "... query key, ... key d_v -> ... query d_v"
    return torch.einsum("...ab,...bc->...ac", attention_weights, V)


class CausalMultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, positional_encoder):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.q_proj = Linear(d_model, d_model)
        self.k_proj = Linear(d_model, d_model)
        self.v_proj = Linear(d_model, d_model)
        self.output_proj = Linear(d_model, d_model)
        self.positional_encoder = positional_encoder

    def forward(self, x, token_positions=None):
        *batch_dims, sequence_length, d_model = x.size()
        Q = self.q_proj(x)
        K = self.k_proj(x)
        V = self.v_proj(x)
        # einops "... seq (heads d) -> ... heads seq d": views
        Q, K, V = (X.unflatten(-1, (self.num_heads, -1)).transpose(-3, -2) for X in (Q, K, V))
        if self.positional_encoder is not None:
            Q = self.positional_encoder(Q, token_positions)
            K = self.positional_encoder(K, token_positions)
        iota = torch.arange(sequence_length, device=x.device)
        qi = iota.unsqueeze(1)
        kj = iota.unsqueeze(0)
        causal_mask = qi >= kj
        causal_mask = causal_mask.__getitem__((None,) * len(batch_dims) + (...,))
        attn_output = scaled_dot_product_attention(K=K, Q=Q, V=V, mask=causal_mask)
        # einops "batch heads seq d_v -> batch seq (heads d_v)": a permute, then a reshape that copies
        attn_output = attn_output.permute(0, 2, 1, 3).reshape(x.size(0), sequence_length, -1).contiguous()
        output = self.output_proj(attn_output)
        return output


def silu(x):
    return x * torch.sigmoid(x)


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = Linear(d_model, d_ff)
        self.w2 = Linear(d_ff, d_model)
        self.w3 = Linear(d_model, d_ff)

    def forward(self, x):
        return self.w2(silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, positional_encoder):
        super().__init__()
        self.attn = CausalMultiHeadSelfAttention(d_model, num_heads, positional_encoder)
        self.ffn = SwiGLU(d_model, d_ff)
        self.ln1 = RMSNorm(d_model)
        self.ln2 = RMSNorm(d_model)

    def forward(self, x):
        x_attn = self.attn(self.ln1(x))
        attn_sublayer_output = x + x_attn
        x_ffn = self.ffn(self.ln2(attn_sublayer_output))
        ffn_sublayer_output = attn_sublayer_output + x_ffn
        return ffn_sublayer_output


class BasicsTransformerLM(nn.Module):
    def __init__(self, vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta=10000.0):
        super().__init__()
        self.config = {"vocab_size": vocab_size, "context_length": context_length}
        self.token_embeddings = Embedding(vocab_size, d_model)
        self.positional_encoder = RotaryEmbedding(context_length, d_model // num_heads, rope_theta)
        self.layers = nn.ModuleList(
            [TransformerBlock(d_model, num_heads, d_ff, self.positional_encoder) for _ in range(num_layers)])
        self.ln_final = RMSNorm(d_model)
        self.lm_head = Linear(d_model, vocab_size)

    def forward(self, x):
        _, sequence_length = x.size()
        embedded_tokens = self.token_embeddings(x)
        x = embedded_tokens  # the embedding stays referenced until the pass returns
        for layer in self.layers:
            x = layer(x)
        x = self.ln_final(x)
        logits = self.lm_head(x)
        return logits


def memory_profile(model, device, warmup_steps=5, batch_size=4):
    vocab, context = model.config["vocab_size"], model.config["context_length"]
    warmup_inputs = torch.randint(0, vocab, (warmup_steps, batch_size, context), dtype=torch.long, device=device)
    execution_inputs = torch.randint(0, vocab, (1, batch_size, context), dtype=torch.long, device=device)
    model.eval()
    with torch.inference_mode():
        for i in range(warmup_steps):
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=False):
                model(warmup_inputs[i])
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.memory._record_memory_history(max_entries=1000000)  # the snapshot's trace starts here
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=False):
            model(execution_inputs[0])
            torch.cuda.synchronize()
    print("Peak memory allocated: %s MB" % (torch.cuda.max_memory_allocated() / 1024 / 1024))
    torch.cuda.memory._record_memory_history(enabled=None)


@contextlib.contextmanager
def no_random_init():
    """nn.init.trunc_normal_ leaves the tensor as it is, while the model is built."""
    keep = nn.init.trunc_normal_
    nn.init.trunc_normal_ = lambda t, *_a, **_k: t
    try:
        yield
    finally:
        nn.init.trunc_normal_ = keep


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab_size", type=int, default=10000)
    p.add_argument("--context_length", type=int, default=128)
    p.add_argument("--d_model", type=int, default=1024)
    p.add_argument("--num_layers", type=int, default=24)
    p.add_argument("--num_heads", type=int, default=16)
    p.add_argument("--d_ff", type=int, default=4096)
    p.add_argument("--warmup-steps", type=int, default=5)
    p.add_argument("--skip-init", action="store_true",
                   help="not upstream: leave the weights' random initialisation out of the CPU build (half "
                   "a minute; a recording never reads the values): the same allocations in the same order")
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with no_random_init() if args.skip_init else contextlib.nullcontext():
        model = BasicsTransformerLM(args.vocab_size, args.context_length, args.d_model, args.num_layers,
                                    args.num_heads, args.d_ff)
    model.to(device)
    torch.optim.AdamW(model.parameters())  # made upstream, never stepped: it allocates nothing
    memory_profile(model, device, args.warmup_steps)


if __name__ == "__main__":
    main()
