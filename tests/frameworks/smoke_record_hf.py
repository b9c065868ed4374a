"""gpusim.record on Hugging Face transformers models built from their configs on the meta
device (no weights): Llama, GPT-2, BERT, Mistral and Qwen2, small shapes, one AdamW training
step each in bf16 on an 8.0 card. Each trace has the parameters first, the model loaded mark,
one optimizer step, flash attention (the models' sdpa path, bf16 on 8.0, no mask needed for the
causal ones) and the sizes the shapes give: the embedding's gradient is vocab x hidden x 2 B."""

import json
import os
import sys
import tempfile

from _smoke import check, finish, need

torch = need("torch")
transformers = need("transformers")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpusim  # noqa: E402

tmp = tempfile.mkdtemp(prefix="gpusim-record-hf-")
H, LAYERS, HEADS, VOCAB, B, L = 256, 2, 4, 1024, 2, 128
small = dict(vocab_size=VOCAB, hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
             intermediate_size=4 * H, max_position_embeddings=512)
configs = {
    "llama": (transformers.LlamaConfig(**small, num_key_value_heads=HEADS), transformers.AutoModelForCausalLM),
    "mistral": (transformers.MistralConfig(**small, num_key_value_heads=HEADS), transformers.AutoModelForCausalLM),
    "qwen2": (transformers.Qwen2Config(**small, num_key_value_heads=HEADS), transformers.AutoModelForCausalLM),
    "gpt2": (transformers.GPT2Config(vocab_size=VOCAB, n_embd=H, n_layer=LAYERS, n_head=HEADS, n_positions=512),
             transformers.AutoModelForCausalLM),
    "bert": (transformers.BertConfig(**small), transformers.AutoModelForMaskedLM),
}
for name, (cfg, auto) in configs.items():
    cfg._attn_implementation = "sdpa"
    with torch.device("meta"):
        model = auto.from_config(cfg, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters())

    def step(m):
        ids = torch.randint(0, VOCAB, (B, L), device="cuda")
        m(input_ids=ids, labels=ids).loss.backward()
        opt.step()
        opt.zero_grad()

    path = os.path.join(tmp, name + ".jsonl")
    try:
        counts = gpusim.record(path, step, model, compute_capability="8.0")
    except Exception as e:  # noqa: BLE001 — a model that cannot be recorded is the failure reported
        check(False, "%s: %s: %s" % (name, type(e).__name__, e))
        continue
    with open(path) as f:
        evs = [json.loads(line) for line in f][1:]
    marks = [e["name"] for e in evs if e["op"] == "mark"]
    check(marks == ["model loaded", "optimizer step 1"], "%s marks: %s" % (name, marks))
    n_params = sum(1 for _ in model.parameters())
    first = [e.get("tag", "") for e in evs[:n_params]]
    check(all(t.startswith("parameter ") for t in first), "%s: parameters first: %s" % (name, first[:3]))
    tags = [e.get("tag", "") for e in evs if e["op"] == "alloc"]
    check(any("flash_attention" in t for t in tags), "%s: flash attention on 8.0 in bf16" % name)
    # the word embedding's gradient: 1024 x 256 x 2 = 524288 B, allocated in backward
    check(any(e["op"] == "alloc" and e["size"] == VOCAB * H * 2 and e.get("tag", "").startswith("backward:")
              for e in evs), "%s: a %d B embedding gradient" % (name, VOCAB * H * 2))
    check(counts["optimizer_steps"] == 1 and counts["events"] == len(evs), "%s counts: %s" % (name, counts))
finish()
