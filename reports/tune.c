/* `gpusim tune` as text and as JSON. */
#include "tune.h"

#include "graphs.h"

#include <string.h>

#include "reports/result.h"
#include "sim/evbuf.h"
#include "sim/gpu_context.h"
#include "sim/jsonw.h"
#include "sim/units.h"

static const char *delta_text(uint64_t v, uint64_t base, char *buf, size_t cap)
{
    if (v == base)
        return "=";
    char s[32];
    uint64_t d = v > base ? v - base : base - v;
    double pct = base ? 100.0 * (double)d / (double)base : 0.0;
    snprintf(buf, cap, "%c%s (%c%.1f%%)", v > base ? '+' : '-', units_format_size(d, s, sizeof s), v > base ? '+' : '-',
             pct);
    return buf;
}

static void oom_text(const tune_candidate *c, sim_buf *b)
{
    if (c->st != SIM_OK)
        sim_buf_printf(b, "cannot run: %s", c->err.msg);
    else if (c->ooms == 0 && c->completed)
        sim_buf_puts(b, "no");
    else
        sim_buf_printf(b, "%llu (%s)", (unsigned long long)c->ooms, sim_oom_cause_name(c->cause));
}

/* Whether ranked row r+1 says nothing row r does not: the same family with the same
 * outcome (max_split_size_mb values that all give the same peak). */
static bool same_as_before(const tune_answer *a, uint32_t r)
{
    if (r == 0)
        return false;
    const tune_candidate *x = &a->c[a->rank[r - 1]], *y = &a->c[a->rank[r]];
    return !x->current && !y->current && strcmp(x->family, y->family) == 0 && x->st == y->st &&
           tune_candidate_ok(x) == tune_candidate_ok(y) && x->peak_reserved == y->peak_reserved &&
           x->peak_device == y->peak_device && x->ooms == y->ooms;
}

/* A row's name: the setting, and how many equal ones it stands for or that it is the current one. */
static void row_name(const tune_candidate *c, uint32_t equal, char *name, size_t cap)
{
    if (equal)
        snprintf(name, cap, "%s (+%u equal)", c->setting, equal);
    else
        snprintf(name, cap, "%s%s", c->setting, c->current ? " (current)" : "");
}

static void row_text(const tune_question *q, const tune_answer *a, uint32_t rank, uint32_t i, uint32_t equal,
                     int width, sim_buf *b)
{
    const tune_candidate *c = &a->c[i], *c0 = &a->c[a->current];
    char name[TUNE_TEXT + 32], s[32], d[64];
    row_name(c, equal, name, sizeof name);
    sim_buf_printf(b, "  %4u  %-*s %13s  %-22s", rank, width, name, units_format_size(c->peak_reserved, s, sizeof s),
                   delta_text(c->peak_reserved, c0->peak_reserved, d, sizeof d));
    if (q->goal == TUNE_GOAL_FIT) {
        uint64_t cap = q->base.device.capacity_bytes;
        sim_buf_printf(b, " %12s  ",
                       tune_candidate_ok(c) && cap >= c->peak_device ? units_format_size(cap - c->peak_device, s, sizeof s)
                                                                      : "-");
    }
    sim_buf_printf(b, "%11s  ", c->st == SIM_OK ? units_format_size(c->limit_bytes, s, sizeof s) : "-");
    oom_text(c, b);
    sim_buf_puts(b, "\n");
}

static void paste_text(const tune_candidate *c, sim_buf *b)
{
    if (c->env[0])
        sim_buf_printf(b, "    %s\n", c->env);
    if (c->code[0])
        sim_buf_printf(b, "    %s\n", c->code);
    if (!c->env[0] && !c->code[0])
        sim_buf_printf(b, "    (gpusim --strategy=%s)\n", c->ops->name);
}

void report_tune_text(const tune_question *q, const tune_answer *a, const char *const *paths, uint32_t n_paths,
                      uint32_t top, sim_buf *b)
{
    const device_info *dv = &q->base.device;
    char s[32], s2[32], d[64];
    uint32_t settings = 0;
    for (uint32_t i = 0; i < a->n; i++)
        settings += !a->c[i].bound;
    sim_buf_printf(b, "gpusim %s: tune for %s, goal %s: %u settings tried\n", GPUSIM_VERSION,
                   tune_framework_name(q->framework), tune_goal_name(q->goal), settings);
    for (uint32_t i = 0; i < n_paths; i++)
        sim_buf_printf(b, "  trace   %s\n", paths[i]);
    /* the allocators tried that did not model the traces' pools */
    const strategy_ops *tried[TUNE_MAX_CANDIDATES];
    uint32_t n_tried = 0;
    for (uint32_t i = 0; i < a->n && n_tried < TUNE_MAX_CANDIDATES; i++)
        tried[n_tried++] = a->c[i].ops;
    uint64_t pool_events = 0;
    for (uint32_t i = 0; i < q->t->n; i++)
        pool_events += evbuf_pool_events(q->t->b[i]);
    report_text_pools_ignored_by(tried, n_tried, pool_events, b);
    const tune_candidate *cur = &a->c[a->current];
    sim_buf_printf(b, "  device  %s: capacity %s, context %s per process", dv->name,
                   units_format_size(dv->capacity_bytes, s, sizeof s),
                   units_format_size(dv->context_bytes, d, sizeof d));
    if (cur->st == SIM_OK) /* the limit each setting gives is the table's limit column */
        sim_buf_printf(b, ", allocator limit %s (%s) under the current setting",
                       units_format_size(cur->limit_bytes, s2, sizeof s2), cur->limit_source);
    sim_buf_puts(b, "\n");
    report_context_lines(dv, b);
    sim_buf_puts(b, "\n");
    /* the setting column as wide as its longest name, within 40..90 */
    int width = 40;
    for (uint32_t r = 0; r < a->n_ranked; r++) {
        uint32_t equal = 0;
        while (r + equal + 1 < a->n_ranked && same_as_before(a, r + equal + 1))
            equal++;
        char name[TUNE_TEXT + 32];
        row_name(&a->c[a->rank[r]], equal, name, sizeof name);
        size_t len = strlen(name);
        if (len > (size_t)width)
            width = len > 90 ? 90 : (int)len;
        r += equal;
    }
    sim_buf_printf(b, "  %4s  %-*s %13s  %-22s", "rank", width, "setting", "peak reserved", "vs current");
    if (q->goal == TUNE_GOAL_FIT)
        sim_buf_printf(b, " %12s  ", "headroom");
    sim_buf_printf(b, "%11s  out of memory\n", "limit");
    /* rows: runs of equal results of one family shown once; rank counts rows */
    uint32_t row = 0, shown = 0, rows = 0;
    for (uint32_t r = 0; r < a->n_ranked; r++)
        rows += !same_as_before(a, r);
    for (uint32_t r = 0; r < a->n_ranked; r++) {
        if (same_as_before(a, r))
            continue;
        uint32_t i = a->rank[r], equal = 0;
        while (r + equal + 1 < a->n_ranked && same_as_before(a, r + equal + 1))
            equal++;
        row++;
        if (top && row > top && i != a->current)
            continue;
        if (top && row > top + 1)
            sim_buf_puts(b, "   ...\n");
        row_text(q, a, row, i, equal, width, b);
        shown++;
    }
    if (shown < rows)
        sim_buf_printf(b, "  (%u more rows: --top=0 shows all)\n", rows - shown);
    for (uint32_t i = 0; i < a->n; i++) {
        const tune_candidate *c = &a->c[i];
        if (c->bound && c->st == SIM_OK)
            sim_buf_printf(b, "  lower bound  %-*s %13s\n", width - 7, c->setting, units_format_size(c->peak_reserved, s, sizeof s));
    }
    const tune_candidate *c0 = &a->c[a->current];
    const tune_candidate *best = a->n_ranked ? &a->c[a->rank[0]] : NULL;
    sim_buf_puts(b, "\n");
    if (best == NULL || !tune_candidate_ok(best)) {
        sim_buf_printf(b, "  no setting tried runs without an out-of-memory on %s (%s)\n", dv->name,
                       units_format_size(dv->capacity_bytes, s, sizeof s));
    } else if (best == c0) {
        sim_buf_puts(b, "  best: the current setting; no setting tried does better\n");
    } else {
        if (!tune_candidate_ok(c0))
            sim_buf_printf(b, "  best: %s, which runs where the current setting runs out of memory\n", best->setting);
        else if (best->peak_reserved < c0->peak_reserved)
            sim_buf_printf(b, "  best: %s, %s less reserved than the current setting (%s)\n", best->setting,
                           units_format_size(c0->peak_reserved - best->peak_reserved, s, sizeof s),
                           units_format_size(best->peak_reserved, s2, sizeof s2));
        else
            sim_buf_printf(b, "  best: %s (%s reserved, %s)\n", best->setting,
                           units_format_size(best->peak_reserved, s, sizeof s),
                           delta_text(best->peak_reserved, c0->peak_reserved, d, sizeof d));
        paste_text(best, b);
    }
}

static void cand_json(const tune_answer *a, const tune_candidate *c, jsonw *w)
{
    const tune_candidate *c0 = &a->c[a->current];
    jsonw_object_inline(w);
    jsonw_key_str(w, "setting", c->setting);
    jsonw_key_str(w, "family", c->family);
    jsonw_key_str(w, "strategy", c->ops->name);
    jsonw_key(w, "options");
    jsonw_object_inline(w);
    for (uint32_t k = 0; k < c->n_own; k++)
        jsonw_key_str(w, c->key[k], c->value[k]);
    jsonw_end(w);
    jsonw_key_str(w, "env", c->env);
    jsonw_key_str(w, "code", c->code);
    jsonw_key_bool(w, "current", c->current);
    if (c->st != SIM_OK) {
        jsonw_key_str(w, "error", c->err.msg);
        jsonw_end(w);
        return;
    }
    jsonw_key_bool(w, "ok", tune_candidate_ok(c));
    jsonw_key_bool(w, "completed", c->completed);
    jsonw_key_u64(w, "ooms", c->ooms);
    jsonw_key_u64(w, "peak_requested_bytes", c->peak_requested);
    jsonw_key_u64(w, "peak_reserved_bytes", c->peak_reserved);
    jsonw_key_u64(w, "peak_device_bytes", c->peak_device);
    jsonw_key(w, "change_reserved_bytes");
    jsonw_i64(w, (int64_t)c->peak_reserved - (int64_t)c0->peak_reserved);
    jsonw_key_u64(w, "limit_bytes", c->limit_bytes);
    jsonw_key_str(w, "limit_source", c->limit_source);
    if (c->ooms)
        jsonw_key_str(w, "oom_cause", sim_oom_cause_name(c->cause));
    jsonw_end(w);
}

void report_tune_json(const tune_question *q, const tune_answer *a, const graphs_answer *g, const char *const *paths,
                      uint32_t n_paths, sim_buf *b)
{
    const device_info *dv = &q->base.device;
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    jsonw_key(&w, "traces");
    jsonw_array_inline(&w);
    for (uint32_t i = 0; i < n_paths; i++)
        jsonw_str(&w, paths[i]);
    jsonw_end(&w);
    jsonw_key(&w, "device");
    jsonw_object_inline(&w);
    jsonw_key_str(&w, "name", dv->name);
    jsonw_key_u64(&w, "capacity_bytes", dv->capacity_bytes);
    jsonw_key_u64(&w, "context_bytes", dv->context_bytes);
    jsonw_end(&w);
    jsonw_key_str(&w, "framework", tune_framework_name(q->framework));
    jsonw_key_str(&w, "goal", tune_goal_name(q->goal));
    jsonw_key(&w, "current");
    cand_json(a, &a->c[a->current], &w);
    jsonw_key(&w, "best");
    if (a->n_ranked && tune_candidate_ok(&a->c[a->rank[0]]))
        cand_json(a, &a->c[a->rank[0]], &w);
    else
        jsonw_null(&w);
    jsonw_key(&w, "ranked");
    if (a->n_ranked == 0) {
        jsonw_raw(&w, "[\n  ]"); /* as it always was written when empty, unlike the lists below */
    } else {
        jsonw_array(&w);
        for (uint32_t r = 0; r < a->n_ranked; r++)
            cand_json(a, &a->c[a->rank[r]], &w);
        jsonw_end(&w);
    }
    jsonw_key(&w, "not_run");
    jsonw_array(&w);
    for (uint32_t i = 0; i < a->n; i++)
        if (!a->c[i].bound && a->c[i].st != SIM_OK)
            cand_json(a, &a->c[i], &w);
    jsonw_end(&w);
    jsonw_key(&w, "lower_bounds");
    jsonw_array(&w);
    for (uint32_t i = 0; i < a->n; i++)
        if (a->c[i].bound)
            cand_json(a, &a->c[i], &w);
    jsonw_end(&w);
    if (g != NULL && g->present) {
        jsonw_key(&w, "cuda_graphs");
        report_jsonw_graphs(g, &w);
    }
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}

void report_tune_graphs_text(const graphs_answer *g, sim_buf *b)
{
    if (g == NULL || !g->present || g->best < 0)
        return;
    const graphs_variant *v = &g->variants[g->best];
    char pk[32];
    sim_buf_printf(b,
                   "\nCUDA graphs (%u captures): %s, %s gives the least peak reserved (%s%s). Settings to paste:\n"
                   "  ",
                   g->captures, v->sharing == GRAPHS_SHARED ? "one shared pool" : "one pool per graph",
                   graphs_order_name(v->order), units_format_size(v->peak_reserved_bytes, pk, sizeof pk),
                   v->recorded ? ", as the trace already does" : "");
    report_graphs_settings(g, b);
    sim_buf_puts(b, "\n");
}
