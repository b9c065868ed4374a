// mock_cudart13.cpp — what a compiled libc10_cuda.so (CUDA 13) asks of the runtime
// beyond the calls mock_cuda.cpp serves (validate/upstream/torch/README.md, "The
// shipped wheel"): the driver entry points (cudaGetDriverEntryPointByVersion, how
// c10's DriverAPI reaches libcuda) and the CUDA graph calls. Built into the mock
// libcudart.so.13 with mock_cuda.cpp (CUDART_VERSION 13000).
#include <cstddef>
#include <cstring>

#include "cuda.h"
#include "cuda_runtime_api.h"

static_assert(offsetof(cudaDeviceProp, totalGlobalMem) == 288, "CUDA 13's cudaDeviceProp layout");
static_assert(offsetof(cudaDeviceProp, major) == 360, "CUDA 13's cudaDeviceProp layout");
static_assert(offsetof(cudaDeviceProp, multiProcessorCount) == 384, "CUDA 13's cudaDeviceProp layout");
static_assert(sizeof(cudaDeviceProp) == 1008, "CUDA 13's cudaDeviceProp size");

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

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t, cudaGraphNode_t *, cudaGraphEdgeData *, size_t *n)
{
    *n = 0;
    return cudaErrorNotSupported; // no graph is ever captured
}

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
