#!/usr/bin/env python3
"""Writes traces/examples/pinning-l4.jsonl: large temporaries pinned by small long-lived
blocks, the case `gpusim tune` answers with max_split_size_mb (README, "gpusim tune").

Each of 16 steps allocates a 530 MiB and a 270 MiB temporary (the sizes of a serving
engine's sampler buffers), frees them, then allocates ten 12 MiB blocks that live for
eight steps (KV-cache-like). Under PyTorch's defaults a 12 MiB request may split the
cached 530/270 MiB blocks, and the split keeps the next temporary from fitting: the cache
grows. Deterministic (no randomness): `python3 traces/examples/make_pinning.py OUT`.
"""
import json
import sys

MiB = 1 << 20
STEPS, KV_PER_STEP, KV_SIZE, KV_LIFE = 16, 10, 12 * MiB, 8


def main(path):
    lines = [json.dumps({
        "format": "gpusim-trace", "version": 1,
        "name": "large blocks pinned by small ones: 530/270 MiB temporaries, 12 MiB long-lived blocks",
        "time_unit": "us", "device": {"name": "L4"},
        "meta": {"made_by": "traces/examples/make_pinning.py", "steps": STEPS}}, separators=(",", ":"))]
    state = {"t": 0, "id": 0}

    def alloc(size, tag):
        state["id"] += 1
        state["t"] += 10
        lines.append(json.dumps({"op": "alloc", "id": state["id"], "size": size, "t": state["t"], "tag": tag},
                                separators=(",", ":")))
        return state["id"]

    def free(i):
        state["t"] += 10
        lines.append(json.dumps({"op": "free", "id": i, "t": state["t"]}, separators=(",", ":")))

    alloc(1024 * MiB, "weights")
    live = []
    for step in range(STEPS):
        logits = alloc(530 * MiB, "logits")
        probs = alloc(270 * MiB, "probs")
        free(logits)
        free(probs)
        for _ in range(KV_PER_STEP):
            live.append((step, alloc(KV_SIZE, "kv")))
        while live and live[0][0] <= step - KV_LIFE:
            free(live.pop(0)[1])
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "traces/examples/pinning-l4.jsonl")
