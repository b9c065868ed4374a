#include "result.h"

#include "graphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers/limit.h"
#include "sim/gpu_context.h"
#include "sim/jsonw.h"
#include "sim/units.h"

/* ---------------------------------------------------------------- stats sinks */

/* Strategy stats and options into the writer, one member each. */
static void js_u64(void *ctx, const char *key, uint64_t v)
{
    jsonw_key_u64(ctx, key, v);
}

static void js_real(void *ctx, const char *key, double v)
{
    jsonw_key(ctx, key);
    jsonw_ratio(ctx, v);
}

static void js_text(void *ctx, const char *key, const char *v)
{
    jsonw_key_str(ctx, key, v);
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

/* Members keys[i]: values[i] of the open object. */
static void json_u64s(jsonw *w, const char *const *keys, const uint64_t *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jsonw_key_u64(w, keys[i], values[i]);
}

static void json_oom(const sim_run *run, const sim_oom_record *o, jsonw *w)
{
    if (!o->happened) {
        jsonw_null(w);
        return;
    }
    const sim_run_source *src = &run->sources[o->source];
    jsonw_object(w);
    static const char *const U64_KEYS[] = {"event", "t", "id", "size", "allocator_size_bytes", "free_bytes",
                                           "largest_free_bytes", "reserved_bytes", "device_free_bytes"};
    const uint64_t u64s[] = {o->event, o->t, o->id, o->size, o->info.size_bytes, o->info.free_bytes,
                             o->info.largest_free_bytes, o->info.reserved_bytes, o->info.device_free_bytes};
    json_u64s(w, U64_KEYS, u64s, sizeof U64_KEYS / sizeof U64_KEYS[0]);
    jsonw_key_str(w, "cause", sim_oom_cause_name(o->cause));
    static const char *const CAUSE_KEYS[] = {"live_requested_bytes", "peak_demand_bytes", "usable_bytes",
                                             "other_processes_bytes", "free_pieces"};
    const uint64_t causes[] = {o->live_requested_bytes, o->peak_demand_bytes, o->usable_bytes,
                               o->other_processes_bytes, o->free_pieces};
    json_u64s(w, CAUSE_KEYS, causes, sizeof CAUSE_KEYS / sizeof CAUSE_KEYS[0]);
    jsonw_key(w, "tag");
    if (o->tag[0])
        jsonw_str(w, o->tag);
    else
        jsonw_null(w);
    jsonw_key(w, "largest_live");
    jsonw_array_inline(w);
    for (uint32_t i = 0; i < o->n_largest_live; i++) {
        jsonw_object_inline(w);
        jsonw_key_u64(w, "id", o->largest_live[i].id);
        jsonw_key_u64(w, "size", o->largest_live[i].size);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key_str(w, "trace", src->path);
    if (o->line)
        jsonw_key_u64(w, "line", o->line);
    jsonw_key_str(w, "process", run->procs[o->process].name);
    sim_buf oomtext;
    sim_buf_init(&oomtext);
    report_oom_sentence(run, o, &oomtext);
    jsonw_key_str(w, "message", oomtext.data ? oomtext.data : "");
    sim_buf_release(&oomtext);
    if (o->info.detail[0])
        jsonw_key_str(w, "allocator_message", o->info.detail);
    jsonw_end(w);
}

uint64_t report_pool_events_ignored(const sim_run *run)
{
    uint64_t n = 0;
    if (run->ops->pools == NULL)
        for (uint32_t i = 0; i < run->n_sources; i++)
            n += run->sources[i].pool_events;
    return n;
}

const char *report_no_pools_reason(const strategy_ops *ops)
{
    return ops->no_pools_note != NULL
               ? ops->no_pools_note
               : "private pools are not modelled; the pools' allocations were replayed in the default pool";
}

const char *report_no_pools_text(const sim_run *run, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s: %s", run->ops->name, report_no_pools_reason(run->ops));
    return buf;
}

void report_text_pools_ignored_by(const strategy_ops *const *ops, uint32_t n, uint64_t pool_events, sim_buf *b)
{
    if (pool_events == 0)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const char *why = report_no_pools_reason(ops[i]);
        bool seen = ops[i]->pools != NULL;
        for (uint32_t j = 0; j < i && !seen; j++) /* said already, with an earlier one */
            seen = ops[j]->pools == NULL && strcmp(report_no_pools_reason(ops[j]), why) == 0;
        if (seen)
            continue;
        sim_buf_printf(b, "  pools   %s", ops[i]->name);
        for (uint32_t k = i + 1; k < n; k++) {
            bool named = false;
            for (uint32_t j = i; j < k && !named; j++)
                named = ops[j] == ops[k];
            if (!named && ops[k]->pools == NULL && strcmp(report_no_pools_reason(ops[k]), why) == 0)
                sim_buf_printf(b, ", %s", ops[k]->name);
        }
        sim_buf_printf(b, ": %s (%llu pool event%s)\n", why, (unsigned long long)pool_events,
                       pool_events == 1 ? "" : "s");
    }
}

/* The run's pool events its strategy did not model, in a result object (device-wide only). */
static void json_pools_ignored(const sim_run *run, jsonw *w)
{
    uint64_t n = report_pool_events_ignored(run);
    if (n == 0)
        return;
    char note[512];
    jsonw_key_u64(w, "pool_events_ignored", n);
    jsonw_key_str(w, "pool_events_note", report_no_pools_text(run, note, sizeof note));
}

static void json_metrics(const sim_run *run, const sim_metrics *m, const strategy *stats_of, bool device_wide, jsonw *w)
{
    jsonw_object(w);
    jsonw_key_bool(w, "completed", m->completed);
    static const char *const PEAK_KEYS[] = {"peak_requested_bytes", "peak_allocated_bytes", "peak_reserved_bytes",
                                            "peak_device_bytes", "final_reserved_bytes"};
    const uint64_t peaks[] = {m->peak_requested_bytes, m->peak_allocated_bytes, m->peak_reserved_bytes,
                              m->peak_device_bytes, m->final_reserved_bytes};
    json_u64s(w, PEAK_KEYS, peaks, sizeof PEAK_KEYS / sizeof PEAK_KEYS[0]);
    jsonw_key(w, "fragmentation");
    jsonw_object_inline(w);
    jsonw_key(w, "at_peak");
    jsonw_ratio(w, m->fragmentation_at_peak);
    jsonw_key(w, "max");
    jsonw_ratio(w, m->fragmentation_max);
    jsonw_end(w);
    static const char *const COUNT_KEYS[] = {"reserved_unallocated_at_peak_bytes", "num_device_allocs",
                                             "num_device_frees", "ooms"};
    const uint64_t counts[] = {m->reserved_unallocated_at_peak_bytes, m->num_device_allocs, m->num_device_frees,
                               m->ooms};
    json_u64s(w, COUNT_KEYS, counts, sizeof COUNT_KEYS / sizeof COUNT_KEYS[0]);
    jsonw_key(w, "first_oom");
    json_oom(run, &m->first_oom, w);
    if (device_wide)
        json_pools_ignored(run, w);
    if (stats_of) {
        jsonw_key(w, "stats");
        jsonw_object(w);
        strategy_stat_sink sink = {js_u64, js_real, js_text, w};
        run->ops->stats(stats_of, &sink);
        jsonw_end(w);
    }
    jsonw_end(w);
}

void report_jsonw_result(const sim_run *run, uint32_t p, jsonw *w)
{
    if (p == UINT32_MAX)
        json_metrics(run, &run->total, run->n_procs == 1 ? run->procs[0].s : NULL, true, w);
    else
        json_metrics(run, &run->procs[p].m, run->procs[p].s, false, w);
}

void report_json_result(const sim_run *run, uint32_t p, int indent, sim_buf *out)
{
    jsonw w;
    jsonw_init_buf(&w, out, indent < 0 ? JSONW_COMPACT : JSONW_PRETTY, indent < 0 ? 0 : (uint32_t)indent);
    report_jsonw_result(run, p, &w);
}

void report_jsonw_options(const sim_run *run, jsonw *w)
{
    jsonw_object_inline(w);
    if (run->n_procs > 0) {
        strategy_stat_sink sink = {js_u64, js_real, js_text, w};
        run->ops->options(run->procs[0].s, &sink);
    }
    jsonw_end(w);
}

void report_json_options(const sim_run *run, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    report_jsonw_options(run, &w);
}

void report_jsonw_source(const sim_run_source *s, jsonw *w)
{
    jsonw_object_inline(w);
    jsonw_key_str(w, "path", s->path);
    jsonw_key_str(w, "name", s->name);
    jsonw_key_u64(w, "events", s->events);
    jsonw_key_u64(w, "allocs", s->allocs);
    jsonw_key_u64(w, "frees", s->frees);
    jsonw_end(w);
}

void report_json_source(const sim_run_source *s, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    report_jsonw_source(s, &w);
}

/* The §5 object's members, with the what-if answer when wi holds one; only those
 * before "device" when head_only. */
static void json_members(const sim_run *run, const whatif *wi, bool head_only, jsonw *w)
{
    device_info d = device_get_info(run->dev);
    jsonw_key_str(w, "gpusim", GPUSIM_VERSION);
    jsonw_key(w, "trace");
    if (run->n_sources > 0)
        report_jsonw_source(&run->sources[0], w);
    else
        jsonw_null(w);
    if (run->n_sources > 1) {
        jsonw_key(w, "traces");
        jsonw_array(w);
        for (uint32_t i = 0; i < run->n_sources; i++)
            report_jsonw_source(&run->sources[i], w);
        jsonw_end(w);
    }
    jsonw_key(w, "strategy");
    jsonw_object_inline(w);
    jsonw_key_str(w, "name", run->ops->name);
    jsonw_key(w, "options");
    report_jsonw_options(run, w);
    jsonw_end(w);
    if (head_only)
        return;
    jsonw_key(w, "device");
    jsonw_object_inline(w);
    jsonw_key_str(w, "name", d.name);
    jsonw_key_u64(w, "capacity_bytes", d.capacity_bytes);
    jsonw_key_u64(w, "context_bytes", d.context_bytes);
    if (d.nccl_bytes) /* of context_bytes */
        jsonw_key_u64(w, "nccl_bytes", d.nccl_bytes);
    jsonw_key_u64(w, "limit_bytes", report_limit_bytes(run));
    jsonw_end(w);
    jsonw_key(w, "result");
    report_jsonw_result(run, UINT32_MAX, w);
    if (wi != NULL && wi->present) {
        jsonw_key(w, "what_if");
        jsonw_object_inline(w);
        jsonw_key_str(w, "setting", wi->setting);
        jsonw_key_bool(w, "completed", wi->completed);
        jsonw_key_u64(w, "ooms", wi->ooms);
        jsonw_key_u64(w, "peak_reserved_bytes", wi->peak_reserved_bytes);
        jsonw_key(w, "first_oom");
        json_oom(run, &wi->first_oom, w);
        jsonw_end(w);
    }
    if (run->n_procs > 1) {
        jsonw_key(w, "processes");
        jsonw_array(w);
        for (uint32_t i = 0; i < run->n_procs; i++) {
            jsonw_object_inline(w);
            jsonw_key_str(w, "process", run->procs[i].name);
            jsonw_key_str(w, "trace", run->sources[run->procs[i].source].path);
            jsonw_key(w, "result");
            report_jsonw_result(run, i, w);
            jsonw_end(w);
        }
        jsonw_end(w);
    }
}

void report_jsonw_members(const sim_run *run, bool head_only, jsonw *w)
{
    json_members(run, NULL, head_only, w);
}

/* The §5 object. */
static void json_doc(const sim_run *run, const whatif *wi, const graphs_answer *g, jsonw *w)
{
    jsonw_object(w);
    json_members(run, wi, false, w);
    if (g != NULL && g->present) {
        jsonw_key(w, "cuda_graphs");
        report_jsonw_graphs(g, w);
    }
    jsonw_end(w);
}

void report_json(const sim_run *run, sim_buf *b)
{
    report_json_whatif(run, NULL, b);
}

void report_json_whatif(const sim_run *run, const whatif *wi, sim_buf *b)
{
    report_json_answers(run, wi, NULL, b);
}

void report_json_answers(const sim_run *run, const whatif *wi, const graphs_answer *g, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    json_doc(run, wi, g, &w);
    sim_buf_puts(b, "\n");
}

void report_text_answers(const sim_run *run, const whatif *wi, const graphs_answer *g, sim_buf *b)
{
    report_text_whatif(run, wi, b);
    report_text_graphs(g, NULL, b);
}

void report_json_line(const sim_run *run, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_COMPACT, 0);
    json_doc(run, NULL, NULL, &w);
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

void report_text_pools_ignored(const sim_run *run, sim_buf *b)
{
    uint64_t n = report_pool_events_ignored(run);
    if (n == 0)
        return;
    char note[512];
    sim_buf_printf(b, "  pools   %s (%llu pool event%s)\n", report_no_pools_text(run, note, sizeof note),
                   (unsigned long long)n, n == 1 ? "" : "s");
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

void report_context_lines(const device_info *d, sim_buf *b)
{
    char s[32];
    if (d->context_default) {
        char why[256];
        sim_buf_printf(b, "  context %s: %s (--context sets it)\n",
                       units_format_size(d->context_bytes - d->nccl_bytes, s, sizeof s),
                       gpu_context_describe(d->context_default, d->cc_major, why, sizeof why));
    }
    if (d->nccl_bytes)
        sim_buf_printf(b, "  nccl    %s: NCCL buffers from %s, added to the context (--nccl=0 leaves them out)\n",
                       units_format_size(d->nccl_bytes, s, sizeof s),
                       d->nccl_given ? "--nccl" : "the trace header (meta.nccl_bytes)");
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
    report_text_pools_ignored(run, b);
    sim_buf_printf(b, "  device  %s: capacity %s, context %s per process, allocator limit %s\n", d.name,
                   units_format_size(d.capacity_bytes, cap, sizeof cap),
                   units_format_size(d.context_bytes, ctx, sizeof ctx),
                   report_limit_text(run, lim, sizeof lim));
    report_context_lines(&d, b);
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
