/* planned.h — a compiled graph's memory (tf.function/XLA, TFLite): every buffer's
 * offset in one arena is planned offline from the whole trace's lifetimes
 * (strategy_ops.plan), then the trace is replayed against that plan.
 *
 * Rules:
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

#endif
