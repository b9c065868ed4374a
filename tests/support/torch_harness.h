/* torch_harness.h — a test harness (support/harness.h) over the `torch` strategy
 * with its three usual options given apart: PYTORCH_CUDA_ALLOC_CONF text, a memory
 * fraction and a PyTorch release, each left out when NULL. */
#ifndef GPUSIM_TEST_TORCH_HARNESS_H
#define GPUSIM_TEST_TORCH_HARNESS_H

#include <stdint.h>

#include "support/harness.h"

/* A torch instance on a device of capacity bytes with a context of context bytes
 * (compute capability 9.0); fails the test if create fails. */
harness *torch_harness_new(uint64_t capacity, uint64_t context, const char *alloc_conf, const char *fraction,
                           const char *version);

#endif
