/* A sweep's summary, as a text table and as JSON. */
#include "sweep.h"

#include <stdio.h>
#include <string.h>

#include "sim/jsonw.h"
#include "sim/units.h"

typedef struct group_stats {
    uint32_t traces, fit, capacity, fragmentation, other_processes, errors, missing;
    bool has_headroom;
    uint64_t worst_headroom;
    uint32_t worst_trace;
    double frag_max;
    uint64_t limit;        /* of the first job that ran (every job of a group has the same); 0: none */
} group_stats;

static group_stats group_of(const report_sweep *r, uint32_t c)
{
    group_stats g;
    memset(&g, 0, sizeof g);
    for (uint32_t t = 0; t < r->n_traces; t++) {
        const report_sweep_job *j = &r->job[(uint64_t)t * r->n_groups + c];
        g.traces++;
        if (!j->present) {
            g.missing++;
            continue;
        }
        if (j->error) {
            g.errors++;
            continue;
        }
        if (j->frag_max > g.frag_max)
            g.frag_max = j->frag_max;
        if (g.limit == 0)
            g.limit = j->limit;
        if (j->cause == REPORT_SWEEP_CAPACITY)
            g.capacity++;
        else if (j->cause == REPORT_SWEEP_FRAGMENTATION)
            g.fragmentation++;
        else if (j->cause == REPORT_SWEEP_OTHER_PROCESSES)
            g.other_processes++;
        if (j->fit) {
            g.fit++;
            if (!g.has_headroom || j->headroom < g.worst_headroom) {
                g.has_headroom = true;
                g.worst_headroom = j->headroom;
                g.worst_trace = t;
            }
        }
    }
    return g;
}

static const char *cause_name(uint8_t c)
{
    return c == REPORT_SWEEP_FRAGMENTATION     ? "fragmentation"
           : c == REPORT_SWEEP_OTHER_PROCESSES ? "other_processes"
                                               : "capacity";
}

/* The traces of group c whose job ran into an OOM (errors false) or failed (true), as
 * inline objects {"trace", "cause"} or {"trace", "message"}. */
static void json_group_traces(const report_sweep *r, uint32_t c, bool errors, jsonw *w)
{
    jsonw_array_inline(w);
    for (uint32_t t = 0; t < r->n_traces; t++) {
        const report_sweep_job *j = &r->job[(uint64_t)t * r->n_groups + c];
        if (!j->present || (errors ? j->error == NULL : j->error != NULL || j->cause == 0))
            continue;
        jsonw_object_inline(w);
        jsonw_key_str(w, "trace", r->traces[t]);
        if (errors)
            jsonw_key_str(w, "message", j->error);
        else
            jsonw_key_str(w, "cause", cause_name(j->cause));
        jsonw_end(w);
    }
    jsonw_end(w);
}

/* One group's row: an inline object over four lines (the groups are never empty: a
 * spec names at least one device and strategy). */
static void json_group(const report_sweep *r, uint32_t c, jsonw *w)
{
    const report_sweep_group *k = &r->groups[c];
    group_stats g = group_of(r, c);
    jsonw_object_inline(w);
    jsonw_key_str(w, k->gpus ? "node" : "device", k->device);
    if (k->gpus)
        jsonw_key_u64(w, "gpus", k->gpus);
    jsonw_key_u64(w, "capacity_bytes", k->capacity_bytes);
    jsonw_key(w, "limit_bytes");
    if (g.limit)
        jsonw_u64(w, g.limit);
    else
        jsonw_null(w);
    jsonw_key_str(w, "strategy", k->strategy);
    jsonw_key_str(w, "options", k->options);
    jsonw_wrap(w);
    jsonw_key_u64(w, "traces", g.traces);
    jsonw_key_u64(w, "fit", g.fit);
    uint32_t ran = g.traces - g.missing - g.errors;
    jsonw_key(w, "fit_share");
    jsonw_ratio(w, ran ? (double)g.fit / (double)ran : 0.0);
    jsonw_key_u64(w, "missing", g.missing);
    jsonw_key_u64(w, "errors", g.errors);
    jsonw_wrap(w);
    jsonw_key(w, "worst_headroom_bytes");
    if (g.has_headroom) {
        jsonw_u64(w, g.worst_headroom);
        jsonw_key_str(w, "worst_headroom_trace", r->traces[g.worst_trace]);
    } else {
        jsonw_null(w);
        jsonw_key(w, "worst_headroom_trace");
        jsonw_null(w);
    }
    jsonw_key(w, "fragmentation_max");
    jsonw_ratio(w, g.frag_max);
    jsonw_wrap(w);
    jsonw_key(w, "ooms");
    jsonw_object_inline(w);
    jsonw_key_u64(w, "capacity", g.capacity);
    jsonw_key_u64(w, "fragmentation", g.fragmentation);
    jsonw_key_u64(w, "other_processes", g.other_processes);
    jsonw_end(w);
    jsonw_key(w, "oom_traces");
    json_group_traces(r, c, false, w);
    if (g.errors) {
        jsonw_key(w, "error_traces");
        json_group_traces(r, c, true, w);
    }
    jsonw_end(w);
}

void report_sweep_json(const report_sweep *r, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    jsonw_key_str(&w, "spec", r->spec_path);
    jsonw_key_u64(&w, "jobs", r->jobs);
    jsonw_key_u64(&w, "done", r->done);
    jsonw_key_u64(&w, "traces", r->n_traces);
    jsonw_key(&w, "groups");
    jsonw_array(&w);
    for (uint32_t c = 0; c < r->n_groups; c++)
        json_group(r, c, &w);
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}

static size_t width_max(size_t w, const char *s)
{
    size_t n = strlen(s);
    return n > w ? n : w;
}

/* The worst-headroom cell of group c: "SIZE (TRACE)", or "-". */
static void head_text(const report_sweep *r, uint32_t c, char *head, size_t cap)
{
    group_stats g = group_of(r, c);
    char sz[32];
    if (g.has_headroom)
        snprintf(head, cap, "%s (%s)", units_format_size(g.worst_headroom, sz, sizeof sz), r->traces[g.worst_trace]);
    else
        snprintf(head, cap, "-");
}

void report_sweep_text(const report_sweep *r, sim_buf *b)
{
    uint32_t nodes = 0;
    for (uint32_t c = 0; c < r->n_groups; c++)
        nodes += r->groups[c].gpus && (c == 0 || strcmp(r->groups[c].device, r->groups[c - 1].device) != 0);
    char axis[64];
    if (nodes)
        snprintf(axis, sizeof axis, "%u devices and nodes", r->n_devices);
    else
        snprintf(axis, sizeof axis, "%u devices", r->n_devices);
    sim_buf_printf(b,
                   "gpusim sweep: %llu of %llu jobs (%u traces x %s x %u strategies x %u option sets%s)\n"
                   "fit: completed without an out-of-memory; limit: the allocator's effective limit; headroom: "
                   "capacity minus peak on the device (context included)%s\n\n",
                   (unsigned long long)r->done, (unsigned long long)r->jobs, r->n_traces, axis, r->n_strategies,
                   r->n_optsets, r->n_groups < r->n_devices * r->n_strategies * r->n_optsets ? ", where they apply" : "",
                   nodes ? "; on a node (the trace as rank 0 of a job that sees every GPU), the least over its GPUs"
                         : "");
    size_t wd = strlen("device"), ws = strlen("strategy"), wo = strlen("options"), wh = 34;
    for (uint32_t c = 0; c < r->n_groups; c++) {
        wd = width_max(wd, r->groups[c].device);
        ws = width_max(ws, r->groups[c].strategy);
        wo = width_max(wo, r->groups[c].options);
        char head[600];
        head_text(r, c, head, sizeof head); /* "SIZE (TRACE)": long paths widen the column */
        wh = width_max(wh, head);
    }
    sim_buf_printf(b, "%-*s  %-*s  %-*s  %11s  %11s  %-*s %8s  %s\n", (int)wd, "device", (int)ws, "strategy", (int)wo,
                   "options", "fit", "limit", (int)wh, "worst headroom", "frag max", "out of memory (cause)");
    for (uint32_t c = 0; c < r->n_groups; c++) {
        const report_sweep_group *k = &r->groups[c];
        group_stats g = group_of(r, c);
        uint32_t ran = g.traces - g.missing - g.errors;
        char fit[32], head[600];
        snprintf(fit, sizeof fit, "%u/%u %3.0f%%", g.fit, ran, ran ? 100.0 * g.fit / ran : 0.0);
        head_text(r, c, head, sizeof head);
        char lim[32] = "-";
        if (g.limit)
            units_format_size(g.limit, lim, sizeof lim);
        sim_buf_printf(b, "%-*s  %-*s  %-*s  %11s  %11s  %-*s %8.4f  ", (int)wd, k->device, (int)ws, k->strategy, (int)wo,
                       k->options, fit, lim, (int)wh, head, g.frag_max);
        uint32_t shown = 0, total = g.capacity + g.fragmentation + g.other_processes;
        for (uint32_t t = 0; t < r->n_traces && shown < 3; t++) {
            const report_sweep_job *j = &r->job[(uint64_t)t * r->n_groups + c];
            if (!j->present || j->error || j->cause == 0)
                continue;
            sim_buf_printf(b, "%s%s (%s)", shown ? ", " : "", r->traces[t], cause_name(j->cause));
            shown++;
        }
        if (total > shown)
            sim_buf_printf(b, ", +%u more", total - shown);
        if (total == 0)
            sim_buf_puts(b, "-");
        if ((g.capacity != 0) + (g.fragmentation != 0) + (g.other_processes != 0) > 1)
            sim_buf_printf(b, "  [%u capacity, %u fragmentation, %u other processes]", g.capacity, g.fragmentation,
                           g.other_processes);
        if (g.errors)
            sim_buf_printf(b, "  [%u invalid]", g.errors);
        if (g.missing)
            sim_buf_printf(b, "  [%u not run]", g.missing);
        sim_buf_puts(b, "\n");
    }
    bool header = false;
    for (uint32_t t = 0; t < r->n_traces; t++)
        for (uint32_t c = 0; c < r->n_groups; c++) {
            const report_sweep_job *j = &r->job[(uint64_t)t * r->n_groups + c];
            if (!j->present || !j->error)
                continue;
            if (!header)
                sim_buf_puts(b, "\ninvalid traces:\n");
            header = true;
            sim_buf_printf(b, "  %s\n", j->error);
            c = r->n_groups; /* one line per trace */
        }
}
