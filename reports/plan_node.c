/* Capacity plans on nodes (plan --node) as a text table and as JSON (reports/plan.h). */
#include "plan.h"

#include <stdio.h>
#include <string.h>

#include "reports/node.h"
#include "reports/result.h"
#include "sim/units.h"

static const char *trace_path(const batch_traces *t, uint32_t i)
{
    evbuf_cursor c;
    return evbuf_source(t->b[i], &c).path;
}

/* The effective limit on GPU d, UINT64_MAX when no job touched it. */
static uint64_t gpu_limit(const node_device_result *dv)
{
    return dv->run != NULL ? report_limit_bytes(dv->run) : UINT64_MAX;
}

static bool same_gpu(const node_device_result *a, const node_device_result *b)
{
    char ua[32], ub[32];
    report_node_use(a, ua, sizeof ua);
    report_node_use(b, ub, sizeof ub);
    return strcmp(a->info.name, b->info.name) == 0 && a->info.capacity_bytes == b->info.capacity_bytes &&
           a->peak_used_bytes == b->peak_used_bytes && report_node_oom(a) == report_node_oom(b) && gpu_limit(a) == gpu_limit(b) &&
           (strcmp(ua, ub) == 0 || (a->n_shares && b->n_shares && a->shares[0].rank >= 0 && b->shares[0].rank >= 0));
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
        char held[32], lim[32], use[32];
        units_format_size(dv->peak_used_bytes, held, sizeof held);
        report_node_use(dv, use, sizeof use);
        if (e - d == 1)
            sim_buf_printf(b, "%s    GPU %u: %s", d ? "\n" : "", d, held);
        else
            sim_buf_printf(b, "%s    GPUs %u-%u: %s each", d ? "\n" : "", d, e - 1, held);
        if (dv->n_shares == 0) {
            sim_buf_puts(b, " (untouched)");
        } else {
            if (e - d > 1 && dv->shares[0].rank >= 0)
                snprintf(use, sizeof use, "ranks %d-%d", dv->shares[0].rank, r->dev[e - 1].shares[0].rank);
            sim_buf_printf(b, " (%s%s, limit %s%s)", use, dv->n_shares > 1 ? " and another job" : "",
                           units_format_size(gpu_limit(dv), lim, sizeof lim), report_node_oom(dv) ? ", OOM" : "");
        }
        d = e;
    }
    sim_buf_puts(b, "\n");
}

static void rank_text(const node_share *sh, char *buf, size_t cap)
{
    if (sh->rank < 0)
        snprintf(buf, cap, "start");
    else
        snprintf(buf, cap, "rank %d", sh->rank);
}

void report_plan_nodes_text(const plan_node_question *q, const plan_node_cell *cells, sim_buf *b)
{
    char s[32], t[32];
    sim_buf_printf(b, "gpusim %s: plan on nodes\n", GPUSIM_VERSION);
    for (uint32_t i = 0; i < q->t->n; i++)
        sim_buf_printf(b, "  trace   %s: %llu events\n", trace_path(q->t, i), (unsigned long long)evbuf_count(q->t->b[i]));
    uint64_t ctx = q->n_nodes ? q->nodes[0].dev[0].context_bytes : 0;
    sim_buf_printf(b, "  context %s per process (assumed)\n", units_format_size(ctx, s, sizeof s));
    if (q->replicas)
        sim_buf_printf(b, "  job     the trace on each of the first %u visible GPUs (replicas)", q->replicas);
    else
        sim_buf_printf(b, "  job     %u trace%s, rank r on its r-th visible GPU", q->t->n, q->t->n == 1 ? "" : "s");
    sim_buf_printf(b, "; CUDA_VISIBLE_DEVICES=%s\n\n", q->visible ? q->visible : "every GPU of the node");
    sim_buf_puts(b, "Does the job fit (every GPU under the strategy's start-up: greedy takes its limit on each\n"
                    "visible GPU, the others only the GPUs they use)? Headroom: capacity - peak on the device.\n\n");
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
                char rank[16];
                rank_text(&dv->shares[v->failing_share], rank, sizeof rank);
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

void report_plan_nodes_json(const plan_node_question *q, const plan_node_cell *cells, sim_buf *b)
{
    sim_buf_puts(b, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"traces\": [");
    for (uint32_t i = 0; i < q->t->n; i++) {
        sim_buf_puts(b, i ? ", {\"path\": " : "{\"path\": ");
        sim_buf_json_str(b, trace_path(q->t, i));
        sim_buf_printf(b, ", \"events\": %llu}", (unsigned long long)evbuf_count(q->t->b[i]));
    }
    uint64_t ctx = q->n_nodes ? q->nodes[0].dev[0].context_bytes : 0;
    sim_buf_printf(b, "],\n  \"context_bytes\": %llu,\n  \"strategies\": [", (unsigned long long)ctx);
    for (uint32_t k = 0; k < q->n_ops; k++) {
        sim_buf_puts(b, k ? ", " : "");
        sim_buf_json_str(b, q->ops[k]->name);
    }
    sim_buf_puts(b, "],\n  \"visible\": ");
    if (q->visible)
        sim_buf_json_str(b, q->visible);
    else
        sim_buf_puts(b, "null");
    sim_buf_printf(b, ", \"replicas\": %u,\n  \"nodes\": [", q->replicas);
    for (uint32_t n = 0; n < q->n_nodes; n++) {
        sim_buf_puts(b, n ? ",\n    {\"name\": " : "\n    {\"name\": ");
        sim_buf_json_str(b, q->node_names[n]);
        sim_buf_printf(b, ", \"gpus\": %u, \"runs\": [", q->nodes[n].n);
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_node_cell *c = &cells[n * q->n_ops + k];
            sim_buf_puts(b, k ? ",\n      {\"strategy\": " : "\n      {\"strategy\": ");
            sim_buf_json_str(b, q->ops[k]->name);
            if (c->st != SIM_OK) {
                sim_buf_puts(b, ", \"fits\": false, \"error\": ");
                sim_buf_json_str(b, c->err.msg);
                sim_buf_puts(b, "}");
                continue;
            }
            const node_verdict *v = &c->v;
            sim_buf_printf(b, ", \"fits\": %s, \"gpus_used\": %u, \"peak_used_bytes\": %llu, \"peak_gpu\": %u, "
                              "\"least_headroom_bytes\": ",
                           v->fits ? "true" : "false", v->used, (unsigned long long)v->peak_used_bytes, v->peak_gpu);
            if (v->fits)
                sim_buf_printf(b, "%llu, \"least_headroom_gpu\": %u, \"failing\": null", (unsigned long long)v->least_headroom_bytes,
                               v->least_gpu);
            else
                sim_buf_puts(b, "null, \"least_headroom_gpu\": null, \"failing\": ");
            if (!v->fits) {
                const node_share *sh = &c->r.dev[v->failing_gpu].shares[v->failing_share];
                sim_buf_printf(b, "{\"gpu\": %d, \"rank\": %d, \"cause\": \"%s\"}", v->failing_gpu, sh->rank,
                               sim_oom_cause_name(v->cause));
            }
            sim_buf_puts(b, ",\n       \"devices\": ");
            report_node_devices_json(&c->r, false, "        ", b);
            sim_buf_puts(b, "}");
        }
        sim_buf_puts(b, "]}");
    }
    sim_buf_puts(b, "\n  ]\n}\n");
}
