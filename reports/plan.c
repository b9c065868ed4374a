/* Capacity plans as text tables and as JSON, on single cards and on nodes. */
#include "plan.h"

#include <stdio.h>
#include <string.h>

#include "reports/node.h"
#include "reports/result.h"
#include "sim/gpu_context.h"
#include "sim/jsonw.h"
#include "sim/units.h"

static const char *a_path(const batch_traces *t, uint32_t i)
{
    evbuf_cursor c;
    return evbuf_source(t->b[i], &c).path;
}

/* A fit on GPU g whose headroom is smaller than the spread of the published context
 * figures, when the context is the published default: whether it fits depends on
 * which figure is right. */
static bool plan_context_uncertain(const plan_question *q, uint32_t g, const plan_cell *c)
{
    return q->model.context_default != NULL && c->st == SIM_OK && c->fits &&
           q->gpus[g]->capacity_bytes - c->peak_device < gpu_context_spread();
}

static void text_cell(sim_buf *b, const plan_cell *c)
{
    char s[32], h[32];
    if (c->st != SIM_OK) {
        sim_buf_printf(b, " %-22s", "does not run");
    } else if (c->fits) {
        snprintf(h, sizeof h, "%s", units_format_size(c->peak_device, s, sizeof s));
        sim_buf_printf(b, " %-22s", h);
    } else {
        snprintf(h, sizeof h, "OOM (%s)", sim_oom_cause_name(c->cause));
        sim_buf_printf(b, " %-22s", h);
    }
}

/* The effective limit of each strategy on the model card, in the header. */
static void limits_text(const plan_question *q, const uint64_t *limits, const char *const *sources, sim_buf *b)
{
    char s[32];
    if (limits == NULL)
        return;
    sim_buf_printf(b, "  limits  on %s (%s), the allocator's effective limit:", q->model.name ? q->model.name : "the card",
                   units_format_size(q->model.capacity_bytes, s, sizeof s));
    for (uint32_t k = 0; k < q->n_ops; k++) {
        uint64_t l = limits[(size_t)q->n_gpus * q->n_ops + k];
        sim_buf_printf(b, "%s %s %s", k ? ";" : "", q->ops[k]->name,
                       l == UINT64_MAX ? "does not run" : units_format_size(l, s, sizeof s));
        if (l != UINT64_MAX && sources != NULL && sources[k] != NULL && sources[k][0])
            sim_buf_printf(b, " (%s)", sources[k]);
    }
    sim_buf_puts(b, "\n");
}

static void plan_text(const plan_question *q, const plan_answer *a, const uint64_t *limits,
                      const char *const *sources, sim_buf *b)
{
    char s[32], t2[32];
    sim_buf_printf(b, "gpusim %s: plan\n", GPUSIM_VERSION);
    uint64_t pool_events = 0;
    for (uint32_t i = 0; i < q->t->n; i++) {
        sim_buf_printf(b, "  trace   %s: %llu events\n", a_path(q->t, i), (unsigned long long)evbuf_count(q->t->b[i]));
        pool_events += evbuf_pool_events(q->t->b[i]);
    }
    report_text_pools_ignored_by(q->ops, q->n_ops, pool_events, b);
    sim_buf_printf(b, "  context %s per process (assumed)\n", units_format_size(q->model.context_bytes, s, sizeof s));
    if (q->model.context_default) {
        char why[256];
        sim_buf_printf(b, "  context source: %s (--context sets it)\n",
                       gpu_context_describe(q->model.context_default, q->model.cc_major, why, sizeof why));
    }
    if (q->model.nccl_bytes)
        sim_buf_printf(b, "  nccl    %s of it: NCCL buffers from %s (--nccl=0 leaves them out)\n",
                       units_format_size(q->model.nccl_bytes, s, sizeof s),
                       q->model.nccl_given ? "--nccl" : "the trace header (meta.nccl_bytes)");
    if (q->model.context_bytes == 0)
        sim_buf_puts(b, "  note: a real CUDA context takes about 0.3-1 GiB before any allocation (driver, kernels,\n"
                        "        library handles), so every answer here is that much optimistic; a catalog card\n"
                        "        (--gpu) gets its published figure (gpusim gpus), or set --context=SIZE (what\n"
                        "        nvidia-smi shows for an idle process)\n");
    limits_text(q, limits, sources, b);
    sim_buf_puts(b, "\n");
    sim_buf_puts(b, "Peak on the device (reserved + context) where it runs, else why not:\n\n");
    sim_buf_printf(b, "  %-12s %10s", "GPU", "capacity");
    for (uint32_t k = 0; k < q->n_ops; k++)
        sim_buf_printf(b, " %-22s", q->ops[k]->name);
    sim_buf_puts(b, "\n");
    for (uint32_t g = 0; g < q->n_gpus; g++) {
        sim_buf_printf(b, "  %-12s %10s", q->gpus[g]->name, units_format_size(q->gpus[g]->capacity_bytes, s, sizeof s));
        for (uint32_t k = 0; k < q->n_ops; k++)
            text_cell(b, &a->cells[g * q->n_ops + k]);
        sim_buf_puts(b, "\n");
    }
    sim_buf_puts(b, "\nHeadroom (capacity - peak on the device) where it runs:\n\n");
    for (uint32_t g = 0; g < q->n_gpus; g++) {
        sim_buf_printf(b, "  %-12s %10s", q->gpus[g]->name, "");
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_cell *c = &a->cells[g * q->n_ops + k];
            if (c->st == SIM_OK && c->fits)
                sim_buf_printf(b, " %-22s",
                               units_format_size(q->gpus[g]->capacity_bytes - c->peak_device, s, sizeof s));
            else
                sim_buf_printf(b, " %-22s", "-");
        }
        sim_buf_puts(b, "\n");
    }
    for (uint32_t g = 0; g < q->n_gpus; g++)
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_cell *c = &a->cells[g * q->n_ops + k];
            if (plan_context_uncertain(q, g, c))
                sim_buf_printf(b,
                               "  note: %s under %s fits by %s: within the uncertainty of the CUDA context "
                               "(the published figures spread %s)\n",
                               q->gpus[g]->name, q->ops[k]->name,
                               units_format_size(q->gpus[g]->capacity_bytes - c->peak_device, s, sizeof s),
                               units_format_size(gpu_context_spread(), t2, sizeof t2));
        }
    sim_buf_printf(b, "\nSmallest capacity each strategy runs on (bisection to 1 MiB on a card of compute "
                      "capability %u.%u):\n\n",
                   q->model.cc_major, q->model.cc_minor);
    for (uint32_t k = 0; k < q->n_ops; k++) {
        const plan_min *m = &a->mins[k];
        sim_buf_printf(b, "  %-10s ", q->ops[k]->name);
        if (!m->found) {
            sim_buf_printf(b, "does not run even on %s\n", units_format_size(PLAN_CEILING, s, sizeof s));
            continue;
        }
        sim_buf_printf(b, "%12s (%llu MiB), peak on the device %s; %s at %llu MiB; %u runs (%u replays)",
                       units_format_size(m->capacity, s, sizeof s), (unsigned long long)(m->capacity / MiB),
                       units_format_size(m->at_min.peak_device, t2, sizeof t2),
                       m->capacity == MiB ? "nothing below"
                       : m->below_fails   ? "fails"
                                          : "RUNS",
                       (unsigned long long)(m->capacity / MiB - 1), m->runs, m->replays);
        if (m->monotonic)
            sim_buf_puts(b, ", monotonic\n");
        else if (m->counter_capacity)
            sim_buf_printf(b, "\n             NOT MONOTONIC: fails on %llu MiB although it runs on %llu MiB "
                              "(fragmentation)\n",
                           (unsigned long long)(m->counter_capacity / MiB), (unsigned long long)(m->capacity / MiB));
        else
            sim_buf_puts(b, "\n             NOT MONOTONIC: runs on 1 MiB less than the bisection's answer\n");
    }
}

/* Table cells are padded: drop the spaces before each newline. */
static void rstrip_lines(sim_buf *b, size_t from)
{
    size_t k = from;
    for (size_t i = from; i < b->len; i++) {
        if (b->data[i] == '\n')
            while (k > from && b->data[k - 1] == ' ')
                k--;
        b->data[k++] = b->data[i];
    }
    b->len = k;
    if (b->data)
        b->data[k] = '\0';
}

/* A grid cell's opening: {"strategy": NAME, and when it did not run, its error and the
 * closing brace (false: nothing more to say). */
static bool json_run_head(jsonw *w, const char *name, sim_status st, const sim_error *err)
{
    jsonw_object_inline(w);
    jsonw_key_str(w, "strategy", name);
    if (st == SIM_OK)
        return true;
    jsonw_key_bool(w, "fits", false);
    jsonw_key_str(w, "error", err->msg);
    jsonw_end(w);
    return false;
}

/* The traces as [{"path", "events"}] and the strategies' names: both plans start so. */
static void json_traces(const batch_traces *t, jsonw *w)
{
    jsonw_key(w, "traces");
    jsonw_array_inline(w);
    for (uint32_t i = 0; i < t->n; i++) {
        jsonw_object_inline(w);
        jsonw_key_str(w, "path", a_path(t, i));
        jsonw_key_u64(w, "events", evbuf_count(t->b[i]));
        jsonw_end(w);
    }
    jsonw_end(w);
}

static void json_strategies(const strategy_ops *const *ops, uint32_t n, jsonw *w)
{
    jsonw_key(w, "strategies");
    jsonw_array_inline(w);
    for (uint32_t k = 0; k < n; k++)
        jsonw_str(w, ops[k]->name);
    jsonw_end(w);
}

/* A row of the smallest capacity search; grid_replays: the grid's cells of the
 * strategy that were replayed (the others came from this search). */
static void json_min(const char *name, const plan_min *m, uint32_t grid_replays, jsonw *w)
{
    jsonw_object_inline(w);
    jsonw_key_str(w, "strategy", name);
    if (!m->found) {
        jsonw_key(w, "capacity_bytes");
        jsonw_null(w);
        jsonw_key_u64(w, "ceiling_bytes", PLAN_CEILING);
        jsonw_key_u64(w, "replays", m->replays);
        jsonw_key_u64(w, "grid_replays", grid_replays);
        jsonw_end(w);
        return;
    }
    jsonw_key_u64(w, "capacity_bytes", m->capacity);
    jsonw_key_bool(w, "confirmed", m->at_min.fits);
    jsonw_key_bool(w, "fails_below", m->below_fails);
    jsonw_key_u64(w, "peak_device_bytes", m->at_min.peak_device);
    jsonw_key_u64(w, "runs", m->runs);
    jsonw_key_u64(w, "replays", m->replays);
    jsonw_key_u64(w, "grid_replays", grid_replays);
    jsonw_key_bool(w, "monotonic", m->monotonic);
    jsonw_key(w, "counterexample_bytes");
    if (m->counter_capacity)
        jsonw_u64(w, m->counter_capacity);
    else
        jsonw_null(w);
    jsonw_key(w, "probes");
    jsonw_array_inline(w);
    for (uint32_t p = 0; p < m->n_probes; p++) {
        jsonw_object_inline(w);
        jsonw_key_u64(w, "capacity_bytes", m->probes[p].capacity);
        jsonw_key_bool(w, "fits", m->probes[p].fits);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);
}

void report_plan_json(const plan_question *q, const plan_answer *a, const uint64_t *limits, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    json_traces(q->t, &w);
    jsonw_key_u64(&w, "context_bytes", q->model.context_bytes);
    json_strategies(q->ops, q->n_ops, &w);
    jsonw_key(&w, "gpus");
    jsonw_array(&w);
    for (uint32_t g = 0; g < q->n_gpus; g++) {
        jsonw_object_inline(&w);
        jsonw_key_str(&w, "name", q->gpus[g]->name);
        jsonw_key_u64(&w, "capacity_bytes", q->gpus[g]->capacity_bytes);
        jsonw_key(&w, "runs");
        jsonw_array_lines(&w, 2);
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_cell *c = &a->cells[g * q->n_ops + k];
            if (!json_run_head(&w, q->ops[k]->name, c->st, &c->err))
                continue;
            jsonw_key_bool(&w, "fits", c->fits);
            jsonw_key_u64(&w, "peak_device_bytes", c->peak_device);
            jsonw_key_u64(&w, "peak_reserved_bytes", c->peak_reserved);
            if (limits && limits[g * q->n_ops + k] != UINT64_MAX)
                jsonw_key_u64(&w, "limit_bytes", limits[g * q->n_ops + k]);
            jsonw_key(&w, "headroom_bytes");
            if (c->fits) {
                jsonw_u64(&w, q->gpus[g]->capacity_bytes - c->peak_device);
                jsonw_key_bool(&w, "within_context_uncertainty", plan_context_uncertain(q, g, c));
                jsonw_key_u64(&w, "ooms", 0);
                jsonw_key(&w, "oom_cause");
                jsonw_null(&w);
            } else {
                jsonw_null(&w);
                jsonw_key_u64(&w, "ooms", c->ooms);
                jsonw_key_str(&w, "oom_cause", sim_oom_cause_name(c->cause));
            }
            jsonw_end(&w);
        }
        jsonw_end(&w);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_key(&w, "minimum_capacity");
    jsonw_object_inline(&w);
    char cc[24];
    snprintf(cc, sizeof cc, "%u.%u", q->model.cc_major, q->model.cc_minor);
    jsonw_key_str(&w, "compute_capability", cc);
    jsonw_key_u64(&w, "step_bytes", MiB);
    jsonw_key(&w, "rows");
    jsonw_array(&w);
    for (uint32_t k = 0; k < q->n_ops; k++) {
        uint32_t grid_replays = 0;
        for (uint32_t g = 0; g < q->n_gpus; g++)
            grid_replays += a->cells[g * q->n_ops + k].replayed;
        json_min(q->ops[k]->name, &a->mins[k], grid_replays, &w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}

void report_plan_text(const plan_question *q, const plan_answer *a, const uint64_t *limits,
                      const char *const *sources, sim_buf *out)
{
    size_t from = out->len;
    plan_text(q, a, limits, sources, out);
    rstrip_lines(out, from);
}

/* ---------------------------------------------------------------- on nodes */

/* The effective limit on GPU d, UINT64_MAX when no job touched it. */
static uint64_t gpu_limit(const node_device_result *dv)
{
    return dv->run != NULL ? report_limit_bytes(dv->run) : UINT64_MAX;
}

static bool same_gpu(const node_device_result *a, const node_device_result *b)
{
    char ua[192], ub[192];
    report_node_use(a, ua, sizeof ua);
    report_node_use(b, ub, sizeof ub);
    return strcmp(a->info.name, b->info.name) == 0 && a->info.capacity_bytes == b->info.capacity_bytes &&
           a->peak_used_bytes == b->peak_used_bytes && report_node_oom(a) == report_node_oom(b) && gpu_limit(a) == gpu_limit(b) &&
           (strcmp(ua, ub) == 0 || (a->n_shares == 1 && b->n_shares == 1 && a->shares[0].job == 0 &&
                                    b->shares[0].job == 0 && a->shares[0].rank >= 0 && b->shares[0].rank >= 0));
}

/* "GPU 0: 10.50 GiB (rank 0, limit 10.50 GiB); GPUs 1-7: 10.50 GiB each (start, limit ...)":
 * neighbours alike are one group. */
static void gpus_text(const plan_node_cell *c, sim_buf *b)
{
    const node_result *r = &c->r;
    for (uint32_t d = 0; d < r->n;) {
        uint32_t e = d + 1;
        while (e < r->n && same_gpu(&r->dev[d], &r->dev[e]))
            e++;
        const node_device_result *dv = &r->dev[d];
        char held[32], lim[32], use[192];
        units_format_size(dv->peak_used_bytes, held, sizeof held);
        report_node_use(dv, use, sizeof use);
        if (e - d == 1)
            sim_buf_printf(b, "%s    GPU %u: %s", d ? "\n" : "", d, held);
        else
            sim_buf_printf(b, "%s    GPUs %u-%u: %s each", d ? "\n" : "", d, e - 1, held);
        if (dv->n_shares == 0) {
            sim_buf_puts(b, " (untouched)");
        } else {
            if (e - d > 1 && dv->n_shares == 1 && dv->shares[0].job == 0 && dv->shares[0].rank >= 0)
                snprintf(use, sizeof use, "ranks %d-%d", dv->shares[0].rank, r->dev[e - 1].shares[0].rank);
            sim_buf_printf(b, " (%s, limit %s%s)", use,
                           units_format_size(gpu_limit(dv), lim, sizeof lim), report_node_oom(dv) ? ", OOM" : "");
        }
        d = e;
    }
    sim_buf_puts(b, "\n");
}

/* "rank 0" or "start"; with several jobs, "job 2 rank 0". */
static void rank_text(const plan_node_cell *c, const node_share *sh, char *buf, size_t cap)
{
    char job[80] = "";
    if (c->n_jobs > 1)
        snprintf(job, sizeof job, "%s ", c->jobs[sh->job].name);
    if (sh->rank < 0)
        snprintf(buf, cap, "%sstart", job);
    else
        snprintf(buf, cap, "%srank %d", job, sh->rank);
}

static void nodes_text(const plan_node_question *q, const plan_node_cell *cells, sim_buf *b)
{
    char s[32], t[32];
    sim_buf_printf(b, "gpusim %s: plan on nodes\n", GPUSIM_VERSION);
    for (uint32_t i = 0; i < q->t->n; i++)
        sim_buf_printf(b, "  trace   %s: %llu events\n", a_path(q->t, i), (unsigned long long)evbuf_count(q->t->b[i]));
    uint64_t ctx = q->n_nodes ? q->nodes[0].dev[0].context_bytes : 0;
    sim_buf_printf(b, "  context %s per process (assumed)\n", units_format_size(ctx, s, sizeof s));
    const char *job1 = q->n_more ? "job 1  " : "job    ";
    if (q->replicas)
        sim_buf_printf(b, "  %s the trace on each of the first %u visible GPUs (replicas)", job1, q->replicas);
    else
        sim_buf_printf(b, "  %s %u trace%s, rank r on its r-th visible GPU", job1, q->t->n, q->t->n == 1 ? "" : "s");
    sim_buf_printf(b, "; CUDA_VISIBLE_DEVICES=%s\n", q->visible ? q->visible : "every GPU of the node");
    for (uint32_t k = 0; k < q->n_more; k++) {
        sim_buf_printf(b, "  job %-3u", k + 2);
        for (uint32_t i = 0; i < q->more[k].t->n; i++)
            sim_buf_printf(b, "%s%s", i ? " + " : " ", a_path(q->more[k].t, i));
        sim_buf_printf(b, "; CUDA_VISIBLE_DEVICES=%s\n", q->more[k].visible ? q->more[k].visible : "every GPU");
    }
    sim_buf_puts(b, "\n");
    sim_buf_printf(b, "%s (every GPU under the strategy's start-up: greedy takes its limit on each\n",
                   q->n_more ? "Do the jobs fit" : "Does the job fit");
    sim_buf_puts(b, "visible GPU, the others only the GPUs they use)? Headroom: capacity - peak on the device.\n\n");
    size_t wn = strlen("node"), ws = strlen("strategy");
    for (uint32_t n = 0; n < q->n_nodes; n++)
        wn = strlen(q->node_names[n]) > wn ? strlen(q->node_names[n]) : wn;
    for (uint32_t k = 0; k < q->n_ops; k++)
        ws = strlen(q->ops[k]->name) > ws ? strlen(q->ops[k]->name) : ws;
    sim_buf_printf(b, "  %-*s %4s  %-*s  %-4s %9s  %-22s %-22s %s\n", (int)wn, "node", "GPUs", (int)ws, "strategy",
                   "fits", "GPUs held", "highest peak (GPU)", "least headroom (GPU)", "fails on");
    for (uint32_t n = 0; n < q->n_nodes; n++)
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_node_cell *c = &cells[n * q->n_ops + k];
            sim_buf_printf(b, "  %-*s %4u  %-*s  ", (int)wn, q->node_names[n], q->nodes[n].n, (int)ws,
                           q->ops[k]->name);
            if (c->st != SIM_OK) {
                sim_buf_printf(b, "does not run: %s\n", c->err.msg);
                continue;
            }
            const node_verdict *v = &c->v;
            char held[16], peak[48], head[48];
            snprintf(held, sizeof held, "%u/%u", v->used, c->r.n);
            snprintf(peak, sizeof peak, "%s (%u)", units_format_size(v->peak_used_bytes, s, sizeof s), v->peak_gpu);
            if (v->fits)
                snprintf(head, sizeof head, "%s (%u)", units_format_size(v->least_headroom_bytes, t, sizeof t),
                         v->least_gpu);
            else
                snprintf(head, sizeof head, "-");
            sim_buf_printf(b, "%-4s %9s  %-22s %-22s ", v->fits ? "yes" : "no", held, peak, head);
            if (v->fits) {
                sim_buf_puts(b, "-\n");
            } else {
                const node_device_result *dv = &c->r.dev[v->failing_gpu];
                char rank[96];
                rank_text(c, &dv->shares[v->failing_share], rank, sizeof rank);
                sim_buf_printf(b, "GPU %d (%s, %s): OOM (%s)\n", v->failing_gpu, dv->info.name, rank,
                               sim_oom_cause_name(v->cause));
            }
        }
    sim_buf_puts(b, "\nHeld on each GPU at its peak (reserved + contexts) and the allocator's effective limit there:\n");
    for (uint32_t n = 0; n < q->n_nodes; n++)
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_node_cell *c = &cells[n * q->n_ops + k];
            if (c->st != SIM_OK)
                continue;
            sim_buf_printf(b, "\n  %s, %s:\n", q->node_names[n], q->ops[k]->name);
            gpus_text(c, b);
        }
}

/* One node's row under one strategy (it ran). */
static void json_node_run(const plan_node_cell *c, jsonw *w)
{
    const node_verdict *v = &c->v;
    jsonw_key_bool(w, "fits", v->fits);
    jsonw_key_u64(w, "gpus_used", v->used);
    jsonw_key_u64(w, "peak_used_bytes", v->peak_used_bytes);
    jsonw_key_u64(w, "peak_gpu", v->peak_gpu);
    jsonw_key(w, "least_headroom_bytes");
    if (v->fits) {
        jsonw_u64(w, v->least_headroom_bytes);
        jsonw_key_u64(w, "least_headroom_gpu", v->least_gpu);
        jsonw_key(w, "failing");
        jsonw_null(w);
    } else {
        const node_share *sh = &c->r.dev[v->failing_gpu].shares[v->failing_share];
        jsonw_null(w);
        jsonw_key(w, "least_headroom_gpu");
        jsonw_null(w);
        jsonw_key(w, "failing");
        jsonw_object_inline(w);
        jsonw_key(w, "gpu");
        jsonw_i64(w, v->failing_gpu);
        jsonw_key_str(w, "job", c->jobs[sh->job].name);
        jsonw_key(w, "rank");
        jsonw_i64(w, sh->rank);
        jsonw_key_str(w, "cause", sim_oom_cause_name(v->cause));
        jsonw_end(w);
    }
    jsonw_wrap(w);
    jsonw_key(w, "devices");
    report_jsonw_node_devices(&c->r, w);
}

void report_plan_nodes_json(const plan_node_question *q, const plan_node_cell *cells, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    json_traces(q->t, &w);
    jsonw_key_u64(&w, "context_bytes", q->n_nodes ? q->nodes[0].dev[0].context_bytes : 0);
    json_strategies(q->ops, q->n_ops, &w);
    jsonw_key(&w, "visible");
    if (q->visible)
        jsonw_str(&w, q->visible);
    else
        jsonw_null(&w);
    jsonw_join(&w);
    jsonw_key_u64(&w, "replicas", q->replicas);
    jsonw_join(&w);
    jsonw_key(&w, "more_jobs");
    jsonw_array_inline(&w);
    for (uint32_t k = 0; k < q->n_more; k++) {
        char name[24];
        snprintf(name, sizeof name, "job %u", k + 2);
        jsonw_object_inline(&w);
        jsonw_key_str(&w, "name", name);
        jsonw_key(&w, "visible");
        if (q->more[k].visible)
            jsonw_str(&w, q->more[k].visible);
        else
            jsonw_null(&w);
        jsonw_key(&w, "traces");
        jsonw_array_inline(&w);
        for (uint32_t i = 0; i < q->more[k].t->n; i++)
            jsonw_str(&w, a_path(q->more[k].t, i));
        jsonw_end(&w);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_key(&w, "nodes");
    jsonw_array(&w);
    for (uint32_t n = 0; n < q->n_nodes; n++) {
        jsonw_object_inline(&w);
        jsonw_key_str(&w, "name", q->node_names[n]);
        jsonw_key_u64(&w, "gpus", q->nodes[n].n);
        jsonw_key(&w, "runs");
        jsonw_array_lines(&w, 2);
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_node_cell *c = &cells[n * q->n_ops + k];
            if (!json_run_head(&w, q->ops[k]->name, c->st, &c->err))
                continue;
            json_node_run(c, &w);
            jsonw_end(&w);
        }
        jsonw_end(&w);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}

void report_plan_nodes_text(const plan_node_question *q, const plan_node_cell *cells, sim_buf *out)
{
    size_t from = out->len;
    nodes_text(q, cells, out);
    rstrip_lines(out, from);
}
