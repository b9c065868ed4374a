/* The measured format's shared pieces and the validate-report tables. */
#include "measured.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/hash.h"
#include "sim/jsonw.h"

bool measured_trace_fnv1a64(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    uint64_t h = SIM_FNV1A64_INIT;
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = sim_fnv1a64_more(h, buf, n);
    bool ok = !ferror(f);
    fclose(f);
    *out = h;
    return ok;
}

static void diff_text(const measured_row *row, char *d, size_t dcap, char *pct, size_t pcap)
{
    snprintf(d, dcap, "-");
    snprintf(pct, pcap, "-");
    if (strcmp(row->unit, "event") == 0) {
        if (row->has_pred && row->has_meas)
            snprintf(d, dcap, "%+" PRId64 " events", (int64_t)(row->pred - row->meas));
        else if (row->has_pred != row->has_meas)
            snprintf(d, dcap, "OOM mismatch");
        else
            snprintf(d, dcap, "0 (no OOM)");
        return;
    }
    if (!row->has_pred || !row->has_meas)
        return;
    int64_t diff = (int64_t)(row->pred - row->meas);
    snprintf(d, dcap, "%+" PRId64, diff);
    if (row->meas != 0)
        snprintf(pct, pcap, "%+.2f%%", 100.0 * (double)diff / (double)row->meas);
}

static void value_text(const measured_row *row, bool pred, char *buf, size_t cap)
{
    bool has = pred ? row->has_pred : row->has_meas;
    uint64_t v = pred ? row->pred : row->meas;
    if (strncmp(row->unit, "event", 5) == 0) {
        if (has)
            snprintf(buf, cap, "event %" PRIu64, v);
        else
            snprintf(buf, cap, "%s", strcmp(row->unit, "event?") == 0 && pred ? "n/a" : "no OOM");
        return;
    }
    if (has)
        snprintf(buf, cap, "%" PRIu64, v);
    else
        snprintf(buf, cap, "%s", pred ? "n/a" : "-");
}

void report_measured_text(const measured_report *reps, int n, bool all_stats, sim_buf *b)
{
    sim_buf_printf(b, "gpusim %s validate-report: predicted (gpusim) vs measured (real GPU), difference = predicted - "
                      "measured\n", GPUSIM_VERSION);
    for (int k = 0; k < n; k++) {
        const measured_report *r = &reps[k];
        sim_buf_printf(b, "\n%s\n  trace %s (%s), allocator %s, model %s%s%s%s\n  device %s: total %" PRIu64
                          " B, context %" PRIu64 " B; completed: predicted %s, measured %s\n",
                       r->file, r->trace_name, r->trace_path, r->allocator, r->strategy, r->options[0] ? " (" : "",
                       r->options, r->options[0] ? ")" : "", r->device, r->total, r->context,
                       !r->has_model ? "n/a" : (r->completed_pred ? "yes" : "no"),
                       r->completed_meas ? "yes" : "no");
        for (uint32_t i = 0; i < r->n_notes; i++)
            sim_buf_printf(b, "  note: %s\n", r->notes[i]);
        sim_buf_printf(b, "  %-16s %-14s %-32s %16s %16s %16s %9s\n", "trace", "allocator", "metric", "predicted",
                       "measured", "diff B", "diff %");
        uint32_t agree = 0;
        for (uint32_t i = 0; i < r->n_rows; i++) {
            const measured_row *row = &r->rows[i];
            if (row->is_stat && !all_stats && row->pred == row->meas) {
                agree++;
                continue;
            }
            char p[40], m[40], d[40], pct[24];
            value_text(row, true, p, sizeof p);
            value_text(row, false, m, sizeof m);
            diff_text(row, d, sizeof d, pct, sizeof pct);
            sim_buf_printf(b, "  %-16.16s %-14.14s %-32.32s %16s %16s %16s %9s\n", r->trace_name, r->allocator,
                           row->metric, p, m, d, pct);
        }
        if (agree)
            sim_buf_printf(b, "  (%u more allocator statistics agree exactly; --all-stats lists them)\n", agree);
    }
}

/* One report's row: {"metric", "unit", "predicted", "measured", "diff", "diff_pct"}. */
static void json_row(const measured_row *row, jsonw *w)
{
    jsonw_object_inline(w);
    jsonw_key_str(w, "metric", row->metric);
    jsonw_key_str(w, "unit", strcmp(row->unit, "event?") == 0 ? "event" : row->unit);
    jsonw_key(w, "predicted");
    if (row->has_pred)
        jsonw_u64(w, row->pred);
    else
        jsonw_null(w);
    jsonw_key(w, "measured");
    if (row->has_meas)
        jsonw_u64(w, row->meas);
    else
        jsonw_null(w);
    jsonw_key(w, "diff");
    if (row->has_pred && row->has_meas) {
        int64_t diff = (int64_t)(row->pred - row->meas);
        jsonw_i64(w, diff);
        jsonw_key(w, "diff_pct");
        if (row->meas != 0)
            jsonw_ratio(w, 100.0 * (double)diff / (double)row->meas);
        else
            jsonw_null(w);
    } else {
        jsonw_null(w);
        jsonw_key(w, "diff_pct");
        jsonw_null(w);
    }
    jsonw_end(w);
}

void report_measured_json(const measured_report *reps, int n, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    jsonw_key(&w, "reports");
    jsonw_array(&w);
    for (int k = 0; k < n; k++) {
        const measured_report *r = &reps[k];
        jsonw_object_inline(&w); /* over three lines: the report, its notes, its rows */
        const char *const keys[] = {"file", "trace", "trace_path", "allocator", "strategy", "options", "device"};
        const char *const values[] = {r->file, r->trace_name, r->trace_path, r->allocator, r->strategy, r->options,
                                      r->device};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            jsonw_key_str(&w, keys[i], values[i]);
        jsonw_key_u64(&w, "total_bytes", r->total);
        jsonw_key_u64(&w, "context_bytes", r->context);
        jsonw_key_bool(&w, "fixture", r->fixture);
        jsonw_key(&w, "completed");
        jsonw_object_inline(&w);
        jsonw_key(&w, "predicted");
        if (r->has_model)
            jsonw_bool(&w, r->completed_pred);
        else
            jsonw_null(&w);
        jsonw_key_bool(&w, "measured", r->completed_meas);
        jsonw_end(&w);
        jsonw_wrap(&w);
        jsonw_key(&w, "notes");
        jsonw_array_inline(&w);
        for (uint32_t i = 0; i < r->n_notes; i++)
            jsonw_str(&w, r->notes[i]);
        jsonw_end(&w);
        jsonw_wrap(&w);
        jsonw_key(&w, "rows");
        jsonw_array_lines(&w, 1);
        for (uint32_t i = 0; i < r->n_rows; i++)
            json_row(&r->rows[i], &w);
        jsonw_end(&w);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}
