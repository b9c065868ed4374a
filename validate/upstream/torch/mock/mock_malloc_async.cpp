// mock_malloc_async.cpp — replaces c10/cuda/CUDAMallocAsyncAllocator.cpp
// (validate/upstream/torch): the check drives the native backend only, so the
// cudaMallocAsync backend is absent; choosing it is an error, as PyTorch's own
// build without CUDA 11.4 reports it.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>

namespace c10::cuda::CUDACachingAllocator::CudaMallocAsync {

CUDAAllocator *allocator()
{
    TORCH_CHECK(false, "validate/upstream/torch: backend:cudaMallocAsync is not part of the mock build");
    return nullptr;
}

} // namespace c10::cuda::CUDACachingAllocator::CudaMallocAsync
