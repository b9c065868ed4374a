// mock_driver_api.cpp — replaces c10/cuda/driver_api.cpp (validate/upstream/torch): the
// driver and NVML entry points are the mock's (mock_cuda.cpp) instead of dlopen'ed
// libcuda.so.1 and libnvidia-ml.so.1 symbols; NVML reports this process alone on
// the device, so OOM messages carry "this process has ... memory in use" as on a
// real machine.
#include <c10/cuda/driver_api.h>

namespace c10::cuda {

DriverAPI *DriverAPI::get()
{
    static DriverAPI api = [] {
        DriverAPI a{};
#define GPUSIM_MOCK_BIND(name) a.name##_ = &name;
        C10_LIBCUDA_DRIVER_API(GPUSIM_MOCK_BIND)
        C10_NVML_DRIVER_API(GPUSIM_MOCK_BIND)
#undef GPUSIM_MOCK_BIND
        return a;
    }();
    return &api;
}

void *DriverAPI::get_nvml_handle()
{
    static int handle; // any non-null value: NVML is "loaded"
    return &handle;
}

} // namespace c10::cuda
