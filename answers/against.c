/* Predicted vs recorded: the replay and the event-by-event comparison. */
#include "against.h"

#include <stdlib.h>
#include <string.h>

const char *against_default_strategy(input_format f)
{
    switch (f) {
    case INPUT_TORCH_SNAPSHOT:
    case INPUT_KINETO: return "torch";
    case INPUT_TF_PROFILE: return "greedy";
    case INPUT_AUTO:
    case INPUT_GPUSIM:
    default: return NULL;
    }
}

bool against_has_recorded(const trace_input *in)
{
    const input_recorded *rec = input_get_recorded(in);
    return rec != NULL &&
           (rec->has_allocated || rec->has_reserved || rec->has_peak_allocated || rec->has_peak_reserved);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y);
}

static void compare(against_column *c, const timeline *tl, const uint64_t *row_of, uint64_t n, const uint8_t *has,
                    const uint64_t *rec, bool allocated)
{
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

sim_status against_compare(trace_input *in, const engine_config *cfg, against_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    const input_recorded *rec = input_get_recorded(in);
    if (rec == NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "the input holds no numbers from the real allocator");
    /* which timeline row each event lands on: the engine interleaves the deferred
     * frees (those with ready_t > t) before any event at or after their ready_t */
    uint64_t n = input_event_count(in), n_def = 0;
    uint64_t *deferred = malloc((n ? n : 1) * sizeof *deferred);
    uint64_t *row_of = malloc((n ? n : 1) * sizeof *row_of);
    sim_run *run = NULL;
    sim_status st = SIM_OK;
    if (deferred == NULL || row_of == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    for (uint64_t k = 0; k < n; k++) {
        const sim_event *ev = input_event_at(in, k);
        if (ev->op == SIM_OP_FREE && ev->ready_t > ev->t)
            deferred[n_def++] = ev->ready_t;
    }
    qsort(deferred, n_def, sizeof *deferred, u64_cmp);
    uint64_t row = 0, dp = 0;
    for (uint64_t k = 0; k < n; k++) {
        const sim_event *ev = input_event_at(in, k);
        while (dp < n_def && deferred[dp] <= ev->t) {
            dp++;
            row++;
        }
        row_of[k] = row++;
    }
    engine_config c = *cfg;
    c.timeline_rows = n + n_def + 1;
    sim_event_source src = input_source(in);
    if ((st = engine_run(&c, &src, 1, &run, err)) != SIM_OK)
        goto done;
    against_column *ca = &out->allocated, *cr = &out->reserved;
    *ca = (against_column){.on = rec->has_allocated || rec->has_peak_allocated, .what = "allocated",
                           .source = rec->allocated_source ? rec->allocated_source : "the profile's peakBytesInUse",
                           .offset = rec->allocated_offset_known ? rec->allocated_offset : 0};
    *cr = (against_column){.on = rec->has_reserved || rec->has_peak_reserved, .what = "reserved",
                           .source = rec->reserved_source};
    ca->has_pred_peak = cr->has_pred_peak = true;
    ca->pred_peak = run->total.peak_allocated_bytes + ca->offset;
    cr->pred_peak = run->total.peak_reserved_bytes;
    ca->has_rec_peak = rec->has_peak_allocated;
    ca->rec_peak = rec->peak_allocated;
    cr->has_rec_peak = rec->has_peak_reserved;
    cr->rec_peak = rec->peak_reserved;
    if (rec->has_allocated)
        compare(ca, &run->tl, row_of, n, rec->has_point, rec->allocated, true);
    if (rec->has_reserved)
        compare(cr, &run->tl, row_of, n, rec->has_point, rec->reserved, false);
    out->format = input_get_format(in);
    out->events = n;
    out->strategy = cfg->ops->name;
    for (uint32_t i = 0; i < cfg->n_opts; i++)
        if (strcmp(cfg->opts[i].key, "alloc_conf") == 0)
            out->alloc_conf = cfg->opts[i].value;
    out->capacity_bytes = cfg->device.capacity_bytes;
    out->completed = run->total.completed;
    out->recorded_ooms = rec->ooms;
    out->predicted_ooms = run->total.ooms;
done:
    sim_run_free(run);
    free(deferred);
    free(row_of);
    return st;
}
