/* The transformer presets: published shapes, each with its source, and the
 * parameter counts they give (the closed form of transformer_estimate.c; tests
 * check both the closed form and the trace's weight bytes against these numbers).
 *
 * h hidden, L layers, I MLP width, V vocabulary, A heads, G KV heads, d head_dim,
 * q = A·d, k = G·d. A llama-family layer has
 *   q_proj h·q (+ q with qkv bias), k_proj and v_proj h·k each (+ k each),
 *   o_proj q·h, gate/up/down 3·h·I (MoE: E experts of 3·h·I and a router h·E),
 *   two RMSNorms 2h (+ 2d for Qwen3's q_norm and k_norm),
 * and the model adds embed_tokens V·h, a final norm h and, untied, lm_head V·h.
 *
 *  llama-7b, llama2-7b (meta-llama/Llama-2-7b-hf config.json: h 4096, L 32, A 32,
 *    G 32, I 11008, V 32000; LLaMA 1 7B has the same shape, Touvron et al. 2023):
 *    layer 4·4096² + 3·4096·11008 + 2·4096 = 202,383,360;
 *    32·202,383,360 + 2·131,072,000 + 4,096 = 6,738,415,616 (the model card: 7B)
 *  llama2-13b (Llama-2-13b-hf: h 5120, L 40, A 40, G 40, I 13824, V 32000):
 *    layer 4·5120² + 3·5120·13824 + 2·5120 = 317,204,480;
 *    40·317,204,480 + 2·163,840,000 + 5,120 = 13,015,864,320 (13B)
 *  llama2-70b (Llama-2-70b-hf: h 8192, L 80, A 64, G 8, d 128, I 28672, V 32000):
 *    layer 2·8192² + 2·8192·1024 + 3·8192·28672 + 2·8192 = 855,654,400;
 *    80·855,654,400 + 2·262,144,000 + 8,192 = 68,976,648,192 (70B)
 *  llama3-8b (Meta-Llama-3-8B config.json: h 4096, L 32, A 32, G 8, I 14336, V 128256):
 *    layer 2·4096² + 2·4096·1024 + 3·4096·14336 + 2·4096 = 218,112,000;
 *    32·218,112,000 + 2·525,336,576 + 4,096 = 8,030,261,248 (8B)
 *  llama3-70b (Meta-Llama-3-70B: h 8192, L 80, A 64, G 8, I 28672, V 128256):
 *    80·855,654,400 + 2·1,050,673,152 + 8,192 = 70,553,706,496 (70B)
 *  mistral-7b (mistralai/Mistral-7B-v0.1 config.json: h 4096, L 32, A 32, G 8,
 *    I 14336, V 32000): 32·218,112,000 + 2·131,072,000 + 4,096 = 7,241,732,096 (7.24B)
 *  mixtral-8x7b (mistralai/Mixtral-8x7B-v0.1: as mistral-7b with 8 experts, 2 routed
 *    per token): layer 2·4096² + 2·4096·1024 + 8·3·4096·14336 + 4096·8 + 2·4096
 *    = 1,451,270,144; 32·1,451,270,144 + 2·131,072,000 + 4,096 = 46,702,792,704 (46.7B)
 *  qwen2-0.5b (Qwen/Qwen2-0.5B config.json: h 896, L 24, A 14, G 2, d 64, I 4864,
 *    V 151936, tied, qkv bias): layer 896² + 896 + 2·(896·128 + 128) + 896² + 3·896·4864
 *    + 2·896 = 14,912,384; 24·14,912,384 + 136,134,656 + 896 = 494,032,768 (0.49B)
 *  qwen2-1.5b (Qwen2-1.5B: h 1536, L 28, A 12, G 2, d 128, I 8960, V 151936, tied):
 *    layer 2·1536² + 1536 + 2·(1536·256 + 256) + 3·1536·8960 + 2·1536 = 46,797,824;
 *    28·46,797,824 + 233,373,696 + 1,536 = 1,543,714,304 (1.54B)
 *  qwen2-7b (Qwen2-7B: h 3584, L 28, A 28, G 4, d 128, I 18944, V 152064, untied):
 *    layer 2·3584² + 3584 + 2·(3584·512 + 512) + 3·3584·18944 + 2·3584 = 233,057,792;
 *    28·233,057,792 + 2·544,997,376 + 3,584 = 7,615,616,512 (7.6B)
 *  qwen2-72b (Qwen2-72B: h 8192, L 80, A 64, G 8, I 29568, V 152064, untied):
 *    layer 2·8192² + 8192 + 2·(8192·1024 + 1024) + 3·8192·29568 + 2·8192 = 877,684,736;
 *    80·877,684,736 + 2·1,245,708,288 + 8,192 = 72,706,203,648 (72.7B)
 *  qwen3-0.6b (Qwen/Qwen3-0.6B config.json: h 1024, L 28, A 16, G 8, d 128, I 3072,
 *    V 151936, tied, q/k norms): layer 1024·2048 + 2·1024·1024 + 2048·1024 + 3·1024·3072
 *    + 2·1024 + 2·128 = 15,730,944; 28·15,730,944 + 155,582,464 + 1,024 = 596,049,920
 *    (the model card: 0.6B, 0.44B without embeddings)
 *  qwen3-8b (Qwen3-8B: h 4096, L 36, A 32, G 8, d 128, I 12288, V 151936, untied):
 *    layer 2·4096² + 2·4096·1024 + 3·4096·12288 + 2·4096 + 256 = 192,946,432;
 *    36·192,946,432 + 2·622,329,856 + 4,096 = 8,190,735,360 (8.2B, 6.95B non-embedding)
 *  qwen3-32b (Qwen3-32B: h 5120, L 64, A 64, G 8, d 128, I 25600, V 151936, untied):
 *    layer 2·5120·8192 + 2·5120·1024 + 3·5120·25600 + 2·5120 + 256 = 487,598,336;
 *    64·487,598,336 + 2·777,912,320 + 5,120 = 32,762,123,264 (32.8B, 31.2B non-embedding)
 *  BERT and GPT-2 are derived in transformer.c (Devlin et al. 2019; Radford et al.
 *  2019, the Hugging Face checkpoints bert-base-uncased, bert-large-uncased, gpt2,
 *  gpt2-medium).
 * Sequence and batch are not part of a model: the llama-family presets default to
 * seq 4096, batch 1, bf16 and fused (flash) attention, as Hugging Face's sdpa
 * attention runs it; llama-7b keeps the original seq 2048 and eager attention. */
#include "transformer.h"

#include <string.h>

typedef struct preset {
    const char *name;
    transformer_arch arch;
    uint64_t layers, hidden, heads, ffn, vocab, max_pos, type_vocab, seq, batch;
    synth_dtype dtype;
    uint64_t kv_heads, head_dim, experts, experts_active;
    bool tied, qkv_bias, qk_norm, flash;
} preset;

#define LLAMA TRANSFORMER_LLAMA
static const preset PRESETS[] = {
    {"bert-base", TRANSFORMER_BERT, 12, 768, 12, 3072, 30522, 512, 2, 128, 32, SYNTH_FP32, 0, 0, 0, 0, 0, 0, 0, 0},
    {"bert-large", TRANSFORMER_BERT, 24, 1024, 16, 4096, 30522, 512, 2, 512, 8, SYNTH_FP32, 0, 0, 0, 0, 0, 0, 0, 0},
    {"gpt2-small", TRANSFORMER_GPT2, 12, 768, 12, 3072, 50257, 1024, 0, 1024, 8, SYNTH_FP32, 0, 0, 0, 0, 0, 0, 0, 0},
    {"gpt2-medium", TRANSFORMER_GPT2, 24, 1024, 16, 4096, 50257, 1024, 0, 1024, 4, SYNTH_FP32, 0, 0, 0, 0, 0, 0, 0, 0},
    {"llama-7b", LLAMA, 32, 4096, 32, 11008, 32000, 4096, 0, 2048, 1, SYNTH_BF16, 0, 0, 0, 0, 0, 0, 0, 0},
    {"llama2-7b", LLAMA, 32, 4096, 32, 11008, 32000, 4096, 0, 4096, 1, SYNTH_BF16, 32, 128, 0, 0, 0, 0, 0, 1},
    {"llama2-13b", LLAMA, 40, 5120, 40, 13824, 32000, 4096, 0, 4096, 1, SYNTH_BF16, 40, 128, 0, 0, 0, 0, 0, 1},
    {"llama2-70b", LLAMA, 80, 8192, 64, 28672, 32000, 4096, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 0, 0, 0, 1},
    {"llama3-8b", LLAMA, 32, 4096, 32, 14336, 128256, 8192, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 0, 0, 0, 1},
    {"llama3-70b", LLAMA, 80, 8192, 64, 28672, 128256, 8192, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 0, 0, 0, 1},
    {"mistral-7b", LLAMA, 32, 4096, 32, 14336, 32000, 32768, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 0, 0, 0, 1},
    {"mixtral-8x7b", LLAMA, 32, 4096, 32, 14336, 32000, 32768, 0, 4096, 1, SYNTH_BF16, 8, 128, 8, 2, 0, 0, 0, 1},
    {"qwen2-0.5b", LLAMA, 24, 896, 14, 4864, 151936, 32768, 0, 4096, 1, SYNTH_BF16, 2, 64, 0, 0, 1, 1, 0, 1},
    {"qwen2-1.5b", LLAMA, 28, 1536, 12, 8960, 151936, 32768, 0, 4096, 1, SYNTH_BF16, 2, 128, 0, 0, 1, 1, 0, 1},
    {"qwen2-7b", LLAMA, 28, 3584, 28, 18944, 152064, 32768, 0, 4096, 1, SYNTH_BF16, 4, 128, 0, 0, 0, 1, 0, 1},
    {"qwen2-72b", LLAMA, 80, 8192, 64, 29568, 152064, 32768, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 0, 1, 0, 1},
    {"qwen3-0.6b", LLAMA, 28, 1024, 16, 3072, 151936, 40960, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 1, 0, 1, 1},
    {"qwen3-8b", LLAMA, 36, 4096, 32, 12288, 151936, 40960, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 0, 0, 1, 1},
    {"qwen3-32b", LLAMA, 64, 5120, 64, 25600, 151936, 40960, 0, 4096, 1, SYNTH_BF16, 8, 128, 0, 0, 0, 0, 1, 1},
};
#undef LLAMA

void transformer_defaults(transformer_config *c)
{
    memset(c, 0, sizeof *c);
    transformer_preset("gpt2-small", c);
    c->optimizer = SYNTH_ADAM;
    c->steps = 1;
    c->seed = 1;
}

bool transformer_preset(const char *name, transformer_config *c)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++) {
        const preset *p = &PRESETS[i];
        if (strcmp(p->name, name) != 0)
            continue;
        c->arch = p->arch;
        c->layers = p->layers;
        c->hidden = p->hidden;
        c->heads = p->heads;
        c->ffn = p->ffn;
        c->vocab = p->vocab;
        c->max_pos = p->max_pos;
        c->type_vocab = p->type_vocab;
        c->seq = p->seq;
        c->batch = p->batch;
        c->dtype = p->dtype;
        c->kv_heads = p->kv_heads;
        c->head_dim = p->head_dim;
        c->experts = p->experts;
        c->experts_active = p->experts_active;
        c->tied = p->tied;
        c->qkv_bias = p->qkv_bias;
        c->qk_norm = p->qk_norm;
        c->flash = p->flash;
        return true;
    }
    return false;
}

const char *transformer_preset_names(void)
{
    return "bert-base, bert-large, gpt2-small, gpt2-medium, llama-7b, llama2-7b, llama2-13b, llama2-70b, "
           "llama3-8b, llama3-70b, mistral-7b, mixtral-8x7b, qwen2-0.5b, qwen2-1.5b, qwen2-7b, qwen2-72b, "
           "qwen3-0.6b, qwen3-8b, qwen3-32b";
}
