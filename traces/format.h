/* format.h — the names of the trace formats gpusim reads and what a recording says
 * about its real allocator (input_recorded): shared by the front door (input.h) and
 * the importers (import_common.h), so that neither includes the other. */
#ifndef GPUSIM_FORMAT_H
#define GPUSIM_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

typedef enum input_format {
    INPUT_AUTO = 0,        /* detect by content */
    INPUT_GPUSIM,          /* native v1, JSON or JSONL */
    INPUT_TORCH_SNAPSHOT,  /* torch.cuda.memory._snapshot(): JSON or pickle */
    INPUT_KINETO,          /* PyTorch profiler Chrome trace, [memory] events */
    INPUT_TF_PROFILE       /* TensorFlow / XProf memory_profile JSON */
} input_format;

/* "auto", "gpusim", "torch-snapshot", "kineto", "tf-profile". */
const char *input_format_name(input_format f);
/* The format a --from= value names; false for an unknown name. */
bool input_format_parse(const char *name, input_format *out);

/* What the recording itself says about the real allocator, for comparison with
 * a replay. Curves have one value per converted event (index i = event i+1 of
 * input_source), valid where has_point[i] (synthetic start-of-trace allocations and
 * events without numbers have none). Values are absolute as recorded. */
typedef struct input_recorded {
    uint64_t n;                    /* events in the converted stream */
    bool has_allocated;            /* Kineto "Total Allocated", TF heapAllocatedBytes */
    bool has_reserved;             /* Kineto "Total Reserved", snapshot segment_* running total */
    const uint64_t *allocated;     /* n values or NULL */
    const uint64_t *reserved;      /* n values or NULL */
    const uint8_t *has_point;      /* n flags or NULL */
    /* Bytes the recording counts as allocated that no event of the trace explains
     * (allocated before recording began and never freed inside it): a replay's
     * allocated bytes plus this offset should equal the recorded curve. */
    uint64_t allocated_offset;
    bool allocated_offset_known;
    uint64_t reserved_start;       /* recorded reserved before the first event, if has_reserved */
    /* recorded peaks: the format's own number when it states one (TF peakBytesInUse),
     * else the maximum of the curve */
    bool has_peak_allocated, has_peak_reserved;
    uint64_t peak_allocated, peak_reserved;
    const char *allocated_source;  /* e.g. "Kineto \"Total Allocated\"", or NULL */
    /* The allocated curve sums the very sizes the events carry (Kineto's Bytes are the
     * real allocator's block sizes, rounding and unsplit remainders included), so a
     * replay matches it with its live requested bytes; a model's own allocated would
     * round those block sizes a second time. */
    bool allocated_counts_event_sizes;
    const char *reserved_source;
    uint64_t capacity;             /* TF memoryCapacity (0 if absent) */
    uint64_t ooms;                 /* recorded out-of-memory events (snapshot "oom") */
    /* Where the real allocator placed each allocation (snapshots whose segments
     * could be followed from the rebuilt start state), or NULL: for event i an
     * alloc, placement_segment[i] is the recorded segment it landed in, numbered
     * as the torch strategy numbers its segments when it starts from
     * input_seed() (the start state's segments 0, 1, ... in address order, then
     * one more per segment_alloc, in trace order), and placement_offset[i] its
     * offset there; UINT32_MAX where unknown (other events, expandable segments). */
    const uint32_t *placement_segment;
    const uint64_t *placement_offset;
    uint64_t placements;           /* allocations with a known placement */
    /* Bytes allocated before the first event that the trace never frees, carried
     * as one allocation at the start (Kineto "Total Allocated" at its first event);
     * allocated_offset is then 0. */
    uint64_t live_before_bytes;
    /* The recording began with cached memory the trace does not describe (a
     * profiler trace started mid-run): recorded reserved can be followed only as
     * changes from reserved_start, never compared with a replay from an empty cache. */
    bool reserved_start_unknown;
    /* Allocated bytes at the end (snapshots: the sizes of the blocks in state
     * active_allocated of the final segments), when has_allocated_end. */
    bool has_allocated_end;
    uint64_t allocated_end;
    /* The 0-based event index (a mark) of each recorded out-of-memory, ooms of them. */
    const uint64_t *oom_events;
} input_recorded;

typedef struct input_options {
    int64_t device;   /* CUDA device ordinal to import (--device=N); -1 = the one with most events.
                       * TF profiles: the allocator "GPU_N_bfc" (or "N"). */
    bool prefetch;    /* a native trace in a regular file is read ahead on a second thread while
                       * it is replayed (traces/prefetch.h); the results are the same */
} input_options;

#endif
