/* against.h — replay a recording under the allocator that made it and compare the
 * prediction with what the real allocator recorded (traces/format.h input_recorded):
 * allocated and reserved, at the peak and event by event over time. The rendering
 * is reports/against.h; the command is `gpusim replay --against-recorded`. */
#ifndef GPUSIM_ANSWERS_AGAINST_H
#define GPUSIM_ANSWERS_AGAINST_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/status.h"
#include "traces/input.h"

/* The strategy that reproduces the recording's allocator: "torch" for PyTorch
 * snapshots and profiler traces, "greedy" for TensorFlow profiles, NULL for native. */
const char *against_default_strategy(input_format f);

/* Whether in carries any number from the real allocator (a curve or a peak). */
bool against_has_recorded(const trace_input *in);

/* One compared quantity (allocated or reserved). Strings point into the input's
 * recorded numbers: valid while the input is open. */
typedef struct against_column {
    bool on;                   /* the recording has this quantity */
    const char *what;          /* "allocated" or "reserved" */
    const char *source;        /* where the recording's numbers come from, or NULL */
    uint64_t offset;           /* added to the prediction (bytes the recording has and the trace does not) */
    uint64_t points;           /* events compared */
    uint64_t max_abs;          /* largest |predicted − recorded| */
    int64_t max_diff;          /* signed difference (predicted − recorded) where |diff| is largest */
    uint64_t max_event;        /* 1-based event of the converted stream */
    uint64_t max_pred, max_rec;
    bool has_pred_peak, has_rec_peak;
    uint64_t pred_peak, rec_peak;
    uint64_t final_pred, final_rec;  /* at the last compared event */
} against_column;

/* The whole comparison. */
typedef struct against_result {
    input_format format;       /* of the recording */
    uint64_t events;           /* in the converted stream */
    const char *strategy;      /* cfg->ops->name */
    const char *alloc_conf;    /* the "alloc_conf" option the replay ran with, or NULL */
    uint64_t capacity_bytes;   /* of the simulated device */
    bool completed;            /* the replay reached the end (no OOM under --on-oom=stop) */
    uint64_t recorded_ooms, predicted_ooms;
    against_column allocated, reserved;
} against_result;

/* Replay in (which must have recorded numbers: against_has_recorded) under cfg
 * (device, ops, opts, on_oom_skip, paranoid; its timeline_rows is ignored: the
 * comparison sets its own) and compare event by event. The engine's deferred frees
 * are matched to the events they precede, so that row k of the timeline is event k
 * of the recording. Errors: engine_run's (SIM_EUSAGE for a bad strategy option),
 * SIM_ENOMEM. out's strings borrow from in and cfg. */
sim_status against_compare(trace_input *in, const engine_config *cfg, against_result *out, sim_error *err);

#endif
