/* Mock CUDA runtime umbrella header (validate/upstream/torch): the runtime API only. */
#ifndef GPUSIM_MOCK_CUDA_RUNTIME_H
#define GPUSIM_MOCK_CUDA_RUNTIME_H
#include "cuda.h"
#include "cuda_runtime_api.h"
#endif
