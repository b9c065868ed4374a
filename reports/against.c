/* Predicted vs recorded, as text and as JSON. */
#include "against.h"

#include <inttypes.h>
#include <string.h>

#include "sim/jsonw.h"
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
    if (c->live_before)
        sim_buf_printf(b, "; the %" PRIu64 " B live before its first event are an allocation at the start",
                       c->live_before);
    sim_buf_puts(b, ")\n");
    if (c->by_event_sizes)
        sim_buf_puts(b, "  predicted = the replay's live requested bytes: the recorded sizes are the real "
                        "allocator's blocks, already rounded\n");
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
    if (c->has_pred_peak && c->has_rec_peak)
        pair_line(b, "peak      ", c->pred_peak, c->rec_peak);
    if (c->points) {
        sim_buf_printf(b, "  over time  %" PRIu64 " events compared; max |difference| %" PRIu64 " B at event %" PRIu64
                          " (predicted %" PRIu64 ", recorded %" PRIu64 ")\n",
                       c->points, c->max_abs, c->max_event, c->max_pred, c->max_rec);
        pair_line(b, "final     ", c->final_pred, c->final_rec);
    }
}

static void column_json(jsonw *w, const char *key, const against_column *c)
{
    jsonw_key(w, key);
    if (!c->on) {
        jsonw_null(w);
        return;
    }
    jsonw_object_inline(w);
    jsonw_key_str(w, "source", c->source ? c->source : "");
    if (c->start_unknown) {
        jsonw_key_bool(w, "compared", false);
        jsonw_key_str(w, "reason", "the recording began with a cache it does not describe");
        jsonw_key_u64(w, "recorded_start_bytes", c->rec_start);
        jsonw_key_u64(w, "recorded_min_bytes", c->rec_min);
        jsonw_key_u64(w, "recorded_max_bytes", c->rec_max);
        jsonw_key_u64(w, "recorded_final_bytes", c->final_rec);
        jsonw_key_u64(w, "predicted_peak_bytes", c->pred_peak);
        jsonw_end(w);
        return;
    }
    jsonw_key_u64(w, "offset_bytes", c->offset);
    jsonw_key_u64(w, "events_compared", c->points);
    if (c->live_before)
        jsonw_key_u64(w, "live_before_bytes", c->live_before);
    if (c->by_event_sizes)
        jsonw_key_str(w, "predicted", "live requested bytes");
    if (c->has_pred_peak && c->has_rec_peak) {
        jsonw_key_u64(w, "predicted_peak_bytes", c->pred_peak);
        jsonw_key_u64(w, "recorded_peak_bytes", c->rec_peak);
        jsonw_key(w, "peak_difference_bytes");
        jsonw_i64(w, (int64_t)(c->pred_peak - c->rec_peak));
    }
    if (c->points) {
        jsonw_key_u64(w, "max_abs_difference_bytes", c->max_abs);
        jsonw_key_u64(w, "max_difference_event", c->max_event);
        jsonw_key_u64(w, "final_predicted_bytes", c->final_pred);
        jsonw_key_u64(w, "final_recorded_bytes", c->final_rec);
    }
    jsonw_end(w);
}

static void where_text(sim_buf *b, uint32_t seg, uint64_t off, uint64_t pool)
{
    if (seg == UINT32_MAX)
        sim_buf_puts(b, "not placed");
    else
        sim_buf_printf(b, "segment %u + %" PRIu64, seg, off);
    if (seg != UINT32_MAX && pool != 0)
        sim_buf_printf(b, " of private pool %" PRIu64, pool);
}

static void placement_text(sim_buf *b, const against_placement *pl)
{
    if (!pl->on)
        return;
    sim_buf_puts(b, "\nplacement (recorded: each alloc's addr, as segment and offset; segments numbered in address "
                    "order at the start, then in order of creation)\n");
    sim_buf_printf(b, "  %" PRIu64 "/%" PRIu64 " allocations placed at the recorded offset", pl->matched, pl->compared);
    if (pl->has_pools)
        sim_buf_printf(b, " and in the recorded pool (%" PRIu64 " of them recorded in private pools)", pl->pooled);
    sim_buf_puts(b, "\n");
    if (!pl->has_mismatch)
        return;
    const against_event *f = &pl->first;
    sim_buf_printf(b, "  first mismatch at event %" PRIu64 ": alloc of %" PRIu64 " B on stream %u, recorded ", f->event,
                   f->size, f->stream);
    where_text(b, f->rec_seg, f->rec_off, f->rec_pool);
    sim_buf_puts(b, ", predicted ");
    where_text(b, f->pred_seg, f->pred_off, f->pred_pool);
    sim_buf_puts(b, "\n");
    for (uint32_t j = 0; j < pl->n_before; j++) {
        const against_event *e = &pl->before[j];
        sim_buf_printf(b, "    event %" PRIu64 ": %s", e->event, sim_op_name(e->op));
        if (e->op == SIM_OP_ALLOC) {
            sim_buf_printf(b, " %" PRIu64 " B on stream %u, recorded ", e->size, e->stream);
            where_text(b, e->rec_seg, e->rec_off, e->rec_pool);
            sim_buf_puts(b, ", predicted ");
            where_text(b, e->pred_seg, e->pred_off, e->pred_pool);
        } else if (e->op == SIM_OP_FREE) {
            sim_buf_printf(b, " of id %" PRIu64 "%s", e->id, e->deferred ? " (deferred)" : "");
        } else if (e->op == SIM_OP_MARK) {
            sim_buf_printf(b, " \"%s\"", e->name ? e->name : "");
        }
        sim_buf_puts(b, "\n");
    }
}

static void placement_json(jsonw *w, const against_placement *pl)
{
    jsonw_key(w, "placement");
    if (!pl->on) {
        jsonw_null(w);
        return;
    }
    jsonw_object_inline(w);
    jsonw_key_u64(w, "compared", pl->compared);
    jsonw_key_u64(w, "matched", pl->matched);
    if (pl->has_pools) /* a recording with private pools: how many compared allocations were in one */
        jsonw_key_u64(w, "in_private_pools", pl->pooled);
    jsonw_key(w, "first_mismatch");
    if (!pl->has_mismatch) {
        jsonw_null(w);
    } else {
        const against_event *f = &pl->first;
        jsonw_object_inline(w);
        jsonw_key_u64(w, "event", f->event);
        jsonw_key_u64(w, "size", f->size);
        jsonw_key_u64(w, "recorded_segment", f->rec_seg);
        jsonw_key_u64(w, "recorded_offset", f->rec_off);
        jsonw_key(w, "predicted_segment");
        if (f->pred_seg == UINT32_MAX) {
            jsonw_null(w);
            jsonw_key(w, "predicted_offset");
            jsonw_null(w);
        } else {
            jsonw_u64(w, f->pred_seg);
            jsonw_key_u64(w, "predicted_offset", f->pred_off);
        }
        if (f->rec_pool != 0 || f->pred_pool != 0) { /* the private pools, where either is one */
            jsonw_key_u64(w, "recorded_pool", f->rec_pool);
            jsonw_key_u64(w, "predicted_pool", f->pred_pool);
        }
        jsonw_end(w);
    }
    jsonw_end(w);
}

static const char *const BLOCK_STATE[] = {"active_allocated", "active_pending_free", "inactive"};

static const char *block_state(uint8_t s)
{
    return s < 3 ? BLOCK_STATE[s] : "?";
}

static void end_state_text(sim_buf *b, const against_end_state *es)
{
    if (!es->on)
        return;
    sim_buf_puts(b,
                 "\nend state (recorded: the blocks of the final \"segments\"; segments numbered as for placement)\n");
    sim_buf_printf(b,
                   "  %" PRIu64 "/%" PRIu64
                   " recorded blocks the same in state, size and offset; the replay ends with %" PRIu64 " blocks\n",
                   es->matched, es->recorded_blocks, es->predicted_blocks);
    if (!es->has_difference)
        return;
    const input_end_block *at = es->has_rec ? &es->rec : &es->pred;
    sim_buf_puts(b, "  first difference at ");
    if (at->segment == UINT32_MAX)
        sim_buf_printf(b, "offset %" PRIu64 " of a final segment the trace's segment events do not lead to",
                       at->offset);
    else
        where_text(b, at->segment, at->offset, 0);
    sim_buf_puts(b, ": recorded ");
    if (es->has_rec)
        sim_buf_printf(b, "%s %" PRIu64 " B", block_state(es->rec.state), es->rec.size);
    else
        sim_buf_puts(b, "no block starts there");
    sim_buf_puts(b, ", predicted ");
    if (es->has_pred)
        sim_buf_printf(b, "%s %" PRIu64 " B", block_state(es->pred.state), es->pred.size);
    else
        sim_buf_puts(b, "no block starts there");
    sim_buf_puts(b, "\n");
}

static void end_block_json(jsonw *w, const char *key, bool has, const input_end_block *blk)
{
    jsonw_key(w, key);
    if (!has) {
        jsonw_null(w);
        return;
    }
    jsonw_object_inline(w);
    jsonw_key_str(w, "state", block_state(blk->state));
    jsonw_key_u64(w, "size", blk->size);
    jsonw_end(w);
}

static void end_state_json(jsonw *w, const against_end_state *es)
{
    jsonw_key(w, "end_state");
    if (!es->on) {
        jsonw_null(w);
        return;
    }
    jsonw_object_inline(w);
    jsonw_key_u64(w, "recorded_blocks", es->recorded_blocks);
    jsonw_key_u64(w, "predicted_blocks", es->predicted_blocks);
    jsonw_key_u64(w, "matched", es->matched);
    jsonw_key(w, "first_difference");
    if (!es->has_difference) {
        jsonw_null(w);
    } else {
        const input_end_block *at = es->has_rec ? &es->rec : &es->pred;
        jsonw_object_inline(w);
        jsonw_key(w, "segment");
        if (at->segment == UINT32_MAX)
            jsonw_null(w);
        else
            jsonw_u64(w, at->segment);
        jsonw_key_u64(w, "offset", at->offset);
        end_block_json(w, "recorded", es->has_rec, &es->rec);
        end_block_json(w, "predicted", es->has_pred, &es->pred);
        jsonw_end(w);
    }
    jsonw_end(w);
}

void report_against_json(const against_result *r, const char *trace, sim_buf *out)
{
    jsonw w;
    jsonw_init_buf(&w, out, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    jsonw_key(&w, "against_recorded");
    jsonw_object(&w);
    jsonw_key_str(&w, "trace", trace);
    jsonw_key_str(&w, "format", input_format_name(r->format));
    jsonw_key_u64(&w, "events", r->events);
    jsonw_key(&w, "start_state");
    if (r->seeded) {
        jsonw_object_inline(&w);
        jsonw_key_u64(&w, "segments", r->start_segments);
        jsonw_key_u64(&w, "reserved_bytes", r->start_reserved);
        jsonw_key_u64(&w, "live_blocks", r->start_live_blocks);
        jsonw_key_u64(&w, "allocated_bytes", r->start_allocated);
        jsonw_key_u64(&w, "events", r->start_events);
        jsonw_key_u64(&w, "planned_segments", r->planned_segments);
        if (r->start_pool_segments) { /* a recording with private pools */
            jsonw_key_u64(&w, "pool_segments", r->start_pool_segments);
            jsonw_key_u64(&w, "pool_reserved_bytes", r->start_pool_reserved);
        }
        jsonw_end(&w);
    } else {
        jsonw_null(&w);
    }
    jsonw_key_str(&w, "strategy", r->strategy);
    jsonw_key(&w, "alloc_conf");
    if (r->alloc_conf)
        jsonw_str(&w, r->alloc_conf);
    else
        jsonw_null(&w);
    jsonw_key_str(&w, "alloc_conf_from", r->alloc_conf_from ? r->alloc_conf_from : "defaults");
    jsonw_key_bool(&w, "completed", r->completed);
    jsonw_key_u64(&w, "recorded_ooms", r->recorded_ooms);
    jsonw_key_u64(&w, "predicted_ooms", r->predicted_ooms);
    column_json(&w, "allocated", &r->allocated);
    column_json(&w, "reserved", &r->reserved);
    column_json(&w, "allocated_over_time", &r->requested);
    placement_json(&w, &r->placement);
    end_state_json(&w, &r->end_state);
    if (r->has_allocated_end) {
        jsonw_key(&w, "allocated_at_end");
        jsonw_object_inline(&w);
        jsonw_key_u64(&w, "predicted_bytes", r->allocated_end_pred);
        jsonw_key_u64(&w, "recorded_bytes", r->allocated_end_rec);
        jsonw_end(&w);
    }
    jsonw_key(&w, "recorded_oom_events");
    jsonw_array_inline(&w);
    for (uint64_t i = 0; i < r->recorded_ooms; i++)
        jsonw_u64(&w, r->recorded_oom_events[i] + 1);
    jsonw_end(&w);
    jsonw_key(&w, "predicted_first_oom_event");
    if (r->has_predicted_oom)
        jsonw_u64(&w, r->predicted_oom_event);
    else
        jsonw_null(&w);
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(out, "\n");
}

void report_against_text(const against_result *r, const char *trace, const char *device_name, sim_buf *out)
{
    char hs[32];
    sim_buf_printf(out, "gpusim replay --against-recorded: %s\n", trace);
    sim_buf_printf(out, "  format    %s, %" PRIu64 " events", input_format_name(r->format), r->events);
    if (r->seeded && r->start_events)
        sim_buf_printf(out, " (the first %" PRIu64 " are the live blocks of the start state)", r->start_events);
    sim_buf_puts(out, "\n");
    if (r->seeded && r->start_segments > 0) {
        char h1[32], h2[32];
        sim_buf_printf(out,
                       "  start     the recorded state at the first entry: %u segments (%s reserved), %u blocks "
                       "live (%s)",
                       r->start_segments, units_format_size(r->start_reserved, h1, sizeof h1), r->start_live_blocks,
                       units_format_size(r->start_allocated, h2, sizeof h2));
        if (r->start_pool_segments)
            sim_buf_printf(out, "; %u of the segments (%s) in private pools", r->start_pool_segments,
                           units_format_size(r->start_pool_reserved, h1, sizeof h1));
        sim_buf_puts(out, "\n");
    }
    sim_buf_printf(out, "  strategy  %s", r->strategy);
    if (r->alloc_conf)
        sim_buf_printf(out, ", alloc-conf %s (%s)", r->alloc_conf,
                       r->alloc_conf_from && strcmp(r->alloc_conf_from, "option") == 0
                           ? "--alloc-conf"
                           : "the recording's allocator_settings");
    else if (r->strategy_takes_recorded && r->settings_recorded)
        sim_buf_puts(out, ", PyTorch's default settings (as the recording's allocator_settings say)");
    sim_buf_puts(out, "\n");
    sim_buf_printf(out, "  device    %s, %s\n", device_name, units_format_size(r->capacity_bytes, hs, sizeof hs));
    if (!r->completed)
        sim_buf_puts(out, "  the replay ran out of memory and stopped; the comparison covers the events before\n");
    if (r->recorded_ooms || r->predicted_ooms) {
        sim_buf_printf(out, "  out of memory: recorded %" PRIu64 " time(s)", r->recorded_ooms);
        if (r->recorded_ooms && r->first_recorded_oom)
            sim_buf_printf(out, " (first at event %" PRIu64 ", %s)", r->recorded_oom_events[0] + 1,
                           r->first_recorded_oom);
        sim_buf_printf(out, ", predicted %" PRIu64, r->predicted_ooms);
        if (r->has_predicted_oom)
            sim_buf_printf(out, " (first at event %" PRIu64 ", %" PRIu64 " B)", r->predicted_oom_event,
                           r->predicted_oom_size);
        sim_buf_puts(out, "\n");
    }
    column_text(out, &r->allocated);
    column_text(out, &r->reserved);
    column_text(out, &r->requested);
    if (r->has_allocated_end && !r->allocated.on) {
        sim_buf_puts(out, "\nallocated at the end (recorded: the active_allocated blocks of \"segments\")\n"
                          "  predicted ");
        size_text(out, r->allocated_end_pred);
        sim_buf_puts(out, "   recorded ");
        size_text(out, r->allocated_end_rec);
        sim_buf_puts(out, "   difference ");
        diff_text(out, r->allocated_end_pred, r->allocated_end_rec);
        sim_buf_puts(out, "\n");
    }
    placement_text(out, &r->placement);
    end_state_text(out, &r->end_state);
}
