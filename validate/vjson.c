/* vjson.c — the measured JSON of a replay, the driver probes, and the trace
 * fingerprint (see vrun.h; the format is described in validate/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/measured.h"
#include "vrun.h"

#define MIB_ ((uint64_t)1 << 20)

static void u64(sim_buf *b, const char *key, uint64_t v, bool comma)
{
    sim_buf_printf(b, "%s\"%s\": %llu", comma ? ", " : "", key, (unsigned long long)v);
}

void vrun_json(const vrun *v, const sim_run *run, const vrun_meta *meta, sim_buf *b)
{
    vgpu_info gi;
    v->gpu.ops->info(v->gpu.ctx, &gi);
    const sim_metrics *m = &run->total;
    const sim_run_source *src = &run->sources[0];
    uint64_t fnv = 0;
    bool have_fnv = measured_trace_fnv1a64(meta->trace_path, &fnv);

    sim_buf_printf(b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", MEASURED_FORMAT, MEASURED_VERSION);
    sim_buf_puts(b, "  \"tool\": \"replay_cuda\",\n  \"tool_version\": \"" GPUSIM_VERSION "\",\n");
    sim_buf_puts(b, "  \"backend\": ");
    sim_buf_json_str(b, meta->backend);
    sim_buf_puts(b, ",\n  \"allocator\": ");
    sim_buf_json_str(b, meta->allocator);
    sim_buf_puts(b, ",\n  \"trace\": {\"path\": ");
    sim_buf_json_str(b, meta->trace_path);
    sim_buf_puts(b, ", \"name\": ");
    sim_buf_json_str(b, src->name);
    u64(b, "events", src->events, true);
    u64(b, "allocs", src->allocs, true);
    u64(b, "frees", src->frees, true);
    if (have_fnv)
        sim_buf_printf(b, ", \"fnv1a64\": \"%016llx\"", (unsigned long long)fnv);
    sim_buf_puts(b, "},\n  \"predict\": {\"strategy\": ");
    if (meta->predict_strategy)
        sim_buf_json_str(b, meta->predict_strategy);
    else
        sim_buf_puts(b, "null");
    sim_buf_puts(b, ", \"options\": {");
    for (uint32_t i = 0; i < meta->n_predict_opts; i++) {
        sim_buf_puts(b, i ? ", " : "");
        sim_buf_json_str(b, meta->predict_opts[i].key);
        sim_buf_puts(b, ": ");
        sim_buf_json_str(b, meta->predict_opts[i].value);
    }
    sim_buf_printf(b, "}},\n  \"settings\": {\"mode\": \"%s\", \"every\": %llu", vrun_mode_name(v->mode),
                   (unsigned long long)v->every);
    if (v->mode == VRUN_ASYNC)
        sim_buf_puts(b, ", \"release_threshold\": \"UINT64_MAX\", \"free_async\": \"then cudaStreamSynchronize\"");
    if (v->mode == VRUN_MIRROR)
        sim_buf_printf(b, ", \"expandable\": %s", v->expandable ? "true" : "false");
    sim_buf_puts(b, "},\n  \"device\": {\"name\": ");
    sim_buf_json_str(b, gi.name);
    u64(b, "total_bytes", v->total_bytes, true);
    u64(b, "total_global_mem", gi.total_global_mem, true);
    u64(b, "context_bytes", v->context_bytes, true);
    sim_buf_printf(b, ", \"driver_version\": %d, \"runtime_version\": %d, \"compute_capability\": \"%d.%d\"},\n",
                   gi.driver_version, gi.runtime_version, gi.cc_major, gi.cc_minor);

    bool completed = m->completed && !v->fatal;
    sim_buf_printf(b, "  \"measured\": {\"completed\": %s", completed ? "true" : "false");
    u64(b, "events", run->events, true);
    u64(b, "peak_device_bytes", v->peak_device_used, true);
    u64(b, "peak_reserved_bytes", v->mode == VRUN_ASYNC ? v->pool.reserved_high : v->peak_reserved, true);
    if (v->mode == VRUN_ASYNC)
        u64(b, "peak_allocated_bytes", v->pool.used_high, true);
    u64(b, "peak_requested_bytes", m->peak_requested_bytes, true);
    u64(b, "final_reserved_bytes", v->final_reserved, true);
    u64(b, "final_device_bytes", v->final_device_used, true);
    if (v->mode == VRUN_MIRROR && v->expandable) {
        /* the harness backs mapped pages in 2 MiB cudaMallocs: its call count is not PyTorch's */
        u64(b, "backing_mallocs", v->num_device_allocs, true);
        u64(b, "backing_frees", v->num_device_frees, true);
    } else {
        u64(b, "num_device_allocs", v->num_device_allocs, true);
        u64(b, "num_device_frees", v->num_device_frees, true);
    }
    const sim_oom_record *o = &m->first_oom;
    bool real_oom = o->happened && (v->mode != VRUN_MIRROR || v->driver_refusals > 0);
    sim_buf_puts(b, ", \"first_oom\": ");
    if (real_oom) {
        sim_buf_printf(b, "{\"event\": %llu, \"t\": %llu, \"id\": %llu, \"size\": %llu",
                       (unsigned long long)o->event, (unsigned long long)o->t, (unsigned long long)o->id,
                       (unsigned long long)o->size);
        u64(b, "device_free_bytes", v->oom_device_free, true);
        sim_buf_printf(b, ", \"cause\": \"%s\", \"message\": ", v->mode == VRUN_MIRROR ? "driver" : "driver");
        sim_buf_json_str(b, o->info.detail);
        sim_buf_puts(b, "}");
    } else {
        sim_buf_puts(b, "null");
    }
    if (v->mode == VRUN_MIRROR) {
        u64(b, "peak_backed_bytes", v->peak_backed_bytes, true);
        u64(b, "driver_refusals", v->driver_refusals, true);
        sim_buf_puts(b, ", \"model_first_oom\": ");
        if (o->happened && v->driver_refusals == 0) {
            sim_buf_printf(b, "{\"event\": %llu, \"size\": %llu", (unsigned long long)o->event,
                           (unsigned long long)o->info.size_bytes);
            u64(b, "model_device_free_bytes", o->info.device_free_bytes, true);
            u64(b, "real_device_free_bytes", v->oom_device_free, true);
            sim_buf_printf(b, ", \"cause\": \"%s\"}", sim_oom_cause_name(o->cause));
        } else {
            sim_buf_puts(b, "null");
        }
    }
    if (v->fatal) {
        sim_buf_puts(b, ", \"error\": ");
        sim_buf_json_str(b, v->fatal_msg);
    }
    sim_buf_puts(b, "},\n  \"how\": {");
    sim_buf_puts(b, "\"peak_device_bytes\": \"max over readings of cudaMemGetInfo total - free (context included)\"");
    if (v->mode == VRUN_ASYNC)
        sim_buf_puts(b, ", \"peak_reserved_bytes\": \"cudaMemPoolAttrReservedMemHigh\", "
                        "\"peak_allocated_bytes\": \"cudaMemPoolAttrUsedMemHigh\"");
    else
        sim_buf_puts(b, ", \"peak_reserved_bytes\": \"peak_device_bytes - context_bytes (derived; nothing else "
                        "subtracted)\"");
    sim_buf_puts(b, ", \"context_bytes\": \"cudaMemGetInfo total - free after context creation, before the "
                    "first allocation\"");
    sim_buf_printf(b, ", \"readings\": \"after every event%s, and before each free that follows an "
                      "allocation\"}",
                   v->every > 1 ? " numbered a multiple of settings.every" : "");
    if (v->mode == VRUN_ASYNC) {
        sim_buf_puts(b, ",\n  \"stats\": {");
        u64(b, "reserved_mem_high", v->pool.reserved_high, false);
        u64(b, "used_mem_high", v->pool.used_high, true);
        u64(b, "reserved_mem_current", v->pool.reserved_current, true);
        u64(b, "used_mem_current", v->pool.used_current, true);
        sim_buf_puts(b, "}");
    }
    sim_buf_puts(b, ",\n  \"addresses\": [");
    for (uint32_t i = 0; i < v->n_addrs; i++)
        sim_buf_printf(b, "%s[%llu, %llu]", i ? ", " : "", (unsigned long long)v->addrs[i].size,
                       (unsigned long long)v->addrs[i].ptr);
    sim_buf_puts(b, "],\n  \"curve\": {\"columns\": [\"event\", \"t\", \"device_used\", \"reserved\", "
                    "\"allocated\"], \"rows\": [");
    for (uint64_t i = 0; i < v->n_curve; i++) {
        const vrun_sample *s = &v->curve[i];
        sim_buf_printf(b, "%s\n    [%llu, %llu, %llu, %llu, %llu]", i ? "," : "", (unsigned long long)s->event,
                       (unsigned long long)s->t, (unsigned long long)s->device_used,
                       (unsigned long long)s->reserved, (unsigned long long)s->allocated);
    }
    sim_buf_puts(b, "]}\n}\n");
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

static void probe_error(sim_buf *b, vgpu g, const char *what, bool *first)
{
    sim_buf_printf(b, "%s\n    {\"error\": ", *first ? "" : ",");
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %s", what, g.ops->last_error(g.ctx));
    sim_buf_json_str(b, msg);
    sim_buf_puts(b, "}");
    *first = false;
}

void vrun_probes(vgpu g, sim_buf *b)
{
    static const uint64_t SIZES[] = {1,         256,          512,          4096,         65536,
                                     MIB_,      2 * MIB_ - 1, 2 * MIB_,     2 * MIB_ + 1, 3 * MIB_,
                                     4 * MIB_,  20 * MIB_,    20 * MIB_ + 1, 64 * MIB_ + 1, 1024 * MIB_,
                                     1024 * MIB_ + 1};
    bool ok = true;
    vgpu_info gi;
    g.ops->info(g.ctx, &gi);
    uint64_t ctx_used = used_now(g, &ok);
    sim_buf_puts(b, "{\n  \"format\": \"gpusim-probes\",\n  \"version\": 1,\n  \"backend\": ");
    sim_buf_json_str(b, g.ops->name);
    sim_buf_puts(b, ",\n  \"device\": {\"name\": ");
    sim_buf_json_str(b, gi.name);
    u64(b, "total_global_mem", gi.total_global_mem, true);
    u64(b, "used_before_first_allocation", ctx_used, true);
    sim_buf_printf(b, ", \"driver_version\": %d, \"runtime_version\": %d},\n", gi.driver_version,
                   gi.runtime_version);

    /* 1. one cudaMalloc at a time: what cudaMemGetInfo charges for it */
    sim_buf_puts(b, "  \"cudamalloc_single\": [");
    bool first = true;
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
        uint64_t before = used_now(g, &ok), ptr = 0;
        if (g.ops->dmalloc(g.ctx, SIZES[i], &ptr) != VGPU_OK) {
            probe_error(b, g, "cudaMalloc", &first);
            continue;
        }
        uint64_t after = used_now(g, &ok);
        (void)g.ops->dfree(g.ctx, ptr);
        uint64_t back = used_now(g, &ok);
        sim_buf_printf(b, "%s\n    {\"size\": %llu, \"charged\": %lld, \"after_free\": %lld, \"ptr\": %llu}",
                       first ? "" : ",", (unsigned long long)SIZES[i], (long long)(after - before),
                       (long long)(back - before), (unsigned long long)ptr);
        first = false;
    }
    sim_buf_puts(b, "\n  ],\n");

    /* 2. many small cudaMallocs: are they packed into shared pages? */
    sim_buf_puts(b, "  \"cudamalloc_packing\": [");
    static const uint64_t SMALL[] = {1, 512, 4096, 65536, 1048576};
    first = true;
    for (size_t k = 0; k < sizeof SMALL / sizeof SMALL[0]; k++) {
        enum { N = 256 };
        uint64_t ptrs[N] = {0};
        uint64_t before = used_now(g, &ok);
        uint32_t got = 0;
        sim_buf_printf(b, "%s\n    {\"size\": %llu, \"count\": %d, \"charged_after\": [", first ? "" : ",",
                       (unsigned long long)SMALL[k], N);
        for (uint32_t i = 0; i < N; i++) {
            if (g.ops->dmalloc(g.ctx, SMALL[k], &ptrs[i]) != VGPU_OK)
                break;
            got++;
            if ((i + 1) % 32 == 0)
                sim_buf_printf(b, "%s%llu", i + 1 == 32 ? "" : ", ",
                               (unsigned long long)(used_now(g, &ok) - before));
        }
        sim_buf_printf(b, "], \"allocated\": %u, \"first_ptrs\": [", got);
        for (uint32_t i = 0; i < got && i < 8; i++)
            sim_buf_printf(b, "%s%llu", i ? ", " : "", (unsigned long long)ptrs[i]);
        sim_buf_puts(b, "]}");
        for (uint32_t i = 0; i < got; i++)
            (void)g.ops->dfree(g.ctx, ptrs[i]);
        first = false;
    }
    sim_buf_puts(b, "\n  ],\n");

    /* 3. address order of fresh 2 MiB / 20 MiB allocations, and reuse after a free */
    sim_buf_puts(b, "  \"address_order\": {");
    {
        enum { N = 8 };
        uint64_t p2[N] = {0}, p20[N] = {0}, again = 0, again20 = 0;
        sim_buf_puts(b, "\"2MiB\": [");
        for (int i = 0; i < N; i++) {
            (void)g.ops->dmalloc(g.ctx, 2 * MIB_, &p2[i]);
            sim_buf_printf(b, "%s%llu", i ? ", " : "", (unsigned long long)p2[i]);
        }
        sim_buf_puts(b, "], \"20MiB\": [");
        for (int i = 0; i < N; i++) {
            (void)g.ops->dmalloc(g.ctx, 20 * MIB_, &p20[i]);
            sim_buf_printf(b, "%s%llu", i ? ", " : "", (unsigned long long)p20[i]);
        }
        (void)g.ops->dfree(g.ctx, p2[2]);
        (void)g.ops->dmalloc(g.ctx, 2 * MIB_, &again);
        (void)g.ops->dfree(g.ctx, p20[2]);
        (void)g.ops->dmalloc(g.ctx, 20 * MIB_, &again20);
        sim_buf_printf(b, "], \"2MiB_freed\": %llu, \"2MiB_next\": %llu, \"20MiB_freed\": %llu, "
                          "\"20MiB_next\": %llu}",
                       (unsigned long long)p2[2], (unsigned long long)again, (unsigned long long)p20[2],
                       (unsigned long long)again20);
        p2[2] = again;
        p20[2] = again20;
        for (int i = 0; i < N; i++) {
            if (p2[i])
                (void)g.ops->dfree(g.ctx, p2[i]);
            if (p20[i])
                (void)g.ops->dfree(g.ctx, p20[i]);
        }
    }
    sim_buf_puts(b, ",\n");

    /* 4. the async pool: how reserved memory grows with allocations */
    sim_buf_puts(b, "  \"async_pool\": {\"steps\": [");
    first = true;
    static const uint64_t ASZ[] = {1, 512, MIB_, 2 * MIB_, 2 * MIB_ + 1, 20 * MIB_, 32 * MIB_, 33 * MIB_,
                                   100 * MIB_, 1024 * MIB_ + 1};
    uint64_t aptrs[sizeof ASZ / sizeof ASZ[0]] = {0};
    bool reset_ok = g.ops->pool_reset(g.ctx) == VGPU_OK;
    if (!reset_ok)
        probe_error(b, g, "pool reset", &first);
    for (size_t i = 0; reset_ok && i < sizeof ASZ / sizeof ASZ[0]; i++) {
        vgpu_pool_stats ps = {0};
        uint64_t before = used_now(g, &ok);
        if (g.ops->malloc_async(g.ctx, ASZ[i], 0, &aptrs[i]) != VGPU_OK ||
            g.ops->pool_stats(g.ctx, &ps) != VGPU_OK) {
            probe_error(b, g, "cudaMallocAsync", &first);
            continue;
        }
        sim_buf_printf(b, "%s\n    {\"size\": %llu, \"reserved\": %llu, \"used\": %llu, \"device_delta\": %lld}",
                       first ? "" : ",", (unsigned long long)ASZ[i], (unsigned long long)ps.reserved_current,
                       (unsigned long long)ps.used_current, (long long)(used_now(g, &ok) - before));
        first = false;
    }
    sim_buf_puts(b, "\n  ]");
    if (reset_ok) {
        for (size_t i = 0; i < sizeof ASZ / sizeof ASZ[0]; i++)
            if (aptrs[i])
                (void)g.ops->free_async(g.ctx, aptrs[i], 0);
        vgpu_pool_stats after_free = {0}, after_trim = {0};
        (void)g.ops->pool_stats(g.ctx, &after_free);
        (void)g.ops->pool_trim(g.ctx);
        (void)g.ops->pool_stats(g.ctx, &after_trim);
        sim_buf_printf(b, ", \"reserved_after_free_all\": %llu, \"reserved_after_trim\": %llu",
                       (unsigned long long)after_free.reserved_current,
                       (unsigned long long)after_trim.reserved_current);
    }
    sim_buf_printf(b, "},\n  \"used_at_end\": %llu,\n  \"readings_ok\": %s\n}\n",
                   (unsigned long long)used_now(g, &ok), ok ? "true" : "false");
}
