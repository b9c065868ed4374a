/* planned.h — a compiled graph's memory (tf.function/XLA, TFLite): every buffer's
 * offset in one arena is planned offline from the whole trace's lifetimes
 * (strategy_ops.plan), then the trace is replayed against that plan. */

/* Rules:
 *  1. Before the replay, the process's alloc/free sequence becomes buffers with
 *     lifetimes in the chosen planner's clock (strategies/plan.h) and the planner
 *     (plan_xla.h: xla, xla-spatial, xla-temporal; plan_tflite.h: tflite,
 *     tflite-gpu) gives each an offset and the arena its size (heap_size_bytes).
 *  2. The arena is taken from the device at the first allocation, whole, as a
 *     compiled program's temp buffer is; it is kept to the end (empty_cache does
 *     nothing). If it does not fit in what the device has left (capacity − context
 *     − other processes), that first allocation is out of memory: the program
 *     cannot run at all. The cause is `fragmentation` when the no-fragmentation
 *     peak would have fit, else `capacity`.
 *  3. alloc() and free() only mark the k-th buffer live or dead at its planned
 *     offset: allocated = the live requested bytes, reserved = the arena, free =
 *     the rest, largest free = the arena's largest hole now.
 *  4. A deferred free (ready_t later than t) ends the buffer at once: the plan
 *     was made from the program order, which ready_t does not change.
 * Figures: heap_size_bytes, no_fragmentation_peak_bytes (the max running sum of
 * live sizes, XLA's NoFragmentationStatsHeap) and fragmentation_size_bytes =
 * heap − that peak (XLA's HeapSimulator::Result::fragmentation_size). */
#ifndef GPUSIM_PLANNED_H
#define GPUSIM_PLANNED_H

#include "sim/strategy.h"

const strategy_ops *planned_strategy(void);

/* One buffer of a plan, for pictures: its offset and size in the arena, and the
 * first and last of its process's alloc/free events (0-based, the TFLite clock
 * of strategies/plan.h) at which it is live; a buffer never freed lasts to
 * n_events. */
typedef struct planned_rect {
    uint64_t off, size;
    uint64_t first, last;
} planned_rect;

/* For an instance s of planned (ops is its table): true with its plan's buffer
 * count, arena and the process's number of alloc/free events; false for an
 * instance of any other strategy, or one not planned yet. */
bool planned_plan_info(const strategy_ops *ops, const strategy *s, uint32_t *n_buffers, uint64_t *heap,
                       uint64_t *n_events);
/* Buffer k < n_buffers of a planned instance. */
void planned_plan_rect(const strategy *s, uint32_t k, planned_rect *out);

#endif
