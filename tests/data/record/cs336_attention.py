"""The workload of ../shared/realtraces/torch_snapshot_cs336_from_empty.pickle, written anew:
Stanford CS336 assignment 2 (github.com/silmont2000/assignment2-systems,
cs336_systems/trace_peak_memory.py at 133f0643, MIT) times attention written by hand, the
scores through a max-subtracted softmax, over Q, K and V of batch 8, 4096 positions and 16
features in float32, forward and backward, recorded from an empty allocator on a CUDA card.
The einsum strings are the ones einops hands to torch.einsum for its patterns."""
import torch


def softmax_last(x):
    top = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - top)
    return e / torch.sum(e, dim=-1, keepdim=True)


def attention(q, k, v):
    s = torch.einsum("...qd,...kd->...qk", q, k)
    s = s / (q.shape[-1] ** 0.5)
    return torch.einsum("...qk,...kd->...qd", softmax_last(s), v)


def main():
    q, k, v = (torch.randn(8, 4096, 16, device="cuda", requires_grad=True) for _ in range(3))
    out = attention(q, k, v)
    loss = out.sum()
    loss.backward()
    return q, k, v, out, loss  # alive when the snapshot was taken


if __name__ == "__main__":
    kept = main()
