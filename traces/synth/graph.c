/* The training-step engine behind the transformer and cnn generators.
 *
 * Rules (PyTorch eager order):
 *  1. Weights: one allocation per parameter tensor, in state_dict order, before
 *     the first step ("weight:NAME"); persistent.
 *  2. Forward: each segment's tensors are allocated in order. A saved tensor
 *     ("act:SEG.NAME") lives until backward reaches it; a temporary
 *     ("tmp:SEG.NAME") is freed as soon as the next tensor of the segment exists
 *     (or at the segment's end).
 *  3. Backward ("backward N" mark) starts with the loss gradient and walks the
 *     segments and their saved tensors in reverse. For a saved tensor with a
 *     gradient it allocates that gradient ("agrad:SEG.NAME", same size) and frees
 *     the gradient that flowed in; then the gradients of the parameters attached to
 *     the tensor appear ("grad:NAME", once per step: tied weights accumulate into
 *     the first); then the saved tensor is freed.
 *  4. Optimizer ("optimizer N" mark): on the first step Adam creates exp_avg and
 *     exp_avg_sq per parameter ("adam_m:", "adam_v:"), SGD with momentum one buffer
 *     ("momentum:"), plain SGD nothing. PyTorch's foreach Adam (the default on
 *     CUDA) then allocates sqrt(exp_avg_sq) for every parameter at once and frees
 *     it after the update. zero_grad(set_to_none=True), the PyTorch 2.x default,
 *     frees every gradient.
 *  5. Checkpointing: forward keeps only the output (last tensor) of each middle
 *     segment; backward recomputes the segment's tensors first.
 *  6. Inference: forward only; a segment's tensors are freed at its end, its
 *     output after the next segment.
 *  7. Unless keep_live, optimizer states and weights are freed at the end
 *     ("release" mark).
 *  8. Buffers (BatchNorm running statistics) are allocated after the weights
 *     ("buffer:NAME") and released with them.
 * Options (graph_model's optional fields; all off reproduces the rules above):
 *  9. Precision: gradients and optimizer states may have their own element sizes;
 *     `master` adds an fp32 copy of every trainable parameter ("master:NAME") at
 *     load, and then the optimizer states are created at load too, not lazily (the
 *     ZeRO optimizer's constructor takes a step on zero gradients to allocate them:
 *     deepspeed/runtime/zero/stage_1_and_2.py, DeepSpeedZeroOptimizer.__init__ and
 *     initialize_optimizer_states, microsoft/DeepSpeed cde57d29). `fused` drops
 *     the foreach temporaries (apex/DeepSpeed FusedAdam update in place).
 * 10. Adafactor keeps a row and a column vector of the squared-gradient average
 *     per matrix ("adafactor_r:", "adafactor_c:"), the full tensor for vectors
 *     ("adafactor_v:"), no first moment; its update allocates one temporary of the
 *     parameter's size at a time ("tmp:adafactor_update").
 * 11. Frozen parameters (LoRA base weights) get no gradient and no state. QLoRA
 *     weights have their own stored size ("qweight:NAME") and a second allocation
 *     for their quantization constants ("qconst:NAME").
 * 12. Selective checkpointing: entries marked recompute are freed as soon as the
 *     next saved entry exists and reallocated when backward reaches them.
 * 13. ZeRO over dp ranks (Rajbhandari et al. 2020): stage ≥ 1 keeps 1/dp of the
 *     master weights and optimizer states (ceil(numel/dp) elements per tensor);
 *     stage ≥ 2 reduce-scatters each segment's gradients at the end of the
 *     segment's backward ("grad_shard:NAME" appears, the full gradients die);
 *     stage 3 (FSDP full shard, one unit per segment) keeps only weight shards
 *     ("weight_shard:NAME") and all-gathers a segment's parameters into one
 *     buffer ("gather:SEG") before its forward, freed after it, and again before
 *     its backward, with the previous segment's gather prefetched (FSDP's
 *     BACKWARD_PRE), so two units are live during a segment's backward.
 * 14. Micro-batches in a 1F1B pipeline schedule (Narayanan et al. 2021): stage s
 *     of p runs min(p − s − 1, M) warm-up forwards, then alternates one forward
 *     and one backward, then drains; a stage after the first receives its input
 *     ("p2p:recv", kept until that micro-batch's backward), a stage before the last
 *     starts backward from the received gradient ("p2p:grad_recv") instead of the
 *     loss. Gradients accumulate over the micro-batches.
 * 15. Graph lifetimes (apply_at_last_use; TensorFlow's tf.function, whose dataflow
 *     executor runs an op as soon as its inputs exist and frees a tensor after its
 *     last consumer): the optimizer states exist from the load (slot variables are
 *     made when the function is traced), each parameter's gradient is applied by a
 *     fused update as soon as backward has made its last contribution (its last
 *     saved tensor that names the parameter) and freed right then, so the
 *     gradients never all live at once and the update needs no temporaries. The
 *     activations keep rules 2 and 3: each is already freed at its last use.
 * 16. A gradient buffer (grad_buffer; Megatron-LM's DistributedDataParallel, which
 *     allocates one contiguous buffer for the gradients of every trainable parameter
 *     when it wraps the model and points each parameter's main_grad into it:
 *     megatron/core/distributed/param_and_grad_buffer.py, _ParamAndGradBuffer): one
 *     allocation "grad:main_grad_buffer" of the trainable parameters' gradient bytes
 *     (grad_bytes each, fp32 with accumulate-allreduce-grads-in-fp32) at load, after
 *     the weights; backward accumulates into it (the weight-gradient GEMMs write
 *     main_grad directly, gradient-accumulation fusion) so no per-parameter
 *     gradient appears, the optimizer zeroes it in place, and it lives to release.
 *     ZeRO stage 2 or 3 does not combine with it.
 * 17. FSDP2 (fsdp2, with stage 3; torch.distributed.fsdp.fully_shard applied to every
 *     segment, as torchtitan wraps the embeddings, each block and norm + head): each
 *     parameter's shard is its own allocation of ceil(numel/dp) elements of
 *     shard_bytes ("weight_shard:NAME", fp32 when the mixed-precision policy casts to
 *     a 2-byte param_dtype). Before a segment runs, FSDP unshards it: with dp > 1 one
 *     flat all-gather buffer of the segment's padded parameters in the element size
 *     ("fsdp_ag:SEG.params", dp x the padded shards), then one unsharded tensor per
 *     parameter copied out of it ("unsharded:NAME"). In forward the flat buffer of the
 *     segment is kept until the next segment's all-gather exists and freed after the
 *     last segment (FSDPParamGroup.wait_for_unshard keeps it in all_gather_state to
 *     overlap the copy-out with the next all-gather; the root's post-forward frees the
 *     last), so two units' worth of gathered bytes live at once; in backward it is
 *     freed right after the copy-out, and the previous segment's all-gather is issued
 *     before this segment's backward (the default backward prefetch). After a
 *     segment's forward its unsharded parameters are freed when reshard_after_forward
 *     holds, except the head's (norm and output stay unsharded to their backward);
 *     after its backward they are always freed, then its gradients (element size)
 *     are copied into one reduce-scatter input of reduce_bytes per padded element
 *     ("fsdp_rs:SEG.grads"), the unsharded gradients die, and each parameter gets its
 *     sharded gradient of grad_shard_bytes ("grad_shard:NAME"). The reduce-scatter
 *     input is kept until the next segment's reduce (one buffer in flight, FSDP's
 *     reduce_scatter_states) and freed at the end of backward.
 *     With fsdp_root (torchtitan of December 2024, whose fully_shard on the whole model
 *     made the embeddings and the head one unit, the root): the root's all-gather comes
 *     before segment 0 and covers the head's parameters too; the root is never resharded
 *     after forward (FSDPState._lazy_init) and neither is the last layer; the head's
 *     backward neither reshards nor reduces: the root's parameters and gradients live to
 *     the end of backward and are resharded and reduced after segment 0's backward (its
 *     post-backward runs in the final callback).
 *     With fsdp_streams: the flat all-gather buffers are allocated on stream 1 (FSDP's
 *     all-gather copy-in stream), and instead of per-parameter gradient shards each
 *     reduce allocates one output ("fsdp_rs_out:SEG.grads", the unit's shards, their
 *     views) on stream 2 (the reduce-scatter stream), kept to the optimizer; a unit
 *     whose shards exist already (another micro-batch) frees its output at once.
 * 18. Checkpointing variants: with ckpt_every N > 1 only every N-th middle segment is
 *     checkpointed (counting from 1, the N-th, 2N-th, ...); the others keep rule 2.
 *     With ckpt_save a checkpointed segment keeps its entries marked save (the
 *     outputs an op-level policy must save) through forward as well as its output;
 *     backward's recomputation allocates only the entries that are not alive.
 * 19. Transformer Engine's dummy weight gradients (te_wgrad, with grad_buffer): when the
 *     weight-gradient GEMM accumulates into main_grad, TE's Linear, LayerNormLinear and
 *     LayerNormMLP backward hand autograd a placeholder gradient from get_dummy_wgrad
 *     (transformer_engine/pytorch/module/base.py), which caches one tensor per (rows,
 *     cols, dtype) for the life of the process. The first backward that reaches a
 *     parameter whose te_wgrad is k allocates "te_dummy_wgrad:NAME" of te_wgrad_bytes[k]
 *     once; it lives to the release. The generator gives every parameter of one fused TE
 *     weight (q, k and v; gate and up) the same index, and equal shapes the same index.
 *     Index GRAPH_WGRAD_TRANSIENT is Megatron-LM's own ColumnParallelLinear (the output
 *     layer): its backward returns a fresh torch.empty of the weight's shape instead
 *     (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsync-
 *     Communication.backward), which the DDP hook drops at once: "tmp:wgrad_placeholder"
 *     of te_wgrad_bytes[GRAPH_WGRAD_TRANSIENT], allocated after the entry's backward
 *     (beside the incoming gradient) and freed.
 * Time: each allocation advances the clock by 2 µs + bytes/1000 ns (≈ 1 TB/s), each
 * free by 1 µs, with lognormal jitter (σ 0.1) from the seeded GSL generator. Sizes
 * never depend on the seed. */
#include "graph.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t graph_seg_add(graph_seg *s, const char *name, uint64_t bytes, bool keep, bool grad, uint32_t p0,
                       uint32_t pn)
{
    assert(s->n < GRAPH_SEG_MAX);
    s->e[s->n] = (graph_entry){.name = name, .bytes = bytes, .keep = keep, .grad = grad, .p0 = p0, .pn = pn};
    return s->n++;
}

uint64_t graph_shard_numel(uint64_t numel, uint64_t dp)
{
    return dp <= 1 ? numel : (numel + dp - 1) / dp;
}

typedef struct gen {
    const graph_model *m;
    synth_out *o;
    synth_rng *rng;
    uint64_t e, gb, sb;                         /* bytes per weight, gradient, state element */
    uint64_t dp;
    uint64_t n_states;                          /* state slots per parameter */
    uint64_t *w_ids, *g_ids, *s_ids, *tmp_ids;  /* s_ids: n_params × n_states */
    uint64_t *q_ids, *ms_ids, *gs_ids;          /* quantization constants, masters, gradient shards */
    uint64_t *b_ids;                            /* buffers */
    uint64_t *gat;                              /* ZeRO-3 gathered parameters per segment */
    uint32_t slots;                             /* micro-batches in flight at most */
    graph_seg *segs;                            /* slots × n_segments */
    uint64_t *ckpt;                             /* checkpointed segment outputs, slots × n_segments */
    uint64_t *recv;                             /* pipeline input per slot */
    uint32_t *uses;                             /* rule 15: saved tensors still to name each parameter */
    uint64_t step;
    uint64_t grad_buffer; /* rule 16: its allocation, 0 if none */
    uint64_t *u_ids;      /* rule 17: unsharded parameters */
    uint64_t ag_keep;     /* rule 17: the previous segment's all-gather buffer in forward */
    uint64_t rs_keep;     /* rule 17: the last reduce-scatter input */
    uint64_t te_ids[GRAPH_TE_WGRAD_MAX]; /* rule 19: the cached dummy weight gradients */
    uint32_t *head_ps;                   /* rule 17 with fsdp_root: the head segment's parameters */
    uint32_t n_head_ps;
} gen;

static void tick(gen *g, uint64_t bytes)
{
    synth_advance(g->o, synth_rng_jitter(g->rng, 2000 + bytes / 1000, 0.1));
}

static uint64_t seg_alloc(gen *g, uint64_t bytes, const char *kind, const graph_seg *s, const char *name)
{
    tick(g, bytes);
    return synth_allocf(g->o, bytes, "%s:%s.%s", kind, s->label, name);
}

/* the same on a side stream (rule 17 with fsdp_streams) */
static uint64_t seg_alloc_on(gen *g, uint32_t stream, uint64_t bytes, const char *kind, const graph_seg *s,
                             const char *name)
{
    if (stream == 0)
        return seg_alloc(g, bytes, kind, s, name);
    char tag[128];
    snprintf(tag, sizeof tag, "%s:%s.%s", kind, s->label, name);
    tick(g, bytes);
    return synth_alloc_stream(g->o, bytes, stream, tag);
}

static uint64_t param_alloc_bytes(gen *g, uint32_t p, const char *kind, uint64_t bytes)
{
    tick(g, bytes);
    return synth_allocf(g->o, bytes, "%s:%s", kind, g->m->params[p].name);
}

static uint64_t param_alloc(gen *g, uint32_t p, const char *kind)
{
    return param_alloc_bytes(g, p, kind, g->m->params[p].numel * g->e);
}

static void gfree(gen *g, uint64_t *id)
{
    if (*id == 0)
        return;
    synth_advance(g->o, synth_rng_jitter(g->rng, 1000, 0.1));
    synth_free(g->o, *id);
    *id = 0;
}

/* elements of p this rank keeps of a ZeRO-sharded quantity (stage ≥ min_stage) */
static uint64_t local_numel(const gen *g, uint64_t numel, uint32_t min_stage)
{
    return g->m->zero >= min_stage && g->m->zero > 0 ? graph_shard_numel(numel, g->dp) : numel;
}

static bool trainable(const gen *g, uint32_t p)
{
    return !g->m->params[p].frozen;
}

/* ---------------------------------------------------------------- forward and backward */

static void forward(gen *g, graph_seg *s)
{
    uint64_t temp[GRAPH_SEG_MAX], dropped[GRAPH_SEG_MAX];
    uint32_t until[GRAPH_SEG_MAX], n_temp = 0, n_dropped = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        graph_entry *x = &s->e[k];
        const bool live = x->id != 0; /* rule 18: kept through forward, not recomputed */
        if (!live)
            x->id = seg_alloc(g, x->bytes, x->keep ? "act" : "tmp", s, x->name);
        for (uint32_t j = 0; j < n_temp;) {
            if (until[j] == k) {
                gfree(g, &temp[j]);
                temp[j] = temp[n_temp - 1];
                until[j] = until[--n_temp];
            } else {
                j++;
            }
        }
        if (g->m->selective && x->keep && !x->recompute) {
            for (uint32_t j = 0; j < n_dropped; j++)
                gfree(g, &dropped[j]);
            n_dropped = 0;
        }
        if (!x->keep) {
            temp[n_temp] = x->id;
            until[n_temp++] = x->until ? x->until : k + 1;
            x->id = 0;
        } else if (g->m->selective && x->recompute) {
            dropped[n_dropped++] = x->id;
            x->id = 0;
        }
    }
    for (uint32_t j = 0; j < n_temp; j++)
        gfree(g, &temp[j]);
    for (uint32_t j = 0; j < n_dropped; j++)
        gfree(g, &dropped[j]);
}

/* keep_saved: rule 18, the entries marked save stay too */
static void drop_all_but_output(gen *g, graph_seg *s, bool keep_saved)
{
    for (uint32_t k = 0; k + 1 < s->n; k++)
        if (!(keep_saved && s->e[k].save))
            gfree(g, &s->e[k].id);
}

static void backward(gen *g, graph_seg *s, uint64_t *flow)
{
    for (uint32_t k = s->n; k-- > 0;) {
        graph_entry *x = &s->e[k];
        if (!x->keep)
            continue;
        if (x->recompute && x->id == 0 && g->m->selective) {
            uint32_t j0 = k;
            while (j0 > 0 && s->e[j0 - 1].recompute)
                j0--;
            for (uint32_t j = j0; j <= k; j++)
                if (s->e[j].keep)
                    s->e[j].id = seg_alloc(g, s->e[j].bytes, "act", s, s->e[j].name);
        }
        uint64_t bwd_tmp =
            x->bwd_tmp ? seg_alloc(g, x->bwd_tmp, "tmp", s, x->bwd_tmp_name ? x->bwd_tmp_name : "dequant_bwd") : 0;
        if (x->grad) {
            uint64_t id = seg_alloc(g, x->gbytes ? x->gbytes : x->bytes, "agrad", s, x->name);
            gfree(g, flow);
            *flow = id;
        }
        for (uint32_t p = x->p0 + x->pn; p-- > x->p0 && g->m->grad_buffer;) { /* rule 19 */
            const uint8_t t = g->m->params[p].te_wgrad;
            if (t > 0 && t < GRAPH_WGRAD_TRANSIENT && g->te_ids[t] == 0 && trainable(g, p) && g->m->te_wgrad_bytes[t])
                g->te_ids[t] = param_alloc_bytes(g, p, "te_dummy_wgrad", g->m->te_wgrad_bytes[t]);
        }
        for (uint32_t p = x->p0 + x->pn; p-- > x->p0 && !g->m->grad_buffer;)
            if (g->g_ids[p] == 0 && trainable(g, p))
                g->g_ids[p] = g->gb == g->e ? param_alloc(g, p, "grad")
                                            : param_alloc_bytes(g, p, "grad", g->m->params[p].numel * g->gb);
        gfree(g, &bwd_tmp);
        gfree(g, &x->id);
        for (uint32_t p = x->p0 + x->pn; p-- > x->p0 && g->m->grad_buffer;) /* rule 19's transient */
            if (g->m->params[p].te_wgrad == GRAPH_WGRAD_TRANSIENT && trainable(g, p)) {
                uint64_t ph =
                    param_alloc_bytes(g, p, "tmp:wgrad_placeholder", g->m->te_wgrad_bytes[GRAPH_WGRAD_TRANSIENT]);
                gfree(g, &ph);
            }
        if (g->m->apply_at_last_use) /* rule 15: the update runs at the last use, the gradient dies */
            for (uint32_t p = x->p0; p < x->p0 + x->pn; p++)
                if (g->uses[p] > 0 && --g->uses[p] == 0)
                    gfree(g, &g->g_ids[p]);
    }
}

/* rule 15: how many saved tensors of the micro-batch in `slot` name each parameter */
static void count_uses(gen *g, uint32_t slot)
{
    const graph_model *m = g->m;
    memset(g->uses, 0, m->n_params * sizeof *g->uses);
    for (uint32_t i = 0; i < m->n_segments; i++) {
        const graph_seg *s = &g->segs[slot * m->n_segments + i];
        for (uint32_t k = 0; k < s->n; k++)
            if (s->e[k].keep)
                for (uint32_t p = s->e[k].p0; p < s->e[k].p0 + s->e[k].pn; p++)
                    g->uses[p] += trainable(g, p) ? 1 : 0;
    }
}

#define SEG_PARAMS_MAX (GRAPH_SEG_MAX * 4)

/* the parameters segment s refers to, each once, in order of first mention */
static uint32_t seg_params(const graph_seg *s, uint32_t *seen)
{
    uint32_t n_seen = 0;
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t p = s->e[k].p0; p < s->e[k].p0 + s->e[k].pn; p++) {
            bool dup = false;
            for (uint32_t j = 0; j < n_seen && !dup; j++)
                dup = seen[j] == p;
            if (dup || n_seen == SEG_PARAMS_MAX)
                continue;
            seen[n_seen++] = p;
        }
    return n_seen;
}

/* ZeRO-3: the full parameters segment s refers to, in one buffer */
static uint64_t gather_bytes(const gen *g, const graph_seg *s)
{
    uint32_t ps[SEG_PARAMS_MAX];
    const uint32_t n = seg_params(s, ps);
    uint64_t bytes = 0;
    for (uint32_t j = 0; j < n; j++)
        bytes += g->m->params[ps[j]].numel * g->e;
    return bytes;
}

/* ---------------------------------------------------------------- FSDP2 (rule 17) */

/* a parameter's elements padded to a multiple of the shard count */
static uint64_t padded_numel(const gen *g, uint32_t p)
{
    return graph_shard_numel(g->m->params[p].numel, g->dp) * g->dp;
}

/* the segment's flat all-gather buffer: dp x every parameter's shard, in the element size */
static uint64_t fsdp_ag_bytes(const gen *g, const uint32_t *ps, uint32_t n)
{
    uint64_t bytes = 0;
    for (uint32_t j = 0; j < n; j++)
        bytes += padded_numel(g, ps[j]) * g->e;
    return bytes;
}

static bool fsdp_sharded(const gen *g, const uint32_t *ps, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++)
        if (g->u_ids[ps[j]] == 0)
            return true;
    return false;
}

/* rule 17 with fsdp_root: embeddings and head form one unit, the root */
static bool root_unit(const gen *g)
{
    return g->m->fsdp_root && !g->m->no_embed && !g->m->no_head && g->m->n_segments >= 2;
}

/* the parameters of segment i's unit: its own, and with a root unit the head's beside segment 0's */
static uint32_t unit_params(const gen *g, uint32_t i, const graph_seg *s, uint32_t *ps)
{
    uint32_t n = seg_params(s, ps);
    if (!root_unit(g) || i != 0)
        return n;
    const uint32_t n0 = n;
    for (uint32_t j = 0; j < g->n_head_ps && n < SEG_PARAMS_MAX; j++) {
        bool dup = false;
        for (uint32_t k = 0; k < n0 && !dup; k++)
            dup = ps[k] == g->head_ps[j];
        if (!dup)
            ps[n++] = g->head_ps[j];
    }
    return n;
}

/* issue segment i's all-gather ahead of its use (backward prefetch) */
static void fsdp_prefetch(gen *g, uint32_t i, const graph_seg *s)
{
    uint32_t ps[SEG_PARAMS_MAX];
    const uint32_t n = unit_params(g, i, s, ps);
    if (g->dp <= 1 || g->gat[i] != 0 || !fsdp_sharded(g, ps, n))
        return;
    const uint32_t stream = g->m->fsdp_streams ? GRAPH_STREAM_ALL_GATHER : 0;
    g->gat[i] = seg_alloc_on(g, stream, fsdp_ag_bytes(g, ps, n), "fsdp_ag", s, "params");
}

static void fsdp_unshard(gen *g, uint32_t i, const graph_seg *s, bool in_forward)
{
    uint32_t ps[SEG_PARAMS_MAX];
    const uint32_t n = unit_params(g, i, s, ps);
    if (!fsdp_sharded(g, ps, n))
        return; /* not resharded after forward */
    fsdp_prefetch(g, i, s);
    uint64_t ag = g->gat[i];
    g->gat[i] = 0;
    if (in_forward)
        gfree(g, &g->ag_keep);
    for (uint32_t j = 0; j < n; j++)
        if (g->u_ids[ps[j]] == 0)
            g->u_ids[ps[j]] = param_alloc_bytes(g, ps[j], "unsharded", padded_numel(g, ps[j]) * g->e);
    if (in_forward)
        g->ag_keep = ag;
    else
        gfree(g, &ag);
}

static void fsdp_reshard(gen *g, uint32_t i, const graph_seg *s)
{
    uint32_t ps[SEG_PARAMS_MAX];
    const uint32_t n = unit_params(g, i, s, ps);
    for (uint32_t j = 0; j < n; j++)
        gfree(g, &g->u_ids[ps[j]]);
}

static void fsdp_reduce(gen *g, uint32_t i, const graph_seg *s)
{
    uint32_t ps[SEG_PARAMS_MAX];
    const uint32_t n = unit_params(g, i, s, ps);
    const uint64_t rb = g->m->reduce_bytes ? g->m->reduce_bytes : g->gb;
    const uint64_t sb = g->m->grad_shard_bytes ? g->m->grad_shard_bytes : g->gb;
    uint64_t bytes = 0;
    for (uint32_t j = 0; j < n; j++)
        bytes += g->g_ids[ps[j]] ? padded_numel(g, ps[j]) * rb : 0;
    if (bytes == 0)
        return;
    gfree(g, &g->rs_keep);
    uint64_t rs = seg_alloc(g, bytes, "fsdp_rs", s, "grads");
    if (g->m->fsdp_streams) { /* one reduce output per unit on the reduce-scatter stream, the shards its views */
        uint64_t out = 0;
        uint32_t first = n;
        for (uint32_t j = 0; j < n; j++) {
            if (g->g_ids[ps[j]] == 0)
                continue;
            gfree(g, &g->g_ids[ps[j]]);
            out += graph_shard_numel(g->m->params[ps[j]].numel, g->dp) * sb;
            first = first < n ? first : j;
        }
        uint64_t id = seg_alloc_on(g, GRAPH_STREAM_REDUCE_SCATTER, out, "fsdp_rs_out", s, "grads");
        if (g->gs_ids[ps[first]] == 0)
            g->gs_ids[ps[first]] = id;
        else
            gfree(g, &id); /* accumulated into the existing shards */
        g->rs_keep = rs;
        return;
    }
    for (uint32_t j = 0; j < n; j++) {
        const uint32_t p = ps[j];
        if (g->g_ids[p] == 0)
            continue;
        gfree(g, &g->g_ids[p]);
        if (g->gs_ids[p] == 0)
            g->gs_ids[p] = param_alloc_bytes(g, p, "grad_shard", graph_shard_numel(g->m->params[p].numel, g->dp) * sb);
    }
    g->rs_keep = rs;
}

static void gather(gen *g, uint32_t i, const graph_seg *s)
{
    if (g->m->zero < 3 || g->gat[i] != 0)
        return;
    uint64_t bytes = gather_bytes(g, s);
    if (bytes > 0)
        g->gat[i] = seg_alloc(g, bytes, "gather", s, "params");
}

/* ZeRO-2/3: the gradients that exist become this rank's shards */
static void reduce_scatter(gen *g)
{
    if (g->m->zero < 2)
        return;
    for (uint32_t p = 0; p < g->m->n_params; p++) {
        if (g->g_ids[p] == 0)
            continue;
        if (g->gs_ids[p] == 0)
            g->gs_ids[p] = param_alloc_bytes(g, p, "grad_shard", local_numel(g, g->m->params[p].numel, 2) * g->gb);
        gfree(g, &g->g_ids[p]);
    }
}

static bool middle(const gen *g, uint32_t i)
{
    const graph_model *m = g->m;
    if (i == 0 && !m->no_embed)
        return false;
    if (i + 1 == m->n_segments && !m->no_head)
        return false;
    return true;
}

/* rule 18: whether middle segment i is checkpointed */
static bool checkpointed(const gen *g, uint32_t i)
{
    const graph_model *m = g->m;
    if (!m->checkpointing || !middle(g, i))
        return false;
    const uint32_t ordinal = i + (m->no_embed ? 1 : 0); /* 1 for the first layer */
    return m->ckpt_every <= 1 || ordinal % m->ckpt_every == 0;
}

/* rule 17: whether segment i of n reshards after its forward (never the head; with a root
 * unit neither segment 0 nor the last layer) */
static bool reshards_after_forward(const gen *g, uint32_t i)
{
    const uint32_t n = g->m->n_segments;
    if (root_unit(g) && (i == 0 || i + 2 == n))
        return false;
    return g->m->reshard_after_forward && !(i + 1 == n && !g->m->no_head);
}

static bool first_stage(const gen *g)
{
    return g->m->pp <= 1 || g->m->stage == 0;
}

static bool last_stage(const gen *g)
{
    return g->m->pp <= 1 || g->m->stage + 1 == g->m->pp;
}

static void forward_mb(gen *g, uint32_t slot)
{
    const graph_model *m = g->m;
    const uint32_t n = m->n_segments;
    if (!first_stage(g)) {
        tick(g, m->p2p_bytes);
        g->recv[slot] = synth_alloc(g->o, m->p2p_bytes, "p2p:recv");
    }
    for (uint32_t i = 0; i < n; i++) {
        graph_seg *s = &g->segs[slot * n + i];
        m->build(m->ctx, i, s);
        if (m->fsdp2)
            fsdp_unshard(g, i, s, true);
        else
            gather(g, i, s);
        forward(g, s);
        if (!m->fsdp2)
            gfree(g, &g->gat[i]);
        else if (reshards_after_forward(g, i))
            fsdp_reshard(g, i, s);
        if (checkpointed(g, i)) {
            drop_all_but_output(g, s, m->ckpt_save);
            g->ckpt[slot * n + i] = s->e[s->n - 1].id;
            s->e[s->n - 1].id = 0;
        }
    }
    gfree(g, &g->ag_keep); /* rule 17: the root's post-forward */
}

static void backward_mb(gen *g, uint32_t slot)
{
    const graph_model *m = g->m;
    const uint32_t n = m->n_segments;
    uint64_t flow;
    if (m->apply_at_last_use)
        count_uses(g, slot);
    if (last_stage(g)) {
        tick(g, g->e);
        flow = synth_alloc(g->o, g->e, "agrad:loss");
    } else {
        tick(g, m->p2p_bytes);
        flow = synth_alloc(g->o, m->p2p_bytes, "p2p:grad_recv");
    }
    for (uint32_t i = n; i-- > 0;) {
        graph_seg *s = &g->segs[slot * n + i];
        if (m->fsdp2) {
            fsdp_unshard(g, i, s, false);
            if (i > 0)
                fsdp_prefetch(g, i - 1, &g->segs[slot * n + i - 1]);
        } else {
            gather(g, i, s);
            if (i > 0)
                gather(g, i - 1, &g->segs[slot * n + i - 1]); /* prefetch */
        }
        if (checkpointed(g, i))
            forward(g, s); /* recompute */
        backward(g, s, &flow);
        if (checkpointed(g, i))
            gfree(g, &g->ckpt[slot * n + i]);
        if (m->fsdp2 && !(root_unit(g) && i + 1 == n)) { /* the root's post-backward comes at the end */
            fsdp_reshard(g, i, s);
            fsdp_reduce(g, i, s);
        } else if (!m->fsdp2) {
            reduce_scatter(g);
            gfree(g, &g->gat[i]);
        }
    }
    gfree(g, &g->rs_keep); /* rule 17: the end of backward */
    gfree(g, &flow);
    gfree(g, &g->recv[slot]);
}

/* ---------------------------------------------------------------- optimizer */

static const char *state_tag(const gen *g, uint32_t p, uint64_t k)
{
    switch (g->m->optimizer) {
    case SYNTH_ADAM: return k == 0 ? "adam_m" : "adam_v";
    case SYNTH_MOMENTUM: return "momentum";
    case SYNTH_ADAFACTOR: return g->m->params[p].rows ? (k == 0 ? "adafactor_r" : "adafactor_c") : "adafactor_v";
    case SYNTH_SGD: break;
    }
    return "state";
}

/* elements of state slot k of parameter p (0: the slot is unused) */
static uint64_t state_numel(const gen *g, uint32_t p, uint64_t k)
{
    const graph_param *x = &g->m->params[p];
    uint64_t n = x->numel;
    if (g->m->optimizer == SYNTH_ADAFACTOR && x->rows)
        n = k == 0 ? x->rows : x->numel / x->rows;
    else if (g->m->optimizer == SYNTH_ADAFACTOR && k > 0)
        return 0;
    return local_numel(g, n, 1);
}

static void create_states(gen *g)
{
    const graph_model *m = g->m;
    for (uint32_t p = 0; p < m->n_params; p++)
        for (uint64_t k = 0; k < g->n_states; k++) {
            if (!trainable(g, p) || state_numel(g, p, k) == 0)
                continue;
            uint64_t bytes = state_numel(g, p, k) * g->sb;
            g->s_ids[p * g->n_states + k] = param_alloc_bytes(g, p, state_tag(g, p, k), bytes);
        }
}

static void optimizer_step(gen *g)
{
    const graph_model *m = g->m;
    synth_markf(g->o, "optimizer %llu", (unsigned long long)g->step);
    if (g->step == 1 && g->n_states > 0 && !m->master && !m->apply_at_last_use)
        create_states(g);
    if (m->optimizer == SYNTH_ADAM && !m->fused && !m->apply_at_last_use) {
        for (uint32_t p = 0; p < m->n_params; p++)
            if (trainable(g, p))
                g->tmp_ids[p] = param_alloc_bytes(g, p, "tmp:adam_denom", local_numel(g, m->params[p].numel, 1) * g->sb);
        for (uint32_t p = 0; p < m->n_params; p++)
            gfree(g, &g->tmp_ids[p]);
    } else if (m->optimizer == SYNTH_ADAFACTOR) {
        for (uint32_t p = 0; p < m->n_params; p++)
            if (trainable(g, p)) {
                g->tmp_ids[p] =
                    param_alloc_bytes(g, p, "tmp:adafactor_update", local_numel(g, m->params[p].numel, 1) * g->sb);
                gfree(g, &g->tmp_ids[p]);
            }
    }
    for (uint32_t p = 0; p < m->n_params; p++) {
        gfree(g, &g->g_ids[p]);
        gfree(g, &g->gs_ids[p]);
    }
}

/* ---------------------------------------------------------------- steps */

static void train_step(gen *g)
{
    const graph_model *m = g->m;
    const uint64_t mbs = m->micro_batches ? m->micro_batches : 1;
    const uint64_t p = m->pp ? m->pp : 1;
    uint64_t warm = p - m->stage - 1;
    if (warm > mbs)
        warm = mbs;
    const uint64_t slots = warm + 1;
    synth_markf(g->o, "step %llu", (unsigned long long)g->step);
    for (uint64_t j = 0; j < warm; j++)
        forward_mb(g, (uint32_t)(j % slots));
    for (uint64_t j = warm; j < mbs + warm; j++) {
        if (j < mbs)
            forward_mb(g, (uint32_t)(j % slots));
        if (j == warm)
            synth_markf(g->o, "backward %llu", (unsigned long long)g->step);
        backward_mb(g, (uint32_t)((j - warm) % slots));
    }
    optimizer_step(g);
}

static void inference_pass(gen *g)
{
    const graph_model *m = g->m;
    synth_markf(g->o, "forward %llu", (unsigned long long)g->step);
    uint64_t prev_out = 0;
    for (uint32_t i = 0; i < m->n_segments; i++) {
        graph_seg *s = &g->segs[i];
        m->build(m->ctx, i, s);
        forward(g, s);
        drop_all_but_output(g, s, false);
        gfree(g, &prev_out);
        prev_out = s->e[s->n - 1].id;
        s->e[s->n - 1].id = 0;
    }
    gfree(g, &prev_out);
}

static void load(gen *g)
{
    const graph_model *m = g->m;
    synth_mark(g->o, "load weights");
    for (uint32_t p = 0; p < m->n_params; p++) {
        const graph_param *x = &m->params[p];
        if (x->stored_bytes)
            g->w_ids[p] = param_alloc_bytes(g, p, "qweight", x->stored_bytes);
        else if (m->zero >= 3 && !m->inference)
            g->w_ids[p] = param_alloc_bytes(g, p, "weight_shard",
                                            local_numel(g, x->numel, 3) * (m->shard_bytes ? m->shard_bytes : g->e));
        else
            g->w_ids[p] = param_alloc(g, p, "weight");
        if (x->qconst_bytes)
            g->q_ids[p] = param_alloc_bytes(g, p, "qconst", x->qconst_bytes);
    }
    for (uint32_t b = 0; b < m->n_buffers; b++) {
        uint64_t bytes = m->buffers[b].numel * (m->buffers[b].elem_bytes ? m->buffers[b].elem_bytes : g->e);
        tick(g, bytes);
        g->b_ids[b] = synth_allocf(g->o, bytes, "buffer:%s", m->buffers[b].name);
    }
    if (m->grad_buffer && !m->inference) { /* rule 16 */
        uint64_t bytes = 0;
        for (uint32_t p = 0; p < m->n_params; p++)
            if (trainable(g, p))
                bytes += m->params[p].numel * g->gb;
        if (bytes) {
            tick(g, bytes);
            g->grad_buffer = synth_allocf(g->o, bytes, "grad:main_grad_buffer");
        }
    }
    if ((m->master || m->apply_at_last_use) && !m->inference) {
        for (uint32_t p = 0; p < m->n_params && m->master; p++)
            if (trainable(g, p))
                g->ms_ids[p] = param_alloc_bytes(g, p, "master", local_numel(g, m->params[p].numel, 1) * 4);
        create_states(g);
    }
}

static void release(gen *g)
{
    const graph_model *m = g->m;
    synth_mark(g->o, "release");
    for (uint64_t k = 0; k < (uint64_t)m->n_params * g->n_states; k++)
        gfree(g, &g->s_ids[k]);
    for (uint32_t p = 0; p < m->n_params; p++)
        gfree(g, &g->ms_ids[p]);
    for (uint32_t p = 0; p < m->n_params; p++) {
        gfree(g, &g->w_ids[p]);
        gfree(g, &g->q_ids[p]);
    }
    for (uint32_t b = 0; b < m->n_buffers; b++)
        gfree(g, &g->b_ids[b]);
    gfree(g, &g->grad_buffer);
    for (uint32_t p = 0; p < m->n_params; p++)
        gfree(g, &g->u_ids[p]);
    for (uint32_t k = 0; k < GRAPH_TE_WGRAD_MAX; k++)
        gfree(g, &g->te_ids[k]);
}

sim_status graph_generate(const graph_model *m, synth_out *o, sim_error *err)
{
    assert(m->n_segments >= 1);
    gen g = {.m = m, .o = o, .e = m->elem_bytes};
    g.gb = m->grad_bytes ? m->grad_bytes : g.e;
    g.sb = m->state_bytes ? m->state_bytes : g.e;
    g.dp = m->dp ? m->dp : 1;
    g.n_states = m->inference ? 0 : m->optimizer == SYNTH_ADAFACTOR ? 2 : synth_optimizer_states(m->optimizer);
    const uint64_t pp = m->pp ? m->pp : 1, mbs = m->micro_batches ? m->micro_batches : 1;
    g.slots = (uint32_t)((pp - m->stage - 1 < mbs ? pp - m->stage - 1 : mbs) + 1);
    sim_status st = SIM_OK;
    const size_t np = m->n_params, ns = m->n_segments;
    g.rng = synth_rng_new(m->seed);
    g.w_ids = calloc(np, sizeof *g.w_ids);
    g.g_ids = calloc(np, sizeof *g.g_ids);
    g.s_ids = calloc(np * (g.n_states ? g.n_states : 1), sizeof *g.s_ids);
    g.tmp_ids = calloc(np, sizeof *g.tmp_ids);
    g.q_ids = calloc(np, sizeof *g.q_ids);
    g.ms_ids = calloc(np, sizeof *g.ms_ids);
    g.gs_ids = calloc(np, sizeof *g.gs_ids);
    g.b_ids = calloc(m->n_buffers + 1, sizeof *g.b_ids);
    g.gat = calloc(ns, sizeof *g.gat);
    g.segs = calloc(ns * g.slots, sizeof *g.segs);
    g.ckpt = calloc(ns * g.slots, sizeof *g.ckpt);
    g.recv = calloc(g.slots, sizeof *g.recv);
    g.uses = calloc(np, sizeof *g.uses);
    g.u_ids = calloc(np, sizeof *g.u_ids);
    g.head_ps = calloc(SEG_PARAMS_MAX, sizeof *g.head_ps);
    if (!g.head_ps || !g.u_ids || !g.rng || !g.w_ids || !g.g_ids || !g.s_ids || !g.tmp_ids || !g.q_ids || !g.ms_ids ||
        !g.gs_ids || !g.b_ids || !g.gat || !g.segs || !g.ckpt || !g.recv || !g.uses) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    if (root_unit(&g)) { /* the head's parameters, for segment 0's unit */
        m->build(m->ctx, (uint32_t)ns - 1, &g.segs[ns - 1]);
        g.n_head_ps = seg_params(&g.segs[ns - 1], g.head_ps);
        g.segs[ns - 1].n = 0;
    }
    load(&g);
    for (g.step = 1; g.step <= m->steps && synth_ok(o); g.step++) {
        if (m->inference)
            inference_pass(&g);
        else
            train_step(&g);
    }
    if (!m->keep_live)
        release(&g);
done:
    synth_rng_free(g.rng);
    free(g.w_ids);
    free(g.g_ids);
    free(g.s_ids);
    free(g.tmp_ids);
    free(g.q_ids);
    free(g.ms_ids);
    free(g.gs_ids);
    free(g.b_ids);
    free(g.gat);
    free(g.segs);
    free(g.ckpt);
    free(g.recv);
    free(g.uses);
    free(g.u_ids);
    free(g.head_ps);
    return st;
}
