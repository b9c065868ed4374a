/* `gpusim tune` as text and as JSON. */
#include "tune.h"

#include <string.h>

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
    const tune_candidate *cur = &a->c[a->current];
    sim_buf_printf(b, "  device  %s: capacity %s", dv->name, units_format_size(dv->capacity_bytes, s, sizeof s));
    if (cur->st == SIM_OK) /* the limit each setting gives is the table's limit column */
        sim_buf_printf(b, ", allocator limit %s (%s) under the current setting",
                       units_format_size(cur->limit_bytes, s2, sizeof s2), cur->limit_source);
    sim_buf_puts(b, "\n\n");
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

static void cand_json(const tune_question *q, const tune_answer *a, const tune_candidate *c, sim_buf *b)
{
    const tune_candidate *c0 = &a->c[a->current];
    sim_buf_puts(b, "{\"setting\": ");
    sim_buf_json_str(b, c->setting);
    sim_buf_puts(b, ", \"family\": ");
    sim_buf_json_str(b, c->family);
    sim_buf_puts(b, ", \"strategy\": ");
    sim_buf_json_str(b, c->ops->name);
    sim_buf_puts(b, ", \"options\": {");
    for (uint32_t k = 0; k < c->n_own; k++) {
        sim_buf_puts(b, k ? ", " : "");
        sim_buf_json_str(b, c->key[k]);
        sim_buf_puts(b, ": ");
        sim_buf_json_str(b, c->value[k]);
    }
    sim_buf_puts(b, "}, \"env\": ");
    sim_buf_json_str(b, c->env);
    sim_buf_puts(b, ", \"code\": ");
    sim_buf_json_str(b, c->code);
    sim_buf_printf(b, ", \"current\": %s", c->current ? "true" : "false");
    if (c->st != SIM_OK) {
        sim_buf_puts(b, ", \"error\": ");
        sim_buf_json_str(b, c->err.msg);
        sim_buf_puts(b, "}");
        return;
    }
    long long change = (long long)c->peak_reserved - (long long)c0->peak_reserved;
    sim_buf_printf(b,
                   ", \"ok\": %s, \"completed\": %s, \"ooms\": %llu, \"peak_requested_bytes\": %llu, "
                   "\"peak_reserved_bytes\": %llu, \"peak_device_bytes\": %llu, \"change_reserved_bytes\": %lld",
                   tune_candidate_ok(c) ? "true" : "false", c->completed ? "true" : "false",
                   (unsigned long long)c->ooms, (unsigned long long)c->peak_requested,
                   (unsigned long long)c->peak_reserved, (unsigned long long)c->peak_device, change);
    sim_buf_printf(b, ", \"limit_bytes\": %llu, \"limit_source\": ", (unsigned long long)c->limit_bytes);
    sim_buf_json_str(b, c->limit_source);
    if (c->ooms) {
        sim_buf_puts(b, ", \"oom_cause\": ");
        sim_buf_json_str(b, sim_oom_cause_name(c->cause));
    }
    (void)q;
    sim_buf_puts(b, "}");
}

void report_tune_json(const tune_question *q, const tune_answer *a, const char *const *paths, uint32_t n_paths,
                      sim_buf *b)
{
    const device_info *dv = &q->base.device;
    sim_buf_puts(b, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"traces\": [");
    for (uint32_t i = 0; i < n_paths; i++) {
        sim_buf_puts(b, i ? ", " : "");
        sim_buf_json_str(b, paths[i]);
    }
    sim_buf_puts(b, "],\n  \"device\": {\"name\": ");
    sim_buf_json_str(b, dv->name);
    sim_buf_printf(b, ", \"capacity_bytes\": %llu, \"context_bytes\": %llu},\n  \"framework\": \"%s\",\n  \"goal\": \"%s\",",
                   (unsigned long long)dv->capacity_bytes, (unsigned long long)dv->context_bytes,
                   tune_framework_name(q->framework), tune_goal_name(q->goal));
    sim_buf_puts(b, "\n  \"current\": ");
    cand_json(q, a, &a->c[a->current], b);
    sim_buf_puts(b, ",\n  \"best\": ");
    if (a->n_ranked && tune_candidate_ok(&a->c[a->rank[0]]))
        cand_json(q, a, &a->c[a->rank[0]], b);
    else
        sim_buf_puts(b, "null");
    sim_buf_puts(b, ",\n  \"ranked\": [");
    for (uint32_t r = 0; r < a->n_ranked; r++) {
        sim_buf_puts(b, r ? ",\n    " : "\n    ");
        cand_json(q, a, &a->c[a->rank[r]], b);
    }
    sim_buf_puts(b, "\n  ],\n  \"not_run\": [");
    uint32_t k = 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (!a->c[i].bound && a->c[i].st != SIM_OK) {
            sim_buf_puts(b, k++ ? ",\n    " : "\n    ");
            cand_json(q, a, &a->c[i], b);
        }
    sim_buf_puts(b, k ? "\n  ],\n  \"lower_bounds\": [" : "],\n  \"lower_bounds\": [");
    k = 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->c[i].bound) {
            sim_buf_puts(b, k++ ? ",\n    " : "\n    ");
            cand_json(q, a, &a->c[i], b);
        }
    sim_buf_puts(b, k ? "\n  ]\n}\n" : "]\n}\n");
}
