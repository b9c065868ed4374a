/* plan_xla.h — XLA's buffer assignment heap: GlobalDecreasingSizeBestFitHeap in
 * the spatial and temporal orders, ChooseBestHeapAlgorithm over both, and the
 * constrained multi-heap variant, exact to openxla/xla as mirrored by ROCm/xla at
 * commit 183fa00cb5d82384463a1a7aed1ab06bc9026974 (2026-08-22):
 * xla/service/heap_simulator/heap_simulator.cc and xla/service/buffer_assignment.cc. */

/* Rules (in our words):
 *  1. Order (GetSpatialBufferIntervalCompare / GetTemporalBufferIntervalCompare):
 *     spatial = size descending, then live length (end − start) descending, then
 *     buffer id ascending; temporal = live length descending, then size
 *     descending, then id.
 *  2. Each buffer in that order is placed against the committed buffers whose
 *     inclusive intervals share a time with it (MakeFreeChunksList): their chunks
 *     are sorted by offset and merged where they overlap; the gap before each merged
 *     run starts at 0 or at the previous run's end rounded up to the alignment and
 *     is kept only if it holds the buffer's size; the space after the last run is
 *     one unbounded gap.
 *  3. Best fit (FindUnslicedChunkCandidates): among the kept gaps whose aligned
 *     start still leaves room for the size, the smallest gap wins, the lowest
 *     offset on ties; the buffer goes at the gap's aligned start.
 *  4. Heap size = max(offset + size). Zero-byte buffers take offset 0 and no space.
 *  5. Best of both (ChooseBestHeapAlgorithm::Finish, the default of
 *     buffer_assignment.cc): run spatial and temporal, keep the strictly smaller
 *     heap; a tie keeps spatial.
 *  6. Heap limit (ConstrainedGlobalDecreasingSizeBestFitHeap::
 *     AllocateBuffersInSingleHeap): walk the remaining buffers in order; place each
 *     as above in the current heap and commit it if offset + size <= limit or the
 *     heap is still empty, else leave it for the next heap; repeat with a fresh
 *     heap until none remain. The total is the sum of the heaps; here heap h starts
 *     where heap h − 1 ends, so offsets are in one arena.
 * Alignment: 256 bytes on GPU (xla/service/gpu/gpu_constants.h,
 * kXlaAllocatedBufferAlignBytes, since mid-2025; 128 before). */
#ifndef GPUSIM_PLAN_XLA_H
#define GPUSIM_PLAN_XLA_H

#include <stdint.h>

#include "plan.h"
#include "sim/status.h"

#define PLAN_XLA_ALIGNMENT 256u

typedef enum plan_xla_order {
    PLAN_XLA_BEST = 0,     /* ChooseBestHeapAlgorithm over spatial and temporal */
    PLAN_XLA_SPATIAL = 1,
    PLAN_XLA_TEMPORAL = 2
} plan_xla_order;

typedef struct plan_xla_config {
    plan_xla_order order;
    uint64_t alignment;   /* > 0 */
    uint64_t heap_limit;  /* bytes per heap; 0 = no limit (one heap) */
} plan_xla_config;

/* Plans b[0 .. n) (intervals in the XLA clock); offsets[i] receives buffer i's
 * offset in the arena. SIM_ENOMEM when the host is out of memory. */
sim_status plan_xla(const plan_buffer *b, uint32_t n, const plan_xla_config *cfg, uint64_t *offsets,
                    plan_result *res);

#endif
