/* plan.h — what the offline buffer planners (plan_xla.h, plan_tflite.h) read and
 * write, and how a trace becomes their input (docs/design.md §3, "Planned"). */

/* A planner sees buffers, each with a size and an inclusive live interval
 * [start, end] in its own logical clock, and returns one offset per buffer in a
 * single arena plus the arena's size. It never sees a trace: plan_trace spools the
 * alloc/free sequence of one process (buffer = one alloc..free pair, numbered by
 * its alloc's position among the allocs), and plan_lifetimes() turns it into the
 * intervals of one planner family's clock:
 *  - XLA (heap_simulator.cc, HeapSimulator::Run feeding Alloc/Free): the clock
 *    advances once on every alloc of a non-zero size and once on every free of a
 *    non-zero buffer, in file order; buffers never freed are freed after the last
 *    event, in alloc order; zero-byte buffers take no time and get offset 0.
 *  - TFLite (arena_planner.cc, PlanAllocations): a node is the event's position
 *    among all alloc and free events (0-based); a buffer lives from the node of its
 *    alloc to the node of its free, inclusive; a buffer never freed lives forever
 *    (PLAN_FOREVER, tflite's kNodeNotAssigned).
 * Event times (t, ready_t) and streams do not change a plan. */
#ifndef GPUSIM_PLAN_H
#define GPUSIM_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/status.h"

#define PLAN_FOREVER INT64_MAX /* end of a buffer that is never freed (TFLite clock) */
#define PLAN_NONE UINT32_MAX

typedef struct plan_buffer {
    uint64_t size;
    int64_t start; /* first logical time it is live */
    int64_t end;   /* last logical time it is live, inclusive; >= start */
} plan_buffer;

/* What a planner reports besides the offsets. */
typedef struct plan_result {
    uint64_t heap_size;  /* the arena: max(offset + size), summed over heaps */
    uint32_t n_heaps;    /* 1 unless a heap limit split the plan */
    const char *order;   /* the order that won ("spatial", "temporal") or the planner's own */
} plan_result;

/* The clock a planner family reads the trace in (see the header comment). */
typedef enum plan_clock {
    PLAN_CLOCK_XLA = 0,
    PLAN_CLOCK_TFLITE = 1
} plan_clock;

/* The alloc/free sequence of one process, spooled in memory: 4 bytes per event
 * and 8 bytes per buffer (a 1M-buffer trace: 16 MB). */
typedef struct plan_trace plan_trace;

plan_trace *plan_trace_new(void);
void plan_trace_free(plan_trace *t);
/* Appends an alloc; *id is the buffer's number (allocs so far). SIM_ENOMEM when
 * the host is out of memory or the trace has 2^31 events. */
sim_status plan_trace_alloc(plan_trace *t, uint64_t size, uint32_t *id);
/* Appends the free of a buffer that is allocated and not yet freed. */
sim_status plan_trace_release(plan_trace *t, uint32_t id);
uint32_t plan_trace_buffers(const plan_trace *t);
uint64_t plan_trace_events(const plan_trace *t);
uint64_t plan_trace_size(const plan_trace *t, uint32_t id);
bool plan_trace_freed(const plan_trace *t, uint32_t id);
/* XLA's NoFragmentationStatsHeap figure: the maximum over the event sequence of
 * the running sum of live sizes (heap_simulator.cc, NoFragmentationStatsHeap). */
uint64_t plan_trace_peak(const plan_trace *t);
/* Fills out[0 .. plan_trace_buffers(t)) with each buffer's interval in clock. */
void plan_lifetimes(const plan_trace *t, plan_clock clock, plan_buffer *out);

/* True when two inclusive intervals share a time. */
static inline bool plan_overlap(const plan_buffer *a, const plan_buffer *b)
{
    return a->start <= b->end && b->start <= a->end;
}

/* Sorts ids[0 .. n) stably by less(ctx, a, b) (a merge sort, O(n log n), no
 * recursion). SIM_ENOMEM when the host is out of memory. */
typedef bool (*plan_less)(const void *ctx, uint32_t a, uint32_t b);
sim_status plan_sort(uint32_t *ids, uint32_t n, plan_less less, const void *ctx);

/* A placed buffer as a planner walks them: offset order, then placement order. */
typedef struct plan_chunk {
    uint64_t off, size;
    uint32_t seq;
} plan_chunk;

/* Sorts c[0 .. n) by (off, seq), with tmp[0 .. n) as scratch: insertion sort for
 * short lists, else a least-significant-digit radix sort on the offset's bytes
 * (branch-free; passes whose byte is the same everywhere are skipped), then each
 * run of one offset by seq (insertion sort, or a radix sort for a long run). */
void plan_sort_chunks(plan_chunk *c, plan_chunk *tmp, uint32_t n);

/* x rounded up to a multiple of align (align > 0); UINT64_MAX if that overflows. */
uint64_t plan_align_up(uint64_t x, uint64_t align);

#endif
