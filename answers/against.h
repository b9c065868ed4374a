/* against.h — replay a recording under the allocator that made it and compare the
 * prediction with what the real allocator recorded (traces/format.h input_recorded):
 * allocated and reserved, at the peak and event by event over time, and for a
 * snapshot where every allocation was placed (segment and offset). The rendering
 * is reports/against.h; the command is `gpusim replay --against-recorded`. */
#ifndef GPUSIM_ANSWERS_AGAINST_H
#define GPUSIM_ANSWERS_AGAINST_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/status.h"
#include "sim/event.h"
#include "traces/input.h"

/* The strategy that reproduces the recording's allocator (the format table's
 * against_strategy, traces/format.h): "torch" for PyTorch snapshots and profiler
 * traces, "greedy" for TensorFlow profiles, NULL for native. */
const char *against_default_strategy(const input_format *f);

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
    uint64_t live_before;      /* allocated: bytes live before the first event, an allocation at the start */
    bool by_event_sizes;       /* allocated: predicted = the replay's live requested bytes (the recorded
                                * curve sums the allocator's own block sizes, input_recorded) */
    /* reserved: the recording began with a cache it does not describe (a profiler
     * trace started mid-run): not compared; the recorded curve's start, least, most */
    bool start_unknown;
    uint64_t rec_start, rec_min, rec_max;
} against_column;

/* One event shown around the first misplaced allocation. */
typedef struct against_event {
    uint64_t event;            /* 1-based, in the converted stream */
    sim_op op;
    uint64_t size, id;
    uint32_t stream;
    bool deferred;             /* a free whose memory returns later */
    const char *name;          /* a mark's, or NULL */
    uint32_t rec_seg, pred_seg;  /* allocs: segment numbers, UINT32_MAX unknown / not placed */
    uint64_t rec_off, pred_off;
    uint64_t rec_pool, pred_pool; /* allocs: the private pools (0: the default; input_recorded.placement_pool) */
} against_event;

#define AGAINST_CONTEXT 4u     /* events shown before the first mismatch */

/* Where each allocation went, against where the recording says (snapshots). */
typedef struct against_placement {
    bool on;                   /* compared: the recording has placements, the strategy locates blocks, and
                                * both number segments alike (from the recorded start state, or from empty) */
    uint64_t compared, matched;
    bool has_pools;            /* the recording has allocations in private pools (input_recorded.placement_pool) */
    uint64_t pooled;           /* of compared, those it put in a private pool */
    bool has_mismatch;
    against_event first;       /* the first misplaced allocation */
    against_event before[AGAINST_CONTEXT];
    uint32_t n_before;
} against_placement;

/* The end state, block by block: the replay's blocks at the end (the strategy's
 * walk) against the final "segments" of a snapshot, each block by segment (numbered
 * as placements are), offset, size and state; the first difference in (segment,
 * offset) order is kept. */
typedef struct against_end_state {
    bool on;                   /* compared: the recording has its final blocks, the strategy walks its
                                * blocks, segments are numbered alike (as for placements), one process */
    uint64_t recorded_blocks, predicted_blocks, matched;
    bool has_difference;
    bool has_rec, has_pred;    /* at the first difference: whether each side has a block there */
    input_end_block rec, pred; /* the blocks there (state: input_block_state) */
} against_end_state;

/* The whole comparison. */
typedef struct against_result {
    const input_format *format; /* of the recording */
    uint64_t events;           /* in the converted stream */
    const char *strategy;      /* cfg->ops->name */
    bool strategy_takes_recorded; /* cfg->ops->recorded_conf_key is set: a recording's settings feed it */
    const char *alloc_conf;    /* the "alloc_conf" option the replay ran with, or NULL */
    uint64_t capacity_bytes;   /* of the simulated device */
    bool completed;            /* the replay reached the end (no OOM under --on-oom=stop) */
    uint64_t recorded_ooms, predicted_ooms;
    against_column allocated, reserved;
    /* snapshots: the live requested bytes the trace's own alloc and free entries add
     * up to, event by event (a deferred free's until it completed), against the
     * replay's (what="allocated over time"; on when the recording has no allocated
     * curve of its own) */
    against_column requested;
    /* the recorded start state the replay began from (snapshots recorded mid-run) */
    bool seeded;
    uint32_t start_segments, start_live_blocks, planned_segments;
    uint64_t start_reserved, start_allocated, start_events;
    uint32_t start_pool_segments;  /* of start_segments, those of private pools */
    uint64_t start_pool_reserved;
    bool settings_recorded;    /* the recording states its allocator settings (input_records_settings) */
    /* where the settings came from: "option", "recording", "recording (PyTorch
     * defaults)" or "defaults" */
    const char *alloc_conf_from;
    against_placement placement;
    against_end_state end_state;
    bool has_allocated_end;    /* snapshots: allocated at the end, predicted and from the final segments */
    uint64_t allocated_end_pred, allocated_end_rec;
    const uint64_t *recorded_oom_events;  /* recorded_ooms 0-based event indices (borrowed) */
    const char *first_recorded_oom;        /* its mark's text, or NULL */
    bool has_predicted_oom;
    uint64_t predicted_oom_event, predicted_oom_size;
} against_result;

/* How to replay: from the recorded start state where there is one and the
 * strategy can take it (ops->seed), unless from_empty. */
typedef struct against_options {
    bool from_empty;
    bool alloc_conf_option;    /* the alloc_conf option came from the command line (--alloc-conf) */
} against_options;

/* Replay in (which must have recorded numbers: against_has_recorded) under cfg
 * (device, ops, opts, on_oom_skip, paranoid; its timeline_rows is ignored: the
 * comparison sets its own) and compare event by event. The engine's deferred frees
 * are matched to the events they precede, so that row k of the timeline is event k
 * of the recording. Errors: engine_run's (SIM_EUSAGE for a bad strategy option),
 * SIM_ENOMEM. out's strings borrow from in and cfg. */
sim_status against_compare(trace_input *in, const engine_config *cfg, const against_options *opt, against_result *out,
                           sim_error *err);

#endif
