/* device.h — one simulated GPU shared by several processes: its capacity, the
 * CUDA context each process pays, the bytes each process holds, and the device
 * address space. Strategies take memory only through this module, so the engine
 * sees every process's footprint and "free on the device" means the same thing
 * to all of them. It knows nothing of blocks or allocators. */

/* Thread safety: a device is not thread-safe; separate devices (one per replay) may run
 * on separate threads. */
#ifndef GPUSIM_DEVICE_H
#define GPUSIM_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "seed.h"
#include "status.h"

typedef struct device device;

#define DEVICE_ADDR_ALIGN ((uint64_t)2 << 20) /* fresh bases are 2 MiB aligned */

typedef struct device_info {
    const char *name;        /* catalog name or "custom" (borrowed, static) */
    uint64_t capacity_bytes; /* what cudaMemGetInfo reports as total */
    uint64_t context_bytes;  /* per process, taken when the process starts */
    unsigned cc_major, cc_minor; /* compute capability, 0.0 when unknown */
    /* the published figure context_bytes defaults to (sim/gpu_context.h, static);
     * NULL when the context was given (--context) or measured */
    const struct gpu_context *context_default;
    /* of context_bytes, NCCL's buffers: a multi-rank trace header's meta.nccl_bytes, or
     * --nccl (nccl_given) */
    uint64_t nccl_bytes;
    bool nccl_given;
} device_info;

/* Create a device; NULL when out of host memory. The name is copied. */
device *device_new(const device_info *info);
void device_free(device *dev);

/* The device as configured (name valid while dev lives). */
device_info device_get_info(const device *dev);

/* A process starts: it pays its context. Returns the process index (0, 1, ...).
 * The context is charged even if it exceeds capacity; free bytes then read 0. */
uint32_t device_proc_start(device *dev);
/* The process ended (its program exited after an OOM): the device takes back its
 * context and everything it held. The strategy's own state is left untouched. */
void device_proc_exit(device *dev, uint32_t proc);
bool device_proc_alive(const device *dev, uint32_t proc);
uint32_t device_proc_count(const device *dev);

/* Bytes an allocator could still take from the device right now:
 * capacity − contexts − what every process holds (0 if that is negative). */
uint64_t device_free_bytes(const device *dev);
/* Bytes process proc holds (reserved by its allocator, contexts excluded). */
uint64_t device_proc_held(const device *dev, uint32_t proc);
/* Sum over live processes of (held + context): what nvidia-smi shows. */
uint64_t device_used_bytes(const device *dev);

/* Take `bytes` of memory and a fresh address range for process proc, like
 * cudaMalloc. SIM_OOM (and nothing changes) when bytes > device_free_bytes().
 * The base address is the previous highest end rounded up to 2 MiB (design.md §3).
 * Zero bytes is allowed and gets an address but no memory. */
sim_status device_alloc(device *dev, uint32_t proc, uint64_t bytes, uint64_t *addr_out);
/* Give back memory taken with device_alloc (or device_map). */
void device_release(device *dev, uint32_t proc, uint64_t bytes);

/* Reserve address space only (cuMemAddressReserve): no memory is taken. */
uint64_t device_reserve_va(device *dev, uint64_t bytes);
/* The addresses device_alloc is to return to process proc, in order: its k-th call
 * returns plan[k].addr when it asks for plan[k].bytes (a replay of a recording
 * placing segments where the real cudaMalloc did, so address-ordered choices are
 * the real ones). The first call asking for another size ends the plan; calls
 * after it get fresh bases above every address handed out. The plan is copied.
 * false when out of host memory. */
bool device_plan_va(device *dev, uint32_t proc, const sim_range *plan, uint32_t n);
/* Addresses below end are taken (a recorded start state put segments there, see
 * seed.h): fresh bases from now on start above it. */
void device_claim_va(device *dev, uint64_t end);
/* Map physical memory into reserved space (cuMemCreate+cuMemMap): memory only,
 * no address. SIM_OOM when bytes > device_free_bytes(). */
sim_status device_map(device *dev, uint32_t proc, uint64_t bytes);
/* How many device_map/device_alloc calls were refused (SIM_OOM) so far: 0 means no
 * allocator has yet met the capacity. */
uint64_t device_failures(const device *dev);

#endif
