/* raw.h — one cudaMalloc/cudaFree per allocation, no caching (PyTorch with
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1, JAX's `platform` allocator, TF `cuda_malloc`).
 * Rounding: requests under 2 MiB are charged in 512-byte units, larger ones in
 * whole 2 MiB pages (see raw.c for why). */
#ifndef GPUSIM_RAW_H
#define GPUSIM_RAW_H

#include "sim/strategy.h"

const strategy_ops *raw_strategy(void);

#endif
