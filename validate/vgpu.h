/* vgpu.h — the few device calls the replay harness makes, behind a table so that the
 * same harness runs on a real GPU (vgpu_cuda.c, CUDA runtime API) and, for tests and
 * dry runs without a GPU, on a host-memory mock (vgpu_mock.c). Device pointers are
 * carried as uint64_t. Out of memory is a status (VGPU_OOM), never an abort: the
 * harness records it as data. */
#ifndef GPUSIM_VGPU_H
#define GPUSIM_VGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum vgpu_status {
    VGPU_OK = 0,
    VGPU_OOM = 1,   /* cudaErrorMemoryAllocation */
    VGPU_ERROR = 2  /* anything else; vgpu_ops.last_error says what */
} vgpu_status;

#define VGPU_MAX_STREAMS 64u

typedef struct vgpu_info {
    char name[256];             /* cudaDeviceProp.name, or "mock" */
    uint64_t total_global_mem;  /* cudaDeviceProp.totalGlobalMem */
    int driver_version;         /* cudaDriverGetVersion, e.g. 13000 */
    int runtime_version;        /* cudaRuntimeGetVersion */
    int cc_major, cc_minor;
} vgpu_info;

/* The default memory pool's counters (cudaMemPoolAttr*). */
typedef struct vgpu_pool_stats {
    uint64_t reserved_current, reserved_high;
    uint64_t used_current, used_high;
} vgpu_pool_stats;

typedef struct vgpu_ops {
    const char *name; /* "cuda" or "mock" */
    void (*info)(void *ctx, vgpu_info *out);
    /* cudaMemGetInfo */
    vgpu_status (*mem_get_info)(void *ctx, uint64_t *free_bytes, uint64_t *total_bytes);
    /* cudaMalloc / cudaFree (size > 0) */
    vgpu_status (*dmalloc)(void *ctx, uint64_t size, uint64_t *ptr);
    vgpu_status (*dfree)(void *ctx, uint64_t ptr);
    /* cudaMallocAsync / cudaFreeAsync on the default pool, on the harness's stream
     * number `stream` (< VGPU_MAX_STREAMS); free_async synchronizes that stream after
     * the free, so that the free is complete before the next event (deterministic
     * reuse: the trace has no kernels whose order could matter). */
    vgpu_status (*malloc_async)(void *ctx, uint64_t size, uint32_t stream, uint64_t *ptr);
    vgpu_status (*free_async)(void *ctx, uint64_t ptr, uint32_t stream);
    /* Default pool: release threshold UINT64_MAX, trim to 0, high-water marks reset. */
    vgpu_status (*pool_reset)(void *ctx);
    /* cudaDeviceSynchronize + cudaMemPoolTrimTo(pool, 0) (PyTorch's empty_cache for
     * backend:cudaMallocAsync). */
    vgpu_status (*pool_trim)(void *ctx);
    vgpu_status (*pool_stats)(void *ctx, vgpu_pool_stats *out);
    const char *(*last_error)(void *ctx);
    void (*close)(void *ctx);
} vgpu_ops;

/* The vgpu_ops of a backend called label whose callbacks are named prefix_info,
 * prefix_mem_get_info, ... prefix_close (one per member above). */
#define VGPU_OPS_OF(label, prefix)                                                                                    \
    {                                                                                                                 \
        .name = label, .info = prefix##_info, .mem_get_info = prefix##_mem_get_info, .dmalloc = prefix##_dmalloc,     \
        .dfree = prefix##_dfree, .malloc_async = prefix##_malloc_async, .free_async = prefix##_free_async,            \
        .pool_reset = prefix##_pool_reset, .pool_trim = prefix##_pool_trim, .pool_stats = prefix##_pool_stats,        \
        .last_error = prefix##_last_error, .close = prefix##_close,                                                   \
    }

typedef struct vgpu {
    const vgpu_ops *ops;
    void *ctx;
} vgpu;

/* The real device (only in builds with the CUDA toolkit). Creates the context
 * (cudaSetDevice + cudaFree(0)). VGPU_ERROR with a message in err otherwise. */
vgpu_status vgpu_cuda_open(int device, vgpu *out, char *err, size_t errcap);

typedef struct vgpu_mock_config {
    uint64_t capacity_bytes;   /* total */
    uint64_t context_bytes;    /* taken at open, like a CUDA context */
    uint64_t pool_chunk_bytes; /* the async pool grows in these (default 2 MiB) */
} vgpu_mock_config;

/* A host-side stand-in with a documented, simple charging rule (no GPU needed):
 * cudaMalloc charges round_up(size, 512) below 2 MiB and round_up(size, 2 MiB)
 * from 2 MiB (gpusim's `raw` model); the async pool keeps freed bytes and grows by
 * whole chunks. Addresses are handed out upwards, 2 MiB aligned for large ones. */
vgpu_status vgpu_mock_open(const vgpu_mock_config *cfg, vgpu *out, char *err, size_t errcap);

#endif
