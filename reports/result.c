#include "result.h"

#include <stdio.h>
#include <string.h>

#include "sim/units.h"

/* ---------------------------------------------------------------- stats sinks */

typedef struct json_sink {
    sim_buf *out;
    int indent;   /* < 0: all on one line */
    bool first;
} json_sink;

static void js_key(json_sink *j, const char *key)
{
    if (j->indent < 0) {
        if (!j->first)
            sim_buf_puts(j->out, ", ");
        j->first = false;
        sim_buf_json_str(j->out, key);
        sim_buf_puts(j->out, ": ");
        return;
    }
    sim_buf_puts(j->out, j->first ? "\n" : ",\n");
    j->first = false;
    sim_buf_printf(j->out, "%*s", j->indent, "");
    sim_buf_json_str(j->out, key);
    sim_buf_puts(j->out, ": ");
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

typedef struct limit_sink {
    uint64_t limit;
    bool found;
} limit_sink;

static void ls_u64(void *ctx, const char *key, uint64_t v)
{
    limit_sink *l = ctx;
    if (strcmp(key, "bytes_limit") == 0) {
        l->limit = v;
        l->found = true;
    }
}

static void ls_real(void *ctx, const char *key, double v)
{
    (void)ctx;
    (void)key;
    (void)v;
}

static void ls_text(void *ctx, const char *key, const char *v)
{
    (void)ctx;
    (void)key;
    (void)v;
}

uint64_t report_limit_bytes(const sim_run *run)
{
    device_info d = device_get_info(run->dev);
    if (run->n_procs > 0) {
        limit_sink l = {0, false};
        strategy_stat_sink sink = {ls_u64, ls_real, ls_text, &l};
        run->ops->stats(run->procs[0].s, &sink);
        if (l.found)
            return l.limit;
    }
    uint64_t ctx = d.context_bytes * (run->n_procs ? run->n_procs : 1);
    return d.capacity_bytes > ctx ? d.capacity_bytes - ctx : 0;
}

/* ---------------------------------------------------------------- JSON */

static void put_indent(sim_buf *b, int n)
{
    sim_buf_printf(b, "%*s", n, "");
}

static void json_oom(const sim_run *run, const sim_oom_record *o, int ind, sim_buf *b)
{
    if (!o->happened) {
        sim_buf_puts(b, "null");
        return;
    }
    const sim_run_source *src = &run->sources[o->source];
    sim_buf_puts(b, "{\n");
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"event\": %llu,\n", (unsigned long long)o->event);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"t\": %llu,\n", (unsigned long long)o->t);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"id\": %llu,\n", (unsigned long long)o->id);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"size\": %llu,\n", (unsigned long long)o->size);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"allocator_size_bytes\": %llu,\n", (unsigned long long)o->info.size_bytes);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"free_bytes\": %llu,\n", (unsigned long long)o->info.free_bytes);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"largest_free_bytes\": %llu,\n", (unsigned long long)o->info.largest_free_bytes);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"reserved_bytes\": %llu,\n", (unsigned long long)o->info.reserved_bytes);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"device_free_bytes\": %llu,\n", (unsigned long long)o->info.device_free_bytes);
    put_indent(b, ind + 2);
    sim_buf_printf(b, "\"cause\": \"%s\",\n", sim_oom_cause_name(o->info.cause));
    put_indent(b, ind + 2);
    sim_buf_puts(b, "\"trace\": ");
    sim_buf_json_str(b, src->path);
    sim_buf_puts(b, ",\n");
    if (o->line) {
        put_indent(b, ind + 2);
        sim_buf_printf(b, "\"line\": %llu,\n", (unsigned long long)o->line);
    }
    put_indent(b, ind + 2);
    sim_buf_puts(b, "\"process\": ");
    sim_buf_json_str(b, run->procs[o->process].name);
    sim_buf_puts(b, ",\n");
    put_indent(b, ind + 2);
    sim_buf_puts(b, "\"message\": ");
    sim_buf oomtext;
    sim_buf_init(&oomtext);
    report_oom_sentence(run, o, &oomtext);
    sim_buf_json_str(b, oomtext.data ? oomtext.data : "");
    sim_buf_release(&oomtext);
    if (o->info.detail[0]) {
        sim_buf_puts(b, ",\n");
        put_indent(b, ind + 2);
        sim_buf_puts(b, "\"allocator_message\": ");
        sim_buf_json_str(b, o->info.detail);
    }
    sim_buf_puts(b, "\n");
    put_indent(b, ind);
    sim_buf_puts(b, "}");
}

static void json_metrics(const sim_run *run, const sim_metrics *m, const strategy *stats_of, int ind, sim_buf *b)
{
    int in = ind + 2;
    sim_buf_puts(b, "{\n");
#define U64_FIELD(name, v)                                                         \
    do {                                                                           \
        put_indent(b, in);                                                         \
        sim_buf_printf(b, "\"%s\": %llu,\n", name, (unsigned long long)(v));       \
    } while (0)
    put_indent(b, in);
    sim_buf_printf(b, "\"completed\": %s,\n", m->completed ? "true" : "false");
    U64_FIELD("peak_requested_bytes", m->peak_requested_bytes);
    U64_FIELD("peak_allocated_bytes", m->peak_allocated_bytes);
    U64_FIELD("peak_reserved_bytes", m->peak_reserved_bytes);
    U64_FIELD("peak_device_bytes", m->peak_device_bytes);
    U64_FIELD("final_reserved_bytes", m->final_reserved_bytes);
    put_indent(b, in);
    sim_buf_puts(b, "\"fragmentation\": {\"at_peak\": ");
    sim_buf_json_real(b, m->fragmentation_at_peak);
    sim_buf_puts(b, ", \"max\": ");
    sim_buf_json_real(b, m->fragmentation_max);
    sim_buf_puts(b, "},\n");
    U64_FIELD("reserved_unallocated_at_peak_bytes", m->reserved_unallocated_at_peak_bytes);
    U64_FIELD("num_device_allocs", m->num_device_allocs);
    U64_FIELD("num_device_frees", m->num_device_frees);
    U64_FIELD("ooms", m->ooms);
#undef U64_FIELD
    put_indent(b, in);
    sim_buf_puts(b, "\"first_oom\": ");
    json_oom(run, &m->first_oom, in, b);
    if (stats_of) {
        sim_buf_puts(b, ",\n");
        put_indent(b, in);
        sim_buf_puts(b, "\"stats\": {");
        json_sink j = {b, in + 2, true};
        strategy_stat_sink sink = {js_u64, js_real, js_text, &j};
        run->ops->stats(stats_of, &sink);
        if (!j.first) {
            sim_buf_puts(b, "\n");
            put_indent(b, in);
        }
        sim_buf_puts(b, "}");
    }
    sim_buf_puts(b, "\n");
    put_indent(b, ind);
    sim_buf_puts(b, "}");
}

void report_json_result(const sim_run *run, uint32_t p, int indent, sim_buf *out)
{
    if (p == UINT32_MAX)
        json_metrics(run, &run->total, run->n_procs == 1 ? run->procs[0].s : NULL, indent, out);
    else
        json_metrics(run, &run->procs[p].m, run->procs[p].s, indent, out);
}

static void json_source(const sim_run_source *s, sim_buf *b)
{
    sim_buf_puts(b, "{\"path\": ");
    sim_buf_json_str(b, s->path);
    sim_buf_puts(b, ", \"name\": ");
    sim_buf_json_str(b, s->name);
    sim_buf_printf(b, ", \"events\": %llu, \"allocs\": %llu, \"frees\": %llu}", (unsigned long long)s->events,
                   (unsigned long long)s->allocs, (unsigned long long)s->frees);
}

void report_json(const sim_run *run, sim_buf *b)
{
    report_json_whatif(run, NULL, b);
}

void report_json_whatif(const sim_run *run, const whatif *w, sim_buf *b)
{
    device_info d = device_get_info(run->dev);
    sim_buf_puts(b, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"trace\": ");
    if (run->n_sources > 0)
        json_source(&run->sources[0], b);
    else
        sim_buf_puts(b, "null");
    sim_buf_puts(b, ",\n");
    if (run->n_sources > 1) {
        sim_buf_puts(b, "  \"traces\": [");
        for (uint32_t i = 0; i < run->n_sources; i++) {
            sim_buf_puts(b, i ? ",\n    " : "\n    ");
            json_source(&run->sources[i], b);
        }
        sim_buf_puts(b, "\n  ],\n");
    }
    sim_buf_puts(b, "  \"strategy\": {\"name\": ");
    sim_buf_json_str(b, run->ops->name);
    sim_buf_puts(b, ", \"options\": {");
    if (run->n_procs > 0) {
        json_sink j = {b, -1, true};
        strategy_stat_sink sink = {js_u64, js_real, js_text, &j};
        run->ops->options(run->procs[0].s, &sink);
    }
    sim_buf_puts(b, "}},\n  \"device\": {\"name\": ");
    sim_buf_json_str(b, d.name);
    sim_buf_printf(b, ", \"capacity_bytes\": %llu, \"context_bytes\": %llu, \"limit_bytes\": %llu},\n",
                   (unsigned long long)d.capacity_bytes, (unsigned long long)d.context_bytes,
                   (unsigned long long)report_limit_bytes(run));
    sim_buf_puts(b, "  \"result\": ");
    report_json_result(run, UINT32_MAX, 2, b);
    if (w != NULL && w->present) {
        sim_buf_puts(b, ",\n  \"what_if\": {\"setting\": ");
        sim_buf_json_str(b, w->setting);
        sim_buf_printf(b, ", \"completed\": %s, \"ooms\": %llu, \"peak_reserved_bytes\": %llu, \"first_oom\": ",
                       w->completed ? "true" : "false", (unsigned long long)w->ooms,
                       (unsigned long long)w->peak_reserved_bytes);
        json_oom(run, &w->first_oom, 2, b);
        sim_buf_puts(b, "}");
    }
    if (run->n_procs > 1) {
        sim_buf_puts(b, ",\n  \"processes\": [");
        for (uint32_t i = 0; i < run->n_procs; i++) {
            sim_buf_puts(b, i ? ",\n    {\"process\": " : "\n    {\"process\": ");
            sim_buf_json_str(b, run->procs[i].name);
            sim_buf_puts(b, ", \"trace\": ");
            sim_buf_json_str(b, run->sources[run->procs[i].source].path);
            sim_buf_puts(b, ", \"result\": ");
            report_json_result(run, i, 4, b);
            sim_buf_puts(b, "}");
        }
        sim_buf_puts(b, "\n  ]");
    }
    sim_buf_puts(b, "\n}\n");
}

/* ---------------------------------------------------------------- text */

static void size_line(sim_buf *b, const char *label, uint64_t v)
{
    char s[32];
    sim_buf_printf(b, "  %-34s %12s  (%llu B)\n", label, units_format_size(v, s, sizeof s), (unsigned long long)v);
}

void report_oom_sentence(const sim_run *run, const sim_oom_record *o, sim_buf *b)
{
    char req[32], alloc[32], fr[32], lg[32], rs[32], df[32];
    units_format_size(o->size, req, sizeof req);
    units_format_size(o->info.size_bytes, alloc, sizeof alloc);
    units_format_size(o->info.free_bytes, fr, sizeof fr);
    units_format_size(o->info.largest_free_bytes, lg, sizeof lg);
    units_format_size(o->info.reserved_bytes, rs, sizeof rs);
    units_format_size(o->info.device_free_bytes, df, sizeof df);
    sim_buf_printf(b, "out of memory at event %llu (t=%llu ns, id %llu) of %s: ", (unsigned long long)o->event,
                   (unsigned long long)o->t, (unsigned long long)o->id, run->sources[o->source].path);
    sim_buf_printf(b, "%s requested (%s for the allocator), %s reserved of which %s free, largest free block %s; "
                      "%s free on the device. ",
                   req, alloc, rs, fr, lg, df);
    if (o->info.cause == SIM_OOM_FRAGMENTATION)
        sim_buf_printf(b, "Cause: fragmentation - enough memory is free in total, but no free piece of %s "
                          "fits the request.",
                       alloc);
    else
        sim_buf_puts(b, "Cause: capacity - even with every free byte in one piece the request would not fit.");
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
    if (m->first_oom.info.detail[0])
        sim_buf_printf(b, "  %s says: %s\n", run->ops->name, m->first_oom.info.detail);
}

void report_text(const sim_run *run, sim_buf *b)
{
    report_text_whatif(run, NULL, b);
}

void report_text_whatif(const sim_run *run, const whatif *w, sim_buf *b)
{
    device_info d = device_get_info(run->dev);
    char cap[32], ctx[32], lim[32];
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
                   units_format_size(report_limit_bytes(run), lim, sizeof lim));
    sim_buf_puts(b, "\n");
    text_metrics(run, &run->total, b);
    if (run->n_procs > 1) {
        for (uint32_t i = 0; i < run->n_procs; i++) {
            sim_buf_printf(b, "\nprocess %s\n", run->procs[i].name);
            text_metrics(run, &run->procs[i].m, b);
        }
    }
    if (w != NULL && w->present) {
        char pk[32];
        sim_buf_printf(b, "\n  what if %s: ", w->setting);
        if (w->completed)
            sim_buf_printf(b, "the trace completes (peak reserved %s): that setting avoids the OOM.\n",
                           units_format_size(w->peak_reserved_bytes, pk, sizeof pk));
        else if (w->first_oom.happened)
            sim_buf_printf(b, "still out of memory, at event %llu (%s).\n", (unsigned long long)w->first_oom.event,
                           sim_oom_cause_name(w->first_oom.info.cause));
        else
            sim_buf_puts(b, "the replay did not complete.\n");
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
