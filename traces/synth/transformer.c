/* Transformer training/inference trace generator.
 *
 * Memory model (one training step, PyTorch eager order; e = bytes per element of
 * --dtype, B batch, S seq, H hidden, A heads, I ffn, V vocab, L layers):
 *  1. Weights: one allocation per parameter tensor, in state_dict order, before
 *     the first step; persistent.
 *  2. Forward, per step: the input ids [B,S] int64 (and token types for BERT),
 *     then for the embeddings, every layer and the head a list of tensors in
 *     allocation order. A tensor is either SAVED (kept until backward reaches it)
 *     or TEMPORARY (freed as soon as the next tensor exists: pre-softmax attention
 *     scores, the output projections before dropout, the dropout outputs that only
 *     feed a residual add, logits before log-softmax). Dropout masks are 1 byte per
 *     element, LayerNorm/RMSNorm statistics fp32 [B,S] (two for LayerNorm).
 *     A BERT layer keeps q,k,v, softmax probs, the attention dropout mask and
 *     output, the context, the attention dropout mask, the residual sum, LN1
 *     output and stats, fc1 output, GELU output, the MLP dropout mask, the residual
 *     sum, LN2 stats and output: exactly the sbh(16e+2) + A·S²·B(2e+1) bytes of
 *     Korthikanti et al. (2022) plus the LN statistics.
 *  3. Backward walks the saved tensors in reverse. For each one that has a
 *     gradient it allocates that gradient (same size) and frees the gradient that
 *     flowed in, then the parameter gradients of the op that produced the tensor
 *     appear (once per step: tied weights accumulate into the first one), then the
 *     saved tensor is freed.
 *  4. Optimizer: on the first step Adam creates exp_avg and exp_avg_sq per
 *     parameter (SGD with momentum one buffer; plain SGD nothing); PyTorch's
 *     foreach Adam then allocates sqrt(exp_avg_sq) for every parameter at once and
 *     frees it after the update; then zero_grad(set_to_none=True) frees every
 *     gradient (PyTorch 2.x default).
 *  5. --checkpointing: forward keeps only each layer's output; backward first
 *     recomputes the layer's tensors, then proceeds as in 3.
 *  6. --mode=inference: forward only; a layer's tensors are freed at its end,
 *     its output after the next layer.
 *  7. Unless --keep-live, the optimizer states and weights are freed at the end.
 * Times: each event advances the clock by 2 µs + bytes/1000 ns (≈1 TB/s), with
 * lognormal jitter (σ 0.1) drawn from the seeded GSL generator; sizes never
 * depend on the seed.
 *
 * Parameter counts (closed form, transformer_estimate_closed_form), h = H:
 *  BERT:  V·h + P·h + T·h + 2h (embeddings + LN)
 *         + L·[4(h² + h) + 2·2h + 2·h·I + I + h] + (h² + h) (pooler)
 *         bert-base  (V 30522, P 512, T 2, h 768, I 3072, L 12):
 *           23,837,184 + 12·7,087,872 + 590,592 = 109,482,240
 *         bert-large (h 1024, I 4096, L 24):
 *           31,782,912 + 24·12,596,224 + 1,049,600 = 335,141,888
 *  GPT-2: V·h + P·h + L·[2·2h + (3h² + 3h) + (h² + h) + 2·h·I + I + h] + 2h
 *         gpt2-small  (V 50257, P 1024, h 768, L 12):
 *           38,597,376 + 786,432 + 12·7,087,872 + 1,536 = 124,439,808
 *         gpt2-medium (h 1024, L 24):
 *           51,463,168 + 1,048,576 + 24·12,596,224 + 2,048 = 354,823,168
 *  LLaMA: V·h + L·[4h² + 3·h·I + 2h] + h + V·h (untied lm_head)
 *         llama-7b (V 32000, h 4096, I 11008, L 32):
 *           131,072,000 + 32·202,383,360 + 4,096 + 131,072,000 = 6,738,415,616
 */
#include "transformer.h"

#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

/* ---------------------------------------------------------------- configuration */

typedef struct preset {
    const char *name;
    transformer_arch arch;
    uint64_t layers, hidden, heads, ffn, vocab, max_pos, type_vocab, seq, batch;
    synth_dtype dtype;
} preset;

static const preset PRESETS[] = {
    {"bert-base", TRANSFORMER_BERT, 12, 768, 12, 3072, 30522, 512, 2, 128, 32, SYNTH_FP32},
    {"bert-large", TRANSFORMER_BERT, 24, 1024, 16, 4096, 30522, 512, 2, 512, 8, SYNTH_FP32},
    {"gpt2-small", TRANSFORMER_GPT2, 12, 768, 12, 3072, 50257, 1024, 0, 1024, 8, SYNTH_FP32},
    {"gpt2-medium", TRANSFORMER_GPT2, 24, 1024, 16, 4096, 50257, 1024, 0, 1024, 4, SYNTH_FP32},
    {"llama-7b", TRANSFORMER_LLAMA, 32, 4096, 32, 11008, 32000, 4096, 0, 2048, 1, SYNTH_BF16},
};

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
        return true;
    }
    return false;
}

const char *transformer_preset_names(void)
{
    return "bert-base, bert-large, gpt2-small, gpt2-medium, llama-7b";
}

static const char *const ARCH_NAMES[] = {"bert", "gpt2", "llama"};

bool transformer_arch_parse(const char *text, transformer_arch *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(text, ARCH_NAMES[i]) == 0) {
            *out = (transformer_arch)i;
            return true;
        }
    return false;
}

const char *transformer_arch_name(transformer_arch a)
{
    return ARCH_NAMES[a];
}

uint64_t transformer_default_ffn(transformer_arch a, uint64_t hidden)
{
    if (a == TRANSFORMER_LLAMA)
        return 256 * ((8 * hidden / 3 + 255) / 256);
    return 4 * hidden;
}

sim_status transformer_validate(const transformer_config *c, sim_error *err)
{
    if (c->layers == 0 || c->hidden == 0 || c->heads == 0 || c->ffn == 0 || c->vocab == 0 || c->seq == 0 ||
        c->batch == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "layers, hidden, heads, ffn, vocab, seq and batch must all be at least 1");
    if (c->hidden % c->heads != 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--hidden=%llu is not a multiple of --heads=%llu",
                             (unsigned long long)c->hidden, (unsigned long long)c->heads);
    if (c->arch != TRANSFORMER_LLAMA && c->seq > c->max_pos)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--seq=%llu exceeds the learned position table (%llu positions); raise --max-pos",
                             (unsigned long long)c->seq, (unsigned long long)c->max_pos);
    if (c->steps == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--steps must be at least 1");
    /* the largest tensors must stay below 2^53 bytes: keep every dimension sane */
    if (c->layers > 100000 || c->hidden > (1u << 20) || c->ffn > (1u << 22) || c->vocab > (1u << 24) ||
        c->seq > (1u << 22) || c->batch > (1u << 20) || c->heads > c->hidden || c->max_pos > (1u << 24) ||
        c->type_vocab > 1024)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "the model shape is out of range");
    double biggest = (double)c->batch * (double)c->seq * (double)c->vocab * 4.0;
    double scores = (double)c->batch * (double)c->heads * (double)c->seq * (double)c->seq * 4.0;
    if (biggest > 9.0e15 || scores > 9.0e15)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "a tensor of this shape would exceed 2^53 bytes");
    return SIM_OK;
}

/* ---------------------------------------------------------------- parameters */

typedef struct plist {
    graph_param *p;
    uint32_t n, cap;
    bool oom;
} plist;

/* name: prefix + layer + "." + what for layer ≥ 0, else what */
static void padd(plist *l, uint64_t numel, const char *prefix, int layer, const char *what)
{
    if (l->oom)
        return;
    if (!SIM_GROW(l->p, l->n + 1, l->cap)) {
        l->oom = true;
        return;
    }
    graph_param *t = &l->p[l->n++];
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "%s%d.%s", prefix, layer, what);
    else
        snprintf(t->name, sizeof t->name, "%s", what);
    t->numel = numel;
}

/* Per-layer parameter lists in state_dict order; the generator refers to them by
 * their position inside the layer (the *_P_* enums below). */
enum { BERT_P_QW, BERT_P_QB, BERT_P_KW, BERT_P_KB, BERT_P_VW, BERT_P_VB, BERT_P_OW, BERT_P_OB, BERT_P_LN1W,
       BERT_P_LN1B, BERT_P_F1W, BERT_P_F1B, BERT_P_F2W, BERT_P_F2B, BERT_P_LN2W, BERT_P_LN2B, BERT_P_N };
enum { GPT2_P_LN1W, GPT2_P_LN1B, GPT2_P_AW, GPT2_P_AB, GPT2_P_PW, GPT2_P_PB, GPT2_P_LN2W, GPT2_P_LN2B,
       GPT2_P_FW, GPT2_P_FB, GPT2_P_MW, GPT2_P_MB, GPT2_P_N };
enum { LLAMA_P_N1, LLAMA_P_Q, LLAMA_P_K, LLAMA_P_V, LLAMA_P_O, LLAMA_P_N2, LLAMA_P_G, LLAMA_P_U, LLAMA_P_D,
       LLAMA_P_N };

static uint32_t layer_param_count(transformer_arch a)
{
    return a == TRANSFORMER_BERT ? BERT_P_N : a == TRANSFORMER_GPT2 ? GPT2_P_N : LLAMA_P_N;
}

/* parameters before layer 0 */
static uint32_t embed_param_count(transformer_arch a)
{
    return a == TRANSFORMER_BERT ? 5 : a == TRANSFORMER_GPT2 ? 2 : 1;
}

graph_param *transformer_params(const transformer_config *c, uint32_t *n)
{
    plist l = {0};
    const uint64_t h = c->hidden, I = c->ffn, V = c->vocab;
    switch (c->arch) {
    case TRANSFORMER_BERT:
        padd(&l, V * h, NULL, -1, "embeddings.word_embeddings.weight");
        padd(&l, c->max_pos * h, NULL, -1, "embeddings.position_embeddings.weight");
        padd(&l, c->type_vocab * h, NULL, -1, "embeddings.token_type_embeddings.weight");
        padd(&l, h, NULL, -1, "embeddings.LayerNorm.weight");
        padd(&l, h, NULL, -1, "embeddings.LayerNorm.bias");
        for (int i = 0; i < (int)c->layers; i++) {
            const char *f = "encoder.layer.";
            padd(&l, h * h, f, i, "attention.self.query.weight");
            padd(&l, h, f, i, "attention.self.query.bias");
            padd(&l, h * h, f, i, "attention.self.key.weight");
            padd(&l, h, f, i, "attention.self.key.bias");
            padd(&l, h * h, f, i, "attention.self.value.weight");
            padd(&l, h, f, i, "attention.self.value.bias");
            padd(&l, h * h, f, i, "attention.output.dense.weight");
            padd(&l, h, f, i, "attention.output.dense.bias");
            padd(&l, h, f, i, "attention.output.LayerNorm.weight");
            padd(&l, h, f, i, "attention.output.LayerNorm.bias");
            padd(&l, I * h, f, i, "intermediate.dense.weight");
            padd(&l, I, f, i, "intermediate.dense.bias");
            padd(&l, h * I, f, i, "output.dense.weight");
            padd(&l, h, f, i, "output.dense.bias");
            padd(&l, h, f, i, "output.LayerNorm.weight");
            padd(&l, h, f, i, "output.LayerNorm.bias");
        }
        padd(&l, h * h, NULL, -1, "pooler.dense.weight");
        padd(&l, h, NULL, -1, "pooler.dense.bias");
        break;
    case TRANSFORMER_GPT2:
        padd(&l, V * h, NULL, -1, "wte.weight");
        padd(&l, c->max_pos * h, NULL, -1, "wpe.weight");
        for (int i = 0; i < (int)c->layers; i++) {
            const char *f = "h.";
            padd(&l, h, f, i, "ln_1.weight");
            padd(&l, h, f, i, "ln_1.bias");
            padd(&l, h * 3 * h, f, i, "attn.c_attn.weight");
            padd(&l, 3 * h, f, i, "attn.c_attn.bias");
            padd(&l, h * h, f, i, "attn.c_proj.weight");
            padd(&l, h, f, i, "attn.c_proj.bias");
            padd(&l, h, f, i, "ln_2.weight");
            padd(&l, h, f, i, "ln_2.bias");
            padd(&l, h * I, f, i, "mlp.c_fc.weight");
            padd(&l, I, f, i, "mlp.c_fc.bias");
            padd(&l, I * h, f, i, "mlp.c_proj.weight");
            padd(&l, h, f, i, "mlp.c_proj.bias");
        }
        padd(&l, h, NULL, -1, "ln_f.weight");
        padd(&l, h, NULL, -1, "ln_f.bias");
        break;
    case TRANSFORMER_LLAMA:
        padd(&l, V * h, NULL, -1, "model.embed_tokens.weight");
        for (int i = 0; i < (int)c->layers; i++) {
            const char *f = "model.layers.";
            padd(&l, h, f, i, "input_layernorm.weight");
            padd(&l, h * h, f, i, "self_attn.q_proj.weight");
            padd(&l, h * h, f, i, "self_attn.k_proj.weight");
            padd(&l, h * h, f, i, "self_attn.v_proj.weight");
            padd(&l, h * h, f, i, "self_attn.o_proj.weight");
            padd(&l, h, f, i, "post_attention_layernorm.weight");
            padd(&l, I * h, f, i, "mlp.gate_proj.weight");
            padd(&l, I * h, f, i, "mlp.up_proj.weight");
            padd(&l, h * I, f, i, "mlp.down_proj.weight");
        }
        padd(&l, h, NULL, -1, "model.norm.weight");
        padd(&l, V * h, NULL, -1, "lm_head.weight");
        break;
    }
    if (l.oom) {
        free(l.p);
        return NULL;
    }
    *n = l.n;
    return l.p;
}

void transformer_estimate_closed_form(const transformer_config *c, transformer_estimate *out)
{
    memset(out, 0, sizeof *out);
    const uint64_t h = c->hidden, I = c->ffn, V = c->vocab, L = c->layers, P = c->max_pos;
    uint64_t params = 0;
    switch (c->arch) {
    case TRANSFORMER_BERT:
        params = V * h + P * h + c->type_vocab * h + 2 * h + L * (4 * (h * h + h) + 4 * h + 2 * h * I + I + h) +
                 (h * h + h);
        break;
    case TRANSFORMER_GPT2:
        params = V * h + P * h + L * (4 * h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h * I + I + h) + 2 * h;
        break;
    case TRANSFORMER_LLAMA:
        params = V * h + L * (4 * h * h + 3 * h * I + 2 * h) + h + V * h;
        break;
    }
    const uint64_t e = synth_dtype_bytes(c->dtype);
    out->params = params;
    out->weight_bytes = params * e;
    if (!c->inference) {
        out->grad_bytes = params * e;
        out->optimizer_bytes = params * e * synth_optimizer_states(c->optimizer);
        const uint64_t sbh = c->seq * c->batch * h, sbi = c->seq * c->batch * I;
        const uint64_t as2b = c->heads * c->seq * c->seq * c->batch;
        out->activation_bytes = L * (sbh * (8 * e + 2) + 2 * e * sbi + as2b * (2 * e + 1));
    }
    out->total_bytes = out->weight_bytes + out->grad_bytes + out->optimizer_bytes + out->activation_bytes;
}

/* ---------------------------------------------------------------- generator */

typedef struct tctx {
    const transformer_config *c;
    uint64_t e;
} tctx;

#define K(name, bytes, grad, p0, pn) graph_seg_add(s, name, bytes, true, grad, p0, pn)
#define T(name, bytes) graph_seg_add(s, name, bytes, false, false, 0, 0)

/* BERT's and GPT-2's attention after the projections: scores, softmax and dropout on
 * them, the context, the output projection and its dropout (masks: 1 byte each). */
static void attention_with_dropout(graph_seg *s, uint64_t bass, uint64_t e, uint64_t bsh, uint64_t mask_bytes)
{
    T("scores", bass * e);
    K("probs", bass * e, true, 0, 0);
    K("attn_dropout_mask", bass, false, 0, 0);
    K("attn_dropout", bass * e, true, 0, 0);
    K("context", bsh, true, 0, 0);
    T("attn_out", bsh);
    K("dropout1_mask", mask_bytes, false, 0, 0);
    T("dropout1", bsh);
}

/* Segment 0: embeddings; 1..L: layer i-1; L+1: head. See the model at the top. */
static void build_segment(const void *ctx, uint32_t seg, graph_seg *s)
{
    const tctx *x = ctx;
    const transformer_config *c = x->c;
    const uint64_t e = x->e, B = c->batch, S = c->seq, H = c->hidden, I = c->ffn, A = c->heads, V = c->vocab;
    const uint64_t bsh = B * S * H * e, bsi = B * S * I * e, bass = B * A * S * S, bs = B * S;
    const uint32_t L = (uint32_t)c->layers;
    const uint32_t np = layer_param_count(c->arch), ne = embed_param_count(c->arch);
    const uint32_t base = ne + (seg == 0 ? 0 : seg - 1) * np; /* first param of the layer */
    const uint32_t head = ne + L * np;                         /* first param after the layers */
    s->n = 0;
    if (seg == 0) {
        snprintf(s->label, sizeof s->label, "embeddings");
        switch (c->arch) {
        case TRANSFORMER_BERT:
            K("input_ids", bs * 8, false, 0, 3); /* word, position, token type grads */
            K("token_type_ids", bs * 8, false, 0, 0);
            T("word_embeds", bsh);
            T("embeddings_sum", bsh);
            K("ln_stats", bs * 8, false, 0, 0);
            K("ln", bsh, true, 3, 2);
            K("dropout_mask", B * S * H, false, 0, 0);
            K("dropout", bsh, true, 0, 0);
            break;
        case TRANSFORMER_GPT2:
            K("input_ids", bs * 8, false, 0, 2);
            T("wte_out", bsh);
            T("embeddings_sum", bsh);
            K("dropout_mask", B * S * H, false, 0, 0);
            K("dropout", bsh, true, 0, 0);
            break;
        case TRANSFORMER_LLAMA:
            K("input_ids", bs * 8, false, 0, 1);
            K("embed", bsh, true, 0, 0);
            break;
        }
        return;
    }
    if (seg == L + 1) {
        snprintf(s->label, sizeof s->label, "head");
        switch (c->arch) {
        case TRANSFORMER_BERT:
            T("logits", B * S * V * e);
            K("log_softmax", B * S * V * e, true, 0, 1); /* tied: word embedding grad */
            K("pooled", B * H * e, true, head, 2);
            K("loss", e, false, 0, 0);
            break;
        case TRANSFORMER_GPT2:
            K("ln_f_stats", bs * 8, false, 0, 0);
            K("ln_f", bsh, true, head, 2);
            T("logits", B * S * V * e);
            K("log_softmax", B * S * V * e, true, 0, 1); /* tied wte */
            K("loss", e, false, 0, 0);
            break;
        case TRANSFORMER_LLAMA:
            K("norm_stats", bs * 4, false, 0, 0);
            K("norm", bsh, true, head, 1);
            T("logits", B * S * V * e);
            K("log_softmax", B * S * V * e, true, head + 1, 1);
            K("loss", e, false, 0, 0);
            break;
        }
        return;
    }
    snprintf(s->label, sizeof s->label, "L%u", seg - 1);
    switch (c->arch) {
    case TRANSFORMER_BERT:
        K("q", bsh, true, base + BERT_P_QW, 2);
        K("k", bsh, true, base + BERT_P_KW, 2);
        K("v", bsh, true, base + BERT_P_VW, 2);
        attention_with_dropout(s, bass, e, bsh, B * S * H);
        K("residual1", bsh, true, base + BERT_P_OW, 2);
        K("ln1_stats", bs * 8, false, 0, 0);
        K("ln1", bsh, true, base + BERT_P_LN1W, 2);
        K("fc1", bsi, true, base + BERT_P_F1W, 2);
        K("gelu", bsi, true, 0, 0);
        T("fc2", bsh);
        K("dropout2_mask", B * S * H, false, 0, 0);
        T("dropout2", bsh);
        K("residual2", bsh, true, base + BERT_P_F2W, 2);
        K("ln2_stats", bs * 8, false, 0, 0);
        K("ln2", bsh, true, base + BERT_P_LN2W, 2);
        break;
    case TRANSFORMER_GPT2:
        K("ln1_stats", bs * 8, false, 0, 0);
        K("ln1", bsh, true, base + GPT2_P_LN1W, 2);
        K("qkv", 3 * bsh, true, base + GPT2_P_AW, 2);
        attention_with_dropout(s, bass, e, bsh, B * S * H);
        K("residual1", bsh, true, base + GPT2_P_PW, 2);
        K("ln2_stats", bs * 8, false, 0, 0);
        K("ln2", bsh, true, base + GPT2_P_LN2W, 2);
        K("fc", bsi, true, base + GPT2_P_FW, 2);
        K("gelu", bsi, true, 0, 0);
        T("mlp_proj", bsh);
        K("dropout2_mask", B * S * H, false, 0, 0);
        T("dropout2", bsh);
        K("residual2", bsh, true, base + GPT2_P_MW, 2);
        break;
    case TRANSFORMER_LLAMA:
        K("norm1_stats", bs * 4, false, 0, 0);
        K("norm1", bsh, true, base + LLAMA_P_N1, 1);
        K("q", bsh, true, base + LLAMA_P_Q, 1);
        K("k", bsh, true, base + LLAMA_P_K, 1);
        K("v", bsh, true, base + LLAMA_P_V, 1);
        K("q_rot", bsh, true, 0, 0);
        K("k_rot", bsh, true, 0, 0);
        T("scores", bass * e);
        K("probs", bass * e, true, 0, 0);
        K("context", bsh, true, 0, 0);
        T("o_proj", bsh);
        K("residual1", bsh, true, base + LLAMA_P_O, 1);
        K("norm2_stats", bs * 4, false, 0, 0);
        K("norm2", bsh, true, base + LLAMA_P_N2, 1);
        K("gate", bsi, true, base + LLAMA_P_G, 1);
        K("up", bsi, true, base + LLAMA_P_U, 1);
        K("silu", bsi, true, 0, 0);
        K("gated", bsi, true, 0, 0);
        T("down", bsh);
        K("residual2", bsh, true, base + LLAMA_P_D, 1);
        break;
    }
}

#undef K
#undef T

sim_status transformer_generate(const transformer_config *c, synth_out *o, sim_error *err)
{
    sim_status st = transformer_validate(c, err);
    if (st != SIM_OK)
        return st;
    uint32_t n_params = 0;
    graph_param *params = transformer_params(c, &n_params);
    if (params == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    tctx x = {.c = c, .e = synth_dtype_bytes(c->dtype)};
    graph_model m = {
        .params = params,
        .n_params = n_params,
        .n_segments = (uint32_t)c->layers + 2,
        .build = build_segment,
        .ctx = &x,
        .elem_bytes = x.e,
        .optimizer = c->optimizer,
        .steps = c->steps,
        .inference = c->inference,
        .checkpointing = c->checkpointing,
        .keep_live = c->keep_live,
        .seed = c->seed,
    };
    st = graph_generate(&m, o, err);
    free(params);
    return st;
}
