// mock_libcuda.cpp — the mock driver as libcuda.so.1, for the wheels that dlopen the
// driver themselves (2.6 and older: dlopen("libcuda.so.1", RTLD_NOLOAD), then dlsym of
// each plain name; 2.8 on ask the runtime, cudaGetDriverEntryPointByVersion). Each
// name forwards to the mock runtime's own function, found once through that same
// entry point table (mock_cudart.cpp), so there is one mock device, in libcudart.
#include "cuda.h"
#include "cuda_runtime_api.h"

extern "C" cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                        unsigned long long flags,
                                                        cudaDriverEntryPointQueryResult *driverStatus);

namespace
{

template <typename F> F runtime_entry(const char *name)
{
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    cudaGetDriverEntryPointByVersion(name, &p, CUDART_VERSION, 0, &q);
    return reinterpret_cast<F>(p);
}

} // namespace

// The names c10's C10_LIBCUDA_DRIVER_API lists (2.6: every one must be found).
#define MOCK_FORWARD(name, params, args)                                                                               \
    CUresult name params                                                                                               \
    {                                                                                                                  \
        static const auto fwd = runtime_entry<decltype(&name)>(#name);                                                 \
        return fwd == nullptr ? CUDA_ERROR_NOT_SUPPORTED : fwd args;                                                   \
    }

extern "C" {
MOCK_FORWARD(cuGetErrorString, (CUresult e, const char **s), (e, s))
MOCK_FORWARD(cuDeviceGetAttribute, (int *pi, CUdevice_attribute a, CUdevice d), (pi, a, d))
MOCK_FORWARD(cuMemAddressReserve, (CUdeviceptr * p, size_t size, size_t align, CUdeviceptr addr, unsigned long long f),
             (p, size, align, addr, f))
MOCK_FORWARD(cuMemAddressFree, (CUdeviceptr p, size_t size), (p, size))
MOCK_FORWARD(cuMemCreate,
             (CUmemGenericAllocationHandle * h, size_t size, const CUmemAllocationProp *prop, unsigned long long f),
             (h, size, prop, f))
MOCK_FORWARD(cuMemRelease, (CUmemGenericAllocationHandle h), (h))
MOCK_FORWARD(cuMemMap, (CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h, unsigned long long f),
             (p, size, off, h, f))
MOCK_FORWARD(cuMemUnmap, (CUdeviceptr p, size_t size), (p, size))
MOCK_FORWARD(cuMemSetAccess, (CUdeviceptr p, size_t size, const CUmemAccessDesc *d, size_t n), (p, size, d, n))
MOCK_FORWARD(cuMemGetAllocationGranularity,
             (size_t * g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags o), (g, prop, o))
MOCK_FORWARD(cuMemExportToShareableHandle,
             (void *sh, CUmemGenericAllocationHandle h, CUmemAllocationHandleType t, unsigned long long f),
             (sh, h, t, f))
MOCK_FORWARD(cuMemImportFromShareableHandle, (CUmemGenericAllocationHandle * h, void *sh, CUmemAllocationHandleType t),
             (h, sh, t))
MOCK_FORWARD(cuMemsetD32Async, (CUdeviceptr p, unsigned int v, size_t n, CUstream s), (p, v, n, s))
MOCK_FORWARD(cuStreamWriteValue32, (CUstream s, CUdeviceptr p, unsigned int v, unsigned int f), (s, p, v, f))
} // extern "C"
