/* upstream_strategy.h — PyTorch's own CUDA caching allocator, built from a PyTorch
 * source tree against the mock CUDA runtime (validate/upstream/torch/README.md), behind
 * gpusim's strategy interface, so that gpusim's engine replays a trace through it
 * exactly as through the `torch` model: same event order, deferred frees, ids and
 * OOM handling (design.md §3). Options: `alloc_conf` (PYTORCH_CUDA_ALLOC_CONF,
 * parsed by PyTorch's own CUDAAllocatorConfig) and `memory_fraction`. Stats carry
 * the memory_stats() counters under the torch model's names.
 *
 * The real allocator is one per process (PyTorch keeps it in globals): one
 * instance may be created per process, and its alloc_conf is read from the
 * environment at the first creation. Deferred frees record the block on a second
 * stream (record_stream), so PyTorch defers them with events; the events complete
 * when the engine reaches ready_t (free_ready) or when PyTorch synchronizes.
 * Pool events drive the allocator's own entry points (beginAllocateToPool,
 * endAllocateToPool, releasePool; MempoolId_t {0, pool}), a capture scope with a
 * stream capture in the mock runtime, as CUDAGraph does. */
#ifndef GPUSIM_UPSTREAM_STRATEGY_H
#define GPUSIM_UPSTREAM_STRATEGY_H

#include "sim/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

const strategy_ops *upstream_torch_strategy(void);
/* Whether the release's allocator takes each MemPool option (setUseOnOOM from 2.8,
 * setNoSplit from 2.10): a trace whose pools set one cannot run without it. */
bool upstream_torch_has_use_on_oom(void);
bool upstream_torch_has_no_split(void);

#ifdef __cplusplus
}
#endif

#endif
