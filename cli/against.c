/* gpusim replay TRACE --against-recorded: predicted vs what the real allocator recorded. */
#include "against.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/result.h"
#include "sim/buf.h"
#include "sim/engine.h"
#include "sim/units.h"
#include "strategies/registry.h"

sim_status cli_input_options(const cli_args *a, input_options *opt, sim_error *err)
{
    opt->device = -1;
    const char *v = cli_get(a, "device");
    if (v == NULL)
        return SIM_OK;
    uint64_t d = 0;
    if (units_parse_u64(v, &d, err) != SIM_OK || d > 1u << 20)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--device: expected a device ordinal (0, 1, ...), not '%s'",
                             v);
    opt->device = (int64_t)d;
    return SIM_OK;
}

void cli_input_warnings(const trace_input *in)
{
    const trace_header *h = input_header(in);
    for (uint32_t i = 0; i < input_warning_count(in); i++)
        fprintf(stderr, "gpusim: warning: %s: %s\n", h->name[0] ? h->name : "trace", input_warning(in, i));
}

const char *against_default_strategy(input_format f)
{
    switch (f) {
    case INPUT_TORCH_SNAPSHOT:
    case INPUT_KINETO: return "torch";
    case INPUT_TF_PROFILE: return "greedy";
    default: return NULL;
    }
}

/* One compared quantity (allocated or reserved). */
typedef struct column {
    bool on;
    const char *what;
    const char *source;
    uint64_t offset;           /* added to the prediction (bytes the recording has and the trace does not) */
    uint64_t points;           /* events compared */
    uint64_t max_abs;
    int64_t max_diff;          /* signed difference (predicted − recorded) where |diff| is largest */
    uint64_t max_event;        /* 1-based event of the converted stream */
    uint64_t max_pred, max_rec;
    bool has_pred_peak, has_rec_peak;
    uint64_t pred_peak, rec_peak;
    uint64_t final_pred, final_rec;
    uint64_t live_before;      /* allocated: carried as an allocation at the start */
    /* reserved: the recording began with a cache it does not describe */
    bool start_unknown;
    uint64_t rec_start, rec_min, rec_max;
} column;

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y);
}

/* The recorded curve alone (its start, least and most), where it cannot be compared. */
static void recorded_range(column *c, uint64_t n, const uint8_t *has, const uint64_t *rec)
{
    bool first = true;
    for (uint64_t k = 0; k < n; k++) {
        if (!has[k])
            continue;
        if (first || rec[k] < c->rec_min)
            c->rec_min = rec[k];
        if (first || rec[k] > c->rec_max)
            c->rec_max = rec[k];
        first = false;
        c->final_rec = rec[k];
    }
}

static void compare(column *c, const timeline *tl, const uint64_t *row_of, uint64_t n, const uint8_t *has,
                    const uint64_t *rec, bool allocated)
{
    if (c->start_unknown) {
        recorded_range(c, n, has, rec);
        return;
    }
    for (uint64_t k = 0; k < n; k++) {
        if (!has[k] || row_of[k] >= tl->n)
            continue;
        const timeline_row *row = &tl->rows[row_of[k]];
        uint64_t pred = (allocated ? row->allocated : row->reserved) + c->offset;
        int64_t diff = (int64_t)(pred - rec[k]);
        uint64_t mag = diff < 0 ? (uint64_t)(-(diff + 1)) + 1 : (uint64_t)diff;
        if (c->points == 0 || mag > c->max_abs) {
            c->max_abs = mag;
            c->max_diff = diff;
            c->max_event = k + 1;
            c->max_pred = pred;
            c->max_rec = rec[k];
        }
        c->points++;
        c->final_pred = pred;
        c->final_rec = rec[k];
    }
}

static void size_text(sim_buf *b, uint64_t v)
{
    char h[32];
    sim_buf_printf(b, "%" PRIu64 " B (%s)", v, units_format_size(v, h, sizeof h));
}

static void diff_text(sim_buf *b, uint64_t pred, uint64_t rec)
{
    if (pred >= rec)
        sim_buf_printf(b, "+%" PRIu64 " B", pred - rec);
    else
        sim_buf_printf(b, "-%" PRIu64 " B", rec - pred);
}

static void column_text(sim_buf *b, const column *c)
{
    if (!c->on)
        return;
    sim_buf_printf(b, "\n%s (recorded: %s", c->what, c->source ? c->source : "?");
    if (c->offset)
        sim_buf_printf(b, "; predicted + %" PRIu64 " B the recording held before its first event", c->offset);
    if (c->live_before)
        sim_buf_printf(b, "; the %" PRIu64 " B live before its first event are an allocation at the start",
                       c->live_before);
    sim_buf_puts(b, ")\n");
    if (c->start_unknown) {
        char h[32];
        sim_buf_printf(b, "  not compared: the recording began with %" PRIu64 " B (%s) reserved in segments it does "
                          "not describe, and the replay starts from an empty cache\n",
                       c->rec_start, units_format_size(c->rec_start, h, sizeof h));
        sim_buf_puts(b, "  recorded   changes by ");
        diff_text(b, c->final_rec, c->rec_start);
        sim_buf_printf(b, " over the window (least %" PRIu64 " B, most %" PRIu64 " B); predicted peak ", c->rec_min,
                       c->rec_max);
        size_text(b, c->pred_peak);
        sim_buf_puts(b, " from an empty cache\n");
        return;
    }
    if (c->has_pred_peak && c->has_rec_peak) {
        sim_buf_puts(b, "  peak       predicted ");
        size_text(b, c->pred_peak);
        sim_buf_puts(b, "   recorded ");
        size_text(b, c->rec_peak);
        sim_buf_puts(b, "   difference ");
        diff_text(b, c->pred_peak, c->rec_peak);
        sim_buf_puts(b, "\n");
    }
    if (c->points) {
        sim_buf_printf(b, "  over time  %" PRIu64 " events compared; max |difference| %" PRIu64 " B at event %" PRIu64
                          " (predicted %" PRIu64 ", recorded %" PRIu64 ")\n",
                       c->points, c->max_abs, c->max_event, c->max_pred, c->max_rec);
        sim_buf_puts(b, "  final      predicted ");
        size_text(b, c->final_pred);
        sim_buf_puts(b, "   recorded ");
        size_text(b, c->final_rec);
        sim_buf_puts(b, "   difference ");
        diff_text(b, c->final_pred, c->final_rec);
        sim_buf_puts(b, "\n");
    }
}

static void column_json(sim_buf *b, const char *key, const column *c, bool last)
{
    sim_buf_printf(b, "    \"%s\": ", key);
    if (!c->on) {
        sim_buf_printf(b, "null%s\n", last ? "" : ",");
        return;
    }
    sim_buf_puts(b, "{\"source\": ");
    sim_buf_json_str(b, c->source ? c->source : "");
    if (c->start_unknown) {
        sim_buf_printf(b, ", \"compared\": false, \"reason\": \"the recording began with a cache it does not "
                          "describe\", \"recorded_start_bytes\": %" PRIu64 ", \"recorded_min_bytes\": %" PRIu64
                          ", \"recorded_max_bytes\": %" PRIu64 ", \"recorded_final_bytes\": %" PRIu64
                          ", \"predicted_peak_bytes\": %" PRIu64 "}%s\n",
                       c->rec_start, c->rec_min, c->rec_max, c->final_rec, c->pred_peak, last ? "" : ",");
        return;
    }
    sim_buf_printf(b, ", \"offset_bytes\": %" PRIu64 ", \"events_compared\": %" PRIu64, c->offset, c->points);
    if (c->live_before)
        sim_buf_printf(b, ", \"live_before_bytes\": %" PRIu64, c->live_before);
    if (c->has_pred_peak && c->has_rec_peak)
        sim_buf_printf(b, ", \"predicted_peak_bytes\": %" PRIu64 ", \"recorded_peak_bytes\": %" PRIu64
                          ", \"peak_difference_bytes\": %" PRId64,
                       c->pred_peak, c->rec_peak, (int64_t)(c->pred_peak - c->rec_peak));
    if (c->points)
        sim_buf_printf(b, ", \"max_abs_difference_bytes\": %" PRIu64 ", \"max_difference_event\": %" PRIu64
                          ", \"final_predicted_bytes\": %" PRIu64 ", \"final_recorded_bytes\": %" PRIu64,
                       c->max_abs, c->max_event, c->final_pred, c->final_rec);
    sim_buf_printf(b, "}%s\n", last ? "" : ",");
}

/* Where the replay put each allocation: the strategy's segment number and the
 * offset in it, by event index (UINT32_MAX: not placed, or not locatable). */
typedef struct placed {
    const strategy_ops *ops;
    uint32_t *seg;
    uint64_t *off;
    uint64_t n;
} placed;

/* The engine's observer: each alloc that took effect, located. */
static void on_tick(void *ctx, const engine_tick *t)
{
    placed *p = ctx;
    if (t->ev == NULL || t->ev->op != SIM_OP_ALLOC || t->handle == STRATEGY_HANDLE_NONE)
        return;
    strategy_block b;
    uint64_t k = t->ev->index - 1;
    if (k < p->n && p->ops->locate(t->run->procs[t->process].s, t->handle, &b)) {
        p->seg[k] = b.region;
        p->off[k] = b.addr - b.region_addr;
    }
}

/* The placement comparison: allocations whose recorded placement is known. */
typedef struct placement {
    bool on;
    uint64_t compared, matched;
    bool has_mismatch;
    uint64_t first;            /* 0-based event of the first mismatch */
} placement;

static void placement_compare(placement *pl, const placed *p, const input_recorded *rec, uint64_t first)
{
    for (uint64_t k = first; k < p->n; k++) {
        if (rec->placement_segment[k] == UINT32_MAX)
            continue;
        pl->compared++;
        if (p->seg[k] == rec->placement_segment[k] && p->off[k] == rec->placement_offset[k]) {
            pl->matched++;
        } else if (!pl->has_mismatch) {
            pl->has_mismatch = true;
            pl->first = k;
        }
    }
}

static void placement_where(sim_buf *b, uint32_t seg, uint64_t off)
{
    if (seg == UINT32_MAX)
        sim_buf_puts(b, "not placed");
    else
        sim_buf_printf(b, "segment %u + %" PRIu64, seg, off);
}

#define PLACEMENT_CONTEXT 4u /* events shown before the first mismatch */

static void placement_text(sim_buf *b, const placement *pl, const placed *p, const input_recorded *rec,
                           const trace_input *in, uint64_t first)
{
    if (!pl->on)
        return;
    sim_buf_puts(b, "\nplacement (recorded: each alloc's addr, as segment and offset; segments numbered in address "
                    "order at the start, then in order of creation)\n");
    sim_buf_printf(b, "  %" PRIu64 "/%" PRIu64 " allocations placed at the recorded offset\n", pl->matched,
                   pl->compared);
    if (!pl->has_mismatch)
        return;
    uint64_t k = pl->first;
    const sim_event *ev = input_event_at(in, k);
    sim_buf_printf(b, "  first mismatch at event %" PRIu64 ": alloc of %" PRIu64 " B on stream %u, recorded ", k + 1,
                   ev->size, ev->stream);
    placement_where(b, rec->placement_segment[k], rec->placement_offset[k]);
    sim_buf_puts(b, ", predicted ");
    placement_where(b, p->seg[k], p->off[k]);
    sim_buf_puts(b, "\n");
    uint64_t from = k >= first + PLACEMENT_CONTEXT ? k - PLACEMENT_CONTEXT : first;
    for (uint64_t j = from; j < k; j++) {
        const sim_event *e = input_event_at(in, j);
        sim_buf_printf(b, "    event %" PRIu64 ": %s", j + 1, sim_op_name(e->op));
        if (e->op == SIM_OP_ALLOC) {
            sim_buf_printf(b, " %" PRIu64 " B on stream %u, recorded ", e->size, e->stream);
            placement_where(b, rec->placement_segment[j], rec->placement_offset[j]);
            sim_buf_puts(b, ", predicted ");
            placement_where(b, p->seg[j], p->off[j]);
        } else if (e->op == SIM_OP_FREE) {
            sim_buf_printf(b, " of id %" PRIu64 "%s", e->id, e->ready_t > e->t ? " (deferred)" : "");
        } else if (e->op == SIM_OP_MARK) {
            sim_buf_printf(b, " \"%s\"", e->name);
        }
        sim_buf_puts(b, "\n");
    }
}

static void placement_json(sim_buf *b, const placement *pl, const placed *p, const input_recorded *rec,
                           const trace_input *in)
{
    sim_buf_puts(b, "    \"placement\": ");
    if (!pl->on) {
        sim_buf_puts(b, "null,\n");
        return;
    }
    sim_buf_printf(b, "{\"compared\": %" PRIu64 ", \"matched\": %" PRIu64 ", \"first_mismatch\": ", pl->compared,
                   pl->matched);
    if (!pl->has_mismatch) {
        sim_buf_puts(b, "null},\n");
        return;
    }
    uint64_t k = pl->first;
    sim_buf_printf(b, "{\"event\": %" PRIu64 ", \"size\": %" PRIu64 ", \"recorded_segment\": %u, "
                      "\"recorded_offset\": %" PRIu64 ", \"predicted_segment\": ", k + 1, input_event_at(in, k)->size,
                   rec->placement_segment[k], rec->placement_offset[k]);
    if (p->seg[k] == UINT32_MAX)
        sim_buf_puts(b, "null, \"predicted_offset\": null}},\n");
    else
        sim_buf_printf(b, "%u, \"predicted_offset\": %" PRIu64 "}},\n", p->seg[k], p->off[k]);
}

int against_run(const cli_args *a)
{
    if (a->n_positional != 1)
        return cli_usage_error("replay", "--against-recorded compares one recording at a time");
    sim_error err;
    sim_error_clear(&err);
    input_options iopt;
    if (cli_input_options(a, &iopt, &err) != SIM_OK)
        return cli_usage_error("replay", "%s", err.msg);
    bool json = false;
    int frc = cli_format_json(a, &json);
    if (frc)
        return frc;
    bool skip_oom = false;
    int orc = cli_on_oom_skip(a, &skip_oom);
    if (orc)
        return orc;
    trace_input *in = NULL;
    if (input_open(a->positional[0], cli_get(a, "from"), &iopt, &in, &err) != SIM_OK)
        return err.status == SIM_EUSAGE ? cli_usage_error("replay", "%s", err.msg) : cli_fail(&err);
    int rc = 2;
    sim_run *run = NULL;
    uint64_t *deferred = NULL, *row_of = NULL;
    placed pd = {0};
    sim_buf out;
    sim_buf_init(&out);
    cli_input_warnings(in);
    const input_recorded *rec = input_get_recorded(in);
    if (rec == NULL || (!rec->has_allocated && !rec->has_reserved && !rec->has_peak_allocated &&
                        !rec->has_peak_reserved)) {
        rc = cli_usage_error("replay", "--against-recorded: %s holds no numbers from the real allocator (it needs a "
                             "PyTorch snapshot with segments, a profiler trace with \"Total Allocated\", or a "
                             "TensorFlow memory profile)", a->positional[0]);
        goto done;
    }
    const char *sname = cli_get(a, "strategy");
    if (sname == NULL)
        sname = against_default_strategy(input_get_format(in));
    const strategy_ops *ops = sname ? registry_find(sname) : NULL;
    if (ops == NULL) {
        rc = cli_usage_error("replay",
                             "--against-recorded: this %s recording is replayed under the '%s' strategy, which this "
                             "build does not have; pick another with --strategy=NAME (gpusim strategies lists them; "
                             "'ideal' reproduces an allocated curve when every size is already rounded)",
                             input_format_name(input_get_format(in)), sname ? sname : "?");
        goto done;
    }
    const trace_header *h = input_header(in);
    cli_device dev;
    if (cli_resolve_device(a, h->device_name, h->device_capacity, &dev, &err) != SIM_OK) {
        rc = cli_usage_error("replay", "%s", err.msg);
        goto done;
    }
    sim_kv kv[CLI_MAX_KV + 1];
    uint32_t n_kv = cli_strategy_kv(a, kv, CLI_MAX_KV);
    const char *conf = input_alloc_conf(in);
    if (conf && !cli_has(a, "alloc-conf") && strcmp(ops->name, "torch") == 0)
        kv[n_kv++] = (sim_kv){"alloc_conf", conf};
    /* which timeline row each event lands on: the engine interleaves the deferred
     * frees (those with ready_t > t) before any event at or after their ready_t */
    uint64_t n = input_event_count(in), n_def = 0;
    /* a strategy that can start from the recorded state does: the allocations the
     * state holds are then not events */
    bool seeded = ops->seed != NULL && input_seed(in) != NULL && !cli_has(a, "from-empty");
    uint64_t first = seeded ? input_seed_events(in) : 0;
    deferred = malloc((n ? n : 1) * sizeof *deferred);
    row_of = malloc((n ? n : 1) * sizeof *row_of);
    if (deferred == NULL || row_of == NULL) {
        fprintf(stderr, "gpusim: out of memory\n");
        goto done;
    }
    for (uint64_t k = first; k < n; k++) {
        const sim_event *ev = input_event_at(in, k);
        if (ev->op == SIM_OP_FREE && ev->ready_t > ev->t)
            deferred[n_def++] = ev->ready_t;
    }
    qsort(deferred, n_def, sizeof *deferred, u64_cmp);
    uint64_t row = 0, dp = 0;
    for (uint64_t k = 0; k < first; k++)
        row_of[k] = UINT64_MAX;
    for (uint64_t k = first; k < n; k++) {
        const sim_event *ev = input_event_at(in, k);
        while (dp < n_def && deferred[dp] <= ev->t) {
            dp++;
            row++;
        }
        row_of[k] = row++;
    }
    engine_config cfg = {
        .device = dev.info,
        .ops = ops,
        .opts = kv,
        .n_opts = n_kv,
        .on_oom_skip = skip_oom,
        .paranoid = cli_has(a, "paranoid"),
        .timeline_rows = n + n_def + 1,
    };
    sim_event_source src = seeded ? input_source_seeded(in) : input_source(in);
    /* placements compare when the strategy can say where it put a block, and its
     * segments are numbered as the recording's: from the recorded start state, or
     * from an empty one */
    placement pl = {.on = rec->placement_segment != NULL && ops->locate != NULL && (seeded || input_seed(in) == NULL)};
    if (pl.on) {
        pd = (placed){.ops = ops, .seg = malloc((n ? n : 1) * sizeof *pd.seg),
                      .off = calloc(n ? n : 1, sizeof *pd.off), .n = n};
        if (pd.seg == NULL || pd.off == NULL) {
            fprintf(stderr, "gpusim: out of memory\n");
            goto done;
        }
        for (uint64_t k = 0; k < n; k++)
            pd.seg[k] = UINT32_MAX;
        cfg.observe = on_tick;
        cfg.observe_ctx = &pd;
    }
    sim_status st = engine_run(&cfg, &src, 1, &run, &err);
    if (st == SIM_EUSAGE) {
        rc = cli_usage_error("replay", "%s", err.msg);
        goto done;
    }
    if (st != SIM_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    column ca = {.on = rec->has_allocated || rec->has_peak_allocated, .what = "allocated",
                 .source = rec->allocated_source ? rec->allocated_source : "the profile's peakBytesInUse",
                 .offset = rec->allocated_offset_known ? rec->allocated_offset : 0};
    ca.live_before = rec->live_before_bytes;
    column cr = {.on = rec->has_reserved || rec->has_peak_reserved, .what = "reserved",
                 .source = rec->reserved_source, .start_unknown = rec->reserved_start_unknown && rec->has_reserved,
                 .rec_start = rec->reserved_start};
    ca.has_pred_peak = cr.has_pred_peak = true;
    ca.pred_peak = run->total.peak_allocated_bytes + ca.offset;
    cr.pred_peak = run->total.peak_reserved_bytes;
    ca.has_rec_peak = rec->has_peak_allocated;
    ca.rec_peak = rec->peak_allocated;
    cr.has_rec_peak = rec->has_peak_reserved;
    cr.rec_peak = rec->peak_reserved;
    if (rec->has_allocated)
        compare(&ca, &run->tl, row_of, n, rec->has_point, rec->allocated, true);
    if (rec->has_reserved)
        compare(&cr, &run->tl, row_of, n, rec->has_point, rec->reserved, false);
    if (pl.on)
        placement_compare(&pl, &pd, rec, first);
    const char *conf_used = NULL;
    for (uint32_t i = 0; i < n_kv; i++)
        if (strcmp(kv[i].key, "alloc_conf") == 0)
            conf_used = kv[i].value;
    if (json) {
        sim_buf_puts(&out, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"against_recorded\": {\n    \"trace\": ");
        sim_buf_json_str(&out, a->positional[0]);
        sim_buf_printf(&out, ",\n    \"format\": \"%s\",\n    \"events\": %" PRIu64 ",\n    \"start_state\": ",
                       input_format_name(input_get_format(in)), n);
        if (seeded) {
            const sim_seed *sd = input_seed(in);
            sim_buf_printf(&out, "{\"segments\": %u, \"reserved_bytes\": %" PRIu64 ", \"live_blocks\": %u, "
                                 "\"allocated_bytes\": %" PRIu64 ", \"events\": %" PRIu64 ", \"planned_segments\": %u}",
                           sd->n_segs, sim_seed_reserved(sd), sim_seed_used_count(sd), sim_seed_allocated(sd), first,
                           sd->n_planned);
        } else {
            sim_buf_puts(&out, "null");
        }
        sim_buf_puts(&out, ",\n    \"strategy\": ");
        sim_buf_json_str(&out, ops->name);
        sim_buf_puts(&out, ",\n    \"alloc_conf\": ");
        if (conf_used)
            sim_buf_json_str(&out, conf_used);
        else
            sim_buf_puts(&out, "null");
        const char *conf_from = "defaults";
        if (cli_has(a, "alloc-conf"))
            conf_from = "option";
        else if (conf_used)
            conf_from = "recording";
        else if (input_records_settings(in))
            conf_from = "recording (PyTorch defaults)";
        sim_buf_printf(&out, ",\n    \"alloc_conf_from\": \"%s\"", conf_from);
        sim_buf_printf(&out, ",\n    \"completed\": %s,\n    \"recorded_ooms\": %" PRIu64 ",\n    \"predicted_ooms\": %" PRIu64
                             ",\n",
                       run->total.completed ? "true" : "false", rec->ooms, run->total.ooms);
        column_json(&out, "allocated", &ca, false);
        column_json(&out, "reserved", &cr, false);
        placement_json(&out, &pl, &pd, rec, in);
        if (rec->has_allocated_end)
            sim_buf_printf(&out, "    \"allocated_at_end\": {\"predicted_bytes\": %" PRIu64
                                 ", \"recorded_bytes\": %" PRIu64 "},\n",
                           run->total.final_allocated_bytes, rec->allocated_end);
        sim_buf_puts(&out, "    \"recorded_oom_events\": [");
        for (uint64_t i = 0; i < rec->ooms; i++)
            sim_buf_printf(&out, "%s%" PRIu64, i ? ", " : "", rec->oom_events[i] + 1);
        sim_buf_puts(&out, "],\n    \"predicted_first_oom_event\": ");
        if (run->total.first_oom.happened)
            sim_buf_printf(&out, "%" PRIu64 "\n", run->total.first_oom.event);
        else
            sim_buf_puts(&out, "null\n");
        sim_buf_puts(&out, "  }\n}\n");
    } else {
        char hs[32];
        sim_buf_printf(&out, "gpusim replay --against-recorded: %s\n", a->positional[0]);
        sim_buf_printf(&out, "  format    %s, %" PRIu64 " events", input_format_name(input_get_format(in)), n);
        if (first)
            sim_buf_printf(&out, " (the first %" PRIu64 " are the live blocks of the start state)", first);
        sim_buf_puts(&out, "\n");
        if (seeded && input_seed(in)->n_segs > 0) {
            const sim_seed *sd = input_seed(in);
            char h1[32], h2[32];
            sim_buf_printf(&out, "  start     the recorded state at the first entry: %u segments (%s reserved), %u "
                                 "blocks live (%s)\n", sd->n_segs,
                           units_format_size(sim_seed_reserved(sd), h1, sizeof h1), sim_seed_used_count(sd),
                           units_format_size(sim_seed_allocated(sd), h2, sizeof h2));
        }
        sim_buf_printf(&out, "  strategy  %s", ops->name);
        if (conf_used)
            sim_buf_printf(&out, ", alloc-conf %s (%s)", conf_used,
                           cli_has(a, "alloc-conf") ? "--alloc-conf" : "the recording's allocator_settings");
        else if (strcmp(ops->name, "torch") == 0 && input_records_settings(in))
            sim_buf_puts(&out, ", PyTorch's default settings (as the recording's allocator_settings say)");
        sim_buf_puts(&out, "\n");
        sim_buf_printf(&out, "  device    %s, %s\n", dev.name,
                       units_format_size(dev.info.capacity_bytes, hs, sizeof hs));
        if (!run->total.completed)
            sim_buf_puts(&out, "  the replay ran out of memory and stopped; the comparison covers the events before\n");
        if (rec->ooms || run->total.ooms) {
            sim_buf_printf(&out, "  out of memory: recorded %" PRIu64 " time(s)", rec->ooms);
            if (rec->ooms)
                sim_buf_printf(&out, " (first at event %" PRIu64 ", %s)", rec->oom_events[0] + 1,
                               input_event_at(in, rec->oom_events[0])->name);
            sim_buf_printf(&out, ", predicted %" PRIu64, run->total.ooms);
            if (run->total.first_oom.happened)
                sim_buf_printf(&out, " (first at event %" PRIu64 ", %" PRIu64 " B)", run->total.first_oom.event,
                               run->total.first_oom.size);
            sim_buf_puts(&out, "\n");
        }
        column_text(&out, &ca);
        column_text(&out, &cr);
        if (rec->has_allocated_end && !ca.on) {
            sim_buf_puts(&out, "\nallocated at the end (recorded: the active_allocated blocks of \"segments\")\n"
                               "  predicted ");
            size_text(&out, run->total.final_allocated_bytes);
            sim_buf_puts(&out, "   recorded ");
            size_text(&out, rec->allocated_end);
            sim_buf_puts(&out, "   difference ");
            diff_text(&out, run->total.final_allocated_bytes, rec->allocated_end);
            sim_buf_puts(&out, "\n");
        }
        placement_text(&out, &pl, &pd, rec, in, first);
    }
    const char *outpath = cli_get(a, "output");
    if (sim_buf_write_file(&out, outpath ? outpath : "-", &err) != SIM_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    rc = (cli_has(a, "fail-on-oom") && run->total.ooms > 0) ? 1 : 0;
done:
    sim_buf_release(&out);
    sim_run_free(run);
    free(deferred);
    free(row_of);
    free(pd.seg);
    free(pd.off);
    input_close(in);
    return rc;
}
