/* vjson.c — the measured JSON of a replay, the driver probes, and the trace
 * fingerprint (see vrun.h; the format is described in validate/README.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/measured.h"
#include "sim/jsonw.h"
#include "vrun.h"

#define MIB_ ((uint64_t)1 << 20)

/* A key and a string formatted like "%d.%d" or "%016llx" (at most 199 characters). */
static void key_fmt(jsonw *w, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void key_fmt(jsonw *w, const char *key, const char *fmt, ...)
{
    char s[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    jsonw_key_str(w, key, s);
}

static void key_i64(jsonw *w, const char *key, int64_t v)
{
    jsonw_key(w, key);
    jsonw_i64(w, v);
}

static void json_measured(const vrun *v, const sim_run *run, jsonw *w)
{
    const sim_metrics *m = &run->total;
    jsonw_key(w, "measured");
    jsonw_object_inline(w);
    jsonw_key_bool(w, "completed", m->completed && !v->fatal);
    jsonw_key_u64(w, "events", run->events);
    jsonw_key_u64(w, "peak_device_bytes", v->peak_device_used);
    jsonw_key_u64(w, "peak_reserved_bytes", v->mode == VRUN_ASYNC ? v->pool.reserved_high : v->peak_reserved);
    if (v->mode == VRUN_ASYNC)
        jsonw_key_u64(w, "peak_allocated_bytes", v->pool.used_high);
    jsonw_key_u64(w, "peak_requested_bytes", m->peak_requested_bytes);
    jsonw_key_u64(w, "final_reserved_bytes", v->final_reserved);
    jsonw_key_u64(w, "final_device_bytes", v->final_device_used);
    if (v->mode == VRUN_MIRROR && v->expandable) {
        /* the harness backs mapped pages in 2 MiB cudaMallocs: its call count is not PyTorch's */
        jsonw_key_u64(w, "backing_mallocs", v->num_device_allocs);
        jsonw_key_u64(w, "backing_frees", v->num_device_frees);
    } else {
        jsonw_key_u64(w, "num_device_allocs", v->num_device_allocs);
        jsonw_key_u64(w, "num_device_frees", v->num_device_frees);
    }
    const sim_oom_record *o = &m->first_oom;
    bool real_oom = o->happened && (v->mode != VRUN_MIRROR || v->driver_refusals > 0);
    jsonw_key(w, "first_oom");
    if (real_oom) {
        jsonw_object_inline(w);
        jsonw_key_u64(w, "event", o->event);
        jsonw_key_u64(w, "t", o->t);
        jsonw_key_u64(w, "id", o->id);
        jsonw_key_u64(w, "size", o->size);
        jsonw_key_u64(w, "device_free_bytes", v->oom_device_free);
        jsonw_key_str(w, "cause", "driver");
        jsonw_key_str(w, "message", o->info.detail);
        jsonw_end(w);
    } else {
        jsonw_null(w);
    }
    if (v->mode == VRUN_MIRROR) {
        jsonw_key_u64(w, "peak_backed_bytes", v->peak_backed_bytes);
        jsonw_key_u64(w, "driver_refusals", v->driver_refusals);
        jsonw_key(w, "model_first_oom");
        if (o->happened && v->driver_refusals == 0) {
            jsonw_object_inline(w);
            jsonw_key_u64(w, "event", o->event);
            jsonw_key_u64(w, "size", o->info.size_bytes);
            jsonw_key_u64(w, "model_device_free_bytes", o->info.device_free_bytes);
            jsonw_key_u64(w, "real_device_free_bytes", v->oom_device_free);
            jsonw_key_str(w, "cause", sim_oom_cause_name(o->cause));
            jsonw_end(w);
        } else {
            jsonw_null(w);
        }
    }
    if (v->fatal)
        jsonw_key_str(w, "error", v->fatal_msg);
    jsonw_end(w);
}

/* "how" each measured number was read, in words. */
static void json_how(const vrun *v, jsonw *w)
{
    jsonw_key(w, "how");
    jsonw_object_inline(w);
    jsonw_key_str(w, "peak_device_bytes", "max over readings of cudaMemGetInfo total - free (context included)");
    if (v->mode == VRUN_ASYNC) {
        jsonw_key_str(w, "peak_reserved_bytes", "cudaMemPoolAttrReservedMemHigh");
        jsonw_key_str(w, "peak_allocated_bytes", "cudaMemPoolAttrUsedMemHigh");
    } else {
        jsonw_key_str(w, "peak_reserved_bytes", "peak_device_bytes - context_bytes (derived; nothing else subtracted)");
    }
    jsonw_key_str(w, "context_bytes",
                  "cudaMemGetInfo total - free after context creation, before the first allocation");
    key_fmt(w, "readings", "after every event%s, and before each free that follows an allocation",
            v->every > 1 ? " numbered a multiple of settings.every" : "");
    jsonw_end(w);
}

void vrun_json(const vrun *v, const sim_run *run, const vrun_meta *meta, sim_buf *b)
{
    vgpu_info gi;
    v->gpu.ops->info(v->gpu.ctx, &gi);
    const sim_run_source *src = &run->sources[0];
    uint64_t fnv = 0;
    bool have_fnv = measured_trace_fnv1a64(meta->trace_path, &fnv);

    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "format", MEASURED_FORMAT);
    key_i64(&w, "version", MEASURED_VERSION);
    jsonw_key_str(&w, "tool", "replay_cuda");
    jsonw_key_str(&w, "tool_version", GPUSIM_VERSION);
    jsonw_key_str(&w, "backend", meta->backend);
    jsonw_key_str(&w, "allocator", meta->allocator);
    jsonw_key(&w, "trace");
    jsonw_object_inline(&w);
    jsonw_key_str(&w, "path", meta->trace_path);
    jsonw_key_str(&w, "name", src->name);
    jsonw_key_u64(&w, "events", src->events);
    jsonw_key_u64(&w, "allocs", src->allocs);
    jsonw_key_u64(&w, "frees", src->frees);
    if (have_fnv)
        key_fmt(&w, "fnv1a64", "%016llx", (unsigned long long)fnv);
    jsonw_end(&w);
    jsonw_key(&w, "predict");
    jsonw_object_inline(&w);
    jsonw_key(&w, "strategy");
    if (meta->predict_strategy)
        jsonw_str(&w, meta->predict_strategy);
    else
        jsonw_null(&w);
    jsonw_key(&w, "options");
    jsonw_object_inline(&w);
    for (uint32_t i = 0; i < meta->n_predict_opts; i++)
        jsonw_key_str(&w, meta->predict_opts[i].key, meta->predict_opts[i].value);
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_key(&w, "settings");
    jsonw_object_inline(&w);
    jsonw_key_str(&w, "mode", vrun_mode_name(v->mode));
    jsonw_key_u64(&w, "every", v->every);
    if (v->mode == VRUN_ASYNC) {
        jsonw_key_str(&w, "release_threshold", "UINT64_MAX");
        jsonw_key_str(&w, "free_async", "then cudaStreamSynchronize");
    }
    if (v->mode == VRUN_MIRROR)
        jsonw_key_bool(&w, "expandable", v->expandable);
    jsonw_end(&w);
    jsonw_key(&w, "device");
    jsonw_object_inline(&w);
    jsonw_key_str(&w, "name", gi.name);
    jsonw_key_u64(&w, "total_bytes", v->total_bytes);
    jsonw_key_u64(&w, "total_global_mem", gi.total_global_mem);
    jsonw_key_u64(&w, "context_bytes", v->context_bytes);
    key_i64(&w, "driver_version", gi.driver_version);
    key_i64(&w, "runtime_version", gi.runtime_version);
    key_fmt(&w, "compute_capability", "%d.%d", gi.cc_major, gi.cc_minor);
    jsonw_end(&w);
    json_measured(v, run, &w);
    json_how(v, &w);
    if (v->mode == VRUN_ASYNC) {
        jsonw_key(&w, "stats");
        jsonw_object_inline(&w);
        jsonw_key_u64(&w, "reserved_mem_high", v->pool.reserved_high);
        jsonw_key_u64(&w, "used_mem_high", v->pool.used_high);
        jsonw_key_u64(&w, "reserved_mem_current", v->pool.reserved_current);
        jsonw_key_u64(&w, "used_mem_current", v->pool.used_current);
        jsonw_end(&w);
    }
    jsonw_key(&w, "addresses");
    jsonw_array_inline(&w);
    for (uint32_t i = 0; i < v->n_addrs; i++) {
        jsonw_array_inline(&w);
        jsonw_u64(&w, v->addrs[i].size);
        jsonw_u64(&w, v->addrs[i].ptr);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_key(&w, "curve");
    jsonw_object_inline(&w);
    jsonw_key(&w, "columns");
    jsonw_array_inline(&w);
    static const char *const COLUMNS[] = {"event", "t", "device_used", "reserved", "allocated"};
    for (size_t i = 0; i < sizeof COLUMNS / sizeof COLUMNS[0]; i++)
        jsonw_str(&w, COLUMNS[i]);
    jsonw_end(&w);
    jsonw_key(&w, "rows");
    jsonw_array_lines(&w, 2);
    for (uint64_t i = 0; i < v->n_curve; i++) {
        const vrun_sample *s = &v->curve[i];
        jsonw_array_inline(&w);
        jsonw_u64(&w, s->event);
        jsonw_u64(&w, s->t);
        jsonw_u64(&w, s->device_used);
        jsonw_u64(&w, s->reserved);
        jsonw_u64(&w, s->allocated);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}

/* ---------------------------------------------------------------- probes */

static uint64_t used_now(vgpu g, bool *ok)
{
    uint64_t fr = 0, tot = 0;
    if (g.ops->mem_get_info(g.ctx, &fr, &tot) != VGPU_OK) {
        *ok = false;
        return 0;
    }
    return tot - (fr < tot ? fr : tot);
}

/* A probe that failed, as an item of the open list. */
static void probe_error(jsonw *w, vgpu g, const char *what)
{
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %s", what, g.ops->last_error(g.ctx));
    jsonw_object_inline(w);
    jsonw_key_str(w, "error", msg);
    jsonw_end(w);
}

/* 1. one cudaMalloc at a time: what cudaMemGetInfo charges for it */
static void probe_single(vgpu g, jsonw *w, bool *ok)
{
    static const uint64_t SIZES[] = {1,         256,          512,          4096,         65536,
                                     MIB_,      2 * MIB_ - 1, 2 * MIB_,     2 * MIB_ + 1, 3 * MIB_,
                                     4 * MIB_,  20 * MIB_,    20 * MIB_ + 1, 64 * MIB_ + 1, 1024 * MIB_,
                                     1024 * MIB_ + 1};
    jsonw_key(w, "cudamalloc_single");
    jsonw_array(w); /* never empty: each size gives a row or an error */
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
        uint64_t before = used_now(g, ok), ptr = 0;
        if (g.ops->dmalloc(g.ctx, SIZES[i], &ptr) != VGPU_OK) {
            probe_error(w, g, "cudaMalloc");
            continue;
        }
        uint64_t after = used_now(g, ok);
        (void)g.ops->dfree(g.ctx, ptr);
        uint64_t back = used_now(g, ok);
        jsonw_object_inline(w);
        jsonw_key_u64(w, "size", SIZES[i]);
        key_i64(w, "charged", (int64_t)(after - before));
        key_i64(w, "after_free", (int64_t)(back - before));
        jsonw_key_u64(w, "ptr", ptr);
        jsonw_end(w);
    }
    jsonw_end(w);
}

/* 2. many small cudaMallocs: are they packed into shared pages? */
static void probe_packing(vgpu g, jsonw *w, bool *ok)
{
    static const uint64_t SMALL[] = {1, 512, 4096, 65536, 1048576};
    jsonw_key(w, "cudamalloc_packing");
    jsonw_array(w);
    for (size_t k = 0; k < sizeof SMALL / sizeof SMALL[0]; k++) {
        enum { N = 256 };
        uint64_t ptrs[N] = {0};
        uint64_t before = used_now(g, ok);
        uint32_t got = 0;
        jsonw_object_inline(w);
        jsonw_key_u64(w, "size", SMALL[k]);
        key_i64(w, "count", N);
        jsonw_key(w, "charged_after");
        jsonw_array_inline(w);
        for (uint32_t i = 0; i < N; i++) {
            if (g.ops->dmalloc(g.ctx, SMALL[k], &ptrs[i]) != VGPU_OK)
                break;
            got++;
            if ((i + 1) % 32 == 0)
                jsonw_u64(w, used_now(g, ok) - before);
        }
        jsonw_end(w);
        jsonw_key_u64(w, "allocated", got);
        jsonw_key(w, "first_ptrs");
        jsonw_array_inline(w);
        for (uint32_t i = 0; i < got && i < 8; i++)
            jsonw_u64(w, ptrs[i]);
        jsonw_end(w);
        jsonw_end(w);
        for (uint32_t i = 0; i < got; i++)
            (void)g.ops->dfree(g.ctx, ptrs[i]);
    }
    jsonw_end(w);
}

/* 3. address order of fresh 2 MiB / 20 MiB allocations, and reuse after a free */
static void probe_order(vgpu g, jsonw *w)
{
    enum { N = 8 };
    uint64_t p2[N] = {0}, p20[N] = {0}, again = 0, again20 = 0;
    jsonw_key(w, "address_order");
    jsonw_object_inline(w);
    jsonw_key(w, "2MiB");
    jsonw_array_inline(w);
    for (int i = 0; i < N; i++) {
        (void)g.ops->dmalloc(g.ctx, 2 * MIB_, &p2[i]);
        jsonw_u64(w, p2[i]);
    }
    jsonw_end(w);
    jsonw_key(w, "20MiB");
    jsonw_array_inline(w);
    for (int i = 0; i < N; i++) {
        (void)g.ops->dmalloc(g.ctx, 20 * MIB_, &p20[i]);
        jsonw_u64(w, p20[i]);
    }
    jsonw_end(w);
    (void)g.ops->dfree(g.ctx, p2[2]);
    (void)g.ops->dmalloc(g.ctx, 2 * MIB_, &again);
    (void)g.ops->dfree(g.ctx, p20[2]);
    (void)g.ops->dmalloc(g.ctx, 20 * MIB_, &again20);
    jsonw_key_u64(w, "2MiB_freed", p2[2]);
    jsonw_key_u64(w, "2MiB_next", again);
    jsonw_key_u64(w, "20MiB_freed", p20[2]);
    jsonw_key_u64(w, "20MiB_next", again20);
    jsonw_end(w);
    p2[2] = again;
    p20[2] = again20;
    for (int i = 0; i < N; i++) {
        if (p2[i])
            (void)g.ops->dfree(g.ctx, p2[i]);
        if (p20[i])
            (void)g.ops->dfree(g.ctx, p20[i]);
    }
}

/* 4. the async pool: how reserved memory grows with allocations */
static void probe_pool(vgpu g, jsonw *w, bool *ok)
{
    static const uint64_t ASZ[] = {1, 512, MIB_, 2 * MIB_, 2 * MIB_ + 1, 20 * MIB_, 32 * MIB_, 33 * MIB_,
                                   100 * MIB_, 1024 * MIB_ + 1};
    uint64_t aptrs[sizeof ASZ / sizeof ASZ[0]] = {0};
    jsonw_key(w, "async_pool");
    jsonw_object_inline(w);
    jsonw_key(w, "steps");
    jsonw_array(w); /* never empty: a row or an error per size, or the reset's error */
    bool reset_ok = g.ops->pool_reset(g.ctx) == VGPU_OK;
    if (!reset_ok)
        probe_error(w, g, "pool reset");
    for (size_t i = 0; reset_ok && i < sizeof ASZ / sizeof ASZ[0]; i++) {
        vgpu_pool_stats ps = {0};
        uint64_t before = used_now(g, ok);
        if (g.ops->malloc_async(g.ctx, ASZ[i], 0, &aptrs[i]) != VGPU_OK ||
            g.ops->pool_stats(g.ctx, &ps) != VGPU_OK) {
            probe_error(w, g, "cudaMallocAsync");
            continue;
        }
        jsonw_object_inline(w);
        jsonw_key_u64(w, "size", ASZ[i]);
        jsonw_key_u64(w, "reserved", ps.reserved_current);
        jsonw_key_u64(w, "used", ps.used_current);
        key_i64(w, "device_delta", (int64_t)(used_now(g, ok) - before));
        jsonw_end(w);
    }
    jsonw_end(w);
    if (reset_ok) {
        for (size_t i = 0; i < sizeof ASZ / sizeof ASZ[0]; i++)
            if (aptrs[i])
                (void)g.ops->free_async(g.ctx, aptrs[i], 0);
        vgpu_pool_stats after_free = {0}, after_trim = {0};
        (void)g.ops->pool_stats(g.ctx, &after_free);
        (void)g.ops->pool_trim(g.ctx);
        (void)g.ops->pool_stats(g.ctx, &after_trim);
        jsonw_key_u64(w, "reserved_after_free_all", after_free.reserved_current);
        jsonw_key_u64(w, "reserved_after_trim", after_trim.reserved_current);
    }
    jsonw_end(w);
}

void vrun_probes(vgpu g, sim_buf *b)
{
    bool ok = true;
    vgpu_info gi;
    g.ops->info(g.ctx, &gi);
    uint64_t ctx_used = used_now(g, &ok);
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "format", "gpusim-probes");
    jsonw_key_u64(&w, "version", 1);
    jsonw_key_str(&w, "backend", g.ops->name);
    jsonw_key(&w, "device");
    jsonw_object_inline(&w);
    jsonw_key_str(&w, "name", gi.name);
    jsonw_key_u64(&w, "total_global_mem", gi.total_global_mem);
    jsonw_key_u64(&w, "used_before_first_allocation", ctx_used);
    key_i64(&w, "driver_version", gi.driver_version);
    key_i64(&w, "runtime_version", gi.runtime_version);
    jsonw_end(&w);
    probe_single(g, &w, &ok);
    probe_packing(g, &w, &ok);
    probe_order(g, &w);
    probe_pool(g, &w, &ok);
    jsonw_key_u64(&w, "used_at_end", used_now(g, &ok));
    jsonw_key_bool(&w, "readings_ok", ok);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}
