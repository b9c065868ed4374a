/* Predicted vs recorded, as text and as JSON. */
#include "against.h"

#include <inttypes.h>

#include "sim/units.h"

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

/* "  LABEL predicted X B (h)   recorded Y B (h)   difference ±Z B" */
static void pair_line(sim_buf *b, const char *label, uint64_t pred, uint64_t rec)
{
    sim_buf_printf(b, "  %s predicted ", label);
    size_text(b, pred);
    sim_buf_puts(b, "   recorded ");
    size_text(b, rec);
    sim_buf_puts(b, "   difference ");
    diff_text(b, pred, rec);
    sim_buf_puts(b, "\n");
}

static void column_text(sim_buf *b, const against_column *c)
{
    if (!c->on)
        return;
    sim_buf_printf(b, "\n%s (recorded: %s", c->what, c->source ? c->source : "?");
    if (c->offset)
        sim_buf_printf(b, "; predicted + %" PRIu64 " B the recording held before its first event", c->offset);
    sim_buf_puts(b, ")\n");
    if (c->has_pred_peak && c->has_rec_peak)
        pair_line(b, "peak      ", c->pred_peak, c->rec_peak);
    if (c->points) {
        sim_buf_printf(b, "  over time  %" PRIu64 " events compared; max |difference| %" PRIu64 " B at event %" PRIu64
                          " (predicted %" PRIu64 ", recorded %" PRIu64 ")\n",
                       c->points, c->max_abs, c->max_event, c->max_pred, c->max_rec);
        pair_line(b, "final     ", c->final_pred, c->final_rec);
    }
}

static void column_json(sim_buf *b, const char *key, const against_column *c, bool last)
{
    sim_buf_printf(b, "    \"%s\": ", key);
    if (!c->on) {
        sim_buf_printf(b, "null%s\n", last ? "" : ",");
        return;
    }
    sim_buf_puts(b, "{\"source\": ");
    sim_buf_json_str(b, c->source ? c->source : "");
    sim_buf_printf(b, ", \"offset_bytes\": %" PRIu64 ", \"events_compared\": %" PRIu64, c->offset, c->points);
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

void report_against_json(const against_result *r, const char *trace, sim_buf *out)
{
    sim_buf_puts(out, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"against_recorded\": {\n    \"trace\": ");
    sim_buf_json_str(out, trace);
    sim_buf_printf(out, ",\n    \"format\": \"%s\",\n    \"events\": %" PRIu64 ",\n    \"strategy\": ",
                   input_format_name(r->format), r->events);
    sim_buf_json_str(out, r->strategy);
    sim_buf_puts(out, ",\n    \"alloc_conf\": ");
    if (r->alloc_conf)
        sim_buf_json_str(out, r->alloc_conf);
    else
        sim_buf_puts(out, "null");
    sim_buf_printf(out, ",\n    \"completed\": %s,\n    \"recorded_ooms\": %" PRIu64 ",\n    \"predicted_ooms\": %" PRIu64
                        ",\n",
                   r->completed ? "true" : "false", r->recorded_ooms, r->predicted_ooms);
    column_json(out, "allocated", &r->allocated, false);
    column_json(out, "reserved", &r->reserved, true);
    sim_buf_puts(out, "  }\n}\n");
}

void report_against_text(const against_result *r, const char *trace, const char *device_name, sim_buf *out)
{
    char hs[32];
    sim_buf_printf(out, "gpusim replay --against-recorded: %s\n", trace);
    sim_buf_printf(out, "  format    %s, %" PRIu64 " events\n", input_format_name(r->format), r->events);
    sim_buf_printf(out, "  strategy  %s%s%s\n", r->strategy, r->alloc_conf ? ", alloc-conf " : "",
                   r->alloc_conf ? r->alloc_conf : "");
    sim_buf_printf(out, "  device    %s, %s\n", device_name, units_format_size(r->capacity_bytes, hs, sizeof hs));
    if (!r->completed)
        sim_buf_puts(out, "  the replay ran out of memory and stopped; the comparison covers the events before\n");
    if (r->recorded_ooms || r->predicted_ooms)
        sim_buf_printf(out, "  out of memory: recorded %" PRIu64 " time(s), predicted %" PRIu64 "\n", r->recorded_ooms,
                       r->predicted_ooms);
    column_text(out, &r->allocated);
    column_text(out, &r->reserved);
}
