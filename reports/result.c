#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers/limit.h"
#include "sim/units.h"

/* ---------------------------------------------------------------- stats sinks */

/* JSON layout, passed down as `ind`: ind >= 0 pretty (each member of a multi-line
 * object on its own line, indented ind spaces; one-line objects as {"k": v, "k": v}),
 * ind < 0 compact (the whole document on one line without a space outside strings). */
#define JSON_COMPACT (-1)

static void put_indent(sim_buf *b, int n)
{
    sim_buf_printf(b, "%*s", n, "");
}

/* ind spaces deeper, or compact. */
static int deeper(int ind, int by)
{
    return ind < 0 ? JSON_COMPACT : ind + by;
}

/* A line break and ind spaces (nothing when compact). */
static void put_nl(sim_buf *b, int ind)
{
    if (ind < 0)
        return;
    sim_buf_puts(b, "\n");
    put_indent(b, ind);
}

/* The key of a member on its own line (ind: the member's indent). */
static void put_member(sim_buf *b, int ind, bool first, const char *key)
{
    if (!first)
        sim_buf_puts(b, ",");
    put_nl(b, ind);
    sim_buf_json_str(b, key);
    sim_buf_puts(b, ind < 0 ? ":" : ": ");
}

/* Members keys[i]: values[i], unsigned integers; the first of them opens the object when first. */
static void put_u64_members(sim_buf *b, int ind, bool first, const char *const *keys, const uint64_t *values,
                            size_t n)
{
    for (size_t i = 0; i < n; i++) {
        put_member(b, ind, first && i == 0, keys[i]);
        sim_buf_printf(b, "%llu", (unsigned long long)values[i]);
    }
}

/* Item i of an array member of the object at ind: a comma after the first, each on
 * its own line when indented. */
static void put_item(sim_buf *b, int ind, uint32_t i)
{
    sim_buf_puts(b, i ? "," : "");
    put_nl(b, deeper(ind, 2));
}

/* The key of a member of a one-line object (ind < 0: compact). */
static void put_inline(sim_buf *b, int ind, bool first, const char *key)
{
    if (!first)
        sim_buf_puts(b, ind < 0 ? "," : ", ");
    sim_buf_json_str(b, key);
    sim_buf_puts(b, ind < 0 ? ":" : ": ");
}

typedef struct json_sink {
    sim_buf *out;
    int indent;   /* >= 0: a member per line at this indent; else one line */
    bool compact; /* with indent < 0: without spaces */
    bool first;
} json_sink;

static void js_key(json_sink *j, const char *key)
{
    if (j->indent < 0)
        put_inline(j->out, j->compact ? JSON_COMPACT : 0, j->first, key);
    else
        put_member(j->out, j->indent, j->first, key);
    j->first = false;
}

static void js_u64(void *ctx, const char *key, uint64_t v)
{
    json_sink *j = ctx;
    js_key(j, key);
    sim_buf_printf(j->out, "%llu", (unsigned long long)v);
}

static void js_real(void *ctx, const char *key, double v)
{
    json_sink *j = ctx;
    js_key(j, key);
    sim_buf_json_real(j->out, v);
}

static void js_text(void *ctx, const char *key, const char *v)
{
    json_sink *j = ctx;
    js_key(j, key);
    sim_buf_json_str(j->out, v);
}

uint64_t report_limit_bytes(const sim_run *run)
{
    return limit_find(run, NULL, 0);
}

const char *report_limit_text(const sim_run *run, char *buf, size_t cap)
{
    char lim[32], src[256];
    uint64_t l = limit_find(run, src, sizeof src);
    snprintf(buf, cap, "%s (%s)", units_format_size(l, lim, sizeof lim), src);
    return buf;
}

/* ---------------------------------------------------------------- JSON */

static void json_oom(const sim_run *run, const sim_oom_record *o, int ind, sim_buf *b)
{
    if (!o->happened) {
        sim_buf_puts(b, "null");
        return;
    }
    const sim_run_source *src = &run->sources[o->source];
    int in = deeper(ind, 2);
    sim_buf_puts(b, "{");
    static const char *const U64_KEYS[] = {"event", "t", "id", "size", "allocator_size_bytes", "free_bytes",
                                           "largest_free_bytes", "reserved_bytes", "device_free_bytes"};
    const uint64_t u64s[] = {o->event, o->t, o->id, o->size, o->info.size_bytes, o->info.free_bytes,
                             o->info.largest_free_bytes, o->info.reserved_bytes, o->info.device_free_bytes};
    put_u64_members(b, in, true, U64_KEYS, u64s, sizeof U64_KEYS / sizeof U64_KEYS[0]);
    put_member(b, in, false, "cause");
    sim_buf_printf(b, "\"%s\"", sim_oom_cause_name(o->cause));
    static const char *const CAUSE_KEYS[] = {"live_requested_bytes", "peak_demand_bytes", "usable_bytes",
                                             "other_processes_bytes", "free_pieces"};
    const uint64_t causes[] = {o->live_requested_bytes, o->peak_demand_bytes, o->usable_bytes,
                               o->other_processes_bytes, o->free_pieces};
    put_u64_members(b, in, false, CAUSE_KEYS, causes, sizeof CAUSE_KEYS / sizeof CAUSE_KEYS[0]);
    put_member(b, in, false, "tag");
    if (o->tag[0])
        sim_buf_json_str(b, o->tag);
    else
        sim_buf_puts(b, "null");
    put_member(b, in, false, "largest_live");
    sim_buf_puts(b, "[");
    for (uint32_t i = 0; i < o->n_largest_live; i++)
        sim_buf_printf(b, "%s{\"id\":%s%llu,%s\"size\":%s%llu}", i ? (ind < 0 ? "," : ", ") : "", ind < 0 ? "" : " ",
                       (unsigned long long)o->largest_live[i].id, ind < 0 ? "" : " ", ind < 0 ? "" : " ",
                       (unsigned long long)o->largest_live[i].size);
    sim_buf_puts(b, "]");
    put_member(b, in, false, "trace");
    sim_buf_json_str(b, src->path);
    if (o->line) {
        put_member(b, in, false, "line");
        sim_buf_printf(b, "%llu", (unsigned long long)o->line);
    }
    put_member(b, in, false, "process");
    sim_buf_json_str(b, run->procs[o->process].name);
    put_member(b, in, false, "message");
    sim_buf oomtext;
    sim_buf_init(&oomtext);
    report_oom_sentence(run, o, &oomtext);
    sim_buf_json_str(b, oomtext.data ? oomtext.data : "");
    sim_buf_release(&oomtext);
    if (o->info.detail[0]) {
        put_member(b, in, false, "allocator_message");
        sim_buf_json_str(b, o->info.detail);
    }
    put_nl(b, ind);
    sim_buf_puts(b, "}");
}

static void json_metrics(const sim_run *run, const sim_metrics *m, const strategy *stats_of, int ind, sim_buf *b)
{
    int in = deeper(ind, 2);
    sim_buf_puts(b, "{");
    put_member(b, in, true, "completed");
    sim_buf_puts(b, m->completed ? "true" : "false");
    static const char *const PEAK_KEYS[] = {"peak_requested_bytes", "peak_allocated_bytes", "peak_reserved_bytes",
                                            "peak_device_bytes", "final_reserved_bytes"};
    const uint64_t peaks[] = {m->peak_requested_bytes, m->peak_allocated_bytes, m->peak_reserved_bytes,
                              m->peak_device_bytes, m->final_reserved_bytes};
    put_u64_members(b, in, false, PEAK_KEYS, peaks, sizeof PEAK_KEYS / sizeof PEAK_KEYS[0]);
    put_member(b, in, false, "fragmentation");
    sim_buf_puts(b, "{");
    put_inline(b, ind, true, "at_peak");
    sim_buf_json_real(b, m->fragmentation_at_peak);
    put_inline(b, ind, false, "max");
    sim_buf_json_real(b, m->fragmentation_max);
    sim_buf_puts(b, "}");
    static const char *const COUNT_KEYS[] = {"reserved_unallocated_at_peak_bytes", "num_device_allocs",
                                             "num_device_frees", "ooms"};
    const uint64_t counts[] = {m->reserved_unallocated_at_peak_bytes, m->num_device_allocs, m->num_device_frees,
                               m->ooms};
    put_u64_members(b, in, false, COUNT_KEYS, counts, sizeof COUNT_KEYS / sizeof COUNT_KEYS[0]);
    put_member(b, in, false, "first_oom");
    json_oom(run, &m->first_oom, in, b);
    if (stats_of) {
        put_member(b, in, false, "stats");
        sim_buf_puts(b, "{");
        json_sink j = {b, ind < 0 ? -1 : in + 2, ind < 0, true};
        strategy_stat_sink sink = {js_u64, js_real, js_text, &j};
        run->ops->stats(stats_of, &sink);
        if (!j.first)
            put_nl(b, in);
        sim_buf_puts(b, "}");
    }
    put_nl(b, ind);
    sim_buf_puts(b, "}");
}

void report_json_result(const sim_run *run, uint32_t p, int indent, sim_buf *out)
{
    if (p == UINT32_MAX)
        json_metrics(run, &run->total, run->n_procs == 1 ? run->procs[0].s : NULL, indent, out);
    else
        json_metrics(run, &run->procs[p].m, run->procs[p].s, indent, out);
}

static void json_options(const sim_run *run, int ind, sim_buf *b)
{
    sim_buf_puts(b, "{");
    if (run->n_procs > 0) {
        json_sink j = {b, -1, ind < 0, true};
        strategy_stat_sink sink = {js_u64, js_real, js_text, &j};
        run->ops->options(run->procs[0].s, &sink);
    }
    sim_buf_puts(b, "}");
}

void report_json_options(const sim_run *run, sim_buf *b)
{
    json_options(run, 0, b);
}

static void json_source(const sim_run_source *s, int ind, sim_buf *b)
{
    sim_buf_puts(b, "{");
    put_inline(b, ind, true, "path");
    sim_buf_json_str(b, s->path);
    put_inline(b, ind, false, "name");
    sim_buf_json_str(b, s->name);
    static const char *const KEYS[] = {"events", "allocs", "frees"};
    const uint64_t v[] = {s->events, s->allocs, s->frees};
    for (size_t i = 0; i < 3; i++) {
        put_inline(b, ind, false, KEYS[i]);
        sim_buf_printf(b, "%llu", (unsigned long long)v[i]);
    }
    sim_buf_puts(b, "}");
}

void report_json_source(const sim_run_source *s, sim_buf *b)
{
    json_source(s, 0, b);
}

/* The §5 object, with the what-if answer when w holds one; ind 0 (pretty) or JSON_COMPACT. */
static void json_doc(const sim_run *run, const whatif *w, int ind, sim_buf *b)
{
    device_info d = device_get_info(run->dev);
    int in = deeper(ind, 2);
    sim_buf_puts(b, "{");
    put_member(b, in, true, "gpusim");
    sim_buf_json_str(b, GPUSIM_VERSION);
    put_member(b, in, false, "trace");
    if (run->n_sources > 0)
        json_source(&run->sources[0], ind, b);
    else
        sim_buf_puts(b, "null");
    if (run->n_sources > 1) {
        put_member(b, in, false, "traces");
        sim_buf_puts(b, "[");
        for (uint32_t i = 0; i < run->n_sources; i++) {
            put_item(b, in, i);
            json_source(&run->sources[i], ind, b);
        }
        put_nl(b, in);
        sim_buf_puts(b, "]");
    }
    put_member(b, in, false, "strategy");
    sim_buf_puts(b, "{");
    put_inline(b, ind, true, "name");
    sim_buf_json_str(b, run->ops->name);
    put_inline(b, ind, false, "options");
    json_options(run, ind, b);
    sim_buf_puts(b, "}");
    put_member(b, in, false, "device");
    sim_buf_puts(b, "{");
    put_inline(b, ind, true, "name");
    sim_buf_json_str(b, d.name);
    static const char *const DEV_KEYS[] = {"capacity_bytes", "context_bytes", "limit_bytes"};
    const uint64_t dv[] = {d.capacity_bytes, d.context_bytes, report_limit_bytes(run)};
    for (size_t i = 0; i < 3; i++) {
        put_inline(b, ind, false, DEV_KEYS[i]);
        sim_buf_printf(b, "%llu", (unsigned long long)dv[i]);
    }
    sim_buf_puts(b, "}");
    put_member(b, in, false, "result");
    report_json_result(run, UINT32_MAX, in, b);
    if (w != NULL && w->present) {
        put_member(b, in, false, "what_if");
        sim_buf_puts(b, "{");
        put_inline(b, ind, true, "setting");
        sim_buf_json_str(b, w->setting);
        put_inline(b, ind, false, "completed");
        sim_buf_puts(b, w->completed ? "true" : "false");
        put_inline(b, ind, false, "ooms");
        sim_buf_printf(b, "%llu", (unsigned long long)w->ooms);
        put_inline(b, ind, false, "peak_reserved_bytes");
        sim_buf_printf(b, "%llu", (unsigned long long)w->peak_reserved_bytes);
        put_inline(b, ind, false, "first_oom");
        json_oom(run, &w->first_oom, in, b);
        sim_buf_puts(b, "}");
    }
    if (run->n_procs > 1) {
        put_member(b, in, false, "processes");
        sim_buf_puts(b, "[");
        for (uint32_t i = 0; i < run->n_procs; i++) {
            put_item(b, in, i);
            sim_buf_puts(b, "{");
            put_inline(b, ind, true, "process");
            sim_buf_json_str(b, run->procs[i].name);
            put_inline(b, ind, false, "trace");
            sim_buf_json_str(b, run->sources[run->procs[i].source].path);
            put_inline(b, ind, false, "result");
            report_json_result(run, i, deeper(in, 2), b);
            sim_buf_puts(b, "}");
        }
        put_nl(b, in);
        sim_buf_puts(b, "]");
    }
    put_nl(b, ind);
    sim_buf_puts(b, "}");
}

void report_json(const sim_run *run, sim_buf *b)
{
    json_doc(run, NULL, 0, b);
    sim_buf_puts(b, "\n");
}

void report_json_whatif(const sim_run *run, const whatif *w, sim_buf *b)
{
    json_doc(run, w, 0, b);
    sim_buf_puts(b, "\n");
}

void report_json_line(const sim_run *run, sim_buf *b)
{
    json_doc(run, NULL, JSON_COMPACT, b);
}

/* ---------------------------------------------------------------- text */

static void size_line(sim_buf *b, const char *label, uint64_t v)
{
    char s[32];
    sim_buf_printf(b, "  %-34s %12s  (%llu B)\n", label, units_format_size(v, s, sizeof s), (unsigned long long)v);
}

/* The allocator settings worth trying when an OOM is fragmentation, in the user's terms
 * (the strategy's own advice, strategy.h). */
static const char *fragmentation_fix(const strategy_ops *ops)
{
    return ops->advice != NULL ? ops->advice : "another allocator (gpusim strategies) or its options";
}

void report_oom_sentence(const sim_run *run, const sim_oom_record *o, sim_buf *b)
{
    char req[32], alloc[32], fr[32], lg[32], rs[32], df[32], need[32], live[32], use[32], oth[32], cap[32];
    /* the request and the allocator's books first, then the verdict of design.md §3 with its numbers */
    units_format_size(o->size, req, sizeof req);
    units_format_size(o->info.size_bytes, alloc, sizeof alloc);
    units_format_size(o->info.free_bytes, fr, sizeof fr);
    units_format_size(o->info.largest_free_bytes, lg, sizeof lg);
    units_format_size(o->info.reserved_bytes, rs, sizeof rs);
    units_format_size(o->info.device_free_bytes, df, sizeof df);
    units_format_size(o->live_requested_bytes + o->size, need, sizeof need);
    units_format_size(o->live_requested_bytes, live, sizeof live);
    units_format_size(o->usable_bytes, use, sizeof use);
    units_format_size(o->other_processes_bytes, oth, sizeof oth);
    units_format_size(o->capacity_bytes, cap, sizeof cap);
    sim_buf_printf(b, "out of memory at event %llu (t=%llu ns, id %llu", (unsigned long long)o->event,
                   (unsigned long long)o->t, (unsigned long long)o->id);
    if (o->tag[0]) {
        sim_buf_puts(b, ", tag ");
        sim_buf_json_str(b, o->tag);
    }
    sim_buf_printf(b, ") of %s: %s requested (%s for the allocator), %s reserved of which %s free",
                   run->sources[o->source].path, req, alloc, rs, fr);
    if (o->free_pieces)
        sim_buf_printf(b, " in %llu piece%s", (unsigned long long)o->free_pieces, o->free_pieces == 1 ? "" : "s");
    sim_buf_printf(b, ", largest free block %s; %s free on the device. ", lg, df);
    sim_buf_printf(b, "Cause: %s - the program needs %s live (%s held + this request)", sim_oom_cause_name(o->cause),
                   need, live);
    if (o->peak_demand_bytes > o->live_requested_bytes + o->size) {
        char pk[32];
        sim_buf_printf(b, ", %s at its peak had every allocation been served,",
                       units_format_size(o->peak_demand_bytes, pk, sizeof pk));
    }
    sim_buf_printf(b, " and may use %s", use);
    switch (o->cause) {
    case SIM_OOM_CAPACITY: {
        /* a limit or a memory fraction below capacity − context: raising it is a fix too */
        bool limited = o->usable_bytes + device_get_info(run->dev).context_bytes < o->capacity_bytes;
        sim_buf_printf(b, ": a larger card%s or a smaller batch (or fewer live tensors); "
                          "allocator settings cannot fix this.",
                       limited ? ", a higher memory limit" : "");
        break;
    }
    case SIM_OOM_OTHER_PROCESSES:
        sim_buf_printf(b, ", but %s hold%s %s of the %s device: run %s on another card, or cap %s "
                          "(a memory fraction or limit).",
                       o->other_processes == 1 ? "another process" : "other processes",
                       o->other_processes == 1 ? "s" : "", oth, cap, o->other_processes == 1 ? "it" : "them",
                       o->other_processes == 1 ? "it" : "them");
        break;
    case SIM_OOM_FRAGMENTATION:
        sim_buf_printf(b, "; it would fit, but of the %s the allocator holds %s is free", rs, fr);
        if (o->free_pieces)
            sim_buf_printf(b, " in %llu piece%s", (unsigned long long)o->free_pieces,
                           o->free_pieces == 1 ? "" : "s");
        sim_buf_printf(b, ", the largest %s, for a %s block. Allocator settings can fix this; try %s.", lg, alloc,
                       fragmentation_fix(run->ops));
        break;
    }
}

/* The failing allocation's neighbours in memory terms: the largest live allocations. */
static void text_largest_live(const sim_oom_record *o, sim_buf *b)
{
    if (o->n_largest_live == 0)
        return;
    sim_buf_puts(b, "  largest live allocations then:");
    for (uint32_t i = 0; i < o->n_largest_live; i++) {
        char sz[32];
        sim_buf_printf(b, "%s id %llu (%s)", i ? "," : "", (unsigned long long)o->largest_live[i].id,
                       units_format_size(o->largest_live[i].size, sz, sizeof sz));
    }
    sim_buf_puts(b, "\n");
}

typedef struct text_sink {
    sim_buf *b;
} text_sink;

static void ts_u64(void *ctx, const char *key, uint64_t v)
{
    text_sink *t = ctx;
    sim_buf_printf(t->b, "    %-34s %llu\n", key, (unsigned long long)v);
}

static void ts_real(void *ctx, const char *key, double v)
{
    text_sink *t = ctx;
    sim_buf_printf(t->b, "    %-34s %.6f\n", key, v);
}

static void ts_text(void *ctx, const char *key, const char *v)
{
    text_sink *t = ctx;
    sim_buf_printf(t->b, "    %-34s %s\n", key, v);
}

static void text_metrics(const sim_run *run, const sim_metrics *m, sim_buf *b)
{
    size_line(b, "peak requested", m->peak_requested_bytes);
    size_line(b, "peak allocated", m->peak_allocated_bytes);
    size_line(b, "peak reserved", m->peak_reserved_bytes);
    size_line(b, "peak on the device (+ context)", m->peak_device_bytes);
    size_line(b, "reserved but unallocated at peak", m->reserved_unallocated_at_peak_bytes);
    size_line(b, "final reserved", m->final_reserved_bytes);
    sim_buf_printf(b, "  %-34s %12.4f  (max %.4f)\n", "fragmentation at peak", m->fragmentation_at_peak,
                   m->fragmentation_max);
    sim_buf_printf(b, "  %-34s %12llu / %llu\n", "device allocations / frees",
                   (unsigned long long)m->num_device_allocs, (unsigned long long)m->num_device_frees);
    if (!m->first_oom.happened) {
        sim_buf_printf(b, "  %-34s %12s\n", "out of memory", "no");
        return;
    }
    sim_buf_printf(b, "  %-34s %12llu  (%s)\n", "out of memory", (unsigned long long)m->ooms,
                   m->completed ? "skipped, replay went on" : "the program stopped there");
    sim_buf_puts(b, "\n  ");
    report_oom_sentence(run, &m->first_oom, b);
    sim_buf_puts(b, "\n");
    text_largest_live(&m->first_oom, b);
    if (m->first_oom.info.detail[0])
        sim_buf_printf(b, "  %s says: %s\n", run->ops->name, m->first_oom.info.detail);
}

void report_text(const sim_run *run, sim_buf *b)
{
    report_text_whatif(run, NULL, b);
}

void report_whatif_sentence(const whatif *w, sim_buf *b)
{
    char pk[32];
    sim_buf_printf(b, "what if %s: ", w->setting);
    if (w->completed)
        sim_buf_printf(b, "the trace completes (peak reserved %s): that setting avoids the OOM.",
                       units_format_size(w->peak_reserved_bytes, pk, sizeof pk));
    else if (w->first_oom.happened)
        sim_buf_printf(b, "still out of memory, at event %llu (%s).", (unsigned long long)w->first_oom.event,
                       sim_oom_cause_name(w->first_oom.cause));
    else
        sim_buf_puts(b, "the replay did not complete.");
}

void report_text_whatif(const sim_run *run, const whatif *w, sim_buf *b)
{
    device_info d = device_get_info(run->dev);
    char cap[32], ctx[32], lim[320];
    sim_buf_printf(b, "gpusim %s: replay under '%s'\n", GPUSIM_VERSION, run->ops->name);
    for (uint32_t i = 0; i < run->n_sources; i++) {
        const sim_run_source *s = &run->sources[i];
        sim_buf_printf(b, "  trace   %s%s%s%s: %llu events (%llu allocs, %llu frees)\n", s->path,
                       s->name[0] ? " (" : "", s->name, s->name[0] ? ")" : "", (unsigned long long)s->events,
                       (unsigned long long)s->allocs, (unsigned long long)s->frees);
    }
    sim_buf_printf(b, "  device  %s: capacity %s, context %s per process, allocator limit %s\n", d.name,
                   units_format_size(d.capacity_bytes, cap, sizeof cap),
                   units_format_size(d.context_bytes, ctx, sizeof ctx),
                   report_limit_text(run, lim, sizeof lim));
    sim_buf_puts(b, "\n");
    text_metrics(run, &run->total, b);
    if (run->n_procs > 1) {
        for (uint32_t i = 0; i < run->n_procs; i++) {
            sim_buf_printf(b, "\nprocess %s\n", run->procs[i].name);
            text_metrics(run, &run->procs[i].m, b);
        }
    }
    if (w != NULL && w->present) {
        sim_buf_puts(b, "\n  ");
        report_whatif_sentence(w, b);
        sim_buf_puts(b, "\n");
    }
    if (run->n_procs == 1) {
        sim_buf_printf(b, "\n  %s statistics:\n", run->ops->name);
        text_sink t = {b};
        strategy_stat_sink sink = {ts_u64, ts_real, ts_text, &t};
        run->ops->stats(run->procs[0].s, &sink);
    }
}

void report_timeline_csv(const sim_run *run, sim_buf *b)
{
    sim_buf_puts(b, "t,event,requested,allocated,reserved,fragmentation\n");
    if (!run->has_timeline)
        return;
    for (uint64_t i = 0; i < run->tl.n; i++) {
        const timeline_row *r = &run->tl.rows[i];
        sim_buf_printf(b, "%llu,%llu,%llu,%llu,%llu,%.6f\n", (unsigned long long)r->t, (unsigned long long)r->event,
                       (unsigned long long)r->requested, (unsigned long long)r->allocated,
                       (unsigned long long)r->reserved, r->fragmentation);
    }
}
