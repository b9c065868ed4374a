// mock_nvml.cpp — the NVML calls c10's caching allocator makes (validate/upstream/torch):
// one device, this process alone on it, holding what the replay's device model says
// it holds (mock_cuda_process_bytes), so out-of-memory messages carry "this process
// has ... memory in use" as on a real machine. The source build links it with the
// mock runtime; the wheel check builds it as libnvidia-ml.so.1, which c10 dlopens.
#include <unistd.h>

#include "mock_cuda_host.h"
#include "nvml.h"

extern "C" {

nvmlReturn_t nvmlInit_v2(void)
{
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *, nvmlDevice_t *device)
{
    static int the_device; // any non-null handle
    *device = reinterpret_cast<nvmlDevice_t>(&the_device);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t, unsigned int, nvmlIntNvLinkDeviceType_t *)
{
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t, unsigned int, nvmlPciInfo_t *)
{
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t, unsigned int *count, nvmlProcessInfo_t *infos)
{
    if (*count < 1) {
        *count = 1;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = 1;
    infos[0].pid = static_cast<unsigned int>(getpid());
    infos[0].usedGpuMemory = mock_cuda_process_bytes();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    *version = 13000;
    return NVML_SUCCESS;
}

} // extern "C"
