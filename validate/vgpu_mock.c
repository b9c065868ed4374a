/* vgpu_mock.c — the host-memory stand-in for a GPU (see vgpu.h). It exists so that
 * the harness's logic (event order, OOM as data, sampling, mirroring a model's
 * regions, the measured JSON) is tested without a GPU; its numbers are the mock's
 * own rule, never a measurement. */
#include "vgpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

#define MOCK_2MIB ((uint64_t)2 << 20)

typedef struct mock_alloc {
    uint64_t ptr, charge, size;
    bool pool; /* from the async pool */
    bool live;
} mock_alloc;

typedef struct mock {
    vgpu_mock_config cfg;
    uint64_t used;      /* context + cudaMalloc charges + pool reserve */
    uint64_t next_addr;
    mock_alloc *a;
    size_t n, cap;
    vgpu_pool_stats pool;
    char err[256];
} mock;

static uint64_t round_up(uint64_t n, uint64_t a)
{
    return (n + a - 1) / a * a;
}

static uint64_t mock_charge(uint64_t size)
{
    return size < MOCK_2MIB ? round_up(size, 512) : round_up(size, MOCK_2MIB);
}

static void mock_info(void *ctx, vgpu_info *out)
{
    mock *m = ctx;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "mock");
    out->total_global_mem = m->cfg.capacity_bytes;
}

static vgpu_status mock_mem_get_info(void *ctx, uint64_t *free_bytes, uint64_t *total_bytes)
{
    mock *m = ctx;
    *total_bytes = m->cfg.capacity_bytes;
    *free_bytes = m->used >= m->cfg.capacity_bytes ? 0 : m->cfg.capacity_bytes - m->used;
    return VGPU_OK;
}

static vgpu_status mock_push(mock *m, uint64_t size, uint64_t charge, bool pool, uint64_t *ptr)
{
    if (!SIM_GROW(m->a, m->n + 1, m->cap)) {
        snprintf(m->err, sizeof m->err, "mock: out of host memory");
        return VGPU_ERROR;
    }
    uint64_t align = size >= MOCK_2MIB ? MOCK_2MIB : 512;
    uint64_t addr = round_up(m->next_addr, align);
    m->next_addr = addr + (size ? size : 1);
    m->a[m->n++] = (mock_alloc){.ptr = addr, .charge = charge, .size = size, .pool = pool, .live = true};
    *ptr = addr;
    return VGPU_OK;
}

static mock_alloc *mock_find(mock *m, uint64_t ptr)
{
    for (size_t i = m->n; i-- > 0;)
        if (m->a[i].live && m->a[i].ptr == ptr)
            return &m->a[i];
    return NULL;
}

static vgpu_status mock_dmalloc(void *ctx, uint64_t size, uint64_t *ptr)
{
    mock *m = ctx;
    uint64_t charge = mock_charge(size);
    if (charge > m->cfg.capacity_bytes - (m->used < m->cfg.capacity_bytes ? m->used : m->cfg.capacity_bytes)) {
        snprintf(m->err, sizeof m->err, "out of memory (mock)");
        return VGPU_OOM;
    }
    vgpu_status st = mock_push(m, size, charge, false, ptr);
    if (st == VGPU_OK)
        m->used += charge;
    return st;
}

static vgpu_status mock_dfree(void *ctx, uint64_t ptr)
{
    mock *m = ctx;
    mock_alloc *a = mock_find(m, ptr);
    if (a == NULL || a->pool) {
        snprintf(m->err, sizeof m->err, "mock: cudaFree of an unknown pointer 0x%llx", (unsigned long long)ptr);
        return VGPU_ERROR;
    }
    a->live = false;
    m->used -= a->charge;
    return VGPU_OK;
}

static vgpu_status mock_malloc_async(void *ctx, uint64_t size, uint32_t stream, uint64_t *ptr)
{
    mock *m = ctx;
    (void)stream;
    uint64_t need = m->pool.used_current + round_up(size, 512);
    if (need > m->pool.reserved_current) {
        uint64_t grow = round_up(need - m->pool.reserved_current, m->cfg.pool_chunk_bytes);
        uint64_t free_now = m->used >= m->cfg.capacity_bytes ? 0 : m->cfg.capacity_bytes - m->used;
        if (grow > free_now) {
            snprintf(m->err, sizeof m->err, "out of memory (mock pool)");
            return VGPU_OOM;
        }
        m->pool.reserved_current += grow;
        m->used += grow;
    }
    vgpu_status st = mock_push(m, size, round_up(size, 512), true, ptr);
    if (st != VGPU_OK)
        return st;
    m->pool.used_current = need;
    if (m->pool.used_current > m->pool.used_high)
        m->pool.used_high = m->pool.used_current;
    if (m->pool.reserved_current > m->pool.reserved_high)
        m->pool.reserved_high = m->pool.reserved_current;
    return VGPU_OK;
}

static vgpu_status mock_free_async(void *ctx, uint64_t ptr, uint32_t stream)
{
    mock *m = ctx;
    (void)stream;
    mock_alloc *a = mock_find(m, ptr);
    if (a == NULL || !a->pool) {
        snprintf(m->err, sizeof m->err, "mock: cudaFreeAsync of an unknown pointer 0x%llx",
                 (unsigned long long)ptr);
        return VGPU_ERROR;
    }
    a->live = false;
    m->pool.used_current -= a->charge;
    return VGPU_OK;
}

static vgpu_status mock_pool_trim(void *ctx)
{
    mock *m = ctx;
    uint64_t keep = round_up(m->pool.used_current, m->cfg.pool_chunk_bytes);
    if (keep < m->pool.reserved_current) {
        m->used -= m->pool.reserved_current - keep;
        m->pool.reserved_current = keep;
    }
    return VGPU_OK;
}

static vgpu_status mock_pool_reset(void *ctx)
{
    mock *m = ctx;
    mock_pool_trim(ctx);
    m->pool.reserved_high = m->pool.reserved_current;
    m->pool.used_high = m->pool.used_current;
    return VGPU_OK;
}

static vgpu_status mock_pool_stats(void *ctx, vgpu_pool_stats *out)
{
    *out = ((mock *)ctx)->pool;
    return VGPU_OK;
}

static const char *mock_last_error(void *ctx)
{
    return ((mock *)ctx)->err;
}

static void mock_close(void *ctx)
{
    mock *m = ctx;
    if (m == NULL)
        return;
    free(m->a);
    free(m);
}

static const vgpu_ops MOCK_OPS = VGPU_OPS_OF("mock", mock);

vgpu_status vgpu_mock_open(const vgpu_mock_config *cfg, vgpu *out, char *err, size_t errcap)
{
    if (cfg->context_bytes > cfg->capacity_bytes) {
        snprintf(err, errcap, "mock: the context (%llu B) exceeds the capacity (%llu B)",
                 (unsigned long long)cfg->context_bytes, (unsigned long long)cfg->capacity_bytes);
        return VGPU_ERROR;
    }
    mock *m = calloc(1, sizeof *m);
    if (m == NULL) {
        snprintf(err, errcap, "mock: out of host memory");
        return VGPU_ERROR;
    }
    m->cfg = *cfg;
    if (m->cfg.pool_chunk_bytes == 0)
        m->cfg.pool_chunk_bytes = MOCK_2MIB;
    m->used = cfg->context_bytes;
    m->next_addr = (uint64_t)1 << 40;
    out->ops = &MOCK_OPS;
    out->ctx = m;
    return VGPU_OK;
}
