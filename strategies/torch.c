/* The `torch` strategy: PyTorch's CUDA caching allocator, native backend
 * (c10/cuda/CUDACachingAllocator.cpp @ 001074d2, DeviceCachingAllocator; rules as
 * collected in docs/allocators.md §2). Byte-exact on the replay semantics of
 * design.md §3.
 *
 * Rules (docs/allocators.md section in brackets):
 *  1. round_size [2.2]: n < 512 → 512; with d = roundup_power2_divisions(n) > 1 and
 *     n > 512·d → the next multiple of 2^floor(log2 n)/d (powers of two unchanged);
 *     otherwise round up to 512.
 *  2. Pools [2.3]: rounded ≤ 1 MiB → small pool, else large. New segment size:
 *     ≤ 1 MiB → 2 MiB; < 10 MiB → large_segment_size (20 MiB); else round up to 2 MiB.
 *     A pool holds every free block of its own segments, whatever its size.
 *  3. get_free_block [2.4]: lower bound on (stream, size, address) in the pool's set;
 *     refuse a block ≥ max_split_size for a request below it, and a block ≥ request +
 *     max_non_split_rounding for a request ≥ max_split_size. Free blocks are reused
 *     only on the stream they were allocated on.
 *  4. should_split [2.5]: small pool or expandable segments: remainder ≥ 512; large
 *     pool: request < max_split_size and remainder > 1 MiB. The request takes the low
 *     part; the remainder goes back to the pool.
 *  5. malloc ladder [2.7]: free block; garbage collection (threshold and memory
 *     fraction both set); new segment (refused when reserved + segment > fraction cap,
 *     or when the device has no room); release one oversize cached block (or several,
 *     largest first) when max_split_size is set, then a new segment; synchronize,
 *     release every unsplit cached segment (unmap whole free pages of expandable
 *     segments) and retry (num_alloc_retries); OOM.
 *  6. free [2.6]: allocated_bytes drops at once; a deferred free (ready_t > t, the
 *     record_stream case) keeps the block active and unusable until PyTorch sees
 *     its event complete: at the first malloc after free_ready (ready_t), behind
 *     the earlier frees recorded on its stream (free_wait; none: behind nothing)
 *     (process_events), or at a synchronize (empty_cache, rung 7 of the ladder),
 *     which completes it even before ready_t.
 *     free_block merges with free neighbours of the same segment and mapped state.
 *  7. empty_cache [2.8] = release_cached_blocks without the retry.
 *  8. Expandable segments [2.11]: one address range of ceil(1⅛·capacity / page) pages
 *     per (stream, pool), pages of 2 MiB (small) or large_segment_size (large); a
 *     request maps just enough pages at the lowest free address that fits; release
 *     unmaps the whole pages strictly inside free blocks (torch_expandable.c).
 *  9. Memory fraction [2.10]: allowed = (uint64)(f · capacity); it bounds reserved
 *     (release 2.10 on: a fraction of exactly 1.0 is none, §2.15).
 *
 * Data: block, segment and allocation records live in side tables (slots.h) linked
 * by uint32 handles (torch_types.h). Each pool's free set (torch_freeset.h) keeps
 * std::set's (stream, size, address) order in size bins of small treaps with
 * per-stream bin bitmaps; best fit is its lower_bound on (stream, size, 0), and the
 * release paths walk it in that order. Expandable segments keep their unmapped
 * ranges in one treap per pool by (stream, address) (torch_expandable.c). The
 * largest free block is kept as a number, recomputed only when the block holding
 * it leaves a set.
 * Allocation handles are separate from block records: a deferred free completed
 * early by a synchronize lets its block merge away while the engine still holds the
 * handle. The pool sets, segment records and block merge are torch_segments.c (below
 * this file and torch_expandable.c), the deferred frees and their event polling
 * torch_events.c, the private pools torch_pools.c, the walker and the checker
 * torch_check.c, the stats and options torch_report.c, the OOM report torch_oom.c.
 * Complexity: alloc and free O(log b + log s) expected (b blocks in one bin, s
 * streams with free blocks; O(1) stream lookup when its hint holds); the release paths
 * (empty_cache, OOM ladder, GC) are O(f + pending) (f free blocks), sample() O(1);
 * the walker O(n), the checker O(n + bins). No allocation per event once the side
 * tables have grown (the stream index grows only when a stream appears).
 * Internal fragmentation per block: < 512 B from rounding, plus an unsplit remainder
 * of up to 1 MiB (large pool), or up to max_non_split_rounding for oversize blocks. */
#include "torch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/grow.h"
#include "sim/units.h"
#include "torch_conf.h"
#include "torch_freeset.h"
#include "torch_segments.h"
#include "torch_types.h"

/* ==== Size rules (docs/allocators.md §2.2, §2.3) ==== */

static uint64_t round_size(const strategy *s, uint64_t size)
{
    if (size < T_MIN_BLOCK)
        return T_MIN_BLOCK;
    uint64_t d = s->has_divisions ? torch_conf_divisions(&s->conf, size) : 0;
    /* 2.1-2.3 handed one division the size as asked (pytorch/pytorch#126830) */
    if (d == 1 && !s->rules.single_division_rounds_512)
        return size;
    if (d > 1 && size > T_MIN_BLOCK * d) {
        /* roundup_power2_next_division */
        if (units_is_pow2(size))
            return size;
        uint64_t floor2 = (uint64_t)1 << units_log2(size);
        uint64_t step = floor2 >> units_log2(d);
        if (step == 0)
            return floor2 << 1;
        return units_round_up(size, step);
    }
    /* units_round_up(size, 512) without its branch on the remainder: the malloc
     * path has refused sizes of 1 EiB and more, so the sum cannot wrap */
    return (size + T_MIN_BLOCK - 1) & ~(T_MIN_BLOCK - 1);
}

static uint64_t allocation_size(const strategy *s, uint64_t size)
{
    if (size <= T_SMALL_SIZE)
        return T_SMALL_BUFFER;
    if (size < T_MIN_LARGE_ALLOC)
        return s->conf.large_segment_size_bytes; /* kLargeBuffer, large_segment_size_mb */
    return units_round_up(size, T_ROUND_LARGE);
}

static bool should_split(const strategy *s, uint32_t h, uint64_t size)
{
    const tblock *b = B(s, h);
    if (s->rules.pool_no_split && s->pairs[pool_pair(b->pool)]->no_split)
        return false; /* a MemPool(no_split=True) pool's blocks stay whole */
    uint64_t remaining = b->size - size;
    /* both rules evaluated and one picked, without a branch on the pool kind */
    bool any_remainder = (pool_kind(b->pool) == POOL_SMALL) | s->conf.expandable_segments;
    bool small_rule = remaining >= T_MIN_BLOCK;
    bool large_rule = (size < s->conf.max_split_size_bytes) & (remaining > T_SMALL_SIZE);
    return any_remainder ? small_rule : large_rule;
}

/* ==== Free path (docs/allocators.md §2.6) ==== */

/* Whether neighbour n of a mapped block merges into it: it is free (a mapped
 * block merges only with a free one: try_merge's test, here so that the usual
 * case makes no call). */
static inline bool merges(const strategy *s, uint32_t n)
{
    return n != T_NONE && B(s, n)->state == BLOCK_FREE;
}

/* free_block: the block returns to its pool, merged with its free neighbours
 * (inlined into the free path; torch_free_block for the other callers). */
static inline __attribute__((always_inline)) void free_block(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    uint64_t original_size = b->size;
    uint64_t requested = b->requested;
    unsigned pool = b->pool;
    bool expandable = b->expandable;
    uint32_t prev = b->prev, next = b->next;
    b->state = BLOCK_FREE;
    b->requested = 0;
    b->alloc = T_NONE;
    stats_down(s->st.active, pool, 1);
    stats_down(s->st.active_bytes, pool, original_size);
    stats_down(s->st.requested_bytes, pool, requested);

    /* a free neighbour merges whole, so each merge takes one block and its bytes
     * off the inactive split counts */
    int64_t net_blocks = 0, net_bytes = 0;
    if (merges(s, prev)) {
        net_blocks--;
        net_bytes -= (int64_t)torch_merge_prev(s, h, prev);
    }
    if (merges(s, next)) {
        net_blocks--;
        net_bytes -= (int64_t)torch_merge_next(s, h, next);
    }
    torch_pool_insert(s, h);
    bool split = blk_is_split(s, h);
    net_blocks += split;
    net_bytes += split ? (int64_t)B(s, h)->size : 0;
    /* inactive_split counts only cudaMalloc segments: whole free pages of
     * expandable segments can always be released */
    if (!expandable) {
        stats_add(s->st.inactive_split, pool, net_blocks);
        stats_add(s->st.inactive_split_bytes, pool, net_bytes);
    }
}

void torch_free_block(strategy *s, uint32_t h)
{
    free_block(s, h);
}

/* ==== Releasing memory (docs/allocators.md §2.8) ==== */

/* cudaFree of one whole cached segment (release_block). */
static void release_block(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    uint64_t size = b->size;
    unsigned pool = b->pool;
    uint32_t g = b->seg;
    s->st.num_device_free++;
    device_release(s->dev, s->proc, size);
    stats_down(s->st.segment, pool, 1);
    stats_down(s->st.reserved_bytes, pool, size);
    pair_reserved(s, pool, -(int64_t)size);
    if (size >= s->conf.max_split_size_bytes)
        stat_down(&s->st.oversize_segments, 1);
    torch_pool_erase(s, h);
    slots_put(&s->blocks, h);
    torch_seg_drop(s, g);
}

/* Whether release_block may take h: a whole cudaMalloc segment. PyTorch asserts
 * the first and assumes the second; max_split_size with a large_segment_size above
 * it can leave a free split block ≥ max_split_size, which PyTorch would cudaFree
 * from the middle of its segment. We keep such blocks instead. */
static bool releasable(const strategy *s, uint32_t h)
{
    return !B(s, h)->expandable && !blk_is_split(s, h);
}

/* release_blocks: every unsplit cached segment of the pool, and the whole free
 * pages of its expandable segments. */
static void release_blocks(strategy *s, unsigned pool)
{
    torch_scratch_collect(s, pool);
    /* cudaFree the whole segments now; keep the expandable blocks, compacted to
     * the front of the list, for unmapping afterwards (PyTorch's to_unmap): a
     * handle freed here may be reused by a block the unmapping creates */
    uint32_t n_unmap = 0;
    for (uint32_t i = 0; i < s->scratch.len; i++) {
        uint32_t h = s->scratch.h[i];
        if (B(s, h)->expandable)
            s->scratch.h[n_unmap++] = h;
        else if (!blk_is_split(s, h))
            release_block(s, h);
    }
    /* These handles stay valid: unmapping merges only unmapped blocks, and the
     * free blocks still to come are mapped. */
    for (uint32_t i = 0; i < n_unmap; i++) {
        uint32_t h = s->scratch.h[i];
        torch_expandable_unmap(s, h);
    }
}

/* release_cached_blocks: synchronize, release both default pools, then the
 * private pools whose uses were all released (graph_pools_freeable), dropping
 * those left without a segment (2.6 lines 2858-2902; no MemPoolContext is active
 * in a trace). */
static bool release_cached_blocks(strategy *s)
{
    torch_synchronize(s);
    release_blocks(s, POOL_LARGE);
    release_blocks(s, POOL_SMALL);
    bool any = false;
    for (uint32_t i = 1; i < s->n_pairs; i++) {
        if (s->pairs[i]->live && s->pairs[i]->freeable) {
            release_blocks(s, pool_index(i, POOL_SMALL));
            release_blocks(s, pool_index(i, POOL_LARGE));
            any = true;
        }
    }
    if (any)
        torch_pools_drop_empty(s);
    return true;
}

/* release_available_cached_blocks (only with max_split_size set): one cached
 * block ≥ max(request, M) on this stream, else oversize blocks from the largest down
 * until their total reaches that key. */
static bool release_available_cached_blocks(strategy *s, unsigned pool, uint32_t stream, uint64_t size)
{
    uint64_t m = s->conf.max_split_size_bytes;
    if (m == TORCH_CONF_NO_MAX_SPLIT)
        return false;
    uint64_t key = u64_max(size, m);
    uint32_t it = torch_fs_lower_bound(FS(s, pool), stream, key);
    if (it != T_NONE) {
        if (!releasable(s, it))
            return false;
        release_block(s, it);
        return true;
    }
    it = torch_fs_last_below(FS(s, pool), stream, key);
    if (it == T_NONE)
        return false;
    uint64_t released = 0;
    while (released < key && B(s, it)->size >= m && B(s, it)->stream == stream && releasable(s, it)) {
        uint32_t cur = it;
        released += B(s, cur)->size;
        it = torch_fs_prev(FS(s, pool), cur);
        release_block(s, cur);
        if (it == T_NONE)
            break;
    }
    return released >= key;
}

/* ==== Garbage collection (docs/allocators.md §2.9) ==== */

static uint64_t gc_age(const strategy *s, uint32_t h)
{
    const tblock *b = B(s, h);
    return (uint32_t)((uint32_t)(*GC_COUNTER(s, b->pool)) - b->gc_base);
}

/* garbage_collect_cached_blocks: free the unsplit large-pool blocks of at least the
 * mean age, pass after pass, until reserved is back under threshold · allowed. */
static void garbage_collect(strategy *s)
{
    uint64_t threshold = (uint64_t)(s->conf.garbage_collection_threshold * (double)s->allowed_bytes);
    uint64_t reserved = reserved_now(s);
    if (reserved <= threshold)
        return;
    uint64_t target = reserved - threshold;
    uint64_t reclaimed = 0, total_age = 0, count = 0;
    torch_scratch_collect(s, POOL_LARGE);
    for (uint32_t i = 0; i < s->scratch.len; i++) {
        if (releasable(s, s->scratch.h[i])) {
            total_age += gc_age(s, s->scratch.h[i]);
            count++;
        }
    }
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        double age_threshold = (double)total_age / (double)count;
        freed = false;
        /* the whole set is swept each pass: it does not stop at the target */
        torch_scratch_collect(s, POOL_LARGE);
        for (uint32_t i = 0; i < s->scratch.len; i++) {
            uint32_t h = s->scratch.h[i];
            if (!releasable(s, h) || (double)gc_age(s, h) < age_threshold)
                continue;
            freed = true;
            reclaimed += B(s, h)->size;
            total_age -= gc_age(s, h);
            count--;
            release_block(s, h);
        }
    }
}

/* ==== The malloc path (docs/allocators.md §2.4, §2.5, §2.7) ==== */

/* (inlined: the malloc path's call costs more than its body's usual case) */
static inline __attribute__((always_inline)) uint32_t get_free_block(strategy *s, unsigned pool, uint32_t stream,
                                                                     uint64_t size)
{
    if (s->gc_on)
        (*GC_COUNTER(s, pool))++; /* block reuse interval, tracked only with GC on */
    torch_fs_pos found = torch_fs_find(FS(s, pool), stream, size);
    uint32_t it = found.h;
    if (it == T_NONE)
        return T_NONE;
    if (B(s, it)->expandable) {
        /* best fit counts the unmapped space right after a block as its size
         * (expandable_segments is fixed for a run, so the branch that skips
         * expandable blocks when the option was turned off cannot arise) */
        for (;;) {
            uint32_t nx = torch_fs_next(FS(s, pool), it);
            if (!B(s, it)->expandable || nx == T_NONE || B(s, nx)->stream != stream)
                break;
            const tblock *a = B(s, it), *n = B(s, nx);
            uint64_t ea = a->size + (a->next != T_NONE && B(s, a->next)->state == BLOCK_UNMAPPED ? B(s, a->next)->size : 0);
            uint64_t en = n->size + (n->next != T_NONE && B(s, n->next)->state == BLOCK_UNMAPPED ? B(s, n->next)->size : 0);
            if (en >= ea)
                break;
            it = nx;
        }
    }
    uint64_t m = s->conf.max_split_size_bytes;
    uint64_t bsize = B(s, it)->size;
    /* pytorch/pytorch#193400 (open; issue #123548): not for expandable segments */
    bool oversize_rules = !(s->rules.fix_expandable_ignores_max_split && B(s, it)->expandable);
    /* oversize blocks are kept for oversize requests */
    if (oversize_rules && size < m && bsize >= m)
        return T_NONE;
    /* and an oversize request takes one at most max_non_split_rounding larger */
    if (oversize_rules && size >= m && bsize >= size + s->conf.max_non_split_rounding_bytes)
        return T_NONE;
    if (it == found.h)
        torch_fs_take(FS(s, pool), found); /* no second search for it */
    else
        torch_pool_erase(s, it);
    return it;
}

/* alloc_block: a new segment (cudaMalloc) or new pages (expandable). */
static uint32_t alloc_block(strategy *s, unsigned pool, uint32_t stream, uint64_t size, uint64_t alloc_size,
                            bool is_retry)
{
    if (is_retry)
        s->st.num_alloc_retries++;
    if (s->set_fraction && reserved_now(s) + alloc_size > s->allowed_bytes)
        return T_NONE;
    if (s->conf.expandable_segments)
        return torch_expandable_alloc(s, pool, stream, size);
    uint32_t h = blk_take(s);
    if (h == T_NONE)
        return T_NONE;
    uint64_t addr = 0;
    if (device_alloc(s->dev, s->proc, alloc_size, &addr) != SIM_OK) {
        slots_put(&s->blocks, h);
        return T_NONE;
    }
    uint32_t g = torch_seg_new(s, pool, stream, addr, alloc_size, false);
    if (g == T_NONE) {
        device_release(s->dev, s->proc, alloc_size);
        slots_put(&s->blocks, h);
        return T_NONE;
    }
    blk_init(s, h, addr, alloc_size, g, BLOCK_FREE);
    SEG(s, g)->head = h;
    stats_up(s->st.segment, pool, 1);
    stats_up(s->st.reserved_bytes, pool, alloc_size);
    pair_reserved(s, pool, (int64_t)alloc_size);
    if (alloc_size >= s->conf.max_split_size_bytes)
        stat_up(&s->st.oversize_segments, 1);
    s->st.num_device_alloc++;
    return h;
}

/* alloc_found_block: split off the remainder if asked, hand out the low part. */
static uint32_t alloc_found_block(strategy *s, uint32_t h, uint64_t size, uint64_t orig_size, bool split,
                                  uint32_t ah)
{
    unsigned pool = B(s, h)->pool;
    bool expandable = B(s, h)->expandable;
    bool already_split = blk_is_split(s, h);
    if (split) {
        uint32_t nb = blk_take(s);
        if (nb == T_NONE) {
            split = false; /* host memory is out: hand the block out whole */
        } else {
            uint32_t rem = h;
            tblock *r = B(s, rem);
            /* the low part is of r's segment: r's stream, pool and kind are the
             * segment's, and r is loaded already (the segment record may not be) */
            blk_write(s, nb, r->addr, size, r->seg, BLOCK_USED, r->stream, r->pool, r->expandable);
            blk_splice(s, nb, B(s, rem)->prev, rem);
            r = B(s, rem);
            r->addr += size;
            r->size -= size;
            torch_pool_insert(s, rem);
            if (already_split && !expandable) {
                /* an already split free block shrinks by size bytes */
                stats_down(s->st.inactive_split_bytes, pool, size);
            } else if (!expandable) {
                stats_up(s->st.inactive_split_bytes, pool, B(s, rem)->size);
                stats_up(s->st.inactive_split, pool, 1);
            }
            h = nb;
        }
    }
    if (!split && already_split && !expandable) {
        stats_down(s->st.inactive_split_bytes, pool, B(s, h)->size);
        stats_down(s->st.inactive_split, pool, 1);
    }
    tblock *b = B(s, h);
    b->state = BLOCK_USED;
    b->requested = orig_size;
    b->alloc = ah;
    stats_up(s->st.allocation, pool, 1);
    stats_up(s->st.allocated_bytes, pool, b->size);
    pair_allocated(s, pool, (int64_t)b->size);
    stats_up(s->st.active, pool, 1);
    stats_up(s->st.active_bytes, pool, b->size);
    stats_up(s->st.requested_bytes, pool, orig_size);
    if (b->size >= s->conf.max_split_size_bytes)
        stat_up(&s->st.oversize_allocations, 1);
    return h;
}

/* ==== The largest free block ==== */

/* The largest free block of every pool (each pool recomputes its own only when the
 * block holding it has left its set). */
uint64_t torch_largest_free(strategy *s)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < s->n_pairs; i++)
        if (s->pairs[i]->live)
            m = u64_max(m, u64_max(torch_fs_largest(&s->pairs[i]->fs[POOL_SMALL]),
                                   torch_fs_largest(&s->pairs[i]->fs[POOL_LARGE])));
    return m;
}

/* torch_largest_free, the default pools read without a loop: with no private pool
 * (the usual case) nothing else is. */
static inline void refresh_largest(strategy *s)
{
    tpair *p = s->pairs[0];
    uint64_t m = u64_max(torch_fs_largest(&p->fs[POOL_SMALL]), torch_fs_largest(&p->fs[POOL_LARGE]));
    s->largest = s->n_pairs == 1 ? m : u64_max(m, torch_largest_free(s));
}

/* ==== Operations ==== */

static void torch_destroy(strategy *s);

static sim_status torch_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    torch_conf conf;
    torch_rules rules;
    sim_status st = torch_version_parse(strategy_config_get(cfg, "torch_version"), &rules, err);
    if (st == SIM_OK)
        st = torch_platform_parse(strategy_config_get(cfg, "platform"), &rules, err);
    if (st == SIM_OK)
        st = torch_fixes_parse(strategy_config_get(cfg, "torch_fixes"), &rules, err);
    if (st != SIM_OK)
        return st;
    const char *text = strategy_config_get(cfg, "alloc_conf");
    st = torch_conf_parse_for(text, &rules, &conf, err);
    if (st != SIM_OK)
        return st;
    /* ROCm before 2.12 or before ROCm 7: PyTorch warns and runs without (§2.15) */
    if (!rules.expandable_supported)
        conf.expandable_segments = false;
    if (conf.backend_async)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "alloc_conf: backend:cudaMallocAsync replaces the caching allocator with CUDA's "
                             "stream-ordered pool, which is the async strategy: run --strategy=async "
                             "--alloc-conf=%s (PyTorch's wiring: release threshold UINT64_MAX, empty_cache = "
                             "synchronize + cudaMemPoolTrimTo(0)); the torch strategy models the native backend",
                             text);
    double fraction = 1.0;
    const char *ftext = strategy_config_get(cfg, "memory_fraction");
    char conf_fraction[32];
    bool from_key = ftext == NULL && conf.per_process_memory_fraction >= 0.0;
    if (from_key) {
        /* per_process_memory_fraction in the conf: as set_per_process_memory_fraction
         * at start-up (an explicit memory_fraction wins, as a later call would) */
        snprintf(conf_fraction, sizeof conf_fraction, "%.17g", conf.per_process_memory_fraction);
        ftext = conf_fraction;
    }
    if (ftext != NULL) {
        sim_error sub;
        sim_error_clear(&sub);
        if (units_parse_real(ftext, 0.0, 1.0, &fraction, &sub) != SIM_OK)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "memory_fraction: %s (expected a real in [0, 1], the share of the device's total "
                                 "memory that reserved memory may reach)",
                                 sub.msg);
    }
    strategy *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating torch");
    s->dev = cfg->dev;
    s->proc = cfg->proc;
    device_info info = device_get_info(cfg->dev);
    s->capacity_bytes = info.capacity_bytes;
    s->context_bytes = info.context_bytes;
    s->conf = conf;
    s->rules = rules;
    snprintf(s->conf_text, sizeof s->conf_text, "%s", text ? text : "");
    /* 2.10 on, a fraction of exactly 1.0 is no limit at all (§2.15): as if none was set */
    if (ftext != NULL && !(rules.fraction_one_is_no_limit && fraction >= 1.0)) {
        s->set_fraction = true;
        s->fraction = fraction;
        /* setMemoryFraction: static_cast<size_t>(fraction * total), truncating; the
         * configuration's key rounds to the nearest byte from 2.13 (§2.15) */
        double cap = fraction * (double)info.capacity_bytes;
        s->allowed_bytes = from_key && rules.fraction_key_rounds ? (uint64_t)llround(cap) : (uint64_t)cap;
    }
    s->gc_on = s->set_fraction && conf.garbage_collection_threshold > 0.0;
    for (unsigned k = 0; k < TORCH_CONF_ROUNDUP_INTERVALS; k++)
        s->has_divisions = s->has_divisions || conf.roundup_power2_divisions[k] != 0;
    slots_init_aligned(&s->blocks, sizeof(tblock), 64); /* a record per cache line (tblock is 64 B) */
    slots_init(&s->segs, sizeof(tseg));
    slots_init(&s->allocs, sizeof(talloc));
    if (rules.tie_by_creation) {
        /* 2.12: equal free blocks tie by creation number (§2.15; torch_pools.c orders
         * every pool's sets so) */
        if (!SIM_GROW(s->born, 64, s->born_cap)) {
            torch_destroy(s);
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating torch");
        }
    }
    if (!torch_pools_init(s)) {
        torch_destroy(s);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating torch");
    }
    s->seg_first = s->seg_last = T_NONE;
    s->q_head = s->q_tail = s->c_head = T_NONE;
    *out = s;
    return SIM_OK;
}

static void torch_destroy(strategy *s)
{
    if (s == NULL)
        return;
    slots_release(&s->blocks);
    slots_release(&s->segs);
    slots_release(&s->allocs);
    free(s->waits);
    free(s->defer);
    free(s->due);
    torch_pools_release(s);
    torch_fs_list_release(&s->scratch);
    free(s->born);
    free(s);
}

/* try_mempool_fallback (2.8 on): a default-pool request whose first cudaMalloc
 * failed takes a free block of a MemPool(use_on_oom=True) pool, searched as
 * get_free_block searches, before any cached memory is released (2.11 on; 2.8-2.10
 * after the ladder's last rung). PyTorch walks its
 * use_on_oom_pools set (a hash set keyed by the pool id: ascending for the ids a
 * trace uses); a pool whose uses were all released aborts PyTorch there (it adds a
 * use to a pool that has none), which gpusim does not follow: it skips the pool. */
static uint32_t use_on_oom_fallback(strategy *s, unsigned *pool, uint32_t stream, uint64_t rs)
{
    unsigned kind = pool_kind(*pool);
    uint64_t after = 0; /* the pools by id, ascending: the next above the last tried */
    for (;;) {
        uint32_t next = T_NONE;
        for (uint32_t i = 1; i < s->n_pairs; i++) {
            const tpair *p = s->pairs[i];
            if (p->live && p->use_on_oom && p->uses > 0 && p->id > after &&
                (next == T_NONE || p->id < s->pairs[next]->id))
                next = i;
        }
        if (next == T_NONE)
            return T_NONE;
        uint32_t b = get_free_block(s, pool_index(next, kind), stream, rs);
        if (b != T_NONE) {
            *pool = pool_index(next, kind);
            return b;
        }
        after = s->pairs[next]->id;
    }
}

/* Whether PyTorch behaves as inside a capture (no polling, parked frees, no cache
 * release in the ladder). 2.6-2.12: any scope open (captures_underway non-empty,
 * 2.6 lines 1195, 1240, 1504). 2.13 on (torch_rules.capture_context_by_stream):
 * a capture running on the current stream, which is the allocation's stream at
 * malloc; at a free, gpusim takes the current stream to be a running capture's
 * (torch.cuda.graph makes its stream current) whenever one runs. */
static bool capture_context(const strategy *s, bool at_free, uint32_t stream)
{
    if (!s->rules.capture_context_by_stream)
        return s->n_routes > 0;
    for (uint32_t i = 0; i < s->n_routes; i++)
        if (s->routes[i].capture && (at_free || s->routes[i].all_streams || s->routes[i].stream == stream))
            return true;
    return false;
}

static sim_status torch_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *out, strategy_oom *oom)
{
    uint32_t ah = alloc_take(s);
    if (ah == T_NONE)
        return SIM_ENOMEM;
    *AL(s, ah) = (talloc){.block = T_NONE, .state = A_LIVE, .captured = s->n_routes > 0}; /* the whole record */
    if (size == 0) {
        /* allocate(0) returns no block and takes no memory */
        *out = ah;
        return SIM_OK;
    }
    if (size >= T_ONE_EIB) {
        torch_fill_oom(s, size, size, oom);
        snprintf(oom->detail, sizeof oom->detail, "CUDA out of memory. Tried to allocate more than 1EB memory.");
        s->st.num_ooms++;
        slots_put(&s->allocs, ah);
        return SIM_OOM;
    }
    /* no event is polled while a capture is underway (2.6 lines 1195-1207); with
     * no scope open there is none, and nothing to poll without parked or ready frees */
    bool capturing = s->n_routes > 0 && capture_context(s, false, stream);
    if (!capturing && (s->n_parked > 0 || s->c_head != T_NONE))
        torch_process_events(s);
    uint64_t rs = round_size(s, size);
    /* get_pool: a routed allocation goes to its private pool's pair */
    unsigned pool = pool_index(s->n_routes > 0 ? torch_pool_route(s, stream) : 0,
                               rs <= T_SMALL_SIZE ? POOL_SMALL : POOL_LARGE);
    uint32_t b = get_free_block(s, pool, stream, rs);
    if (b == T_NONE) {
        uint64_t alloc_size = allocation_size(s, rs); /* the segment a miss asks for */
        if (s->gc_on)
            garbage_collect(s);
        b = alloc_block(s, pool, stream, rs, alloc_size, false);
        bool fallback = s->rules.pool_use_on_oom && pool_pair(pool) == 0;
        if (b == T_NONE && fallback && s->rules.use_on_oom_before_release)
            b = use_on_oom_fallback(s, &pool, stream, rs);
        if (b == T_NONE && release_available_cached_blocks(s, pool, stream, rs))
            b = alloc_block(s, pool, stream, rs, alloc_size, false);
        /* nor synchronized and released during a capture (2.6 line 1240) */
        if (b == T_NONE && !capturing && release_cached_blocks(s)) {
            /* pytorch/pytorch#191302 (open): the pool again, which the synchronize
             * may have given completed deferred frees (issue #189504) */
            if (s->rules.fix_research_after_release)
                b = get_free_block(s, pool, stream, rs);
            if (b == T_NONE)
                b = alloc_block(s, pool, stream, rs, alloc_size, true);
        }
        /* 2.8-2.10: the use_on_oom pools after the last rung */
        if (b == T_NONE && fallback && !s->rules.use_on_oom_before_release)
            b = use_on_oom_fallback(s, &pool, stream, rs);
    }
    if (b == T_NONE) {
        s->st.num_ooms++;
        torch_fill_oom(s, rs, allocation_size(s, rs), oom);
        slots_put(&s->allocs, ah);
        refresh_largest(s);
        return s->host_oom ? SIM_ENOMEM : SIM_OOM;
    }
    bool split = should_split(s, b, rs);
    b = alloc_found_block(s, b, rs, size, split, ah);
    AL(s, ah)->block = b;
    *out = ah;
    refresh_largest(s);
    return s->host_oom ? SIM_ENOMEM : SIM_OK;
}

static void torch_free(strategy *s, strategy_handle h, bool deferred)
{
    talloc *a = AL(s, h);
    uint32_t b = a->block;
    if (b == T_NONE) {
        /* zero bytes: nothing to return */
        if (deferred)
            a->state = A_PENDING;
        else
            slots_put(&s->allocs, h);
        return;
    }
    tblock *blk = B(s, b);
    /* free_block reads its neighbours, lines apart from it: start loading them
     * now, under the statistics below (a link at T_NONE names the block itself) */
    __builtin_prefetch(B(s, blk->prev != T_NONE ? blk->prev : b));
    __builtin_prefetch(B(s, blk->next != T_NONE ? blk->next : b));
    unsigned pool = blk->pool;
    stats_down(s->st.allocation, pool, 1);
    stats_down(s->st.allocated_bytes, pool, blk->size);
    pair_allocated(s, pool, -(int64_t)blk->size);
    if (blk->size >= s->conf.max_split_size_bytes)
        stat_down(&s->st.oversize_allocations, 1);
    if (deferred && capture_context(s, true, 0)) {
        /* during a capture its events wait until none is underway (2.6 lines 1503-1510) */
        blk->state = BLOCK_PENDING;
        a->state = A_PARKED;
        DF(s, h)->wait = T_NONE;
        a->parked_ready = 0;
        if (!SIM_GROW(s->parked, s->n_parked + 1, s->cap_parked)) {
            s->host_oom = true;
            return;
        }
        s->parked[s->n_parked++] = h;
        return;
    }
    if (deferred) {
        /* the record_stream case: active, unusable until its events complete */
        blk->state = BLOCK_PENDING;
        a->state = A_PENDING;
        s->n_pending++;
        torch_pending_push(s, h);
        return;
    }
    free_block(s, b);
    slots_put(&s->allocs, h);
    refresh_largest(s);
}

static void torch_empty_cache(strategy *s)
{
    /* PyTorch 2.6 asserts that no capture is underway (synchronize_and_free_events,
     * line 3085): gpusim leaves the cache as it is */
    if (s->n_routes > 0)
        return;
    release_cached_blocks(s);
    refresh_largest(s);
}

static void torch_sample(const strategy *s, strategy_sample *out)
{
    *out = (strategy_sample){
        .allocated_bytes = (uint64_t)stat_of(s->st.allocated_bytes, ST_ALL).current,
        .reserved_bytes = reserved_now(s),
        .free_bytes = torch_free_bytes(s),
        .largest_free_bytes = s->largest,
        .num_device_allocs = s->st.num_device_alloc,
        .num_device_frees = s->st.num_device_free,
        /* max_memory_reserved / max_memory_allocated: DeviceStats' running peaks */
        .peak_reserved_bytes = (uint64_t)s->st.reserved_bytes[ST_ALL].peak,
        .peak_allocated_bytes = (uint64_t)s->st.allocated_bytes[ST_ALL].peak,
    };
}

/* Without a memory fraction the capacity reaches the allocator only through cudaMalloc
 * failing (and the expandable range's size, which moves addresses but no choice):
 * garbage collection needs a fraction too (§2.7). */
static bool torch_capacity_blind(const strategy *s)
{
    return !s->set_fraction;
}

static const strategy_ops TORCH_OPS = {
    .name = "torch",
    .summary = "PyTorch CUDA caching allocator (native backend), PYTORCH_CUDA_ALLOC_CONF options",
    .opts = torch_conf_options,
    .n_opts = TORCH_CONF_N_OPTIONS,
    .family = STRATEGY_FAMILY_TORCH,
    .framework = "torch",
    .advice = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (--alloc-conf=expandable_segments:True), "
              "or max_split_size_mb to keep large blocks whole",
    .recorded_conf_key = "alloc_conf",
    .create = torch_create,
    .destroy = torch_destroy,
    .alloc = torch_alloc,
    .free = torch_free,
    .free_ready = torch_free_ready,
    .free_wait = torch_free_wait,
    .empty_cache = torch_empty_cache,
    .pool_begin = torch_pool_begin,
    .pool_end = torch_pool_end,
    .pool_release = torch_pool_release,
    .pools = torch_pools,
    .sample = torch_sample,
    .stats = torch_stats,
    .options = torch_options,
    .check = torch_check,
    .walk = torch_walk,
    .seed = torch_seed,
    .locate = torch_locate,
    .capacity_blind = torch_capacity_blind,
};

const strategy_ops *torch_strategy(void)
{
    return &TORCH_OPS;
}
