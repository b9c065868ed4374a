/* Closed forms of the transformer workloads: the parameter count, the usual
 * capacity-calculator sum, one rank's peak by phase, and the ZeRO paper's
 * per-device model states.
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
 *         with GQA, biases, q/k norms, experts and tying as in transformer_presets.c.
 *
 * The usual sum (transformer_estimate_closed_form) is what capacity calculators
 * add: weights + gradients + optimizer states + L·[sbh(8e+2) + 2e·sbI + a·s²·b(2e+1)]
 * of activations, all at once. A trace never holds all of them at once, so the
 * rank's closed form (transformer_estimate_rank) is taken per phase:
 *  forward/backward, at the start of backward (every saved tensor of the micro-
 *  batches in flight still live, the log-softmax's gradient just allocated):
 *    weights + optimizer states (if they exist then: created at load with fp32
 *    masters, else from step 2) + gradients of earlier micro-batches + lm_head's
 *    gradient (it appears before the log-softmax dies) + saved activations + the
 *    log-softmax gradient + with selective recomputation one layer's recomputed
 *    probabilities + two gathered ZeRO-3 units;
 *  with ZeRO-2/3 also the end of backward: weights + states + every gradient shard +
 *    the last unit's full gradients + two gathered units (the larger of the two);
 *  optimizer step: weights + gradients + states + the optimizer's temporaries
 *    (foreach Adam: sqrt(exp_avg_sq) for every parameter at once; Adafactor: one
 *    parameter-sized update at a time).
 * A llama layer saves (e bytes per element, a = 1 with fp8 else e, b·s = tokens; with
 * sequence parallelism the norm statistics and the h-wide terms are /t):
 *    2·4bs (norm statistics) + 2·bs·h·a (norm outputs) + 2·bs·h·e (residuals)
 *    + bs·q·(2e + a) (q, q after rotary, context) + 3·bs·k·e (k, v, k after rotary)
 *    + b·A·s²·e (probabilities; none with selective recomputation; flash instead
 *      keeps b·A·s·4 of logsumexp)
 *    + bs·k_e·I·(3e + a) (gate, up, silu, gated for the k_e routed experts) + bs·E·4
 *      (router logits) + bs·r·e per LoRA target.
 * The embeddings add 8bs + bs·h·e (stage 0), the head 4bs + bs·h·e + 2·bs·V·e (the
 * log-softmax and its gradient; the loss is gone by then; last stage), a later stage bs·h·e received per
 * micro-batch in flight; min(p − s, M) micro-batches are in flight on stage s (with
 * the gradients of earlier micro-batches if M is larger, else one fewer with them).
 */
#include "transformer.h"

#include "sim/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t one(uint64_t x)
{
    return x ? x : 1;
}

/* parameters of one llama-family layer with per-rank widths q, k, I */
static uint64_t llama_layer_params(const transformer_config *c, uint64_t h, uint64_t q, uint64_t k, uint64_t I,
                                   uint64_t hd)
{
    uint64_t n = h * q + 2 * h * k + q * h + 2 * h;
    if (c->qkv_bias)
        n += q + 2 * k;
    if (c->qk_norm)
        n += 2 * hd;
    n += c->experts ? c->experts * 3 * h * I + h * c->experts : 3 * h * I;
    return n;
}

/* LoRA adapter parameters of one layer: r·(in + out) per target */
static uint64_t lora_layer_params(const transformer_config *c, uint64_t h, uint64_t q, uint64_t k, uint64_t I)
{
    if (c->lora_rank == 0)
        return 0;
    const uint64_t r = c->lora_rank, t = c->lora_targets;
    uint64_t n = 0;
    n += t & LORA_Q ? r * (h + q) : 0;
    n += t & LORA_K ? r * (h + k) : 0;
    n += t & LORA_V ? r * (h + k) : 0;
    n += t & LORA_O ? r * (q + h) : 0;
    n += t & LORA_GATE ? r * (h + I) : 0;
    n += t & LORA_UP ? r * (h + I) : 0;
    n += t & LORA_DOWN ? r * (I + h) : 0;
    return n;
}

static uint64_t model_params(const transformer_config *c)
{
    const uint64_t h = c->hidden, I = c->ffn, V = c->vocab, L = c->layers, P = c->max_pos;
    switch (c->arch) {
    case TRANSFORMER_BERT:
        return V * h + P * h + c->type_vocab * h + 2 * h + L * (4 * (h * h + h) + 4 * h + 2 * h * I + I + h) +
               (h * h + h);
    case TRANSFORMER_GPT2:
        return V * h + P * h + L * (4 * h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h * I + I + h) + 2 * h;
    case TRANSFORMER_LLAMA: break;
    }
    const uint64_t hd = c->head_dim ? c->head_dim : h / c->heads;
    const uint64_t q = c->heads * hd, k = (c->kv_heads ? c->kv_heads : c->heads) * hd;
    return V * h + L * llama_layer_params(c, h, q, k, I, hd) + h + (c->tied ? 0 : V * h);
}

void transformer_estimate_closed_form(const transformer_config *c, transformer_estimate *out)
{
    memset(out, 0, sizeof *out);
    const uint64_t h = c->hidden, I = c->ffn, L = c->layers;
    const uint64_t params = model_params(c);
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

uint64_t transformer_zero_model_states(uint64_t psi, uint64_t k, uint64_t d, uint32_t stage)
{
    d = one(d);
    switch (stage) {
    case 0: return (2 + 2 + k) * psi;
    case 1: return 4 * psi + k * psi / d;
    case 2: return 2 * psi + (2 + k) * psi / d;
    default: return (2 + 2 + k) * psi / d;
    }
}

/* QLoRA constants of one n-element weight: 8-bit absmax per 64, fp32 per 256 blocks */
static uint64_t qconst(uint64_t n)
{
    uint64_t blocks = (n + 63) / 64;
    return blocks + 4 * ((blocks + 255) / 256);
}

/* saved bytes of one llama layer for one micro-batch (see the top) */
static uint64_t llama_layer_saved(const transformer_config *c, const transformer_dims *d, uint64_t e)
{
    const uint64_t bs = c->batch * c->seq, a = c->fp8 ? 1 : e, S = c->seq, bsl = bs / d->sq;
    uint64_t n = 2 * 4 * bsl + 2 * bsl * d->h * a + 2 * bsl * d->h * e;
    n += bs * d->qd * (2 * e + a) + 3 * bs * d->kd * e;
    if (c->flash)
        n += c->batch * d->A * S * 4;
    else if (!c->selective)
        n += c->batch * d->A * S * S * e;
    n += bs * d->k * d->I * ((c->fused_swiglu ? 2 : 3) * e + a) + (c->experts ? bs * d->E * 4 : 0);
    if (c->lora_rank) {
        uint32_t t = c->lora_targets, targets = 0;
        for (; t; t &= t - 1)
            targets++;
        n += targets * bs * c->lora_rank * e;
    }
    return n;
}

void transformer_estimate_rank(const transformer_config *c, transformer_rank_estimate *out)
{
    memset(out, 0, sizeof *out);
    transformer_dims d;
    transformer_dims_of(c, &d);
    const uint64_t e = synth_dtype_bytes(c->dtype), bs = c->batch * c->seq;
    const bool mixed = c->precision == TRANSFORMER_MIXED;
    /* FSDP2 (--trainer=torchtitan): fp32 shards of the weights, gradients and states */
    const uint64_t sb = mixed || c->fsdp2 ? 4 : e, shard = d.shard;
    out->params = model_params(c);
    /* this rank's parameters and the quantized part of them */
    uint64_t layer = 0, lora = 0, quant = 0, quant_const = 0;
    if (c->arch == TRANSFORMER_LLAMA) {
        layer = llama_layer_params(c, d.h, d.qd, d.kd, d.I, d.hd);
        lora = lora_layer_params(c, d.h, d.qd, d.kd, d.I);
        if (c->qlora) {
            const uint64_t w[] = {d.h * d.qd, d.h * d.kd, d.h * d.kd, d.qd * d.h, d.h * d.I, d.h * d.I, d.I * d.h};
            const uint64_t reps = c->experts ? c->experts : 1;
            for (size_t i = 0; i < 7; i++) {
                const uint64_t r = i >= 4 ? reps : 1;
                quant += r * w[i];
                quant_const += r * qconst(w[i]);
            }
        }
        out->local_params = (d.embed ? d.V * d.h : 0) + d.nl * (layer + lora) +
                            (d.head ? d.h + (c->tied && d.embed ? 0 : d.V * d.h) : 0);
    } else {
        out->local_params = out->params;
    }
    out->trainable = c->lora_rank ? d.nl * lora : out->local_params;
    const uint64_t trainable = c->inference ? 0 : out->trainable;
    /* model states */
    uint64_t weights =
        c->qlora ? (out->local_params - d.nl * quant) * e + d.nl * (quant / 2 + quant_const) : out->local_params * e;
    if (c->fsdp2)
        weights = out->local_params * 4;
    if (c->zero >= 3)
        weights /= shard;
    /* Megatron's main gradients: 4 bytes per trainable parameter, one buffer from the load */
    uint64_t grads = c->main_grads ? trainable * 4 : trainable * (c->fsdp2 ? 4 : e) / (c->zero >= 2 ? shard : 1);
    grads += transformer_te_dummy_bytes(c); /* TE's placeholders, from the first backward on */
    uint64_t states = trainable * synth_optimizer_states(c->optimizer) * sb;
    if (c->optimizer == SYNTH_ADAFACTOR) {
        uint32_t n = 0;
        graph_param *p = transformer_params(c, &n);
        states = 0;
        for (uint32_t i = 0; p && i < n; i++)
            if (!p[i].frozen)
                states += (p[i].rows ? p[i].rows + p[i].numel / p[i].rows : p[i].numel) * sb;
        free(p);
    }
    if (mixed)
        states += trainable * 4;
    if (c->zero >= 1)
        states /= shard;
    if (c->inference)
        states = 0;
    /* activations of one micro-batch */
    uint64_t act = 0;
    if (c->arch == TRANSFORMER_LLAMA) {
        const uint64_t per_layer = llama_layer_saved(c, &d, e);
        const uint64_t bshl = bs * d.h * e / d.sq; /* a hidden-sized activation (sp: 1/t of it) */
        act = c->checkpointing ? d.nl * bshl + per_layer : d.nl * per_layer;
        if (c->checkpointing && c->sac_op) {
            /* graph.c rule 18, torchtitan's op policy: a block keeps q, v, the context, the
             * logsumexp (or the probabilities), gate and down's output beside its output; the
             * block in backward brings back the rest */
            const uint64_t kept = bs * (2 * d.qd + d.kd) * e + bs * d.k * d.I * e + bs * d.h * e +
                                  (c->flash ? c->batch * d.A * c->seq * 4 : c->batch * d.A * c->seq * c->seq * e);
            act = d.nl * (bshl + kept) + (per_layer > kept ? per_layer - kept : 0);
        } else if (c->checkpointing && c->ckpt_every > 1) {
            /* every N-th block keeps its output only, the others everything */
            const uint64_t ck = d.nl / c->ckpt_every;
            act = (d.nl - ck) * per_layer + ck * bshl + (ck ? per_layer : 0);
        }
        if (d.embed)
            act += 8 * bs + bshl;
        if (!d.embed)
            act += bshl; /* received input */
        /* the log-softmax and its gradient; fp32 when the loss upcasts (HF) */
        if (d.head) {
            const uint64_t le = c->loss_fp32 && e < 4 ? 4 : e;
            /* torchtitan: the log-softmax's backward also holds its input's gradient */
            act += 4 * bs / d.sq + bshl + (c->loss_bwd_input ? 3 : 2) * bs * d.V * le;
        }
    } else {
        transformer_estimate u;
        transformer_estimate_closed_form(c, &u);
        const uint64_t le = c->loss_fp32 && e < 4 ? 4 : e; /* as for llama above */
        act = u.activation_bytes + 2 * bs * c->vocab * le;
    }
    const uint64_t mbs = one(c->micro_batches);
    const uint64_t in_flight = d.pp - d.stage < mbs ? d.pp - d.stage : mbs;
    const bool states_early = mixed || c->steps >= 2;
    transformer_phase *f = &out->fwd_bwd, *o = &out->optimizer;
    f->weights = o->weights = weights;
    if (!c->inference) {
        /* micro-batches: gradients exist from the first backward on; when no forward
         * follows it (M equal to the micro-batches in flight) one fewer is in flight then */
        f->activations = in_flight * act;
        f->grads = mbs > in_flight ? grads : 0;
        if (mbs > 1 && mbs <= in_flight && (in_flight - 1) * act + grads > in_flight * act) {
            f->activations = (in_flight - 1) * act;
            f->grads = grads;
        }
        /* backward starts at the head: lm_head's gradient appears before the
         * log-softmax is freed (tied: the embedding's, the same size) */
        if (d.head && c->arch == TRANSFORMER_LLAMA && c->lora_rank == 0 && mbs == 1 && !c->main_grads)
            f->grads += d.V * d.h * e;
        if (c->main_grads) { /* the buffer exists from the load: every activation is on top of it */
            f->activations = in_flight * act;
            f->grads = grads;
        }
        /* graph.c rule 19: the output layer's placeholder gradient comes after the log-softmax
         * is freed, beside the logits' gradient */
        if (transformer_te_dummy_bytes(c) && d.head && c->arch == TRANSFORMER_LLAMA && !(c->tied && d.embed)) {
            const uint64_t ph = d.V * d.h * e, ls = bs * d.V * (c->loss_fp32 && e < 4 ? 4 : e);
            f->temporaries += ph > ls ? ph - ls : 0;
        }
        /* selective recomputation brings one layer's probabilities back in backward */
        if (c->selective && !c->flash && c->arch == TRANSFORMER_LLAMA)
            f->activations += c->batch * d.A * c->seq * c->seq * e;
        f->optimizer = states_early ? states : 0;
        f->gathered = c->zero >= 3 ? 2 * (layer + lora) * e : 0;
        o->grads = grads;
        o->optimizer = states;
        if (c->optimizer == SYNTH_ADAM && !c->fused && !mixed)
            o->temporaries = trainable * sb / (c->zero >= 1 ? shard : 1);
    } else {
        f->activations = act; /* an upper bound: inference frees each layer at its end */
    }
    f->total = f->weights + f->grads + f->optimizer + f->activations + f->temporaries + f->gathered;
    if (!c->inference && c->zero >= 2) {
        /* the end of backward: every gradient shard, the last unit's full gradients and,
         * with ZeRO-3, two gathered units; the activations are nearly all gone */
        transformer_phase end = *f;
        end.activations = 0;
        end.grads = grads + (c->arch == TRANSFORMER_LLAMA ? (c->lora_rank ? lora : layer) * e : 0);
        end.total = end.weights + end.grads + end.optimizer + end.temporaries + end.gathered;
        if (end.total > f->total)
            *f = end;
    }
    o->total = o->weights + o->grads + o->optimizer + o->activations + o->temporaries + o->gathered;
    out->peak_in_optimizer = o->total > f->total;
    out->peak = out->peak_in_optimizer ? o->total : f->total;
}

/* ---------------------------------------------------------------- explanation */

static void size_of(uint64_t b, char *out)
{
    units_format_size(b, out, 32);
}

static void signed_size(int64_t d, char *out)
{
    char s[32];
    size_of((uint64_t)(d < 0 ? -d : d), s);
    snprintf(out, 40, "%s%s", d < 0 ? "-" : "+", s);
}

static void phase_line(sim_buf *b, const char *what, const transformer_phase *p)
{
    char t[32], x[32];
    size_of(p->total, t);
    sim_buf_printf(b, "%s %s (", what, t);
    const uint64_t v[] = {p->weights, p->grads, p->optimizer, p->activations, p->temporaries, p->gathered};
    const char *n[] = {"weights", "grads", "optimizer", "activations", "temporaries", "gathered"};
    bool first = true;
    for (size_t i = 0; i < 6; i++) {
        if (v[i] == 0)
            continue;
        size_of(v[i], x);
        sim_buf_printf(b, "%s%s %s", first ? "" : " + ", n[i], x);
        first = false;
    }
    sim_buf_puts(b, ")");
}

/* Why the usual sum's term differs from the trace's bytes of that category at the peak. */
static const char *reason(const transformer_config *c, int term, int64_t d, bool in_optimizer, const char *mark)
{
    const bool backward = strncmp(mark, "backward", 8) == 0;
    switch (term) {
    case 0: /* weights */
        if (c->qlora)
            return "QLoRA: the layers' linear weights are 4-bit with their constants";
        if (c->zero >= 3)
            return "ZeRO-3/FSDP: this rank keeps a 1/shard slice of every weight";
        if (one(c->tp) > 1 || one(c->pp) > 1)
            return "tensor/pipeline parallelism: this rank holds its slice of the model";
        if (c->lora_rank)
            return "the LoRA adapters are weights the usual sum does not count";
        return "";
    case 1: /* grads */
        if (c->lora_rank && d < 0)
            return "LoRA: only the adapters have gradients";
        if (c->zero >= 2)
            return "ZeRO-2/3: gradients are reduce-scattered per unit, this rank keeps its shard";
        if (!in_optimizer && d < 0)
            return backward ? "backward has produced only some gradients at the peak; they appear while "
                              "activations die"
                            : "no gradients exist yet at the peak";
        return "";
    case 2: /* optimizer */
        if (!in_optimizer && d < 0 && c->precision != TRANSFORMER_MIXED && c->steps == 1)
            return "the states are created in step 1's optimizer step, after this peak (--steps=2 shows the "
                   "steady state)";
        if (c->precision == TRANSFORMER_MIXED && d > 0)
            return "mixed precision: fp32 master weights and fp32 states, 12 bytes per parameter with Adam";
        if (c->lora_rank && d < 0)
            return "LoRA: only the adapters have optimizer states";
        if (c->zero >= 1 && d < 0)
            return "ZeRO: this rank keeps 1/shard of the states";
        if (c->optimizer == SYNTH_ADAFACTOR && d < 0)
            return "Adafactor: factored second moments (a row and a column per matrix), no first moment";
        return "";
    case 3: /* activations */
        if (in_optimizer && d < 0)
            return "all freed by the end of backward: the peak is the optimizer step";
        if (d > 0)
            return "the usual sum omits the vocabulary-sized log-softmax and its gradient, the embeddings and the "
                   "norm statistics";
        if (c->flash || c->selective || c->checkpointing || c->fp8 || c->kv_heads || one(c->tp) > 1)
            return "flash attention, recomputation, fp8 copies, GQA or tensor parallelism keep less than the "
                   "usual formula's L·[sbh(8e+2) + 2e·sbI + a·s²·b(2e+1)]";
        if (c->arch == TRANSFORMER_LLAMA)
            return "the formula is BERT's layer (Korthikanti et al.); a llama layer saves less (no dropout masks)";
        return "backward frees saved activations as it goes";
    case 4: /* temporaries */
        if (in_optimizer && c->optimizer == SYNTH_ADAM)
            return "foreach Adam's sqrt(exp_avg_sq) for every parameter at once; not in the usual sum";
        if (in_optimizer && c->optimizer == SYNTH_ADAFACTOR)
            return "Adafactor's update, one parameter at a time; not in the usual sum";
        return d > 0 ? "temporaries (logits, scores, dequantized weights) the usual sum does not count" : "";
    case 5: return d > 0 ? "ZeRO-3/FSDP: gathered units (two at once with backward prefetch) and pipeline buffers" : "";
    default: return "";
    }
}

void transformer_explain(const transformer_config *c, const synth_stats *s, sim_buf *b)
{
    transformer_estimate u;
    transformer_estimate_closed_form(c, &u);
    transformer_rank_estimate r;
    transformer_estimate_rank(c, &r);
    char x[32], y[32], d[40];
    sim_buf_puts(b, "closed form of this rank's peak: ");
    phase_line(b, "forward/backward", &r.fwd_bwd);
    sim_buf_puts(b, ", ");
    phase_line(b, "optimizer step", &r.optimizer);
    size_of(r.peak, x);
    sim_buf_printf(b, "; the larger: %s\n", x);
    size_of(s->peak_live_bytes, x);
    sim_buf_printf(b, "trace peak %s at \"%s\":", x, s->peak_mark);
    bool first = true;
    for (int k = 0; k < SYNTH_CAT_N; k++)
        if (s->peak_by_cat[k]) {
            size_of(s->peak_by_cat[k], y);
            sim_buf_printf(b, "%s %s %s", first ? "" : ",", synth_cat_name((synth_cat)k), y);
            first = false;
        }
    const int64_t vs_rank = (int64_t)s->peak_live_bytes - (int64_t)r.peak;
    signed_size(vs_rank, d);
    sim_buf_printf(
        b, "\ntrace against this rank's closed form: %s (%+.2f %%)%s\n", d,
        r.peak ? 100.0 * (double)vs_rank / (double)r.peak : 0.0,
        /* LitGPT's head: a rule the closed form does not follow */
        c->lm_head_chunk || c->ce_chunked
            ? ": the closed form does not follow LitGPT's chunked head and loss (the logits held into backward, "
              "one chunk's gradients at a time); the trace does"
        : vs_rank > 0
            ? ": tensors the closed form leaves out (norm statistics, masks, a pipeline stage's received gradient)"
        : vs_rank < 0 && c->inference ? ": inference frees each layer at its end; the closed form keeps them all"
                                      : "");
    const bool in_opt = strncmp(s->peak_mark, "optimizer", 9) == 0;
    sim_buf_puts(b, "the usual sum against the trace's peak, term by term:\n");
    const uint64_t sum[] = {u.weight_bytes, u.grad_bytes, u.optimizer_bytes, u.activation_bytes, 0, 0};
    const uint64_t tr[] = {s->peak_by_cat[SYNTH_CAT_WEIGHT],
                           s->peak_by_cat[SYNTH_CAT_GRAD],
                           s->peak_by_cat[SYNTH_CAT_OPTIMIZER],
                           s->peak_by_cat[SYNTH_CAT_ACT],
                           s->peak_by_cat[SYNTH_CAT_TMP] + s->peak_by_cat[SYNTH_CAT_OTHER] +
                               s->peak_by_cat[SYNTH_CAT_KV],
                           s->peak_by_cat[SYNTH_CAT_GATHER]};
    const char *names[] = {"weights", "grads", "optimizer", "activations", "temporaries", "gathered"};
    for (int k = 0; k < 6; k++) {
        if (sum[k] == 0 && tr[k] == 0)
            continue;
        const int64_t dk = (int64_t)tr[k] - (int64_t)sum[k];
        signed_size(dk, d);
        const char *why = dk == 0 ? "" : reason(c, k, dk, in_opt, s->peak_mark);
        sim_buf_printf(b, "  %-12s %11s%s%s\n", names[k], d, *why ? "  " : "", why);
    }
    signed_size((int64_t)s->peak_live_bytes - (int64_t)u.total_bytes, d);
    size_of(s->peak_live_bytes, x);
    size_of(u.total_bytes, y);
    sim_buf_printf(b, "  %-12s %11s  (%s against %s)\n", "total", d, x, y);
}
