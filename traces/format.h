/* format.h — the one table of the trace formats gpusim reads (input_format, one row
 * each: its name, how it is recognised, its importer, what a recording in it says about
 * its real allocator), and that recorded reference data (input_recorded): shared by the
 * front door (input.h) and the importers (import_common.h), so that neither includes
 * the other. */

/* Adding a trace format: write traces/import_NAME.{h,c} (the build takes every .c of
 * the folder) with a function of the input_format.import signature, and add its row to
 * FORMATS in traces/format.c (the importer's include beside it), at its place in the
 * order the messages list formats in. input.c sniffs and opens by the table; --from,
 * its --help line, the "not a format gpusim reads" message and --against-recorded's
 * default strategy and message follow from the row. Then describe it in
 * traces/IMPORT.md. */
#ifndef GPUSIM_FORMAT_H
#define GPUSIM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/status.h"
#include "traces/json.h"

struct imp_doc;

typedef struct input_options {
    int64_t device;   /* CUDA device ordinal to import (--device=N); -1 = the one with most events.
                       * TF profiles: the allocator "GPU_N_bfc" (or "N"). */
    bool prefetch;    /* a native trace in a regular file is read ahead on a second thread while
                       * it is replayed (traces/prefetch.h); the results are the same */
} input_options;

/* One trace format. A format is named by a pointer to its row; NULL stands for
 * "auto" (detect by content) where a format may be asked for. */
typedef struct input_format {
    const char *name;              /* the --from value: "torch-snapshot" */
    const char *summary;           /* "a PyTorch memory snapshot as JSON or pickle", for the message
                                    * about a file of no format gpusim reads */
    /* Keys that name the format when one of them is a key of the top-level object (or of
     * a bare array's first object), before any other format's key; NULL-terminated. */
    const char *const *sniff_keys;
    /* Content that starts with these magic_len bytes is this format (a pickle's PROTO
     * opcode), or NULL; import_magic reads such content. */
    const char *magic;
    size_t magic_len;
    /* Or, for binary content whose first bytes vary (a protobuf), a test of the first
     * bytes (at most 64 KiB, maybe fewer than the whole file); NULL for none. A format
     * with a magic_test is binary: import_magic reads it whatever its first bytes, also
     * when --from names it. */
    bool (*magic_test)(const unsigned char *data, size_t len);
    /* The importer of the parsed JSON document: the converted events, the recorded
     * numbers and the header into d (import_common.h); errors through imp_fail. NULL
     * for the native format, which trace.h streams (the one row with neither importer),
     * and for a binary format. */
    sim_status (*import)(const json_value *root, const input_options *opt, struct imp_doc *d);
    sim_status (*import_magic)(const unsigned char *data, size_t len, const input_options *opt, struct imp_doc *d);
    /* What `replay --against-recorded` can compare in a recording of this format, for the
     * message about one without ("a TensorFlow memory profile"), or NULL; and the strategy
     * that reproduces the recording's allocator there (its default), or NULL. */
    const char *recorded;
    const char *against_strategy;
    /* A file of this format records one process's allocator on one GPU (a PyTorch
     * snapshot): several given together, or a directory of them, are the ranks of one
     * job, each on its own GPU (`replay` replays them as one node). */
    bool one_rank;
} input_format;

size_t input_format_count(void);
/* The i-th format, i < input_format_count(), in the order messages list them. */
const input_format *input_format_get(size_t i);
/* f's name; "auto" for NULL. */
const char *input_format_name(const input_format *f);
/* The format a --from= value names (*out NULL for NULL or "auto"); false for an
 * unknown name. */
bool input_format_parse(const char *name, const input_format **out);
/* Whether f is the native format v1 (no importer at all: trace.h reads it). */
bool input_format_is_native(const input_format *f);
/* The native format's row. */
const input_format *input_format_native(void);

/* Which text of every format input_format_join lists. */
typedef enum input_format_text {
    INPUT_FORMAT_NAMES,     /* "auto" and the names */
    INPUT_FORMAT_SUMMARIES, /* the summaries */
    INPUT_FORMAT_RECORDED,  /* the recorded texts, of the formats that have one */
} input_format_text;
/* That text of every format, in table order, separated by sep and the last two by
 * last ("auto, gpusim ... or tf-profile"), into buf (always NUL-terminated); returns
 * buf. */
char *input_format_join(input_format_text what, const char *sep, const char *last, char *buf, size_t cap);

/* One block of a snapshot's final "segments", for the block-by-block comparison of
 * the end state (answers/against.h). */
typedef enum input_block_state {
    INPUT_BLOCK_ALLOCATED = 0,     /* active_allocated */
    INPUT_BLOCK_PENDING_FREE = 1,  /* active_pending_free: freed, its stream's events not yet complete */
    INPUT_BLOCK_INACTIVE = 2       /* inactive: free, cached */
} input_block_state;

typedef struct input_end_block {
    uint32_t segment;              /* numbered as input_recorded.placement_segment; UINT32_MAX when
                                    * the trace's segment events do not lead to this final segment */
    uint8_t state;                 /* input_block_state */
    uint64_t offset, size;         /* in the segment */
} input_end_block;

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
    /* The private pool (CUDA graphs, MemPool; traces/pool_id.h) each alloc went to,
     * 0 for the default pool, where placement_segment is set; NULL when the
     * recording has no allocation in a private pool. */
    const uint64_t *placement_pool;
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
    /* The blocks of the final segments (snapshots whose placements could be
     * followed, with no expandable segment at the end), sorted by (segment,
     * offset), or NULL. */
    const input_end_block *end_blocks;
    uint64_t n_end_blocks;
} input_recorded;

#endif
