/* vgpu_cuda.c — vgpu.h on the real device through the CUDA runtime API. Plain C:
 * the harness launches no kernels, it only takes and gives back memory and reads
 * the driver's counters. Built only when CMake finds the CUDA toolkit. */
#include "vgpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

typedef struct vcuda {
    int device;
    cudaMemPool_t pool;
    cudaStream_t streams[VGPU_MAX_STREAMS];
    bool have_stream[VGPU_MAX_STREAMS];
    char err[512];
} vcuda;

static vgpu_status fail(vcuda *c, cudaError_t e, const char *what)
{
    snprintf(c->err, sizeof c->err, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* an OOM is data: clear the sticky-free error state */
        return VGPU_OOM;
    }
    return VGPU_ERROR;
}

static void cuda_info(void *ctx, vgpu_info *out)
{
    vcuda *c = ctx;
    memset(out, 0, sizeof *out);
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, c->device) == cudaSuccess) {
        snprintf(out->name, sizeof out->name, "%s", p.name);
        out->total_global_mem = (uint64_t)p.totalGlobalMem;
        out->cc_major = p.major;
        out->cc_minor = p.minor;
    }
    (void)cudaDriverGetVersion(&out->driver_version);
    (void)cudaRuntimeGetVersion(&out->runtime_version);
}

static vgpu_status cuda_mem_get_info(void *ctx, uint64_t *free_bytes, uint64_t *total_bytes)
{
    size_t f = 0, t = 0;
    cudaError_t e = cudaMemGetInfo(&f, &t);
    if (e != cudaSuccess)
        return fail(ctx, e, "cudaMemGetInfo");
    *free_bytes = (uint64_t)f;
    *total_bytes = (uint64_t)t;
    return VGPU_OK;
}

static vgpu_status cuda_dmalloc(void *ctx, uint64_t size, uint64_t *ptr)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)size);
    if (e != cudaSuccess)
        return fail(ctx, e, "cudaMalloc");
    *ptr = (uint64_t)(uintptr_t)p;
    return VGPU_OK;
}

static vgpu_status cuda_dfree(void *ctx, uint64_t ptr)
{
    cudaError_t e = cudaFree((void *)(uintptr_t)ptr);
    return e == cudaSuccess ? VGPU_OK : fail(ctx, e, "cudaFree");
}

static vgpu_status stream_of(vcuda *c, uint32_t stream, cudaStream_t *out)
{
    if (stream >= VGPU_MAX_STREAMS) {
        snprintf(c->err, sizeof c->err, "stream %u: the harness supports streams 0..%u", stream,
                 VGPU_MAX_STREAMS - 1);
        return VGPU_ERROR;
    }
    if (!c->have_stream[stream]) {
        cudaError_t e = cudaStreamCreateWithFlags(&c->streams[stream], cudaStreamNonBlocking);
        if (e != cudaSuccess)
            return fail(c, e, "cudaStreamCreateWithFlags");
        c->have_stream[stream] = true;
    }
    *out = c->streams[stream];
    return VGPU_OK;
}

static vgpu_status cuda_malloc_async(void *ctx, uint64_t size, uint32_t stream, uint64_t *ptr)
{
    vcuda *c = ctx;
    cudaStream_t s;
    vgpu_status st = stream_of(c, stream, &s);
    if (st != VGPU_OK)
        return st;
    void *p = NULL;
    cudaError_t e = cudaMallocAsync(&p, (size_t)size, s);
    if (e != cudaSuccess)
        return fail(c, e, "cudaMallocAsync");
    *ptr = (uint64_t)(uintptr_t)p;
    return VGPU_OK;
}

static vgpu_status cuda_free_async(void *ctx, uint64_t ptr, uint32_t stream)
{
    vcuda *c = ctx;
    cudaStream_t s;
    vgpu_status st = stream_of(c, stream, &s);
    if (st != VGPU_OK)
        return st;
    cudaError_t e = cudaFreeAsync((void *)(uintptr_t)ptr, s);
    if (e != cudaSuccess)
        return fail(c, e, "cudaFreeAsync");
    e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? VGPU_OK : fail(c, e, "cudaStreamSynchronize");
}

static vgpu_status cuda_pool_trim(void *ctx)
{
    vcuda *c = ctx;
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        return fail(c, e, "cudaDeviceSynchronize");
    e = cudaMemPoolTrimTo(c->pool, 0);
    return e == cudaSuccess ? VGPU_OK : fail(c, e, "cudaMemPoolTrimTo");
}

static vgpu_status cuda_pool_reset(void *ctx)
{
    vcuda *c = ctx;
    uint64_t threshold = UINT64_MAX;
    cudaError_t e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    if (e != cudaSuccess)
        return fail(c, e, "cudaMemPoolSetAttribute(ReleaseThreshold)");
    vgpu_status st = cuda_pool_trim(ctx);
    if (st != VGPU_OK)
        return st;
    uint64_t zero = 0;
    e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReservedMemHigh, &zero);
    if (e == cudaSuccess)
        e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrUsedMemHigh, &zero);
    return e == cudaSuccess ? VGPU_OK : fail(c, e, "cudaMemPoolSetAttribute(*MemHigh)");
}

static vgpu_status cuda_pool_stats(void *ctx, vgpu_pool_stats *out)
{
    vcuda *c = ctx;
    static const enum cudaMemPoolAttr attrs[4] = {cudaMemPoolAttrReservedMemCurrent, cudaMemPoolAttrReservedMemHigh,
                                                  cudaMemPoolAttrUsedMemCurrent, cudaMemPoolAttrUsedMemHigh};
    uint64_t v[4];
    for (int i = 0; i < 4; i++) {
        cudaError_t e = cudaMemPoolGetAttribute(c->pool, attrs[i], &v[i]);
        if (e != cudaSuccess)
            return fail(c, e, "cudaMemPoolGetAttribute");
    }
    *out = (vgpu_pool_stats){.reserved_current = v[0], .reserved_high = v[1], .used_current = v[2],
                             .used_high = v[3]};
    return VGPU_OK;
}

static const char *cuda_last_error(void *ctx)
{
    return ((vcuda *)ctx)->err;
}

static void cuda_close(void *ctx)
{
    vcuda *c = ctx;
    if (c == NULL)
        return;
    for (uint32_t i = 0; i < VGPU_MAX_STREAMS; i++)
        if (c->have_stream[i])
            (void)cudaStreamDestroy(c->streams[i]);
    free(c);
}

static const vgpu_ops CUDA_OPS = VGPU_OPS_OF("cuda", cuda);

vgpu_status vgpu_cuda_open(int device, vgpu *out, char *err, size_t errcap)
{
    vcuda *c = calloc(1, sizeof *c);
    if (c == NULL) {
        snprintf(err, errcap, "out of host memory");
        return VGPU_ERROR;
    }
    c->device = device;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaFree(NULL); /* creates the primary context now, before anything is measured */
    if (e == cudaSuccess)
        e = cudaDeviceGetDefaultMemPool(&c->pool, device);
    if (e != cudaSuccess) {
        snprintf(err, errcap, "CUDA device %d: %s (%s)", device, cudaGetErrorString(e), cudaGetErrorName(e));
        free(c);
        return VGPU_ERROR;
    }
    out->ops = &CUDA_OPS;
    out->ctx = c;
    return VGPU_OK;
}
