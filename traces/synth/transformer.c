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
 *  8. The llama family's variants (transformer_presets.c has the shapes):
 *     grouped-query attention (k and v have kv_heads·head_dim columns), Qwen2's
 *     q/k/v biases, Qwen3's q_norm/k_norm, tied embeddings, mixture of experts
 *     (a router h·E per layer; the MLP tensors are those of the k routed experts
 *     per token: B·S·k·I each, the Mixtral rule that only the routed experts'
 *     activations live), fused attention (flash: no scores or probabilities, a
 *     logsumexp [B,A,S] fp32 saved instead), fp8 copies of the four saved tensors
 *     that feed a linear layer (norm1, context, norm2, gated: Transformer Engine's
 *     linear saves its fp8 cast of the input for the weight gradient,
 *     transformer_engine/pytorch/module/linear.py, _Linear.forward,
 *     NVIDIA/TransformerEngine 0004dbd0), selective recomputation (the A·S²
 *     tensors are recomputed, Korthikanti et al. 2022).
 *  9. LoRA (Hu et al. 2021): every base parameter frozen (no gradient, no state),
 *     adapters A [r, in] and B [out, r] after each targeted projection's weight
 *     (PEFT's order), trainable; each adapter saves its x·A [B,S,r]. QLoRA
 *     (Dettmers et al. 2023): the layers' linear weights are NF4, numel/2 bytes,
 *     plus numel/64 bytes of 8-bit block constants and 4 bytes per 256 blocks of
 *     second-level fp32 constants (blocks of 64: 0.127 bits per parameter);
 *     embeddings, norms and lm_head stay in dtype; each projection dequantizes its
 *     weight to dtype for the matmul, forward and backward (a temporary).
 * 10. Tensor parallelism t (Shoeybi et al. 2019): q, k, v, gate, up are split by
 *     columns, o and down by rows, the vocabulary of embed_tokens and lm_head by
 *     t; heads, KV heads and the MLP width per rank are /t, so are the attention
 *     and MLP activations; norms and the hidden-sized activations are replicated,
 *     or with --sp (sequence parallelism, Korthikanti et al. 2022) split along the
 *     sequence too: all-gathered into a temporary before the column-parallel
 *     linears, reduce-scattered after the row-parallel ones.
 *     Pipeline parallelism p: stage s holds layers [s·L/p, (s+1)·L/p), the first
 *     the embeddings, the last the final norm and lm_head (a copy when tied);
 *     the 1F1B schedule is graph.c's. ZeRO/FSDP sharding over the data-parallel
 *     ranks is graph.c's too.
 * Times: each event advances the clock by 2 µs + bytes/1000 ns (≈1 TB/s), with
 * lognormal jitter (σ 0.1) drawn from the seeded GSL generator; sizes never
 * depend on the seed. Parameter counts and closed forms: transformer_estimate.c;
 * the presets and their sources: transformer_presets.c.
 */
#include "transformer.h"

#include "graph.h"
#include "sim/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- configuration */

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

bool transformer_lora_parse(const char *text, uint32_t *out)
{
    static const struct {
        const char *name;
        uint32_t bits;
    } MAP[] = {{"q", LORA_Q},       {"k", LORA_K},         {"v", LORA_V},       {"o", LORA_O},
               {"gate", LORA_GATE}, {"up", LORA_UP},       {"down", LORA_DOWN}, {"attn", LORA_Q | LORA_K | LORA_V | LORA_O},
               {"mlp", LORA_GATE | LORA_UP | LORA_DOWN},   {"all", 127}};
    uint32_t bits = 0;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < sizeof MAP / sizeof MAP[0] && !found; i++)
            if (strlen(MAP[i].name) == n && strncmp(p, MAP[i].name, n) == 0) {
                bits |= MAP[i].bits;
                found = true;
            }
        if (!found)
            return false;
        p += n;
        if (*p == ',')
            p++;
    }
    if (bits == 0)
        return false;
    *out = bits;
    return true;
}

static uint64_t one(uint64_t x)
{
    return x ? x : 1;
}

uint64_t transformer_ranks(const transformer_config *c)
{
    return one(c->dp) * one(c->tp) * one(c->pp);
}

bool transformer_beyond_classic(const transformer_config *c)
{
    return c->kv_heads || c->head_dim || c->experts || c->tied || c->qkv_bias || c->qk_norm || c->flash ||
           c->precision != TRANSFORMER_PURE || c->fp8 || c->selective || c->fused || c->lora_rank || c->qlora ||
           c->zero || transformer_ranks(c) > 1 || c->micro_batches > 1 || c->optimizer == SYNTH_ADAFACTOR || c->sp ||
           c->main_grads || c->fused_swiglu || c->loss_fp32 || c->loss_bwd_input || c->fsdp2 || c->sac_op ||
           c->ckpt_every > 1 || c->lm_head_chunk || c->ce_chunked;
}

void transformer_dims_of(const transformer_config *c, transformer_dims *d)
{
    memset(d, 0, sizeof *d);
    d->tp = one(c->tp);
    d->pp = one(c->pp);
    d->dp = one(c->dp);
    d->shard = c->shard ? c->shard : d->dp;
    d->tp_rank = c->rank % d->tp;
    d->dp_rank = c->rank / d->tp % d->dp;
    d->stage = c->rank / (d->tp * d->dp);
    d->h = c->hidden;
    d->hd = c->head_dim ? c->head_dim : (c->heads ? c->hidden / c->heads : 0);
    d->A = c->heads / d->tp;
    d->G = (c->kv_heads ? c->kv_heads : c->heads) / d->tp;
    d->qd = d->A * d->hd;
    d->kd = d->G * d->hd;
    d->I = c->ffn / d->tp;
    d->V = (c->vocab + d->tp - 1) / d->tp;
    d->E = c->experts;
    d->k = c->experts ? c->experts_active : 1;
    d->sq = c->sp ? d->tp : 1;
    d->nl = c->layers / d->pp;
    d->l0 = d->stage * d->nl;
    d->embed = d->stage == 0;
    d->head = d->stage + 1 == d->pp;
}

sim_status transformer_validate(const transformer_config *c, sim_error *err)
{
#define BAD(...) sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, __VA_ARGS__)
    if (c->layers == 0 || c->hidden == 0 || c->heads == 0 || c->ffn == 0 || c->vocab == 0 || c->seq == 0 ||
        c->batch == 0)
        return BAD("layers, hidden, heads, ffn, vocab, seq and batch must all be at least 1");
    if (c->head_dim == 0 && c->hidden % c->heads != 0)
        return BAD("--hidden=%llu is not a multiple of --heads=%llu", (unsigned long long)c->hidden,
                   (unsigned long long)c->heads);
    if (c->arch != TRANSFORMER_LLAMA && c->seq > c->max_pos)
        return BAD("--seq=%llu exceeds the learned position table (%llu positions); raise --max-pos",
                   (unsigned long long)c->seq, (unsigned long long)c->max_pos);
    if (c->graph_lifetimes && (c->inference || c->zero || c->micro_batches > 1 || c->pp > 1 ||
                               c->optimizer == SYNTH_ADAFACTOR || c->precision != TRANSFORMER_PURE))
        return BAD("--lifetimes=graph models one device's tf.function training step: not with --mode=inference, "
                   "--zero, --pp, --micro-batches, --optimizer=adafactor or --precision=mixed");
    if (c->steps == 0)
        return BAD("--steps must be at least 1");
    /* the largest tensors must stay below 2^53 bytes: keep every dimension sane */
    if (c->layers > 100000 || c->hidden > (1u << 20) || c->ffn > (1u << 22) || c->vocab > (1u << 24) ||
        c->seq > (1u << 22) || c->batch > (1u << 20) || c->heads > c->hidden || c->max_pos > (1u << 24) ||
        c->type_vocab > 1024 || c->head_dim > 4096 || c->experts > 1024)
        return BAD("the model shape is out of range");
    double biggest = (double)c->batch * (double)c->seq * (double)c->vocab * 4.0;
    double scores = (double)c->batch * (double)c->heads * (double)c->seq * (double)c->seq * 4.0;
    if (biggest > 9.0e15 || scores > 9.0e15)
        return BAD("a tensor of this shape would exceed 2^53 bytes");
    const bool variant = c->kv_heads || c->head_dim || c->experts || c->tied || c->qkv_bias || c->qk_norm || c->flash ||
                         c->fp8 || c->lora_rank || c->qlora || one(c->tp) > 1 || one(c->pp) > 1 || c->sp || c->fsdp2 ||
                         c->sac_op || c->lm_head_chunk || c->ce_chunked;
    if (variant && c->arch != TRANSFORMER_LLAMA)
        return BAD("--kv-heads, --head-dim, experts, --attention=flash, --fp8, LoRA, --tp and --pp are modelled "
                   "for the llama family (--arch=llama) only");
    const uint64_t G = c->kv_heads ? c->kv_heads : c->heads;
    if (G > c->heads || c->heads % G != 0)
        return BAD("--kv-heads=%llu must divide --heads=%llu", (unsigned long long)G, (unsigned long long)c->heads);
    if (c->experts && (c->experts_active == 0 || c->experts_active > c->experts))
        return BAD("--experts-active must be between 1 and --experts");
    const uint64_t tp = one(c->tp), pp = one(c->pp), dp = one(c->dp);
    if (c->heads % tp || G % tp || c->ffn % tp)
        return BAD("--tp=%llu must divide the heads (%llu), the KV heads (%llu) and the MLP width (%llu)",
                   (unsigned long long)tp, (unsigned long long)c->heads, (unsigned long long)G,
                   (unsigned long long)c->ffn);
    if (c->sp && c->seq % tp)
        return BAD("--sp: --tp=%llu must divide --seq=%llu", (unsigned long long)tp, (unsigned long long)c->seq);
    if (c->layers % pp)
        return BAD("--pp=%llu must divide the layers (%llu)", (unsigned long long)pp, (unsigned long long)c->layers);
    if (tp * pp * dp > 65536 || c->micro_batches > 4096)
        return BAD("at most 65536 ranks and 4096 micro-batches");
    if (c->rank >= tp * pp * dp)
        return BAD("rank %llu is not below the %llu ranks", (unsigned long long)c->rank,
                   (unsigned long long)(tp * pp * dp));
    if (c->zero > 3)
        return BAD("--zero must be 0, 1, 2 or 3");
    if (c->main_grads && (c->zero >= 2 || c->graph_lifetimes))
        return BAD("fp32 main gradients in one buffer (--trainer=megatron) do not combine with --zero=2/3, --fsdp "
                   "or --lifetimes=graph");
    if (c->shard && (c->shard > dp || dp % c->shard))
        return BAD("the shard group (%llu) must divide the data-parallel ranks (%llu)", (unsigned long long)c->shard,
                   (unsigned long long)dp);
    if (c->fsdp2 && (c->zero != 3 || c->graph_lifetimes || c->main_grads || c->precision != TRANSFORMER_PURE))
        return BAD("FSDP2 (--trainer=torchtitan) shards like --zero=3 with fp32 shards of its own: not with "
                   "--zero=0/1/2, --precision=mixed, --lifetimes=graph or fp32 main gradients");
    if ((c->sac_op || c->ckpt_every > 1) && !c->checkpointing)
        return BAD("op-level recomputation and --recompute-every need checkpointing (--recompute=op or layer)");
    if (c->qlora && c->lora_rank == 0)
        return BAD("--qlora needs --lora=RANK");
    if (c->lora_rank > 4096)
        return BAD("--lora: the rank must be at most 4096");
    if (c->lora_rank && c->experts && (c->lora_targets & (LORA_GATE | LORA_UP | LORA_DOWN)))
        return BAD("LoRA on the experts' MLP is not modelled: target q, k, v, o");
    if (c->qlora && c->zero >= 3)
        return BAD("QLoRA with ZeRO-3/FSDP sharding is not modelled");
    if (c->selective && c->checkpointing)
        return BAD("choose one: per-layer or selective checkpointing");
    if (c->inference && (c->zero || pp > 1 || c->micro_batches > 1 || c->lora_rank))
        return BAD("--zero, --pp, --micro-batches and LoRA apply to --mode=train");
#undef BAD
    return SIM_OK;
}

/* ---------------------------------------------------------------- parameters */

typedef struct plist {
    graph_param *p;
    uint32_t n, cap;
    bool oom;
} plist;

/* name: prefix + layer + "." + what for layer ≥ 0, else what */
static graph_param *padd(plist *l, uint64_t numel, const char *prefix, int layer, const char *what)
{
    if (l->oom)
        return NULL;
    if (!SIM_GROW(l->p, l->n + 1, l->cap)) {
        l->oom = true;
        return NULL;
    }
    graph_param *t = &l->p[l->n++];
    *t = (graph_param){0};
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "%s%d.%s", prefix, layer, what);
    else
        snprintf(t->name, sizeof t->name, "%s", what);
    t->numel = numel;
    return t;
}

/* Per-layer parameter lists in state_dict order; the generator refers to them by
 * their position inside the layer (the *_P_* enums below). */
enum { BERT_P_QW, BERT_P_QB, BERT_P_KW, BERT_P_KB, BERT_P_VW, BERT_P_VB, BERT_P_OW, BERT_P_OB, BERT_P_LN1W,
       BERT_P_LN1B, BERT_P_F1W, BERT_P_F1B, BERT_P_F2W, BERT_P_F2B, BERT_P_LN2W, BERT_P_LN2B, BERT_P_N };
enum { GPT2_P_LN1W, GPT2_P_LN1B, GPT2_P_AW, GPT2_P_AB, GPT2_P_PW, GPT2_P_PB, GPT2_P_LN2W, GPT2_P_LN2B,
       GPT2_P_FW, GPT2_P_FB, GPT2_P_MW, GPT2_P_MB, GPT2_P_N };

/* A llama-family layer: groups of parameters in state_dict order; an entry of
 * the forward pass refers to one group. */
enum { LG_N1, LG_Q, LG_K, LG_V, LG_O, LG_QN, LG_KN, LG_N2, LG_ROUTER, LG_G, LG_U, LG_D, LG_EXPERTS, LG_N };

typedef struct llama_layout {
    uint32_t off[LG_N], cnt[LG_N];
    uint32_t n;
} llama_layout;

static uint32_t lora_bit(int g)
{
    switch (g) {
    case LG_Q: return LORA_Q;
    case LG_K: return LORA_K;
    case LG_V: return LORA_V;
    case LG_O: return LORA_O;
    case LG_G: return LORA_GATE;
    case LG_U: return LORA_UP;
    case LG_D: return LORA_DOWN;
    default: return 0;
    }
}

static bool lora_on(const transformer_config *c, int g)
{
    return c->lora_rank > 0 && (c->lora_targets & lora_bit(g)) != 0;
}

/* the parameters of each group, also the order they are appended in */
static void llama_layout_of(const transformer_config *c, llama_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    for (int g = 0; g < LG_N; g++) {
        uint32_t n = 0;
        switch (g) {
        case LG_N1:
        case LG_O:
        case LG_N2: n = 1; break;
        case LG_Q:
        case LG_K:
        case LG_V: n = 1 + (c->qkv_bias ? 1 : 0); break;
        case LG_QN:
        case LG_KN: n = c->qk_norm ? 1 : 0; break;
        case LG_ROUTER: n = c->experts ? 1 : 0; break;
        case LG_G:
        case LG_U:
        case LG_D: n = c->experts ? 0 : 1; break;
        case LG_EXPERTS: n = (uint32_t)(3 * c->experts); break;
        }
        if (n && lora_on(c, g))
            n += 2;
        lay->off[g] = lay->n;
        lay->cnt[g] = n;
        lay->n += n;
    }
}

static void set_rows(graph_param *p, uint64_t rows, bool frozen)
{
    if (p == NULL)
        return;
    p->rows = rows;
    p->frozen = frozen;
}

/* a linear weight [out, in] of a layer, quantized with QLoRA, then its adapters */
static void linear(plist *l, const transformer_config *c, int layer, const char *what, uint64_t out, uint64_t in,
                   bool lora)
{
    char name[80];
    snprintf(name, sizeof name, "%s.weight", what);
    graph_param *w = padd(l, out * in, "model.layers.", layer, name);
    if (w == NULL)
        return;
    w->rows = out;
    w->frozen = c->lora_rank > 0;
    if (c->qlora) {
        uint64_t n = out * in, blocks = (n + 63) / 64;
        w->stored_bytes = (n + 1) / 2;
        w->qconst_bytes = blocks + 4 * ((blocks + 255) / 256);
    }
    if (!lora)
        return;
    snprintf(name, sizeof name, "%s.lora_A.weight", what);
    set_rows(padd(l, c->lora_rank * in, "model.layers.", layer, name), c->lora_rank, false);
    snprintf(name, sizeof name, "%s.lora_B.weight", what);
    set_rows(padd(l, out * c->lora_rank, "model.layers.", layer, name), out, false);
}

static void vec(plist *l, const transformer_config *c, int layer, const char *what, uint64_t n)
{
    set_rows(padd(l, n, layer >= 0 ? "model.layers." : NULL, layer, what), 0, c->lora_rank > 0);
}

static void llama_params(plist *l, const transformer_config *c)
{
    transformer_dims d;
    transformer_dims_of(c, &d);
    const uint64_t h = d.h;
    if (d.embed) {
        set_rows(padd(l, d.V * h, NULL, -1, "model.embed_tokens.weight"), d.V, c->lora_rank > 0);
    }
    for (int i = (int)d.l0; i < (int)(d.l0 + d.nl); i++) {
        vec(l, c, i, "input_layernorm.weight", h);
        linear(l, c, i, "self_attn.q_proj", d.qd, h, lora_on(c, LG_Q));
        if (c->qkv_bias)
            vec(l, c, i, "self_attn.q_proj.bias", d.qd);
        linear(l, c, i, "self_attn.k_proj", d.kd, h, lora_on(c, LG_K));
        if (c->qkv_bias)
            vec(l, c, i, "self_attn.k_proj.bias", d.kd);
        linear(l, c, i, "self_attn.v_proj", d.kd, h, lora_on(c, LG_V));
        if (c->qkv_bias)
            vec(l, c, i, "self_attn.v_proj.bias", d.kd);
        linear(l, c, i, "self_attn.o_proj", h, d.qd, lora_on(c, LG_O));
        if (c->qk_norm) {
            vec(l, c, i, "self_attn.q_norm.weight", d.hd);
            vec(l, c, i, "self_attn.k_norm.weight", d.hd);
        }
        vec(l, c, i, "post_attention_layernorm.weight", h);
        if (c->experts) {
            set_rows(padd(l, d.E * h, "model.layers.", i, "block_sparse_moe.gate.weight"), d.E, c->lora_rank > 0);
            for (uint64_t x = 0; x < d.E; x++) {
                char w[64];
                static const char *const W[] = {"w1", "w2", "w3"};
                for (int k = 0; k < 3; k++) {
                    snprintf(w, sizeof w, "block_sparse_moe.experts.%llu.%s", (unsigned long long)x, W[k]);
                    linear(l, c, i, w, k == 1 ? h : d.I, k == 1 ? d.I : h, false);
                }
            }
        } else {
            linear(l, c, i, "mlp.gate_proj", d.I, h, lora_on(c, LG_G));
            linear(l, c, i, "mlp.up_proj", d.I, h, lora_on(c, LG_U));
            linear(l, c, i, "mlp.down_proj", h, d.I, lora_on(c, LG_D));
        }
    }
    if (d.head) {
        vec(l, c, -1, "model.norm.weight", h);
        if (!c->tied || !d.embed) {
            set_rows(padd(l, d.V * h, NULL, -1, c->tied ? "lm_head.weight (tied copy)" : "lm_head.weight"), d.V,
                     c->lora_rank > 0);
        }
    }
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
    case TRANSFORMER_LLAMA: llama_params(&l, c); break;
    }
    if (l.oom) {
        free(l.p);
        return NULL;
    }
    *n = l.n;
    return l.p;
}

/* ---------------------------------------------------------------- generator */

typedef struct tctx {
    const transformer_config *c;
    uint64_t e;
    transformer_dims d;
    llama_layout lay;
} tctx;

#define K(name, bytes, grad, p0, pn) graph_seg_add(s, name, bytes, true, grad, p0, pn)
#define T(name, bytes) graph_seg_add(s, name, bytes, false, false, 0, 0)

static void bert_gpt2_segment(const tctx *x, uint32_t seg, graph_seg *s)
{
    const transformer_config *c = x->c;
    const uint64_t e = x->e, B = c->batch, S = c->seq, H = c->hidden, I = c->ffn, A = c->heads, V = c->vocab;
    const uint64_t bsh = B * S * H * e, bsi = B * S * I * e, bass = B * A * S * S, bs = B * S;
    const uint32_t L = (uint32_t)c->layers;
    const bool bert = c->arch == TRANSFORMER_BERT;
    const uint32_t np = bert ? BERT_P_N : GPT2_P_N, ne = bert ? 5 : 2;
    const uint32_t base = ne + (seg == 0 ? 0 : seg - 1) * np; /* first param of the layer */
    const uint32_t head = ne + L * np;                         /* first param after the layers */
    if (seg == 0) {
        snprintf(s->label, sizeof s->label, "embeddings");
        if (bert) {
            K("input_ids", bs * 8, false, 0, 3); /* word, position, token type grads */
            K("token_type_ids", bs * 8, false, 0, 0);
            T("word_embeds", bsh);
            T("embeddings_sum", bsh);
            K("ln_stats", bs * 8, false, 0, 0);
            K("ln", bsh, true, 3, 2);
        } else {
            K("input_ids", bs * 8, false, 0, 2);
            T("wte_out", bsh);
            T("embeddings_sum", bsh);
        }
        K("dropout_mask", B * S * H, false, 0, 0);
        K("dropout", bsh, true, 0, 0);
        return;
    }
    if (seg == L + 1) {
        snprintf(s->label, sizeof s->label, "head");
        /* HF's loss upcasts first (ForMaskedLMLoss, ForCausalLMLoss): an fp32 copy of the
         * logits for a 2-byte dtype, and an fp32 log-softmax */
        const uint64_t le = c->loss_fp32 && e < 4 ? 4 : e;
        if (bert) {
            T("logits", B * S * V * e);
            if (le != e)
                T("logits_fp32", B * S * V * le);
            K("log_softmax", B * S * V * le, true, 0, 1); /* tied: word embedding grad */
            K("pooled", B * H * e, true, head, 2);
        } else {
            K("ln_f_stats", bs * 8, false, 0, 0);
            K("ln_f", bsh, true, head, 2);
            T("logits", B * S * V * e);
            if (le != e)
                T("logits_fp32", B * S * V * le);
            K("log_softmax", B * S * V * le, true, 0, 1); /* tied wte */
        }
        K("loss", e, false, 0, 0);
        return;
    }
    snprintf(s->label, sizeof s->label, "L%u", seg - 1);
    uint32_t probs;
    if (bert) {
        K("q", bsh, true, base + BERT_P_QW, 2);
        K("k", bsh, true, base + BERT_P_KW, 2);
        K("v", bsh, true, base + BERT_P_VW, 2);
    } else {
        K("ln1_stats", bs * 8, false, 0, 0);
        K("ln1", bsh, true, base + GPT2_P_LN1W, 2);
        K("qkv", 3 * bsh, true, base + GPT2_P_AW, 2);
    }
    T("scores", bass * e);
    probs = K("probs", bass * e, true, 0, 0);
    K("attn_dropout_mask", bass, false, 0, 0);
    K("attn_dropout", bass * e, true, 0, 0);
    for (uint32_t k = probs; k < probs + 3; k++)
        s->e[k].recompute = true;
    K("context", bsh, true, 0, 0);
    T("attn_out", bsh);
    K("dropout1_mask", B * S * H, false, 0, 0);
    T("dropout1", bsh);
    if (bert) {
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
    } else {
        K("residual1", bsh, true, base + GPT2_P_PW, 2);
        K("ln2_stats", bs * 8, false, 0, 0);
        K("ln2", bsh, true, base + GPT2_P_LN2W, 2);
        K("fc", bsi, true, base + GPT2_P_FW, 2);
        K("gelu", bsi, true, 0, 0);
        T("mlp_proj", bsh);
        K("dropout2_mask", B * S * H, false, 0, 0);
        T("dropout2", bsh);
        K("residual2", bsh, true, base + GPT2_P_MW, 2);
    }
}

/* LitGPT's LoRA dropout (litgpt/lora.py: the adapter's input goes through nn.Dropout before
 * lora_A, one for the fused qkv projection and one per other adapted linear): its mask and
 * output, both saved for backward; `in` elements per token */
static void lora_drop(const tctx *x, graph_seg *s, uint64_t tokens, uint64_t in)
{
    if (!x->c->lora_dropout)
        return;
    K("lora_dropout_mask", tokens * in, false, 0, 0);
    K("lora_dropout", tokens * in * x->e, false, 0, 0);
}

/* a projection's output, with QLoRA's dequantized weight before it and LoRA's x·A after it */
static uint32_t proj(const tctx *x, graph_seg *s, const char *name, const char *lora_name, uint64_t bytes, int group,
                     uint32_t base, uint64_t w_numel, bool keep)
{
    const transformer_config *c = x->c;
    if (c->qlora)
        T("dequant", w_numel * x->e);
    uint32_t k = graph_seg_add(s, name, bytes, keep, keep, keep ? base + x->lay.off[group] : 0,
                               keep ? x->lay.cnt[group] : 0);
    if (c->qlora && keep)
        s->e[k].bwd_tmp = w_numel * x->e;
    if (lora_on(c, group))
        K(lora_name, c->batch * c->seq * c->lora_rank * x->e, true, 0, 0);
    return k;
}

static void llama_segment(const tctx *x, uint32_t seg, graph_seg *s)
{
    const transformer_config *c = x->c;
    const transformer_dims *d = &x->d;
    const llama_layout *lay = &x->lay;
    const uint64_t e = x->e, B = c->batch, S = c->seq, H = d->h, bs = B * S, bsh = bs * H * e;
    const uint64_t a8 = c->fp8 ? 1 : e; /* saved inputs of linear layers */
    /* sequence parallelism: hidden-sized activations and norm statistics hold 1/t of
     * the sequence; all-gathered before a column-parallel linear (a temporary), the
     * row-parallel outputs reduce-scattered */
    const uint64_t q = d->sq, bshl = bsh / q, bsl = bs / q;
    const uint32_t n = (d->embed ? 1 : 0) + (uint32_t)d->nl + (d->head ? 1 : 0);
    const uint32_t ne = d->embed ? 1 : 0;
    const uint32_t head = ne + (uint32_t)d->nl * lay->n;
    if (d->embed && seg == 0) {
        snprintf(s->label, sizeof s->label, "embeddings");
        K("input_ids", bs * 8, false, 0, 1);
        K("embed", bshl, true, 0, 0);
        return;
    }
    if (d->head && seg + 1 == n) {
        snprintf(s->label, sizeof s->label, "head");
        K("norm_stats", bsl * 4, false, 0, 0);
        K("norm", bshl, true, head, 1);
        if (q > 1)
            T("sp_gather", bsh);
        const uint32_t lm = c->tied && d->embed ? 0 : head + 1; /* the head's weight */
        if (c->lm_head_chunk || c->ce_chunked) {
            /* LitGPT: the training loop holds the logits (a list of chunks with a chunked head)
             * through backward; the chunked cross-entropy saves each chunk's log-softmax in
             * dtype. A chunked head's backward runs chunk by chunk: one chunk's gradient of
             * the log-softmax and of the logits at a time. An unchunked head (full
             * fine-tuning) gathers the chunks' gradients into one for the logits. */
            const uint64_t logits = bs * d->V * e;
            if (c->lm_head_chunk) {
                const uint64_t chunk = B * (c->lm_head_chunk < S ? c->lm_head_chunk : S) * d->V * e;
                K("logits", logits, false, 0, 0);
                const uint32_t k = K("log_softmax", logits, true, lm, 1);
                s->e[k].gbytes = chunk;
                s->e[k].bwd_tmp = chunk;
                s->e[k].bwd_tmp_name = "logits_chunk_grad";
            } else {
                K("logits", logits, true, lm, 1);
                K("log_softmax", logits, true, 0, 0);
            }
            K("loss", e, false, 0, 0);
            return;
        }
        T("logits", bs * d->V * e);
        /* HF's loss upcasts first: logits.float() is a copy for a 2-byte dtype (a no-op for
         * fp32), and log-softmax's saved output is fp32 */
        const uint64_t le = c->loss_fp32 && e < 4 ? 4 : e;
        if (le != e)
            T("logits_fp32", bs * d->V * le);
        const uint32_t k = K("log_softmax", bs * d->V * le, true, lm, 1);
        if (c->loss_bwd_input) { /* log_softmax's backward writes its input's gradient beside its output's */
            s->e[k].bwd_tmp = bs * d->V * le;
            s->e[k].bwd_tmp_name = "log_softmax_input_grad";
        }
        K("loss", e, false, 0, 0);
        return;
    }
    const uint32_t li = seg - ne; /* layer index on this stage */
    const uint32_t base = ne + li * lay->n;
    snprintf(s->label, sizeof s->label, "L%llu", (unsigned long long)(d->l0 + li));
    const uint64_t bq = bs * d->qd * e, bk = bs * d->kd * e, tokens = bs * d->k, bi = tokens * d->I * e;
    K("norm1_stats", bsl * 4, false, 0, 0);
    uint32_t k = K("norm1", bsl * H * a8, true, base + lay->off[LG_N1], 1);
    s->e[k].gbytes = c->fp8 ? bshl : 0;
    const uint32_t gather1 = q > 1 ? T("sp_gather", bsh) : 0;
    /* --trainer=torchtitan's op-level policy (graph.c rule 18) saves sdpa's outputs and the
     * 1st, 3rd, 5th and 7th matmul of the block: q, v, gate and down */
    const bool op = c->sac_op;
    if (lora_on(c, LG_Q) || lora_on(c, LG_K) || lora_on(c, LG_V))
        lora_drop(x, s, bs, H);
    s->e[proj(x, s, "q", "q_lora", bq, LG_Q, base, H * d->qd, true)].save = op;
    proj(x, s, "k", "k_lora", bk, LG_K, base, H * d->kd, true);
    s->e[proj(x, s, "v", "v_lora", bk, LG_V, base, H * d->kd, true)].save = op;
    k = K("q_rot", bq, true, base + lay->off[LG_QN], lay->cnt[LG_QN]);
    if (q > 1)
        s->e[gather1].until = k;
    K("k_rot", bk, true, base + lay->off[LG_KN], lay->cnt[LG_KN]);
    if (c->flash) {
        s->e[K("attn_lse", B * d->A * S * 4, false, 0, 0)].save = op;
    } else {
        T("scores", B * d->A * S * S * e);
        k = K("probs", B * d->A * S * S * e, true, 0, 0);
        s->e[k].recompute = true;
        s->e[k].save = op;
    }
    k = K("context", bs * d->qd * a8, true, 0, 0);
    s->e[k].gbytes = c->fp8 ? bq : 0;
    s->e[k].save = op;
    if (c->qlora)
        T("dequant", H * d->qd * e);
    if (lora_on(c, LG_O))
        lora_drop(x, s, bs, d->qd);
    T("o_proj", bsh);
    k = K("residual1", bshl, true, base + lay->off[LG_O], lay->cnt[LG_O]);
    if (c->qlora)
        s->e[k].bwd_tmp = H * d->qd * e;
    if (lora_on(c, LG_O))
        K("o_lora", bs * c->lora_rank * e, true, 0, 0);
    K("norm2_stats", bsl * 4, false, 0, 0);
    k = K("norm2", bsl * H * a8, true, base + lay->off[LG_N2], 1);
    s->e[k].gbytes = c->fp8 ? bshl : 0;
    const uint32_t gather2 = q > 1 ? T("sp_gather2", bsh) : 0;
    if (c->experts)
        K("router_logits", bs * d->E * 4, true, base + lay->off[LG_ROUTER], 1);
    if (lora_on(c, LG_G))
        lora_drop(x, s, tokens, H);
    s->e[proj(x, s, "gate", "gate_lora", bi, LG_G, base, H * d->I, true)].save = op;
    if (lora_on(c, LG_U))
        lora_drop(x, s, tokens, H);
    proj(x, s, "up", "up_lora", bi, LG_U, base, H * d->I, true);
    /* fused SwiGLU (--trainer=megatron): silu(gate) is recomputed in backward, not saved */
    k = c->fused_swiglu ? T("silu", bi) : K("silu", bi, true, 0, 0);
    if (q > 1)
        s->e[gather2].until = k;
    k = K("gated", tokens * d->I * a8, true, 0, 0);
    s->e[k].gbytes = c->fp8 ? bi : 0;
    if (lora_on(c, LG_D))
        lora_drop(x, s, tokens, d->I);
    if (c->qlora)
        T("dequant", H * d->I * e);
    /* the op-level policy saves the down projection's output too (a matmul it must save) */
    if (op)
        s->e[K("down", c->experts ? tokens * H * e : bsh, false, 0, 0)].save = true;
    else
        T("down", c->experts ? tokens * H * e : bsh);
    const int dg = c->experts ? LG_EXPERTS : LG_D;
    k = K("residual2", bshl, true, base + lay->off[dg], lay->cnt[dg]);
    if (c->qlora)
        s->e[k].bwd_tmp = H * d->I * e;
    if (lora_on(c, LG_D))
        K("down_lora", bs * c->lora_rank * e, true, 0, 0);
}

/* Segment 0: embeddings; then the layers; last: head. See the model at the top. */
static void build_segment(const void *ctx, uint32_t seg, graph_seg *s)
{
    const tctx *x = ctx;
    s->n = 0;
    if (x->c->arch == TRANSFORMER_LLAMA)
        llama_segment(x, seg, s);
    else
        bert_gpt2_segment(x, seg, s);
}

#undef K
#undef T

/* graph.c rule 19: Megatron-LM's TE layers fuse q, k, v into linear_qkv and gate, up into
 * linear_fc1; each fused weight's rank-local shape gets one cached dummy gradient of e bytes
 * per element, equal shapes one between them */
static void te_wgrad_shapes(const transformer_dims *d, uint64_t e, uint8_t *index, uint64_t *bytes)
{
    const uint64_t rows[4] = {d->qd + 2 * d->kd, d->h, 2 * d->I, d->h}, cols[4] = {d->h, d->qd, d->h, d->I};
    for (int k = 0; k < 4; k++) {
        index[k] = (uint8_t)(k + 1);
        for (int j = 0; j < k; j++)
            if (rows[j] == rows[k] && cols[j] == cols[k])
                index[k] = index[j];
        bytes[index[k]] = rows[k] * cols[k] * e;
    }
}

uint64_t transformer_te_dummy_bytes(const transformer_config *c)
{
    if (!c->te_dummy_wgrad || !c->main_grads || c->experts || c->inference || c->arch != TRANSFORMER_LLAMA)
        return 0;
    transformer_dims d;
    transformer_dims_of(c, &d);
    if (d.nl == 0 || c->lora_rank)
        return 0;
    uint8_t index[4];
    uint64_t bytes[GRAPH_TE_WGRAD_MAX] = {0}, sum = 0;
    te_wgrad_shapes(&d, synth_dtype_bytes(c->dtype), index, bytes);
    for (int k = 0; k < GRAPH_TE_WGRAD_MAX; k++)
        sum += bytes[k];
    return sum;
}

static void te_wgrad_tag(const transformer_dims *d, uint64_t e, graph_param *params, uint32_t n, uint64_t *bytes)
{
    static const char *const SUFFIX[] = {
        ".self_attn.q_proj.weight", ".self_attn.k_proj.weight", ".self_attn.v_proj.weight", ".self_attn.o_proj.weight",
        ".mlp.gate_proj.weight",    ".mlp.up_proj.weight",      ".mlp.down_proj.weight"};
    static const uint8_t GROUP[] = {0, 0, 0, 1, 2, 2, 3}; /* qkv, proj, fc1, fc2 */
    uint8_t index[4];
    te_wgrad_shapes(d, e, index, bytes);
    bytes[GRAPH_WGRAD_TRANSIENT] = d->V * d->h * e; /* the output layer: Megatron's own linear */
    for (uint32_t p = 0; p < n; p++) {
        if (strcmp(params[p].name, "lm_head.weight") == 0)
            params[p].te_wgrad = GRAPH_WGRAD_TRANSIENT;
        const size_t len = strlen(params[p].name);
        for (size_t s = 0; s < sizeof SUFFIX / sizeof SUFFIX[0]; s++) {
            const size_t sl = strlen(SUFFIX[s]);
            if (len > sl && strcmp(params[p].name + len - sl, SUFFIX[s]) == 0)
                params[p].te_wgrad = index[GROUP[s]];
        }
    }
}

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
    transformer_dims_of(c, &x.d);
    llama_layout_of(c, &x.lay);
    const bool mixed = c->precision == TRANSFORMER_MIXED;
    const uint64_t seed = (c->seed + c->rank) % 4294967295u;
    graph_model m = {
        .params = params,
        .n_params = n_params,
        .n_segments = (uint32_t)x.d.nl + (x.d.embed ? 1 : 0) + (x.d.head ? 1 : 0),
        .build = build_segment,
        .ctx = &x,
        .elem_bytes = x.e,
        .optimizer = c->optimizer,
        .steps = c->steps,
        .inference = c->inference,
        .checkpointing = c->checkpointing,
        .keep_live = c->keep_live,
        .seed = seed,
        .state_bytes = mixed ? 4 : 0,
        .master = mixed,
        .fused = c->fused || mixed,
        .selective = c->selective,
        .zero = c->zero,
        .dp = x.d.shard,
        .micro_batches = c->micro_batches,
        .pp = (uint32_t)x.d.pp,
        .stage = (uint32_t)x.d.stage,
        .no_embed = !x.d.embed,
        .no_head = !x.d.head,
        .p2p_bytes = c->batch * c->seq * c->hidden * x.e / x.d.sq,
        .apply_at_last_use = c->graph_lifetimes,
        .grad_bytes = c->main_grads ? 4 : 0,
        .grad_buffer = c->main_grads,
        /* torchtitan (graph.c rules 17, 18): fp32 shards and optimizer states, bf16 compute */
        .fsdp2 = c->fsdp2,
        .shard_bytes = c->fsdp2 ? 4 : 0,
        .reduce_bytes = c->fsdp2 ? c->reduce_bytes : 0,
        .grad_shard_bytes = c->fsdp2 ? 4 : 0,
        .reshard_after_forward = c->fsdp2 && x.d.pp <= 1,
        .fsdp_root = c->fsdp2 && c->fsdp_root,
        .fsdp_streams = c->fsdp2 && c->fsdp_streams,

        .ckpt_every = c->ckpt_every,
        .ckpt_save = c->sac_op,
    };
    if (c->fsdp2)
        m.state_bytes = 4;
    if (c->te_dummy_wgrad && c->main_grads && !c->experts)
        te_wgrad_tag(&x.d, x.e, params, n_params, m.te_wgrad_bytes);
    st = graph_generate(&m, o, err);
    free(params);
    return st;
}
