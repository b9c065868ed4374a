// mock_driver_api.cpp — replaces c10/cuda/driver_api.cpp (validate/upstream/torch): the
// driver entry points are the mock's (mock_cuda.cpp) instead of dlopen'ed
// libcuda.so.1 symbols; NVML is absent, so get_nvml_handle() is null and c10
// leaves its process report out of OOM messages.
#include <c10/cuda/driver_api.h>

namespace c10::cuda {

DriverAPI *DriverAPI::get()
{
    static DriverAPI api = [] {
        DriverAPI a{};
#define GPUSIM_MOCK_BIND(name) a.name##_ = &name;
        C10_LIBCUDA_DRIVER_API(GPUSIM_MOCK_BIND)
#undef GPUSIM_MOCK_BIND
        return a;
    }();
    return &api;
}

void *DriverAPI::get_nvml_handle()
{
    return nullptr;
}

} // namespace c10::cuda
