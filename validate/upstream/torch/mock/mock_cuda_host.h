/* mock_cuda_host.h — the replay's side of the mock CUDA runtime and driver
 * (validate/upstream/torch): where device memory comes from, and when recorded events
 * complete. Plain C types so that both the mock (C++) and a C caller can use it.
 * One device, one host thread; the mock keeps no state between runs once
 * mock_cuda_reset() is called. */
#ifndef GPUSIM_MOCK_CUDA_HOST_H
#define GPUSIM_MOCK_CUDA_HOST_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mock_cuda_device {
    uint64_t total_bytes;        /* cudaMemGetInfo total, totalGlobalMem */
    void *ctx;
    /* cudaMalloc: take bytes at a fresh address; false when the device is full */
    bool (*alloc)(void *ctx, uint64_t bytes, uint64_t *addr);
    /* cudaFree, cuMemRelease: give bytes back */
    void (*release)(void *ctx, uint64_t bytes);
    /* cuMemAddressReserve: address space only */
    uint64_t (*reserve_va)(void *ctx, uint64_t bytes);
    /* cuMemCreate: back bytes (one page); false when the device is full */
    bool (*map)(void *ctx, uint64_t bytes);
    /* cudaMemGetInfo free */
    uint64_t (*free_bytes)(void *ctx);
    /* NVML's usedGpuMemory of this process: what it holds, its context included */
    uint64_t (*process_bytes)(void *ctx);
} mock_cuda_device;

/* Forget every allocation, stream, event and tag, and use dev (copied) from now on. */
void mock_cuda_reset(const mock_cuda_device *dev);

/* Every cudaEventRecord from now on records tag (0: an event that is complete at
 * once). The replay sets the tag of a deferred free before PyTorch records its
 * events, and sets it back to 0 afterwards. */
void mock_cuda_set_record_tag(uint64_t tag);
/* The next event recorded on stream (a cudaStream_t) with no record tag set takes
 * tag: PyTorch records a free's events later than the free when a capture was
 * underway at the free (insert_events_deferred_until_no_capture). One per record,
 * in order. */
void mock_cuda_queue_record_tag(const void *stream, uint64_t tag);
/* The work behind tag has finished (replay time reached ready_t): events recorded
 * with it query as complete. */
void mock_cuda_complete(uint64_t tag);
/* Whether tag has completed, by mock_cuda_complete or by a synchronize. */
bool mock_cuda_completed(uint64_t tag);

/* Calls seen since the reset. */
typedef struct mock_cuda_counts {
    uint64_t malloc_calls, malloc_failures, free_calls;
    uint64_t mem_create_calls, mem_create_failures, mem_release_calls;
    uint64_t event_records, event_syncs, device_syncs;
    uint64_t captures; /* cudaStreamBeginCapture calls that began one */
} mock_cuda_counts;
mock_cuda_counts mock_cuda_get_counts(void);

/* What this process holds on the device, its context included (NVML's usedGpuMemory). */
uint64_t mock_cuda_process_bytes(void);

#ifdef __cplusplus
}
#endif

#endif
