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
 *  7. Shared buffers (HeapSimulator::ShareBuffer → ShareWith; the trace's "share"):
 *     a non-empty buffer that shares a non-empty earlier one is a colocation of that
 *     one's group (transitively: the group of its root, the first buffer, which
 *     alone is sorted and placed; need_allocation is false for the others). The
 *     spatial key is the root's own; the temporal key's live length runs from the
 *     root's start to the latest end in the group (GetTemporalBufferIntervalCompare).
 *     The root is placed against the buffers live at any member's interval
 *     (MakeFreeChunks over GetTransitiveColocations), in a gap that holds the
 *     group's largest size from its aligned start (GetMaxColocationSize, the
 *     finder's offset + max_colocation_size <= end); every member takes the root's
 *     offset with its own size and interval (CommitChunk), and counts towards the
 *     heap. A share of a zero-byte buffer does not colocate: the buffer is its own
 *     root. The heap limit compares the root's chunk.
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
    /* per buffer: the earlier buffer (< its index) whose memory it shares, or
     * PLAN_NONE; NULL when none shares (rule 7) */
    const uint32_t *share;
} plan_xla_config;

/* Plans b[0 .. n) (intervals in the XLA clock); offsets[i] receives buffer i's
 * offset in the arena. SIM_ENOMEM when the host is out of memory, SIM_EUSAGE when a
 * buffer is too large or a share names no earlier buffer. */
sim_status plan_xla(const plan_buffer *b, uint32_t n, const plan_xla_config *cfg, uint64_t *offsets,
                    plan_result *res);

/* Rule 7's groups: root[i] receives the first buffer of buffer i's group (i itself
 * when it shares nothing, or when it or the buffer it shares is empty). share[i] is
 * PLAN_NONE or below i (SIM_EUSAGE otherwise). */
sim_status plan_xla_roots(const plan_buffer *b, uint32_t n, const uint32_t *share, uint32_t *root);

#endif
