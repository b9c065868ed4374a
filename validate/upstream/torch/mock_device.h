/* mock_device.h — the mock CUDA runtime's device (mock/mock_cuda_host.h) served by one
 * process of gpusim's device model (sim/device.h): cudaMalloc and cuMemCreate take from
 * it, cudaMemGetInfo and NVML read it. Shared by the upstream strategy
 * (upstream_strategy.cpp) and the snapshot tool (snapshot_tool.cpp); C++ only. */
#ifndef GPUSIM_UPSTREAM_MOCK_DEVICE_H
#define GPUSIM_UPSTREAM_MOCK_DEVICE_H

#include <c10/core/Device.h>

extern "C" {
#include "sim/device.h"
}
#include "mock/mock_cuda_host.h"

/* The process whose memory the mock's device is. */
struct mock_process {
    device *dev = nullptr;
    uint32_t proc = 0;
};

namespace mock_process_detail
{
inline bool alloc(void *ctx, uint64_t bytes, uint64_t *addr)
{
    mock_process *p = static_cast<mock_process *>(ctx);
    return device_alloc(p->dev, p->proc, bytes, addr) == SIM_OK;
}

inline void release(void *ctx, uint64_t bytes)
{
    mock_process *p = static_cast<mock_process *>(ctx);
    device_release(p->dev, p->proc, bytes);
}

inline uint64_t reserve_va(void *ctx, uint64_t bytes)
{
    return device_reserve_va(static_cast<mock_process *>(ctx)->dev, bytes);
}

inline bool map(void *ctx, uint64_t bytes)
{
    mock_process *p = static_cast<mock_process *>(ctx);
    return device_map(p->dev, p->proc, bytes) == SIM_OK;
}

inline uint64_t free_bytes(void *ctx)
{
    return device_free_bytes(static_cast<mock_process *>(ctx)->dev);
}

inline uint64_t process_bytes(void *ctx)
{
    mock_process *p = static_cast<mock_process *>(ctx);
    return device_proc_held(p->dev, p->proc) + device_get_info(p->dev).context_bytes;
}
} // namespace mock_process_detail

/* mock_cuda_reset with p (borrowed: it must outlive the replay) as the device of
 * total_bytes. */
inline void mock_process_reset(mock_process *p, uint64_t total_bytes)
{
    mock_cuda_device md{};
    md.total_bytes = total_bytes;
    md.ctx = p;
    md.alloc = mock_process_detail::alloc;
    md.release = mock_process_detail::release;
    md.reserve_va = mock_process_detail::reserve_va;
    md.map = mock_process_detail::map;
    md.free_bytes = mock_process_detail::free_bytes;
    md.process_bytes = mock_process_detail::process_bytes;
    mock_cuda_reset(&md);
}

/* c10's hasPrimaryContext: the mock's device always has one. */
inline bool mock_has_primary_context(c10::DeviceIndex)
{
    return true;
}

#endif
