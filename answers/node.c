/* Several GPUs, one engine per device (node.h). */
#include "node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/gpu_context.h"
#include "sim/gpus.h"
#include "sim/units.h"

sim_status node_parse(const char *text, const device_info *ctx, node_spec *out, sim_error *err)
{
    *out = (node_spec){0};
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned long count = 1;
        char *x = strchr(tok, 'x');
        char *name = tok;
        if (x != NULL && x > tok) {
            char *end = NULL;
            unsigned long c = strtoul(tok, &end, 10);
            if (end == x) {
                count = c;
                name = x + 1;
            }
        }
        const gpu_model *g = gpus_find(name);
        device_info info = {.name = "custom"};
        uint64_t bytes = 0;
        sim_error sub;
        sim_error_clear(&sub);
        if (g != NULL)
            info = gpus_device_info(g);
        else if (units_parse_size(name, &bytes, &sub) == SIM_OK && bytes > 0)
            info.capacity_bytes = bytes; /* a card of that size outside the catalog */
        else
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--node: '%s' is neither a GPU of the catalog (gpusim gpus) nor a size; e.g. "
                                 "8xA100-40GB or 8x12GB",
                                 name);
        if (count == 0 || count > NODE_MAX_DEVICES - out->n)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--node: %s: between 1 and %u devices in all", text,
                                 NODE_MAX_DEVICES);
        if (ctx->context_default == NULL) {
            info.context_bytes = ctx->context_bytes;
        } else if (g != NULL && g->cc_major != 0) {
            info.context_default = gpu_context_find(g->cc_major, ctx->context_default->cuda_major);
            info.context_bytes = info.context_default->bytes + ctx->nccl_bytes; /* a trace header's NCCL buffers */
            info.nccl_bytes = ctx->nccl_bytes;
            info.nccl_given = ctx->nccl_given;
        }
        for (unsigned long i = 0; i < count; i++) {
            out->dev[out->n] = info;
            out->n++;
        }
    }
    if (out->n == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--node: expected GPUs, e.g. 8xA100-40GB");
    return SIM_OK;
}

sim_status node_parse_visible(const char *text, uint32_t n_devices, uint32_t visible[NODE_MAX_DEVICES],
                              uint32_t *n_visible, sim_error *err)
{
    *n_visible = 0;
    if (text == NULL || text[0] == '\0') {
        for (uint32_t i = 0; i < n_devices; i++)
            visible[(*n_visible)++] = i;
        return SIM_OK;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end = NULL;
        unsigned long d = strtoul(tok, &end, 10);
        bool dup = false;
        for (uint32_t i = 0; i < *n_visible; i++)
            dup = dup || visible[i] == d;
        if (end == tok || *end != '\0' || d >= n_devices || dup || *n_visible == NODE_MAX_DEVICES)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--visible=%s: expected distinct device indices below %u, as CUDA_VISIBLE_DEVICES",
                                 text, n_devices);
        visible[(*n_visible)++] = (uint32_t)d;
    }
    return SIM_OK;
}

bool node_takes_at_start(const strategy_ops *ops)
{
    return ops->takes_region_at_start;
}

/* The framework's start on a device the job does not use: allocate 1 byte, free it. */
typedef struct start_src {
    int step;
} start_src;

static sim_status start_next(void *ctx, sim_event *ev, sim_error *err)
{
    (void)err;
    start_src *s = ctx;
    if (s->step >= 2)
        return SIM_END;
    *ev = (sim_event){.op = s->step == 0 ? SIM_OP_ALLOC : SIM_OP_FREE, .id = 1, .size = 1, .index = (uint64_t)s->step + 1,
                      .tag = "framework start"};
    s->step++;
    return SIM_OK;
}

sim_status node_run(const engine_config *base, const node_spec *node, const node_job *jobs, uint32_t n_jobs,
                    node_result *out, sim_error *err)
{
    *out = (node_result){.n = node->n};
    if (n_jobs > NODE_MAX_JOBS)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "at most %u jobs on a node", NODE_MAX_JOBS);
    for (uint32_t j = 0; j < n_jobs; j++) {
        if (jobs[j].n_ranks > jobs[j].n_visible)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s: %u traces (ranks) but %u visible devices",
                                 jobs[j].name, jobs[j].n_ranks, jobs[j].n_visible);
        for (uint32_t v = 0; v < jobs[j].n_visible; v++)
            if (jobs[j].visible[v] >= node->n)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s: device %u is not on the node", jobs[j].name,
                                     jobs[j].visible[v]);
    }
    bool at_start = node_takes_at_start(base->ops);
    for (uint32_t d = 0; d < node->n; d++) {
        node_device_result *r = &out->dev[d];
        r->info = node->dev[d];
        sim_event_source srcs[NODE_MAX_JOBS];
        start_src starts[NODE_MAX_JOBS];
        uint32_t n = 0;
        for (uint32_t j = 0; j < n_jobs; j++) {
            int32_t rank = -1;
            bool sees = false;
            for (uint32_t v = 0; v < jobs[j].n_visible; v++)
                if (jobs[j].visible[v] == d) {
                    sees = true;
                    rank = v < jobs[j].n_ranks ? (int32_t)v : -1;
                }
            if (!sees || (rank < 0 && !at_start))
                continue;
            if (rank >= 0) {
                srcs[n] = jobs[j].ranks[rank];
            } else {
                starts[n] = (start_src){0};
                srcs[n] = (sim_event_source){.next = start_next, .ctx = &starts[n], .path = "(framework start)",
                                             .name = "framework start"};
            }
            r->shares[n] = (node_share){.job = j, .rank = rank, .process = UINT32_MAX};
            n++;
        }
        r->n_shares = n;
        if (n == 0)
            continue;
        engine_config cfg = *base;
        cfg.device = node->dev[d];
        sim_status st = engine_run(&cfg, srcs, n, &r->run, err);
        if (st != SIM_OK) {
            node_result_release(out);
            return st;
        }
        for (uint32_t p = 0; p < r->run->n_procs; p++) {
            node_share *sh = &r->shares[r->run->procs[p].source];
            const sim_metrics *m = &r->run->procs[p].m;
            sh->process = p;
            sh->oom = m->ooms > 0;
            sh->peak_device_bytes = m->peak_reserved_bytes + node->dev[d].context_bytes;
            sh->final_device_bytes = m->completed || !sh->oom ? m->final_reserved_bytes + node->dev[d].context_bytes
                                                              : 0;
        }
        r->peak_used_bytes = r->run->total.peak_device_bytes;
        r->final_used_bytes = 0;
        for (uint32_t i = 0; i < n; i++)
            r->final_used_bytes += r->shares[i].final_device_bytes;
    }
    return SIM_OK;
}

void node_result_release(node_result *r)
{
    for (uint32_t d = 0; d < r->n; d++) {
        sim_run_free(r->dev[d].run);
        r->dev[d].run = NULL;
    }
}

uint64_t node_device_headroom(const node_device_result *d)
{
    return d->info.capacity_bytes > d->peak_used_bytes ? d->info.capacity_bytes - d->peak_used_bytes : 0;
}

node_verdict node_result_verdict(const node_result *r)
{
    node_verdict v = {.fits = true, .failing_gpu = -1};
    bool any = false;
    for (uint32_t d = 0; d < r->n; d++) {
        const node_device_result *dv = &r->dev[d];
        if (dv->peak_used_bytes > v.peak_used_bytes) {
            v.peak_used_bytes = dv->peak_used_bytes;
            v.peak_gpu = d;
        }
        if (dv->n_shares == 0)
            continue;
        v.used++;
        uint64_t h = node_device_headroom(dv);
        if (!any || h < v.least_headroom_bytes) {
            v.least_headroom_bytes = h;
            v.least_gpu = d;
        }
        any = true;
        for (uint32_t k = 0; k < dv->n_shares && v.fits; k++) {
            const node_share *sh = &dv->shares[k];
            const sim_metrics *m = dv->run && sh->process < dv->run->n_procs ? &dv->run->procs[sh->process].m : NULL;
            if (m != NULL && m->completed && !sh->oom)
                continue;
            v.fits = false;
            v.failing_gpu = (int32_t)d;
            v.failing_share = k;
            v.cause = m != NULL && m->first_oom.happened ? m->first_oom.cause : SIM_OOM_CAPACITY;
        }
    }
    return v;
}
