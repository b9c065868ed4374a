/* async.h — CUDA's stream-ordered allocator: cudaMallocAsync/cudaFreeAsync on a
 * device's default memory pool (PyTorch's backend:cudaMallocAsync, TensorFlow's and
 * XLA's TF_GPU_ALLOCATOR=cuda_malloc_async). */

/* What NVIDIA documents (CUDA Programming Guide, "Stream Ordered Memory Allocator";
 * runtime API cudaMemPoolSetAttribute, cudaMemPoolTrimTo) is modelled as written: the
 * release threshold, same-stream reuse at once, reuse on another stream only once the
 * free has completed, trimming, and the statistics under CUDA's names. What it leaves
 * open is a named option with a stated default (async.c lists the rules; validate/
 * measures them on a real pool: see validate/README.md). */
#ifndef GPUSIM_ASYNC_H
#define GPUSIM_ASYNC_H

#include "sim/strategy.h"

/* The strategy `async`. */
const strategy_ops *async_strategy(void);

#endif
