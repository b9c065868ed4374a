/* vrun.c — measured replays (see vrun.h). */
#include "vrun.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "traces/trace.h"

#define VRUN_2MIB ((uint64_t)2 << 20)

typedef struct vslot {
    uint64_t ptr;      /* 0: no device memory (size 0, or a mirror handle) */
    uint64_t size;     /* requested bytes */
    uint32_t stream;
    bool live;
    bool pending;      /* freed by the program, memory returns at ready_t */
} vslot;

/* The strategy instance: the engine sees it as an opaque strategy*. */
typedef struct vstate {
    vrun *v;
    strategy *inner;   /* mirror: the model's instance */
    vslot *slots;      /* raw/async: indexed by handle; mirror: by the model's handle (sizes) */
    uint32_t n_slots, cap_slots;
    uint32_t *free_list;
    uint32_t n_free;
} vstate;

const char *vrun_mode_name(vrun_mode mode)
{
    switch (mode) {
    case VRUN_RAW: return "cuda-raw";
    case VRUN_ASYNC: return "cuda-async";
    case VRUN_MIRROR: return "mirror";
    }
    return "?";
}

static vstate *VS(strategy *s)
{
    return (vstate *)(void *)s;
}

static const vstate *CVS(const strategy *s)
{
    return (const vstate *)(const void *)s;
}

static void set_fatal(vrun *v, const char *what)
{
    if (v->fatal)
        return;
    v->fatal = true;
    snprintf(v->fatal_msg, sizeof v->fatal_msg, "%s: %s", what, v->gpu.ops->last_error(v->gpu.ctx));
}

/* ---------------------------------------------------------------- readings */

static void record_addr(vrun *v, uint64_t size, uint64_t ptr)
{
    if (v->n_addrs < VRUN_MAX_ADDRS)
        v->addrs[v->n_addrs++] = (vrun_addr){.size = size, .ptr = ptr};
}

/* Read cudaMemGetInfo (and the pool) now; update peaks and finals; append a
 * curve row if asked. */
static void vrun_read(vrun *v, const vstate *vs, bool row)
{
    uint64_t fr = 0, tot = 0;
    if (v->gpu.ops->mem_get_info(v->gpu.ctx, &fr, &tot) != VGPU_OK) {
        set_fatal(v, "cudaMemGetInfo");
        return;
    }
    uint64_t used = tot - (fr < tot ? fr : tot);
    uint64_t reserved = used > v->context_bytes ? used - v->context_bytes : 0;
    uint64_t allocated = v->live_requested;
    if (v->mode == VRUN_ASYNC) {
        if (v->gpu.ops->pool_stats(v->gpu.ctx, &v->pool) != VGPU_OK) {
            set_fatal(v, "cudaMemPoolGetAttribute");
            return;
        }
        reserved = v->pool.reserved_current;
        allocated = v->pool.used_current;
    } else if (v->mode == VRUN_MIRROR && vs != NULL && vs->inner != NULL) {
        strategy_sample smp;
        v->inner->sample(vs->inner, &smp);
        allocated = smp.allocated_bytes;
    }
    if (used > v->peak_device_used)
        v->peak_device_used = used;
    if (reserved > v->peak_reserved)
        v->peak_reserved = reserved;
    if (allocated > v->peak_allocated)
        v->peak_allocated = allocated;
    v->final_device_used = used;
    v->final_reserved = reserved;
    v->final_allocated = allocated;
    if (!row || !v->keep_curve)
        return;
    if (!SIM_GROW(v->curve, v->n_curve + 1, v->cap_curve)) {
        v->keep_curve = false; /* the peaks are still exact */
        return;
    }
    v->curve[v->n_curve++] = (vrun_sample){.event = v->events_seen, .t = v->last_t, .device_used = used,
                                           .reserved = reserved, .allocated = allocated};
}

/* Before memory goes back: if something was allocated since the last reading,
 * the state now is a local maximum; read it so that peaks stay exact with --every. */
static void read_if_rising(vrun *v, const vstate *vs)
{
    if (v->rising && v->every > 1)
        vrun_read(v, vs, false);
    v->rising = false;
}

/* ---------------------------------------------------------------- slots */

/* Reallocate the array whose pointer is at pp (elements of elem bytes) to n elements:
 * true with the pointer updated, false with it untouched when memory is short. */
static bool resize(void *pp, uint32_t n, size_t elem)
{
    void *old;
    memcpy(&old, pp, sizeof old);
    void *p = realloc(old, (size_t)n * elem);
    if (p == NULL)
        return false;
    memcpy(pp, &p, sizeof p);
    return true;
}

static bool slot_grow(vstate *vs, uint32_t need)
{
    if (need <= vs->cap_slots)
        return true;
    uint32_t cap = vs->cap_slots ? vs->cap_slots : 256;
    while (cap < need)
        cap *= 2;
    if (!resize(&vs->slots, cap, sizeof *vs->slots))
        return false;
    memset(vs->slots + vs->cap_slots, 0, (size_t)(cap - vs->cap_slots) * sizeof *vs->slots);
    if (!resize(&vs->free_list, cap, sizeof *vs->free_list))
        return false;
    vs->cap_slots = cap;
    return true;
}

static uint32_t slot_take(vstate *vs)
{
    if (vs->n_free > 0)
        return vs->free_list[--vs->n_free];
    if (!slot_grow(vs, vs->n_slots + 1))
        return STRATEGY_HANDLE_NONE;
    return vs->n_slots++;
}

static void slot_put(vstate *vs, uint32_t h)
{
    vs->slots[h] = (vslot){0};
    vs->free_list[vs->n_free++] = h;
}

/* ---------------------------------------------------------------- mirror */

typedef struct mregion {
    uint64_t base, bytes;
} mregion;

typedef struct mcollect {
    mregion *r;
    uint32_t n, cap;
    bool oom;
} mcollect;

static int collect_block(void *ctx, const strategy_block *b)
{
    mcollect *c = ctx;
    if (c->n == 0 || c->r[c->n - 1].base != b->region_addr) {
        if (!SIM_GROW(c->r, c->n + 1, c->cap)) {
            c->oom = true;
            return 1;
        }
        c->r[c->n++] = (mregion){.base = b->region_addr, .bytes = 0};
    }
    if (b->state != BLOCK_UNMAPPED)
        c->r[c->n - 1].bytes += b->size_bytes;
    return 0;
}

static int cmp_mregion(const void *a, const void *b)
{
    uint64_t x = ((const mregion *)a)->base, y = ((const mregion *)b)->base;
    return x < y ? -1 : x > y;
}

static int cmp_vregion(const void *a, const void *b)
{
    uint64_t x = ((const vrun_region *)a)->base, y = ((const vrun_region *)b)->base;
    return x < y ? -1 : x > y;
}

static const mregion *find_mregion(const mcollect *c, uint64_t base)
{
    if (c->n == 0)
        return NULL;
    mregion key = {.base = base};
    return bsearch(&key, c->r, c->n, sizeof *c->r, cmp_mregion);
}

static vrun_region *find_vregion(vrun *v, uint64_t base)
{
    if (v->n_regions == 0)
        return NULL;
    vrun_region key = {.base = base};
    return bsearch(&key, v->regions, v->n_regions, sizeof *v->regions, cmp_vregion);
}

static void region_free_last(vrun *v, vrun_region *r)
{
    uint32_t i = --r->n_chunks;
    if (v->gpu.ops->dfree(v->gpu.ctx, r->chunks[i]) != VGPU_OK)
        set_fatal(v, "cudaFree");
    r->bytes -= r->chunk_bytes[i];
    v->backed_bytes -= r->chunk_bytes[i];
    v->num_device_frees++;
}

/* cudaMalloc one chunk for region r; false when the driver refuses (or fails). */
static bool region_add(vrun *v, vrun_region *r, uint64_t bytes)
{
    if (r->n_chunks == r->cap_chunks) {
        uint32_t cap = r->cap_chunks ? r->cap_chunks * 2 : 4;
        if (!resize(&r->chunks, cap, sizeof *r->chunks) || !resize(&r->chunk_bytes, cap, sizeof *r->chunk_bytes))
            return false;
        r->cap_chunks = cap;
    }
    uint64_t ptr = 0;
    vgpu_status st = v->gpu.ops->dmalloc(v->gpu.ctx, bytes, &ptr);
    if (st == VGPU_OOM) {
        v->driver_refusals++;
        return false;
    }
    if (st != VGPU_OK) {
        set_fatal(v, "cudaMalloc");
        return false;
    }
    record_addr(v, bytes, ptr);
    r->chunks[r->n_chunks] = ptr;
    r->chunk_bytes[r->n_chunks++] = bytes;
    r->bytes += bytes;
    v->backed_bytes += bytes;
    if (v->backed_bytes > v->peak_backed_bytes)
        v->peak_backed_bytes = v->backed_bytes;
    v->num_device_allocs++;
    return true;
}

static bool region_grow(vrun *v, vrun_region *r, uint64_t target)
{
    while (r->bytes < target) {
        uint64_t need = target - r->bytes;
        uint64_t piece = v->expandable && need > VRUN_2MIB ? VRUN_2MIB : need;
        if (!region_add(v, r, piece))
            return false;
    }
    return true;
}

/* Make the real device hold what the model holds; false if the driver refused. */
static bool mirror_reconcile(vrun *v, vstate *vs)
{
    strategy_sample smp;
    v->inner->sample(vs->inner, &smp);
    if (smp.num_device_allocs == v->seen_allocs && smp.num_device_frees == v->seen_frees &&
        smp.reserved_bytes == v->seen_reserved)
        return true;
    mcollect c = {0};
    v->inner->walk(vs->inner, collect_block, &c);
    if (c.oom) {
        free(c.r);
        snprintf(v->fatal_msg, sizeof v->fatal_msg, "out of host memory");
        v->fatal = true;
        return false;
    }
    if (c.n > 1)
        qsort(c.r, c.n, sizeof *c.r, cmp_mregion);
    /* 1. releases first */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < v->n_regions; i++) {
        vrun_region *r = &v->regions[i];
        const mregion *m = find_mregion(&c, r->base);
        uint64_t target = m ? m->bytes : 0;
        while (r->n_chunks > 0 && r->bytes > target)
            region_free_last(v, r);
        if (r->n_chunks == 0) {
            free(r->chunks);
            free(r->chunk_bytes);
            continue;
        }
        v->regions[kept++] = *r;
    }
    v->n_regions = kept;
    /* 2. then what is new or grew */
    bool ok = true;
    for (uint32_t j = 0; j < c.n && ok; j++) {
        if (c.r[j].bytes == 0)
            continue;
        vrun_region *r = find_vregion(v, c.r[j].base);
        if (r == NULL) {
            if (!SIM_GROW(v->regions, v->n_regions + 1, v->cap_regions)) {
                ok = false;
                v->fatal = true;
                snprintf(v->fatal_msg, sizeof v->fatal_msg, "out of host memory");
                break;
            }
            r = &v->regions[v->n_regions++];
            *r = (vrun_region){.base = c.r[j].base};
            ok = region_grow(v, r, c.r[j].bytes);
            /* keep the array sorted for the next lookup */
            qsort(v->regions, v->n_regions, sizeof *v->regions, cmp_vregion);
        } else {
            ok = region_grow(v, r, c.r[j].bytes);
        }
    }
    free(c.r);
    v->seen_allocs = smp.num_device_allocs;
    v->seen_frees = smp.num_device_frees;
    v->seen_reserved = smp.reserved_bytes;
    return ok;
}

/* ---------------------------------------------------------------- the ops */

static sim_status v_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    vrun *v = cfg->app_data; /* engine_config.app_data, set by vrun_replay */
    if (v == NULL)
        return sim_error_set(err, SIM_EINTERNAL, NULL, 0, 0, "validate: created without its vrun (app_data)");
    vstate *vs = calloc(1, sizeof *vs);
    if (vs == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    vs->v = v;
    if (v->mode == VRUN_MIRROR) {
        sim_status st = v->inner->create(cfg, &vs->inner, err);
        if (st != SIM_OK) {
            free(vs);
            return st;
        }
        strategy_stat_value val;
        v->expandable = strategy_option_find(v->inner, vs->inner, "expandable_segments", &val) &&
                        val.kind == STRATEGY_STAT_TEXT && strcmp(val.text, "True") == 0;
    }
    *out = (strategy *)(void *)vs;
    return SIM_OK;
}

static void v_destroy(strategy *s)
{
    if (s == NULL)
        return;
    vstate *vs = VS(s);
    vrun *v = vs->v;
    for (uint32_t h = 0; h < vs->n_slots; h++) {
        vslot *sl = &vs->slots[h];
        if (!sl->live || sl->ptr == 0)
            continue;
        vgpu_status st = v->mode == VRUN_ASYNC ? v->gpu.ops->free_async(v->gpu.ctx, sl->ptr, sl->stream)
                                               : v->gpu.ops->dfree(v->gpu.ctx, sl->ptr);
        if (st != VGPU_OK)
            set_fatal(v, "free at the end");
    }
    if (vs->inner)
        v->inner->destroy(vs->inner);
    free(vs->slots);
    free(vs->free_list);
    free(vs);
}

static void fill_oom(vrun *v, const vstate *vs, uint64_t size, strategy_oom *oom, const char *what)
{
    uint64_t fr = 0, tot = 0;
    if (v->gpu.ops->mem_get_info(v->gpu.ctx, &fr, &tot) == VGPU_OK && !v->have_oom_reading) {
        v->oom_device_free = fr;
        v->have_oom_reading = true;
    }
    (void)vs;
    *oom = (strategy_oom){
        .size_bytes = size,
        .reserved_bytes = v->final_reserved,
        .device_free_bytes = fr,
    };
    snprintf(oom->detail, sizeof oom->detail, "%s: %s", what, v->gpu.ops->last_error(v->gpu.ctx));
}

static sim_status v_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h, strategy_oom *oom)
{
    vstate *vs = VS(s);
    vrun *v = vs->v;
    if (v->fatal) {
        *oom = (strategy_oom){.size_bytes = size};
        snprintf(oom->detail, sizeof oom->detail, "stopped: %s", v->fatal_msg);
        return SIM_OOM;
    }
    if (v->mode == VRUN_MIRROR) {
        sim_status st = v->inner->alloc(vs->inner, size, stream, h, oom);
        if (st == SIM_OOM) {
            /* the model's own recovery (GC, release-and-retry) may have released regions */
            (void)mirror_reconcile(v, vs);
            uint64_t fr = 0, tot = 0;
            if (!v->have_oom_reading && v->gpu.ops->mem_get_info(v->gpu.ctx, &fr, &tot) == VGPU_OK) {
                v->oom_device_free = fr;
                v->have_oom_reading = true;
            }
            return st;
        }
        if (st != SIM_OK)
            return st;
        if (!mirror_reconcile(v, vs)) {
            char detail[512];
            snprintf(detail, sizeof detail, "driver: %s", v->gpu.ops->last_error(v->gpu.ctx));
            v->inner->free(vs->inner, *h, false);
            (void)mirror_reconcile(v, vs);
            fill_oom(v, vs, size, oom, "the driver refused memory the model had room for");
            snprintf(oom->detail, sizeof oom->detail, "%s", detail);
            return SIM_OOM;
        }
        if (!slot_grow(vs, *h + 1))
            return SIM_ENOMEM;
        vs->slots[*h] = (vslot){.size = size, .stream = stream, .live = true};
        if (*h >= vs->n_slots)
            vs->n_slots = *h + 1;
    } else {
        uint64_t ptr = 0;
        if (size > 0) {
            vgpu_status st = v->mode == VRUN_ASYNC ? v->gpu.ops->malloc_async(v->gpu.ctx, size, stream, &ptr)
                                                   : v->gpu.ops->dmalloc(v->gpu.ctx, size, &ptr);
            if (st != VGPU_OK) {
                if (st == VGPU_ERROR)
                    set_fatal(v, v->mode == VRUN_ASYNC ? "cudaMallocAsync" : "cudaMalloc");
                fill_oom(v, vs, size, oom, v->mode == VRUN_ASYNC ? "cudaMallocAsync" : "cudaMalloc");
                return SIM_OOM;
            }
            record_addr(v, size, ptr);
            v->num_device_allocs++;
        }
        uint32_t slot = slot_take(vs);
        if (slot == STRATEGY_HANDLE_NONE)
            return SIM_ENOMEM;
        vs->slots[slot] = (vslot){.ptr = ptr, .size = size, .stream = stream, .live = true};
        *h = slot;
    }
    v->live_requested += size;
    v->rising = true;
    return SIM_OK;
}

static void release_slot(vrun *v, vstate *vs, strategy_handle h)
{
    vslot *sl = &vs->slots[h];
    v->live_requested -= sl->size;
    if (v->mode == VRUN_MIRROR) {
        vs->slots[h] = (vslot){0};
        return;
    }
    if (sl->ptr != 0) {
        vgpu_status st = v->mode == VRUN_ASYNC ? v->gpu.ops->free_async(v->gpu.ctx, sl->ptr, sl->stream)
                                               : v->gpu.ops->dfree(v->gpu.ctx, sl->ptr);
        if (st != VGPU_OK)
            set_fatal(v, v->mode == VRUN_ASYNC ? "cudaFreeAsync" : "cudaFree");
        v->num_device_frees++;
    }
    slot_put(vs, h);
}

static void v_free(strategy *s, strategy_handle h, bool deferred)
{
    vstate *vs = VS(s);
    vrun *v = vs->v;
    read_if_rising(v, vs);
    if (v->mode == VRUN_MIRROR) {
        v->inner->free(vs->inner, h, deferred);
        if (!deferred)
            release_slot(v, vs, h);
        else
            vs->slots[h].pending = true;
        (void)mirror_reconcile(v, vs);
        return;
    }
    if (deferred)
        vs->slots[h].pending = true;
    else
        release_slot(v, vs, h);
}

static void v_free_ready(strategy *s, strategy_handle h)
{
    vstate *vs = VS(s);
    vrun *v = vs->v;
    read_if_rising(v, vs);
    if (v->mode == VRUN_MIRROR) {
        v->inner->free_ready(vs->inner, h);
        release_slot(v, vs, h);
        (void)mirror_reconcile(v, vs);
        return;
    }
    release_slot(v, vs, h);
}

static void v_empty_cache(strategy *s)
{
    vstate *vs = VS(s);
    vrun *v = vs->v;
    read_if_rising(v, vs);
    if (v->mode == VRUN_MIRROR) {
        v->inner->empty_cache(vs->inner);
        (void)mirror_reconcile(v, vs);
    } else if (v->mode == VRUN_ASYNC) {
        if (v->gpu.ops->pool_trim(v->gpu.ctx) != VGPU_OK)
            set_fatal(v, "cudaMemPoolTrimTo");
    }
}

static void v_sample(const strategy *s, strategy_sample *out)
{
    const vstate *vs = CVS(s);
    vrun *v = vs->v;
    v->events_seen++;
    bool row = v->every <= 1 || v->events_seen % v->every == 0;
    if (row)
        vrun_read(v, vs, true);
    if (v->mode == VRUN_MIRROR) {
        v->inner->sample(vs->inner, out);
        return;
    }
    *out = (strategy_sample){
        .allocated_bytes = v->final_allocated,
        .reserved_bytes = v->final_reserved,
        .num_device_allocs = v->num_device_allocs,
        .num_device_frees = v->num_device_frees,
    };
}

static void v_stats(const strategy *s, const strategy_stat_sink *sink)
{
    const vstate *vs = CVS(s);
    if (vs->inner)
        vs->v->inner->stats(vs->inner, sink);
}

static void v_options(const strategy *s, const strategy_stat_sink *sink)
{
    const vstate *vs = CVS(s);
    if (vs->inner)
        vs->v->inner->options(vs->inner, sink);
}

static void v_check(const strategy *s, sim_report *r)
{
    const vstate *vs = CVS(s);
    if (vs->inner)
        vs->v->inner->check(vs->inner, r);
}

static int v_walk(const strategy *s, strategy_visitor visit, void *ctx)
{
    const vstate *vs = CVS(s);
    return vs->inner ? vs->v->inner->walk(vs->inner, visit, ctx) : 0;
}

#define VRUN_OPS(NAME, SUMMARY)                                                                            \
    {                                                                                                      \
        .name = NAME, .summary = SUMMARY, .create = v_create, .destroy = v_destroy, .alloc = v_alloc,     \
        .free = v_free, .free_ready = v_free_ready, .empty_cache = v_empty_cache, .sample = v_sample,     \
        .stats = v_stats, .options = v_options, .check = v_check, .walk = v_walk,                         \
    }

static const strategy_ops RAW_OPS = VRUN_OPS("cuda-raw", "real cudaMalloc/cudaFree per allocation");
static const strategy_ops ASYNC_OPS = VRUN_OPS("cuda-async", "real cudaMallocAsync on the default pool");
static const strategy_ops MIRROR_OPS = VRUN_OPS("mirror", "a gpusim model backed by real cudaMalloc");

const strategy_ops *vrun_ops(vrun_mode mode)
{
    switch (mode) {
    case VRUN_RAW: return &RAW_OPS;
    case VRUN_ASYNC: return &ASYNC_OPS;
    case VRUN_MIRROR: return &MIRROR_OPS;
    }
    return NULL;
}

/* ---------------------------------------------------------------- run */

bool vrun_init(vrun *v, vgpu gpu, vrun_mode mode, const strategy_ops *inner, uint64_t every, bool keep_curve,
               char *err, size_t errcap)
{
    memset(v, 0, sizeof *v);
    v->gpu = gpu;
    v->mode = mode;
    v->inner = inner;
    v->every = every ? every : 1;
    v->keep_curve = keep_curve;
    if (mode == VRUN_MIRROR && inner == NULL) {
        snprintf(err, errcap, "mirror mode needs a model (--strategy)");
        return false;
    }
    if (mode == VRUN_ASYNC && gpu.ops->pool_reset(gpu.ctx) != VGPU_OK) {
        snprintf(err, errcap, "resetting the default memory pool: %s", gpu.ops->last_error(gpu.ctx));
        return false;
    }
    uint64_t fr = 0, tot = 0;
    if (gpu.ops->mem_get_info(gpu.ctx, &fr, &tot) != VGPU_OK) {
        snprintf(err, errcap, "cudaMemGetInfo: %s", gpu.ops->last_error(gpu.ctx));
        return false;
    }
    v->total_bytes = tot;
    v->context_bytes = tot - (fr < tot ? fr : tot);
    v->final_device_used = v->peak_device_used = v->context_bytes;
    return true;
}

void vrun_finish(vrun *v)
{
    vrun_read(v, NULL, false);
    if (v->mode == VRUN_ASYNC && !v->fatal)
        (void)v->gpu.ops->pool_stats(v->gpu.ctx, &v->pool);
}

void vrun_release(vrun *v)
{
    for (uint32_t i = 0; i < v->n_regions; i++) {
        vrun_region *r = &v->regions[i];
        while (r->n_chunks > 0)
            region_free_last(v, r);
        free(r->chunks);
        free(r->chunk_bytes);
    }
    free(v->regions);
    v->regions = NULL;
    v->n_regions = 0;
    free(v->curve);
    v->curve = NULL;
    v->n_curve = 0;
}

sim_status vrun_replay(vrun *v, const char *path, const sim_kv *opts, uint32_t n_opts, sim_run **run,
                       sim_error *err)
{
    *run = NULL;
    trace_reader *r = NULL;
    sim_status st = trace_open(path, &r, err);
    if (st != SIM_OK)
        return st;
    vgpu_info gi;
    v->gpu.ops->info(v->gpu.ctx, &gi);
    engine_config cfg = {
        .device = {.name = gi.name, .capacity_bytes = v->total_bytes, .context_bytes = v->context_bytes,
                   .cc_major = (unsigned)gi.cc_major, .cc_minor = (unsigned)gi.cc_minor},
        .ops = vrun_ops(v->mode),
        .opts = opts,
        .n_opts = n_opts,
        .app_data = v,
    };
    sim_event_source src = trace_source(r);
    st = engine_run(&cfg, &src, 1, run, err);
    if (st == SIM_OK && (*run)->n_procs != 1) {
        st = sim_error_set(err, SIM_EUSAGE, path, 0, 0,
                           "the trace holds %u processes; the harness replays one process per trace",
                           (*run)->n_procs);
    }
    if (st != SIM_OK) {
        sim_run_free(*run);
        *run = NULL;
    }
    trace_close(r);
    return st;
}
