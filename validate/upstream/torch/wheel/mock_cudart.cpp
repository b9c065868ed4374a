// mock_cudart.cpp — what a compiled libc10_cuda.so (CUDA 13, or 12 from PyTorch 2.8
// on) asks of the runtime beyond the calls mock_cuda.cpp serves
// (validate/upstream/torch/README.md, "The shipped wheel"): the driver entry points
// (cudaGetDriverEntryPointByVersion, and CUDA 12's cudaGetDriverEntryPoint: how c10's
// DriverAPI reaches libcuda) and the CUDA graph calls. Built into the mock
// libcudart.so.13 (CUDART_VERSION 13000) or libcudart.so.12 (GPUSIM_WHEEL_CUDA12)
// with mock_cuda.cpp.
#include <cstddef>
#include <cstring>

#include "cuda.h"
#include "cuda_runtime_api.h"

#if CUDART_VERSION >= 13000
static_assert(offsetof(cudaDeviceProp, totalGlobalMem) == 288, "CUDA 13's cudaDeviceProp layout");
static_assert(offsetof(cudaDeviceProp, major) == 360, "CUDA 13's cudaDeviceProp layout");
static_assert(offsetof(cudaDeviceProp, multiProcessorCount) == 384, "CUDA 13's cudaDeviceProp layout");
static_assert(sizeof(cudaDeviceProp) == 1008, "CUDA 13's cudaDeviceProp size");
#else
static_assert(offsetof(cudaDeviceProp, totalGlobalMem) == 288, "CUDA 12's cudaDeviceProp layout");
static_assert(offsetof(cudaDeviceProp, major) == 360, "CUDA 12's cudaDeviceProp layout");
static_assert(offsetof(cudaDeviceProp, multiProcessorCount) == 388, "CUDA 12's cudaDeviceProp layout");
static_assert(sizeof(cudaDeviceProp) == 1032, "CUDA 12's cudaDeviceProp size");
#endif

namespace {

// The driver calls DriverAPI requires that the mock has no use for: they exist
// (c10 asserts every required entry point is found) and say "not supported".
CUresult stub_not_supported()
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

struct entry {
    const char *name;
    void *fn;
};

template <typename F>
void *fn_ptr(F *f)
{
    return reinterpret_cast<void *>(f);
}

} // namespace

extern "C" {

// CUdevice cuDeviceGet(CUdevice *, int): device 0, the only one
static CUresult mock_cuDeviceGet(CUdevice *dev, int ordinal)
{
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = 0;
    return CUDA_SUCCESS;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult *driverStatus)
{
    (void)cudaVersion;
    (void)flags;
    static const entry table[] = {
        {"cuDeviceGet", fn_ptr(mock_cuDeviceGet)},
        {"cuDeviceGetAttribute", fn_ptr(cuDeviceGetAttribute)},
        {"cuMemGetAddressRange", fn_ptr(stub_not_supported)},
        {"cuMemAddressReserve", fn_ptr(cuMemAddressReserve)},
        {"cuMemRelease", fn_ptr(cuMemRelease)},
        {"cuMemMap", fn_ptr(cuMemMap)},
        {"cuMemAddressFree", fn_ptr(cuMemAddressFree)},
        {"cuMemSetAccess", fn_ptr(cuMemSetAccess)},
        {"cuMemUnmap", fn_ptr(cuMemUnmap)},
        {"cuMemCreate", fn_ptr(cuMemCreate)},
        {"cuMemGetAllocationGranularity", fn_ptr(cuMemGetAllocationGranularity)},
        {"cuMemExportToShareableHandle", fn_ptr(cuMemExportToShareableHandle)},
        {"cuMemImportFromShareableHandle", fn_ptr(cuMemImportFromShareableHandle)},
        {"cuMemRetainAllocationHandle", fn_ptr(stub_not_supported)},
        {"cuMemGetAllocationPropertiesFromHandle", fn_ptr(stub_not_supported)},
        {"cuMemsetD32Async", fn_ptr(cuMemsetD32Async)},
        {"cuStreamWriteValue32", fn_ptr(cuStreamWriteValue32)},
        {"cuGetErrorString", fn_ptr(cuGetErrorString)},
    };
    for (const entry &e : table) {
        if (std::strcmp(e.name, symbol) == 0) {
            *funcPtr = e.fn;
            if (driverStatus != nullptr)
                *driverStatus = cudaDriverEntryPointSuccess;
            return cudaSuccess;
        }
    }
    // the optional ones (multicast, green contexts, logs): absent, as on an old driver
    *funcPtr = nullptr;
    if (driverStatus != nullptr)
        *driverStatus = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

#if CUDART_VERSION >= 13000
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t, cudaGraphNode_t *, cudaGraphEdgeData *, size_t *n)
{
    *n = 0;
    return cudaErrorNotSupported; // captures hold no graph nodes (graph_capture_record_stream_reuse is not run)
}
#else
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t, cudaGraphNode_t *, size_t *n)
{
    *n = 0;
    return cudaErrorNotSupported; // captures hold no graph nodes (graph_capture_record_stream_reuse is not run)
}

// 2.9's allocator links these graph calls; the mock's captures hold no nodes
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t, cudaGraphNode_t *, size_t, unsigned int)
{
    return cudaErrorNotSupported;
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t)
{
    return cudaErrorNotSupported;
}

// (cudaGraphNodeGetType's second argument is an enum cudaGraphNodeType *)
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t, void *)
{
    return cudaErrorNotSupported;
}

// CUDA 12's older form: the driver's newest version of each name
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult *driverStatus)
{
    return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}
#endif

cudaError_t cudaDeviceGetGraphMemAttribute(int, enum cudaGraphMemAttributeType, void *value)
{
    std::memset(value, 0, sizeof(unsigned long long));
    return cudaSuccess;
}

cudaError_t cudaDeviceSetGraphMemAttribute(int, enum cudaGraphMemAttributeType, void *)
{
    return cudaSuccess;
}

} // extern "C"
