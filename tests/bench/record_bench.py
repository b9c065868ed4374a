"""The recorder's speed (scripts/bench): one AdamW training step of Llama 2 7B (bf16, batch 1,
sequence 2048, from its config on the meta device) and of GPT-2 small (bf16, batch 8, 1024),
recorded by gpusim.recording on the CPU: seconds per step and events written per second, for
the first step (which also creates the optimizer's state) and the second.
Usage: record_bench.py SOURCE_DIR (with torch and transformers importable)."""

import os
import sys
import tempfile
import time

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(src, "python"))
import torch  # noqa: E402
import transformers as T  # noqa: E402
import gpusim  # noqa: E402

MODELS = {
    "llama2-7b": (T.LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
                                num_key_value_heads=32, vocab_size=32000, max_position_embeddings=4096), 1, 2048),
    "gpt2-small": (T.GPT2Config(), 8, 1024),
}
out = tempfile.mkdtemp(prefix="gpusim-record-bench-")
print("recorder (gpusim.recording, torch %s on the CPU, compute capability 8.0):" % torch.__version__)
for name, (cfg, batch, seq) in MODELS.items():
    cfg._attn_implementation = "sdpa"
    with torch.device("meta"):
        model = T.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters())
    path = os.path.join(out, name + ".jsonl")
    with gpusim.recording(path, compute_capability="8.0", capacity_bytes=80 << 30, roots=(model,)) as rec:
        for step in (1, 2):
            t, n = time.perf_counter(), rec.events
            ids = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")
            model(input_ids=ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad()
            dt = time.perf_counter() - t
            print("  %-11s step %d  %6.2f s/step  %8d events  %9.0f events/s"
                  % (name, step, dt, rec.events - n, (rec.events - n) / dt))
    os.unlink(path)
os.rmdir(out)
