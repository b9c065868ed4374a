/* plan_tflite.h — TFLite's two offline planners, exact to google-ai-edge/LiteRT
 * at commit f67457790c9c2ab67347d6fe53270e8d3df20868 (2026-08-21). */

/* The arena planner (tflite/arena_planner.cc, tflite/simple_memory_arena.cc):
 *  1. Order (ArenaPlanner::CreateTensorAllocationVector): buffers that live for
 *     the whole run (allocated at node 0 and never freed) first, by index; then
 *     size descending, then first node ascending (std::sort leaves full ties
 *     unordered; we break them by index).
 *  2. Placement (SimpleMemoryArena::Allocate): a zero-byte buffer gets offset 0
 *     and is not recorded. Otherwise walk the recorded buffers in offset order
 *     (equal offsets in the order they were recorded), skipping those whose
 *     inclusive node interval does not meet this one. `current` starts at 0 and
 *     becomes the largest end seen; before each recorded buffer the candidate is
 *     `current` rounded up to the alignment, accepted when candidate + size fits
 *     below that buffer's offset and (offset − candidate) is below the best fit so
 *     far, the best fit then being set to (offset − current), the UNaligned gap:
 *     the source compares one measure and stores another, and so do we. Without a
 *     candidate the buffer goes at `current` rounded up. Arena = max(offset + size).
 *     Alignment: kDefaultTensorAlignment = 64 (tflite/util.h).
 *
 * The GPU delegate (tflite/delegates/gpu/common/memory_management/
 * greedy_by_size_assignment.cc, GreedyBySizeAssignment):
 *  1. Order: a stable sort by size descending (CompareBySize), ties by index.
 *  2. Placement: walk the placed buffers in offset order (a buffer placed at an
 *     offset goes after those already at that offset), skipping those whose
 *     inclusive interval does not meet this one; `prev` starts at 0; for each, if
 *     its offset >= prev, the gap (offset − prev) is a candidate at prev when it
 *     holds the size and is strictly smaller than the best; then prev becomes the
 *     larger of prev and that buffer's end rounded up to the alignment. Without a
 *     candidate the buffer goes at prev. Zero-byte buffers are placed like any
 *     other. Total = max(offset + size). Alignment: base_addr_align_bytes, default 1
 *     (memory_management.h). */
#ifndef GPUSIM_PLAN_TFLITE_H
#define GPUSIM_PLAN_TFLITE_H

#include <stdint.h>

#include "plan.h"
#include "sim/status.h"

#define PLAN_TFLITE_ALIGNMENT 64u
#define PLAN_TFLITE_GPU_ALIGNMENT 1u

/* The arena planner over b[0 .. n) (TFLite clock). */
sim_status plan_tflite(const plan_buffer *b, uint32_t n, uint64_t alignment, uint64_t *offsets,
                       plan_result *res);
/* The GPU delegate's greedy-by-size offsets over b[0 .. n) (TFLite clock). */
sim_status plan_tflite_gpu(const plan_buffer *b, uint32_t n, uint64_t alignment, uint64_t *offsets,
                           plan_result *res);

/* SimpleMemoryArena::Allocate alone: places b[0 .. n) one after another in index
 * order (no sorting), as a sequence of Allocate calls does. For the upstream
 * arena tests. */
sim_status plan_tflite_arena_in_order(const plan_buffer *b, uint32_t n, uint64_t alignment,
                                      uint64_t *offsets, plan_result *res);

#endif
