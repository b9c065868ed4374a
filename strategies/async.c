/* The `async` strategy: CUDA's stream-ordered pool (cudaMallocAsync).
 *
 * Documented rules (CUDA Programming Guide, "Stream Ordered Memory Allocator"; the
 * runtime API's cudaMemPoolAttr* and cudaMemPoolTrimTo entries):
 *  D1. Memory a free returns stays in the pool. When the pool holds more than its
 *      release threshold (cudaMemPoolAttrReleaseThreshold; CUDA's default 0), it gives
 *      the excess back to the device at the next stream, event or device synchronize.
 *  D2. A freed block may be reused at once by an allocation on the stream that freed
 *      it (stream order makes that safe), and by another stream only once the free has
 *      completed (cudaMemPoolReuseAllowOpportunistic: the free is known done; in a
 *      trace, ready_t has passed). A free with ready_t == t completed at once.
 *  D3. cudaMemPoolTrimTo(pool, keep) releases unused memory until the pool holds no
 *      more than keep bytes, or nothing more can be released; memory under live
 *      allocations is never released.
 *  D4. Statistics: ReservedMemCurrent/High (the physical memory the pool holds) and
 *      UsedMemCurrent/High (memory allocated from the pool and not available for reuse:
 *      live allocations and frees that have not completed).
 * Framework wiring (the presets, --async-preset):
 *  cuda     threshold 0; an `empty_cache` in a trace is a device synchronize (D1).
 *  pytorch  c10/cuda/CUDAMallocAsyncAllocator.cpp: lazy_init_device sets the threshold
 *           to UINT64_MAX; emptyCache is cudaDeviceSynchronize + cudaMemPoolTrimTo(0);
 *           mallocAsync fails without retrying when the pool cannot grow, and first
 *           refuses a request whose size plus the live requested bytes exceeds the
 *           memory fraction of total memory (set_per_process_memory_fraction).
 *  tf       tensorflow/core/common_runtime/gpu/gpu_cudamallocasync_allocator.cc (and
 *           XLA's copy): the threshold is the pool size, the memory limit TensorFlow
 *           computes for the device (the BFC limit rule, strategies/bfc_limits.h); on a
 *           failed allocation it synchronizes its stream and retries once.
 * Undocumented, so options with defaults that validate/ measures:
 *  U1. Requests are rounded up to --pool-alignment (512 B, the alignment measured for
 *      cudaMalloc; docs/allocators.md §4). Size 0 takes nothing.
 *  U2. The pool grows by round_up(request, --pool-granularity) (2 MiB, the GPU page),
 *      one new chunk at a fresh device address per growth; a chunk is a region.
 *  U3. Placement: among the pieces a request may use (D2), --pool-placement=best takes
 *      the smallest that fits, the lowest address among equals; first takes the lowest
 *      address that fits. The rest of the piece stays free.
 *  U4. --pool-coalesce=on merges a piece whose free completes with its free neighbours
 *      in the same chunk (never across chunks, never with a pending piece).
 *  U5. Releases (D1, D3) give back whole chunks that are entirely free, the highest
 *      address first, while the pool holds more than the bytes to keep.
 *  U6. A synchronize completes every pending free first: after cudaDeviceSynchronize
 *      (or TF's stream synchronize: it has one stream) all queued work is done.
 * OOM: a request fails when no usable piece fits and the device cannot back the
 * growth. The engine judges the cause (docs/design.md §3) from what the process may
 * use (usable_bytes: the memory fraction under the pytorch preset, else the device).
 * Files: async_types.h (chunks, allocations, instance), async_index.{h,c} (the block
 * records and the piece index),
 * async_check.c (walker, locate, checker).
 * Cost: a search is O(log k) expected for best fit plus the pending pieces of other
 * streams skipped, O(n) for first fit; index updates are O(log k) expected (a treap per
 * size class, k = the free or pending pieces of the class), the largest free piece O(1)
 * (kept; found again from the bitmap when it leaves);
 * synchronizes and trims are O(allocations + chunks log chunks); locate is O(1). */
#include "async.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfc_limits.h"
#include "torch_conf.h"
#include "sim/units.h"
#include "slots.h"

#include "async_types.h"

/* ==== the piece index (async_index.h) ==== */

/* The largest free piece's size, 0 when none. */
static uint64_t largest_free(const strategy *s)
{
    uint32_t x = s->free_set.last;
    return x == A_NONE ? 0 : blk(s, x)->size;
}

static void index_add(strategy *s, aset *st, uint32_t b)
{
    async_index_add(block_table(s), st, b);
}

static void index_remove(strategy *s, aset *st, uint32_t b)
{
    async_index_remove(block_table(s), s->blocks.n_used_hw, st, b);
}

/* units_round_up for a power of two (the alignment is one), saturating the same way,
 * without its division and its branch on whether size is a multiple: a request's size
 * decides that branch at random. */
static inline uint64_t round_up_pow2(uint64_t size, uint64_t align)
{
    uint64_t low = align - 1, up = (size + low) & ~low;
    return up < size ? UINT64_MAX & ~low : up;
}

/* ==== options ==== */

/* The keys async_parse reads and async_options writes back. */
static const strategy_option ASYNC_OPTIONS[] = {
    STRATEGY_OPT_ENUM("async_preset", "async-preset", "cuda|pytorch|tf", "cuda", "pytorch",
                      "whose wiring of the pool: CUDA's defaults, PyTorch's backend:cudaMallocAsync, or TensorFlow's "
                      "TF_GPU_ALLOCATOR=cuda_malloc_async (threshold, empty_cache, OOM retry)"),
    STRATEGY_OPT_TEXT("release_threshold", "release-threshold",
                      "the preset's: cuda 0, pytorch max (UINT64_MAX), tf the TensorFlow memory limit", "4GiB",
                      "cudaMemPoolAttrReleaseThreshold: a size or max; above it the pool gives memory back at a "
                      "synchronize"),
    STRATEGY_OPT_SIZE("pool_granularity", "pool-granularity", "2MiB", "32MiB",
                      "the pool grows by requests rounded up to this (undocumented; validate/ measures it)"),
    STRATEGY_OPT_SIZE("pool_alignment", "pool-alignment", "512", "256",
                      "requests are rounded up to this (undocumented; 512 B as measured for cudaMalloc)"),
    STRATEGY_OPT_ENUM("pool_placement", "pool-placement", "best|first", "best", "first",
                      "which free piece a request takes: the smallest that fits, or the lowest address (undocumented)"),
    STRATEGY_OPT_ENUM("pool_coalesce", "pool-coalesce", "on|off", "on", "off",
                      "whether freed pieces merge with free neighbours of their chunk (undocumented)"),
    STRATEGY_OPT_ENUM("async_empty_cache", "async-empty-cache", "trim|sync", "the preset's: pytorch trim, else sync",
                      "trim",
                      "an empty_cache: synchronize and cudaMemPoolTrimTo(0) (PyTorch), or a synchronize only"),
    STRATEGY_OPT_ENUM("async_oom_retry", "async-oom-retry", "none|sync", "the preset's: tf sync, else none", "sync",
                      "on a failed allocation: fail, or synchronize (pending frees complete) and retry (TF/XLA)"),
    STRATEGY_OPT_REAL("memory_fraction", "memory-fraction", "none, the whole device", "0.5",
                      "PyTorch's set_per_process_memory_fraction(F) under backend:cudaMallocAsync: live requested "
                      "bytes stay within F of total"),
    STRATEGY_OPT_TEXT("alloc_conf", "alloc-conf", "none", "backend:cudaMallocAsync",
                      "PYTORCH_CUDA_ALLOC_CONF with backend:cudaMallocAsync: PyTorch's wiring of the pool "
                      "(async-preset pytorch)"),
};

static sim_status parse_onoff(const strategy_config *cfg, const char *key, const char *flag, const char *on,
                              const char *off, bool *out, sim_error *err)
{
    const char *v = strategy_config_get(cfg, key);
    if (v == NULL)
        return SIM_OK;
    if (strcmp(v, on) == 0)
        *out = true;
    else if (strcmp(v, off) == 0)
        *out = false;
    else {
        char expected[64];
        snprintf(expected, sizeof expected, "%s or %s", on, off);
        return strategy_option_error(err, flag, v, expected, NULL);
    }
    return SIM_OK;
}

static sim_status parse_pow2_size(const strategy_config *cfg, const char *key, const char *flag, uint64_t *out,
                                  sim_error *err)
{
    const char *v = strategy_config_get(cfg, key);
    if (v == NULL)
        return SIM_OK;
    sim_error sub;
    sim_error_clear(&sub);
    uint64_t n = 0;
    if (units_parse_size(v, &n, &sub) != SIM_OK || !units_is_pow2(n))
        return strategy_option_error(err, flag, v, "a power of two in bytes (512, 2MiB)", NULL);
    *out = n;
    return SIM_OK;
}

static sim_status async_parse(const strategy_config *cfg, async_settings *set, sim_error *err)
{
    *set = (async_settings){.granularity = A_DEFAULT_GRANULARITY, .alignment = A_DEFAULT_ALIGNMENT};
    const char *v = strategy_config_get(cfg, "async_preset");
    set->preset = AP_CUDA;
    const char *conf_text = strategy_config_get(cfg, "alloc_conf");
    if (conf_text != NULL && conf_text[0] != '\0') {
        /* PYTORCH_CUDA_ALLOC_CONF, read by PyTorch's own rules (torch_conf.h):
         * backend:cudaMallocAsync selects PyTorch's wiring; the native allocator's keys
         * are checked and have no effect on this pool (compare hands one alloc_conf to
         * every strategy that takes it) */
        torch_conf conf;
        sim_status st = torch_conf_parse(conf_text, &conf, err);
        if (st != SIM_OK)
            return st;
        if (conf.backend_async) {
            if (v != NULL && strcmp(v, "pytorch") != 0)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                     "--alloc-conf=backend:cudaMallocAsync is PyTorch's wiring, --async-preset=%s "
                                     "another framework's: give one",
                                     v);
            set->preset = AP_PYTORCH;
        }
        snprintf(set->alloc_conf, sizeof set->alloc_conf, "%s", conf_text);
    }
    if (v != NULL) {
        size_t i = 0;
        while (i < 3 && strcmp(v, PRESET_NAMES[i]) != 0)
            i++;
        if (i == 3)
            return strategy_option_error(err, "--async-preset", v, "cuda, pytorch or tf", NULL);
        set->preset = (async_preset)i;
    }
    if (set->preset == AP_PYTORCH) {
        set->threshold = UINT64_MAX;
        set->empty_cache_trims = true;
    } else if (set->preset == AP_TF) {
        bfc_settings tf = {.preset = BFC_PRESET_TF, .gc = true};
        device_info info = device_get_info(cfg->dev);
        set->threshold = bfc_limits_bytes(BFC_GREEDY, &tf, &info);
        set->threshold_from_capacity = true;
        set->oom_sync_retry = true;
    }
    v = strategy_config_get(cfg, "release_threshold");
    if (v != NULL) {
        sim_error sub;
        sim_error_clear(&sub);
        set->threshold_from_capacity = false;
        if (strcmp(v, "max") == 0)
            set->threshold = UINT64_MAX;
        else if (units_parse_size(v, &set->threshold, &sub) != SIM_OK)
            return strategy_option_error(err, "--release-threshold", v, "a size (0, 4GiB) or max (UINT64_MAX)", NULL);
    }
    sim_status st = parse_pow2_size(cfg, "pool_granularity", "--pool-granularity", &set->granularity, err);
    if (st == SIM_OK)
        st = parse_pow2_size(cfg, "pool_alignment", "--pool-alignment", &set->alignment, err);
    if (st == SIM_OK && set->granularity < set->alignment)
        st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                           "--pool-granularity (%" PRIu64 ") must be at least --pool-alignment (%" PRIu64 ")",
                           set->granularity, set->alignment);
    if (st == SIM_OK)
        st = parse_onoff(cfg, "pool_placement", "--pool-placement", "first", "best", &set->first_fit, err);
    set->coalesce = true;
    if (st == SIM_OK)
        st = parse_onoff(cfg, "pool_coalesce", "--pool-coalesce", "on", "off", &set->coalesce, err);
    if (st == SIM_OK)
        st = parse_onoff(cfg, "async_empty_cache", "--async-empty-cache", "trim", "sync", &set->empty_cache_trims,
                         err);
    if (st == SIM_OK)
        st = parse_onoff(cfg, "async_oom_retry", "--async-oom-retry", "sync", "none", &set->oom_sync_retry, err);
    if (st != SIM_OK)
        return st;
    v = strategy_config_get(cfg, "memory_fraction");
    if (v != NULL) {
        sim_error sub;
        sim_error_clear(&sub);
        if (units_parse_real(v, 0.0, 1.0, &set->fraction, &sub) != SIM_OK)
            return strategy_option_error(err, "--memory-fraction", v,
                                         "a real in [0, 1] (PyTorch's per-process fraction)", NULL);
        set->has_fraction = true;
        snprintf(set->fraction_text, sizeof set->fraction_text, "%s", v);
    }
    return SIM_OK;
}

static sim_status async_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    async_settings set;
    sim_status st = async_parse(cfg, &set, err);
    if (st != SIM_OK)
        return st;
    strategy *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating async");
    s->dev = cfg->dev;
    s->proc = cfg->proc;
    s->capacity = device_get_info(cfg->dev).capacity_bytes;
    s->set = set;
    /* setMemoryFraction: static_cast<uint64_t>(fraction * total), truncating */
    if (set.has_fraction)
        s->fraction_limit = (uint64_t)(set.fraction * (double)s->capacity);
    slots_init_aligned(&s->blocks, sizeof(ablock), A_BLOCK_ALIGN);
    slots_init(&s->chunks, sizeof(achunk));
    slots_init(&s->allocs, sizeof(aalloc));
    async_index_init(&s->free_set, A_IN_FREE);
    async_index_init(&s->pend_set, A_IN_PEND);
    *out = s;
    return SIM_OK;
}

static void async_destroy(strategy *s)
{
    if (s == NULL)
        return;
    slots_release(&s->blocks);
    slots_release(&s->chunks);
    slots_release(&s->allocs);
    free(s);
}

/* ==== pieces ==== */

/* Block a takes in the block after it in its chunk, whose slot is given back. */
static void absorb_next(strategy *s, uint32_t a)
{
    ablock *x = blk(s, a);
    uint32_t n = x->next;
    ablock *z = blk(s, n);
    x->size += z->size;
    x->next = z->next;
    if (z->next != A_NONE)
        blk(s, z->next)->prev = a;
    slots_put(&s->blocks, n);
}

/* b's free has completed: it joins the free pieces, merged with free neighbours (U4). */
static void make_free(strategy *s, uint32_t b)
{
    ablock *x = blk(s, b);
    x->state = AB_FREE;
    x->owner = A_NONE;
    x->requested = 0;
    if (s->set.coalesce) {
        uint32_t p = x->prev;
        if (p != A_NONE && blk(s, p)->state == AB_FREE) {
            index_remove(s, &s->free_set, p);
            absorb_next(s, p);
            b = p;
            x = blk(s, p);
        }
        uint32_t n = x->next;
        if (n != A_NONE && blk(s, n)->state == AB_FREE) {
            index_remove(s, &s->free_set, n);
            absorb_next(s, b);
        }
    }
    index_add(s, &s->free_set, b);
}

static void note_used(strategy *s, int64_t delta)
{
    s->used = (uint64_t)((int64_t)s->used + delta);
    if (s->used > s->used_high)
        s->used_high = s->used;
}

/* First fit (U3): the lowest address among the usable pieces of r bytes or more (D2),
 * or A_NONE; a walk of every such piece. */
static uint32_t first_fit_piece(const strategy *s, uint64_t r, uint32_t stream)
{
    const ablock *t = block_table(s);
    uint32_t best = A_NONE;
    uint64_t best_addr = 0;
    const aset *sets[2] = {&s->free_set, &s->pend_set};
    for (int k = 0; k < 2; k++) {
        const aset *st = sets[k];
        for (uint32_t b = async_index_lower(t, st, r, 0); b != A_NONE; b = async_index_next(t, st, b)) {
            const ablock *e = &t[b];
            if (k == 1 && e->stream != stream)
                continue;
            if (best == A_NONE || e->addr < best_addr) {
                best = b;
                best_addr = e->addr;
            }
        }
    }
    return best;
}

/* The usable piece for r bytes on stream (D2, U3), or A_NONE. Best fit: the first free
 * piece in (size, address) order from r on, against the first pending piece of the same
 * stream from there; the smaller of the two in that order. */
static uint32_t find_piece(const strategy *s, uint64_t r, uint32_t stream)
{
    if (s->set.first_fit)
        return first_fit_piece(s, r, stream);
    const ablock *t = block_table(s);
    uint32_t f = async_index_lower(t, &s->free_set, r, 0);
    if (s->pend_set.n == 0)
        return f;
    uint32_t p = async_index_lower(t, &s->pend_set, r, 0);
    while (p != A_NONE && t[p].stream != stream)
        p = async_index_next(t, &s->pend_set, p);
    if (p == A_NONE)
        return f;
    if (f == A_NONE)
        return p;
    return async_index_cmp(t[p].size, t[p].addr, &t[f]) < 0 ? p : f;
}

/* Hand r bytes of piece b to allocation h; the rest stays as it was (U3). A new block
 * slot is taken first, so on SIM_ENOMEM nothing changed. */
static sim_status take_piece(strategy *s, uint32_t b, uint64_t r, uint32_t h, uint64_t requested, uint32_t stream)
{
    ablock *x = blk(s, b);
    uint32_t rest = A_NONE;
    if (x->size > r) {
        rest = slots_take_uninit(&s->blocks); /* written whole below */
        if (rest == SLOTS_NONE)
            return SIM_ENOMEM;
        x = blk(s, b); /* the table may have moved */
    }
    bool was_pending = x->state == AB_PENDING;
    index_remove(s, was_pending ? &s->pend_set : &s->free_set, b);
    if (rest != A_NONE) {
        ablock *y = blk(s, rest);
        *y = (ablock){.addr = x->addr + r, .size = x->size - r, .prev = b, .next = x->next, .chunk = x->chunk,
                      .stream = x->stream, .owner = x->owner, .state = x->state};
        if (x->next != A_NONE)
            blk(s, x->next)->prev = rest;
        x->next = rest;
        x->size = r;
        index_add(s, was_pending ? &s->pend_set : &s->free_set, rest);
    }
    if (was_pending) {
        /* same-stream reuse of a free that has not completed: the freed handle now
         * waits on the rest of its piece, or on nothing */
        alc(s, x->owner)->block = rest;
    } else {
        note_used(s, (int64_t)r);
    }
    x->state = AB_USED;
    x->owner = h;
    x->stream = stream;
    x->requested = requested;
    s->allocated += r;
    alc(s, h)->block = b;
    return SIM_OK;
}

/* Grow the pool by one chunk for r bytes (U2): SIM_OK with its single free block in
 * *b, SIM_OOM when the device cannot back it, SIM_ENOMEM. */
static sim_status grow(strategy *s, uint64_t r, uint32_t *b)
{
    uint64_t bytes = units_round_up(r, s->set.granularity);
    uint32_t c = slots_take_uninit(&s->chunks); /* both written whole on success */
    if (c == SLOTS_NONE)
        return SIM_ENOMEM;
    uint32_t nb = slots_take_uninit(&s->blocks);
    if (nb == SLOTS_NONE) {
        slots_put(&s->chunks, c);
        return SIM_ENOMEM;
    }
    uint64_t addr = 0;
    sim_status st = device_alloc(s->dev, s->proc, bytes, &addr);
    if (st != SIM_OK) {
        slots_put(&s->blocks, nb);
        slots_put(&s->chunks, c);
        return st;
    }
    *chk(s, c) = (achunk){.addr = addr, .size = bytes, .first = nb, .seq = s->next_seq++};
    ablock *x = blk(s, nb);
    *x = (ablock){.addr = addr, .size = bytes, .prev = A_NONE, .next = A_NONE, .chunk = c, .owner = A_NONE,
                  .state = AB_FREE};
    index_add(s, &s->free_set, nb);
    s->reserved += bytes;
    if (s->reserved > s->reserved_high)
        s->reserved_high = s->reserved;
    s->num_device_allocs++;
    *b = nb;
    return SIM_OK;
}

typedef struct chunk_ref {
    uint64_t addr;
    uint32_t c;
} chunk_ref;

static int chunk_ref_desc(const void *a, const void *b)
{
    uint64_t x = ((const chunk_ref *)a)->addr, y = ((const chunk_ref *)b)->addr;
    return (x < y) - (x > y);
}

/* Give back wholly free chunks, highest address first, while the pool holds more than
 * keep bytes (U5). Returns false when out of host memory (nothing released then). */
static bool release_to(strategy *s, uint64_t keep)
{
    if (s->reserved <= keep || s->free_set.n == 0)
        return true;
    uint32_t k = 0;
    chunk_ref *order = malloc((size_t)s->chunks.live * sizeof *order);
    if (order == NULL)
        return false;
    for (uint32_t c = 0; c < s->chunks.n_used_hw; c++) {
        if (!slots_valid(&s->chunks, c))
            continue;
        bool all_free = true;
        for (uint32_t b = chk(s, c)->first; b != A_NONE && all_free; b = blk(s, b)->next)
            all_free = blk(s, b)->state == AB_FREE;
        if (all_free)
            order[k++] = (chunk_ref){chk(s, c)->addr, c};
    }
    qsort(order, k, sizeof *order, chunk_ref_desc);
    for (uint32_t i = 0; i < k && s->reserved > keep; i++) {
        achunk *c = chk(s, order[i].c);
        for (uint32_t b = c->first; b != A_NONE;) {
            uint32_t nx = blk(s, b)->next;
            index_remove(s, &s->free_set, b);
            slots_put(&s->blocks, b);
            b = nx;
        }
        device_release(s->dev, s->proc, c->size);
        s->reserved -= c->size;
        s->num_device_frees++;
        slots_put(&s->chunks, order[i].c);
    }
    free(order);
    return true;
}

/* A synchronize (D1, U6): every pending free completes, then the pool gives back what
 * it holds above the threshold. */
static bool synchronize(strategy *s, uint64_t keep)
{
    s->syncs++;
    for (uint32_t h = 0; h < s->allocs.n_used_hw && s->pend_set.n > 0; h++) {
        if (!slots_valid(&s->allocs, h))
            continue;
        aalloc *a = alc(s, h);
        if (!a->freed || a->block == A_NONE)
            continue;
        uint32_t b = a->block;
        a->block = A_NONE;
        index_remove(s, &s->pend_set, b);
        note_used(s, -(int64_t)blk(s, b)->size);
        make_free(s, b);
    }
    return release_to(s, keep);
}

/* ==== operations ==== */

static void fill_oom(const strategy *s, uint64_t size, uint64_t r, strategy_oom *oom)
{
    uint64_t dev_free = device_free_bytes(s->dev);
    *oom = (strategy_oom){
        .size_bytes = r,
        .free_bytes = s->free_set.bytes,
        .largest_free_bytes = largest_free(s),
        .reserved_bytes = s->reserved,
        .device_free_bytes = dev_free,
        /* design.md §3: a fraction caps what the process may use; else capacity − context */
        .usable_bytes = s->set.has_fraction ? s->fraction_limit : 0,
    };
    if (s->set.preset == AP_PYTORCH) {
        char cur[32], req[32], tot[32], fr[32], lim[32];
        /* mallocAsync's OutOfMemoryError text; the limit is UINT64_MAX unless a fraction is set */
        snprintf(oom->detail, sizeof oom->detail,
                 "Allocation on device 0 would exceed allowed memory. (out of memory)\n"
                 "Currently allocated     : %s\nRequested               : %s\nDevice limit            : %s\n"
                 "Free (according to CUDA): %s\nPyTorch limit (set by user-supplied memory fraction)\n"
                 "                        : %s",
                 units_format_c10(s->requested_live, cur, sizeof cur), units_format_c10(size, req, sizeof req),
                 units_format_c10(s->capacity, tot, sizeof tot), units_format_c10(dev_free, fr, sizeof fr),
                 units_format_c10(s->set.has_fraction ? s->fraction_limit : UINT64_MAX, lim, sizeof lim));
    } else if (s->set.preset == AP_TF) {
        /* GpuCudaMallocAsyncAllocator::AllocateRaw's log line */
        snprintf(oom->detail, sizeof oom->detail,
                 "cuMemAllocAsync failed to allocate %" PRIu64 " bytes: CUDA error: out of memory "
                 "(CUDA_ERROR_OUT_OF_MEMORY)\n Reported by CUDA: Free memory/Total memory: %" PRIu64 "/%" PRIu64,
                 size, dev_free, s->capacity);
    } else {
        snprintf(oom->detail, sizeof oom->detail,
                 "cudaMallocAsync(%" PRIu64 "): cudaErrorMemoryAllocation (out of memory); pool reserved %" PRIu64
                 ", device free %" PRIu64,
                 size, s->reserved, dev_free);
    }
}

static sim_status async_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h, strategy_oom *oom)
{
    uint64_t r = round_up_pow2(size, s->set.alignment);
    if (s->set.has_fraction && s->requested_live + size > s->fraction_limit) {
        fill_oom(s, size, r, oom); /* PyTorch's own limit, before the pool is asked */
        return SIM_OOM;
    }
    uint32_t a = slots_take_uninit(&s->allocs); /* written whole below */
    if (a == SLOTS_NONE)
        return SIM_ENOMEM;
    *alc(s, a) = (aalloc){.block = A_NONE, .requested = size, .stream = stream};
    if (size > 0) {
        uint32_t b = find_piece(s, r, stream);
        sim_status st = SIM_OK;
        if (b == A_NONE)
            st = grow(s, r, &b);
        if (st == SIM_OOM && s->set.oom_sync_retry) {
            /* TF/XLA: synchronize the stream, then try again */
            if (!synchronize(s, s->set.threshold))
                st = SIM_ENOMEM;
            else if ((b = find_piece(s, r, stream)) != A_NONE)
                st = SIM_OK;
            else
                st = grow(s, r, &b);
        }
        if (st == SIM_OK)
            st = take_piece(s, b, r, a, size, stream);
        if (st != SIM_OK) {
            slots_put(&s->allocs, a);
            if (st == SIM_OOM)
                fill_oom(s, size, r, oom);
            return st;
        }
    }
    s->requested_live += size;
    *h = a;
    return SIM_OK;
}

static void async_free(strategy *s, strategy_handle h, bool deferred)
{
    aalloc *a = alc(s, h);
    s->requested_live -= a->requested;
    uint32_t b = a->block;
    if (b != A_NONE) {
        ablock *x = blk(s, b);
        s->allocated -= x->size;
        if (deferred) {
            x->state = AB_PENDING;
            x->requested = 0;
            index_add(s, &s->pend_set, b);
        } else {
            note_used(s, -(int64_t)x->size);
            make_free(s, b);
            a->block = A_NONE;
        }
    }
    if (deferred)
        alc(s, h)->freed = true;
    else
        slots_put(&s->allocs, h);
}

static void async_free_ready(strategy *s, strategy_handle h)
{
    aalloc *a = alc(s, h);
    if (a->block != A_NONE) {
        ablock *x = blk(s, a->block);
        index_remove(s, &s->pend_set, a->block);
        note_used(s, -(int64_t)x->size);
        make_free(s, a->block);
    }
    slots_put(&s->allocs, h);
}

static void async_empty_cache(strategy *s)
{
    /* pytorch: cudaDeviceSynchronize + cudaMemPoolTrimTo(pool, 0); else a synchronize (D1) */
    (void)synchronize(s, s->set.empty_cache_trims ? 0 : s->set.threshold);
    if (s->set.empty_cache_trims)
        s->trims++;
}

static void async_sample(const strategy *s, strategy_sample *out)
{
    *out = (strategy_sample){
        .allocated_bytes = s->allocated,
        .reserved_bytes = s->reserved,
        .free_bytes = s->free_set.bytes,
        .largest_free_bytes = largest_free(s),
        .num_device_allocs = s->num_device_allocs,
        .num_device_frees = s->num_device_frees,
    };
}

static void async_stats(const strategy *s, const strategy_stat_sink *sink)
{
    strategy_emit_u64(sink, "ReservedMemCurrent", s->reserved);
    strategy_emit_u64(sink, "ReservedMemHigh", s->reserved_high);
    strategy_emit_u64(sink, "UsedMemCurrent", s->used);
    strategy_emit_u64(sink, "UsedMemHigh", s->used_high);
    strategy_emit_u64(sink, "allocated_bytes", s->allocated);
    strategy_emit_u64(sink, "pending_bytes", s->pend_set.bytes);
    strategy_emit_u64(sink, "free_bytes", s->free_set.bytes);
    strategy_emit_u64(sink, "chunks", s->chunks.live);
    strategy_emit_u64(sink, "num_device_alloc", s->num_device_allocs);
    strategy_emit_u64(sink, "num_device_free", s->num_device_frees);
    strategy_emit_u64(sink, "synchronizes", s->syncs);
    strategy_emit_u64(sink, "trims", s->trims);
}

static void async_options(const strategy *s, const strategy_stat_sink *sink)
{
    char buf[32];
    const async_settings *set = &s->set;
    strategy_emit_text(sink, "async_preset", PRESET_NAMES[set->preset]);
    if (set->threshold == UINT64_MAX)
        snprintf(buf, sizeof buf, "max");
    else
        snprintf(buf, sizeof buf, "%" PRIu64, set->threshold);
    strategy_emit_text(sink, "release_threshold", buf);
    snprintf(buf, sizeof buf, "%" PRIu64, set->granularity);
    strategy_emit_text(sink, "pool_granularity", buf);
    snprintf(buf, sizeof buf, "%" PRIu64, set->alignment);
    strategy_emit_text(sink, "pool_alignment", buf);
    strategy_emit_text(sink, "pool_placement", set->first_fit ? "first" : "best");
    strategy_emit_text(sink, "pool_coalesce", set->coalesce ? "on" : "off");
    strategy_emit_text(sink, "async_empty_cache", set->empty_cache_trims ? "trim" : "sync");
    strategy_emit_text(sink, "async_oom_retry", set->oom_sync_retry ? "sync" : "none");
    strategy_emit_text(sink, "memory_fraction", set->has_fraction ? set->fraction_text : "");
    strategy_emit_text(sink, "alloc_conf", set->alloc_conf);
}

/* The capacity reaches the pool only through cudaMalloc failing unless a fraction or
 * the tf preset's threshold (TensorFlow's limit for the device) was derived from it. */
static bool async_capacity_blind(const strategy *s)
{
    return !s->set.has_fraction && !s->set.threshold_from_capacity;
}

static const strategy_ops ASYNC_OPS = {
    .name = "async",
    .summary = "CUDA stream-ordered pool (cudaMallocAsync): release threshold, stream-ordered reuse, trims",
    STRATEGY_OPTS_OF(ASYNC_OPTIONS),
    .family = STRATEGY_FAMILY_ASYNC,
    /* framework NULL: its presets wire it as CUDA, PyTorch or TensorFlow does */
    .no_pools_note = "private pools are not modelled (cudaMallocAsync captures allocations as CUDA graph memory "
                     "nodes, which gpusim does not model); the pools' allocations were replayed in the default pool",
    .create = async_create,
    .destroy = async_destroy,
    .alloc = async_alloc,
    .free = async_free,
    .free_ready = async_free_ready,
    .empty_cache = async_empty_cache,
    .sample = async_sample,
    .stats = async_stats,
    .options = async_options,
    .check = async_check,
    .walk = async_walk,
    .locate = async_locate,
    .capacity_blind = async_capacity_blind,
};

const strategy_ops *async_strategy(void)
{
    return &ASYNC_OPS;
}
