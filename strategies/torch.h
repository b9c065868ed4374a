/* torch.h — the `torch` strategy: PyTorch's CUDA caching allocator (native backend,
 * c10/cuda/CUDACachingAllocator.cpp), byte-exact, with every PYTORCH_CUDA_ALLOC_CONF
 * option that changes placement (strategies/torch_conf.h). Options: `alloc_conf`
 * (the PYTORCH_CUDA_ALLOC_CONF string) and `memory_fraction` (a real in [0, 1], as
 * torch.cuda.set_per_process_memory_fraction). Stats carry torch.cuda.memory_stats() names. */
#ifndef GPUSIM_TORCH_H
#define GPUSIM_TORCH_H

#include "sim/strategy.h"

const strategy_ops *torch_strategy(void);

#endif
