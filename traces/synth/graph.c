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
 * Time: each allocation advances the clock by 2 µs + bytes/1000 ns (≈ 1 TB/s), each
 * free by 1 µs, with lognormal jitter (σ 0.1) from the seeded GSL generator. Sizes
 * never depend on the seed. */
#include "graph.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

uint32_t graph_seg_add(graph_seg *s, const char *name, uint64_t bytes, bool keep, bool grad, uint32_t p0,
                       uint32_t pn)
{
    assert(s->n < GRAPH_SEG_MAX);
    s->e[s->n] = (graph_entry){.name = name, .bytes = bytes, .keep = keep, .grad = grad, .p0 = p0, .pn = pn};
    return s->n++;
}

typedef struct gen {
    const graph_model *m;
    synth_out *o;
    synth_rng *rng;
    uint64_t e;
    uint64_t n_states;
    uint64_t *w_ids, *g_ids, *s_ids, *tmp_ids; /* s_ids: n_params × n_states */
    uint64_t *b_ids;                            /* buffers */
    graph_seg *segs;
    uint64_t *ckpt;                             /* checkpointed segment outputs */
    uint64_t step;
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

static uint64_t param_alloc(gen *g, uint32_t p, const char *kind)
{
    uint64_t bytes = g->m->params[p].numel * g->e;
    tick(g, bytes);
    return synth_allocf(g->o, bytes, "%s:%s", kind, g->m->params[p].name);
}

static void gfree(gen *g, uint64_t *id)
{
    if (*id == 0)
        return;
    synth_advance(g->o, synth_rng_jitter(g->rng, 1000, 0.1));
    synth_free(g->o, *id);
    *id = 0;
}

static void forward(gen *g, graph_seg *s)
{
    uint64_t temp[GRAPH_SEG_MAX];
    uint32_t until[GRAPH_SEG_MAX], n_temp = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        graph_entry *x = &s->e[k];
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
        if (!x->keep) {
            temp[n_temp] = x->id;
            until[n_temp++] = x->until ? x->until : k + 1;
            x->id = 0;
        }
    }
    for (uint32_t j = 0; j < n_temp; j++)
        gfree(g, &temp[j]);
}

static void drop_all_but_output(gen *g, graph_seg *s)
{
    for (uint32_t k = 0; k + 1 < s->n; k++)
        gfree(g, &s->e[k].id);
}

static void backward(gen *g, graph_seg *s, uint64_t *flow)
{
    for (uint32_t k = s->n; k-- > 0;) {
        graph_entry *x = &s->e[k];
        if (!x->keep)
            continue;
        if (x->grad) {
            uint64_t id = seg_alloc(g, x->bytes, "agrad", s, x->name);
            gfree(g, flow);
            *flow = id;
        }
        for (uint32_t p = x->p0 + x->pn; p-- > x->p0;)
            if (g->g_ids[p] == 0)
                g->g_ids[p] = param_alloc(g, p, "grad");
        gfree(g, &x->id);
    }
}

static void optimizer_step(gen *g)
{
    const graph_model *m = g->m;
    synth_markf(g->o, "optimizer %llu", (unsigned long long)g->step);
    if (g->step == 1 && g->n_states > 0) {
        static const char *const ADAM[] = {"adam_m", "adam_v"};
        for (uint32_t p = 0; p < m->n_params; p++)
            for (uint64_t k = 0; k < g->n_states; k++)
                g->s_ids[p * g->n_states + k] = param_alloc(g, p, m->optimizer == SYNTH_ADAM ? ADAM[k] : "momentum");
    }
    if (m->optimizer == SYNTH_ADAM) {
        for (uint32_t p = 0; p < m->n_params; p++)
            g->tmp_ids[p] = param_alloc(g, p, "tmp:adam_denom");
        for (uint32_t p = 0; p < m->n_params; p++)
            gfree(g, &g->tmp_ids[p]);
    }
    for (uint32_t p = 0; p < m->n_params; p++)
        gfree(g, &g->g_ids[p]);
}

static bool middle(const gen *g, uint32_t i)
{
    return i > 0 && i + 1 < g->m->n_segments;
}

static void train_step(gen *g)
{
    const graph_model *m = g->m;
    const uint32_t n = m->n_segments;
    synth_markf(g->o, "step %llu", (unsigned long long)g->step);
    for (uint32_t i = 0; i < n; i++) {
        graph_seg *s = &g->segs[i];
        m->build(m->ctx, i, s);
        forward(g, s);
        if (m->checkpointing && middle(g, i)) {
            drop_all_but_output(g, s);
            g->ckpt[i] = s->e[s->n - 1].id;
            s->e[s->n - 1].id = 0;
        }
    }
    synth_markf(g->o, "backward %llu", (unsigned long long)g->step);
    tick(g, g->e);
    uint64_t flow = synth_alloc(g->o, g->e, "agrad:loss");
    for (uint32_t i = n; i-- > 0;) {
        graph_seg *s = &g->segs[i];
        if (m->checkpointing && middle(g, i))
            forward(g, s); /* recompute */
        backward(g, s, &flow);
        if (m->checkpointing && middle(g, i))
            gfree(g, &g->ckpt[i]);
    }
    gfree(g, &flow);
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
        drop_all_but_output(g, s);
        gfree(g, &prev_out);
        prev_out = s->e[s->n - 1].id;
        s->e[s->n - 1].id = 0;
    }
    gfree(g, &prev_out);
}

sim_status graph_generate(const graph_model *m, synth_out *o, sim_error *err)
{
    assert(m->n_segments >= 2);
    gen g = {.m = m, .o = o, .e = m->elem_bytes};
    g.n_states = m->inference ? 0 : synth_optimizer_states(m->optimizer);
    sim_status st = SIM_OK;
    g.rng = synth_rng_new(m->seed);
    g.w_ids = calloc(m->n_params, sizeof *g.w_ids);
    g.g_ids = calloc(m->n_params, sizeof *g.g_ids);
    g.s_ids = calloc((size_t)m->n_params * (g.n_states ? g.n_states : 1), sizeof *g.s_ids);
    g.tmp_ids = calloc(m->n_params, sizeof *g.tmp_ids);
    g.b_ids = calloc(m->n_buffers + 1, sizeof *g.b_ids);
    g.segs = calloc(m->n_segments, sizeof *g.segs);
    g.ckpt = calloc(m->n_segments, sizeof *g.ckpt);
    if (!g.rng || !g.w_ids || !g.g_ids || !g.s_ids || !g.tmp_ids || !g.b_ids || !g.segs || !g.ckpt) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    synth_mark(o, "load weights");
    for (uint32_t p = 0; p < m->n_params; p++)
        g.w_ids[p] = param_alloc(&g, p, "weight");
    for (uint32_t b = 0; b < m->n_buffers; b++) {
        uint64_t bytes = m->buffers[b].numel * (m->buffers[b].elem_bytes ? m->buffers[b].elem_bytes : g.e);
        tick(&g, bytes);
        g.b_ids[b] = synth_allocf(o, bytes, "buffer:%s", m->buffers[b].name);
    }
    for (g.step = 1; g.step <= m->steps && synth_ok(o); g.step++) {
        if (m->inference)
            inference_pass(&g);
        else
            train_step(&g);
    }
    if (!m->keep_live) {
        synth_mark(o, "release");
        for (uint64_t k = 0; k < (uint64_t)m->n_params * g.n_states; k++)
            gfree(&g, &g.s_ids[k]);
        for (uint32_t p = 0; p < m->n_params; p++)
            gfree(&g, &g.w_ids[p]);
        for (uint32_t b = 0; b < m->n_buffers; b++)
            gfree(&g, &g.b_ids[b]);
    }
done:
    synth_rng_free(g.rng);
    free(g.w_ids);
    free(g.g_ids);
    free(g.s_ids);
    free(g.tmp_ids);
    free(g.b_ids);
    free(g.segs);
    free(g.ckpt);
    return st;
}
