/* The `greedy`, `growth` and `limit` strategies: TensorFlow/XLA's BFC allocator.
 *
 * Sources: openxla/xla xla/tsl/framework/bfc_allocator.{h,cc} at 183fa00c (2026-08-22,
 * --bfc-version=xla2026) and google/tsl tsl/framework/bfc_allocator.cc at 82f832b5
 * (2024-06-15, --bfc-version=tsl2024): the same rules except 10 and 11,
 * tensorflow core/common_runtime/gpu/gpu_device.cc and gpu_bfc_allocator.cc,
 * xla/pjrt/gpu/gpu_helpers.cc. Summarised with citations in
 * docs/allocators.md §1 ("§1.x" below). No source code is reproduced.
 *
 * Rules:
 *  1. A request of n > 0 bytes is rounded up to R = 256·ceil(n/256); n = 0 takes
 *     nothing (AllocateRawInternal returns null; §1.2, design.md §3).
 *  2. Free chunks live in 21 bins; bin b < 20 holds sizes [256·2^b, 256·2^(b+1)),
 *     bin 20 everything ≥ 256 MiB. Each bin is ordered by (size, address) (§1.2).
 *  3. Best fit: the first chunk of size ≥ R in (bin(R), size, address) order, which is
 *     the globally smallest adequate chunk, ties to the lowest address (§1.3).
 *  4. Split iff S ≥ 2R or S − R ≥ max_frag, max_frag = f·limit when
 *     bfc_fragmentation_fraction f > 0, else 128 MiB. The allocation keeps the low end;
 *     the remainder is a new free chunk (§1.4, ShouldSplitChunk).
 *  5. bytes_in_use counts chunk sizes, not requests (§1.4).
 *  6. Free: merge with the next chunk if free, then into the previous one if free.
 *     Chunks are linked only inside one region: the GPU sub-allocator does not
 *     coalesce, so regions never merge (§1.4, DeviceMemAllocator).
 *  7. No fit → Extend(R) (§1.5): available = floor256(limit − pool); fail if
 *     R > available; double the region size C until C ≥ R (and then do not double it
 *     after this Extend); take min(C, available) from the device; on refusal back off
 *     by ×0.9 (float), rounded to 256, at least 256 smaller each time, until below R;
 *     on success double C unless it was just increased. Growth starts C at
 *     RoundedBytes(min(limit, 2 MiB)); no growth starts it at RoundedBytes(limit), so
 *     the first Extend takes the whole limit as one region.
 *  8. Still no fit and garbage collection on → free every wholly free region, if
 *     R ≤ limit − pool + their bytes, then Extend once more (§1.6).
 *  9. Otherwise OOM. TF's retry-on-failure waits up to 10 s for another thread to
 *     free memory (§1.7); a single-threaded replay frees nothing meanwhile, so the
 *     wait cannot change the outcome and is not modelled.
 * 10. Spatial partitioning (--bfc-spatial, xla2026 only; XLA PR #43912, 4b147ab4,
 *     2026-06-15; §1.11): a new region is one chunk tagged GAP, the central gap, kept out
 *     of the bins; a request takes the best binned (LOWER) hole first, else is carved
 *     from the gap's low end by rule 4 (a small gap goes whole); a freed LOWER chunk with
 *     no LOWER chunk above it becomes GAP, and merged chunks keep a common tag, else GAP.
 *     A second gap is XLA's CHECK failure: counted in xla_aborts (an Extend that would
 *     make one fails as an OOM). Only default (lower) memory is modelled.
 * 11. Alignment (xla2026; PR #40979, 5a75e91e, 2026-04-17; §1.11): a = max(requested,
 *     256); a chunk fits if it holds R plus the 256-rounded padding to the next multiple
 *     of a; the first fitting chunk in (size, address) order is taken, its padding split
 *     off as a free LOWER hole, rule 4 applied to the rest. tsl 2024 ignores alignment.
 * Limits (§1.9, §1.10, §1.11): the framework wiring, bfc_limits.h; under xla2026 the
 * jax preset's limit is rounded up to 2 MiB.
 *
 * Files: bfc_types.h (records), bfc_bins.{h,c} (the free bins of rules 2 and 3),
 * bfc_limits.{h,c} (options and the limit), bfc_check.c (walker, locate, checker, test hook),
 * and this file: regions, Extend, allocate and free, garbage collection, queries.
 *
 * Data: chunks in a side table (slots.h) with uint32 handles; physical neighbours
 * prev/next. Free chunks in the binned free set of bfc_bins.h: each of TF's 21 bins
 * cut into 16 slices of increasing sizes, each a treap over (size, address), with
 * bitmaps over the non-empty ones. A split leaves the remainder in the free chunk's
 * record and a merge grows a free neighbour's, so that a chunk that keeps its slice
 * and order (a training step's top chunk) changes in place (bfc_bins_rekey); a list
 * of spare records carries merges' freed records to the next splits. alloc and free are
 * O(log f) expected (f = free chunks in one slice), sample() O(1) (the bins keep
 * their largest size); Extend O(1); garbage collection O(regions).
 * With --bfc-alignment above 256 a search walks on from the best fit past chunks
 * too small for their padding: O(f) in the worst case.
 * No host allocation per event once the tables reached their high-water marks.
 * Fragmentation bound: a used chunk exceeds its request by < R + 256 and < 128 MiB
 * (or max_frag) + 256, by rule 4; between chunks, none (regions are tiled). */
#include "bfc.h"

#include <stdio.h>
#include <stdlib.h>

#include "bfc_bins.h"
#include "bfc_limits.h"
#include "bfc_types.h"
#include "sim/grow.h"
#include "sim/units.h"
#include "slots.h"

/* ==== small helpers ==== */

static inline uint64_t rounded_bytes(uint64_t n)
{
    /* units_round_up(n, 256) by a mask: whether n is already a multiple of 256 is
     * random across requests, and a branch on it mispredicts; sizes within 255 of
     * 2^64 saturate to the largest multiple, as there */
    const uint64_t mask = BFC_MIN_ALLOC - 1;
    return n > UINT64_MAX - mask ? UINT64_MAX & ~mask : (n + mask) & ~mask;
}

static inline uint64_t sat_double(uint64_t x)
{
    /* TF's size_t would wrap after ~43 doublings from 2 MiB, which needs more Extends
     * than any limit allows; saturate so the doubling loop always ends. */
    return x > UINT64_MAX / 2 ? x : x * 2;
}

static uint32_t next_prio(strategy *s)
{
    uint32_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s->rng = x;
    return x;
}

/* A fresh chunk record, a spare one if there is one; BFC_NONE when out of host
 * memory. Invalidates chunk pointers. Splits take records and merges give them back
 * in runs (a training step's forward pass splits, its backward pass merges): the
 * spares are a list as long as those runs need, so that a split rarely finds it
 * empty, a test that is then nearly always predicted, and the table's take and put
 * (its in-use flags and counts) stay off the hot path. */
static uint32_t chunk_new(strategy *s)
{
    bfc_chunk *ck = bfc_chunk_table(s);
    uint32_t h = s->spare_head;
    if (h != BFC_NONE) {
        s->spare_head = ck[h].parent;
        s->n_spares--;
    } else if ((h = slots_take_uninit(&s->chunks)) == BFC_NONE) {
        return h;
    }
    bfc_chunk_table(s)[h] = (bfc_chunk){.child = {BFC_NONE, BFC_NONE}, .parent = BFC_NONE, .prio = next_prio(s),
                                        .prev = BFC_NONE, .next = BFC_NONE, .state = CHUNK_FREE,
                                        .bin = BFC_NO_BIN, .tag = BFC_TAG_LOWER};
    return h;
}

/* Give back the record of a chunk merged away (free, out of the bins), to the spares. */
static void chunk_drop(strategy *s, uint32_t h)
{
    bfc_chunk_table(s)[h].parent = s->spare_head;
    s->spare_head = h;
    s->n_spares++;
}

/* ==== the free structures: the bins, and the central gap (rule 10) ==== */

/* InsertFreeChunk: the GAP chunk becomes the central gap, every other free chunk
 * goes into its bin. The caller has made sure there is no central gap yet (the
 * source CHECKs it). */
static void free_insert(strategy *s, uint32_t h)
{
    bfc_chunk *ck = bfc_chunk_table(s);
    if (ck[h].tag == BFC_TAG_GAP) {
        s->gap = h;
        return;
    }
    bfc_bins_insert(&s->bins, ck, h);
}

/* RemoveFreeChunk. */
static void free_erase(strategy *s, uint32_t h)
{
    if (h == s->gap) {
        s->gap = BFC_NONE;
        return;
    }
    bfc_bins_erase(&s->bins, bfc_chunk_table(s), h);
}

/* LargestFreeChunk: the largest binned chunk or the central gap (GetStats'
 * largest_free_block_bytes and GetFragmentation count the gap). */
static uint64_t largest_free(const strategy *s)
{
    const bfc_chunk *ck = bfc_chunk_table(s);
    uint64_t largest = bfc_bins_largest(&s->bins);
    if (s->gap != BFC_NONE && ck[s->gap].size > largest)
        largest = ck[s->gap].size;
    return largest;
}

/* LowEndAlignmentPadding: the bytes below the first aligned address of a chunk at
 * addr, rounded up to 256 so that the prefix can be a chunk of its own. */
static inline uint64_t align_padding(const strategy *s, uint64_t addr)
{
    /* the alignment is a power of two (bfc_limits.c): a mask, not a division */
    uint64_t misaligned = addr & (s->alignment - 1);
    return misaligned ? rounded_bytes(s->alignment - misaligned) : 0;
}

/* ==== regions ==== */

static bool regions_reserve(strategy *s)
{
    return SIM_GROW(s->regions, (uint64_t)s->n_regions + 1, s->cap_regions);
}

/* Extend (rule 7). SIM_OK with a new free region, SIM_OOM when the limit or the
 * device refuses, SIM_ENOMEM when the host is out of memory (nothing changed). */
static sim_status extend(strategy *s, uint64_t rounded)
{
    uint64_t available = units_round_down(s->limit - s->pool_bytes, BFC_MIN_ALLOC);
    if (rounded > available)
        return SIM_OOM;
    /* Host-side records first, so that a host failure leaves no device memory held. */
    if (!regions_reserve(s))
        return SIM_ENOMEM;
    uint32_t h = chunk_new(s);
    if (h == BFC_NONE)
        return SIM_ENOMEM;

    bool increased = false;
    while (rounded > s->curr_region_bytes) {
        s->curr_region_bytes = sat_double(s->curr_region_bytes);
        increased = true;
    }
    uint64_t bytes = s->curr_region_bytes < available ? s->curr_region_bytes : available;
    /* Spatial partitioning with its central gap still there (only after a
     * backpedalled first region): a region the device grants would be a second gap,
     * which the source CHECKs against (InsertFreeChunk), and the process aborts.
     * gpusim takes nothing and reports an OOM whose detail says so (fill_oom). */
    bool would_abort = s->opt.spatial && s->gap != BFC_NONE;
    uint64_t addr = 0;
    while (would_abort ? bytes > device_free_bytes(s->dev) : device_alloc(s->dev, s->proc, bytes, &addr) != SIM_OK) {
        /* Backpedal on every failing Extend (tsl 5d950c08, 2024-02-20; before it, once
         * per allocator lifetime). bytes·0.9 is computed in float, as in the source,
         * then rounded up to 256; XLA forces 256 B of progress when that rounding
         * gives back the same size (PR #47082, d5c110db3f, 2026-08-14; tsl of 2024
         * spins forever there, which gpusim does not model; §1.5 step 4). */
        uint64_t next = rounded_bytes((uint64_t)((float)bytes * BFC_BACKPEDAL));
        if (next >= bytes)
            next = bytes - BFC_MIN_ALLOC;
        bytes = next;
        if (bytes < rounded) {
            slots_put(&s->chunks, h);
            return SIM_OOM;
        }
    }
    if (would_abort) {
        slots_put(&s->chunks, h);
        s->spatial_abort = true;
        s->xla_aborts++;
        return SIM_OOM;
    }
    if (!increased)
        s->curr_region_bytes = sat_double(s->curr_region_bytes);

    s->pool_bytes += bytes;
    if (s->pool_bytes > s->peak_pool_bytes)
        s->peak_pool_bytes = s->pool_bytes;
    s->num_device_allocs++;
    uint32_t r = s->n_regions++;
    s->regions[r] = (bfc_region){.addr = addr, .size = bytes, .first = h, .live = true};
    s->live_regions++;

    bfc_chunk *c = &bfc_chunk_table(s)[h];
    c->addr = addr;
    c->size = bytes;
    c->region = r;
    c->state = CHUNK_FREE;
    c->tag = s->opt.spatial ? BFC_TAG_GAP : BFC_TAG_LOWER; /* free_chunk_tag_ (rule 10) */
    free_insert(s, h); /* regions never coalesce: nothing to merge (rule 6) */
    return SIM_OK;
}

static bool region_wholly_free(const strategy *s, const bfc_region *r)
{
    /* chunks coalesce at once, so a wholly free region is one free chunk */
    const bfc_chunk *c = &bfc_chunk_table(s)[r->first];
    return c->state == CHUNK_FREE && c->next == BFC_NONE;
}

/* DeallocateFreeRegions (rule 8). True if regions were freed. */
static bool collect_free_regions(strategy *s, uint64_t rounded)
{
    if (!s->opt.gc)
        return false;
    uint64_t freeable = 0;
    for (uint32_t i = 0; i < s->n_regions; i++)
        if (s->regions[i].live && region_wholly_free(s, &s->regions[i]))
            freeable += s->regions[i].size;
    if (freeable == 0)
        return false;
    /* "rough estimation" in the source: no 256 rounding here, unlike Extend */
    if (rounded > s->limit - s->pool_bytes + freeable)
        return false;
    for (uint32_t i = 0; i < s->n_regions; i++) {
        bfc_region *r = &s->regions[i];
        if (!r->live || !region_wholly_free(s, r))
            continue;
        free_erase(s, r->first);
        slots_put(&s->chunks, r->first);
        device_release(s->dev, s->proc, r->size);
        s->pool_bytes -= r->size;
        r->live = false;
        r->first = BFC_NONE;
        s->live_regions--;
        s->num_device_frees++;
    }
    /* curr_region_bytes is not reset (§1.6) */
    return true;
}

/* ==== allocate / free ==== */

/* Cut free chunk at h into [h: size at][new: rest], the new chunk free with h's tag
 * (SplitChunk); rest is a record the caller took. Neither is in a free structure. */
static void split_at(strategy *s, uint32_t h, uint32_t rest, uint64_t at)
{
    bfc_chunk *ck = bfc_chunk_table(s);
    bfc_chunk *c = &ck[h];
    bfc_chunk *n = &ck[rest];
    n->addr = c->addr + at;
    n->size = c->size - at;
    n->region = c->region;
    n->state = CHUNK_FREE;
    n->tag = c->tag;
    n->prev = h;
    n->next = c->next;
    if (c->next != BFC_NONE)
        ck[c->next].prev = rest;
    c->next = rest;
    c->size = at;
}

/* Give free chunk h, in its free structure, the key (size, addr): the central gap
 * is only resized, a binned chunk moves in its bin (in place when its order allows). */
static void free_rekey(strategy *s, uint32_t h, uint64_t size, uint64_t addr)
{
    bfc_chunk *ck = bfc_chunk_table(s);
    if (h == s->gap) {
        ck[h].size = size;
        ck[h].addr = addr;
        return;
    }
    bfc_bins_rekey(&s->bins, ck, h, size, addr);
}

/* Cut the low bytes of free chunk h, still in its free structure, off into the
 * record lo the caller took, which is linked in below h and left out of the free
 * structures; h keeps the rest, its tag and its place there (SplitChunk, with the
 * records' roles swapped: the remainder, not the allocation, keeps h's record, so
 * that a remainder that stays in its slice and order is not re-inserted).
 *   [ ------ h ------ ]  =>  [ lo: bytes ][ ---- h ---- ] */
static void split_low(strategy *s, uint32_t h, uint32_t lo, uint64_t bytes)
{
    bfc_chunk *ck = bfc_chunk_table(s);
    bfc_chunk *c = &ck[h];
    bfc_chunk *n = &ck[lo];
    n->addr = c->addr;
    n->size = bytes;
    n->region = c->region;
    n->state = CHUNK_FREE;
    n->prev = c->prev;
    n->next = h;
    if (c->prev != BFC_NONE)
        ck[c->prev].next = lo;
    else
        s->regions[c->region].first = lo; /* h was at the base: lo is now */
    c->prev = lo;
    free_rekey(s, h, c->size - bytes, c->addr + bytes);
}

/* Rule 4's split test (ShouldSplitChunk) for a chunk of size bytes. */
static bool should_split(const strategy *s, uint64_t size, uint64_t rounded)
{
    /* size / 2 >= rounded is size >= 2·rounded without overflow (integers); | and
     * not ||: both are cheap, and which one decides is random */
    return (size / 2 >= rounded) | (size - rounded >= s->max_frag);
}

/* Hand out free chunk h, still in its free structure, for a request of rounded
 * bytes (rules 4, 5, 11; AllocateChunkFromLowEnd): an alignment prefix, if any,
 * becomes a free lower hole; the aligned rest is split by rule 4, its remainder
 * keeping the chunk's tag (a carve from the central gap leaves the gap). Records
 * are taken before anything changes, so a host failure leaves the state intact.
 * Returns the handle of the allocation through *out. */
static sim_status take_chunk(strategy *s, uint32_t h, uint64_t rounded, uint64_t requested, uint32_t stream,
                             uint32_t *out)
{
    const bfc_chunk *c0 = &bfc_chunk_table(s)[h];
    uint64_t pad = align_padding(s, c0->addr);
    bool split = should_split(s, c0->size - pad, rounded);
    uint32_t aligned = BFC_NONE, rest = BFC_NONE;
    if (pad > 0 && (aligned = chunk_new(s)) == BFC_NONE)
        return SIM_ENOMEM;
    if (split && (rest = chunk_new(s)) == BFC_NONE) {
        if (aligned != BFC_NONE)
            slots_put(&s->chunks, aligned);
        return SIM_ENOMEM;
    }
    if (pad == 0 && split) {
        /* the usual case: the allocation is the low end, the remainder stays put */
        split_low(s, h, rest, rounded);
        h = rest;
    } else {
        free_erase(s, h);
        if (pad > 0) {
            split_at(s, h, aligned, pad);
            bfc_chunk_table(s)[h].tag = BFC_TAG_LOWER; /* below the allocation: a lower hole */
            free_insert(s, h);
            h = aligned;
        }
        if (split) {
            split_at(s, h, rest, rounded);
            free_insert(s, rest);
        }
    }
    bfc_chunk *c = &bfc_chunk_table(s)[h];
    c->tag = BFC_TAG_LOWER;
    c->state = CHUNK_USED;
    c->requested = requested;
    c->stream = stream;
    s->num_allocs++;
    s->bytes_in_use += c->size;
    if (s->bytes_in_use > s->peak_bytes_in_use)
        s->peak_bytes_in_use = s->bytes_in_use;
    if (c->size > s->largest_alloc_size)
        s->largest_alloc_size = c->size;
    *out = h;
    return SIM_OK;
}

/* FindChunkPtr (rules 3, 10, 11): the first binned chunk in (size, address) order
 * of size >= rounded that also holds the alignment padding; with spatial
 * partitioning, failing that, the central gap if it holds them. BFC_NONE if none. */
static inline uint32_t find_chunk(const strategy *s, uint64_t rounded)
{
    const bfc_chunk *ck = bfc_chunk_table(s);
    for (uint32_t h = bfc_bins_best_fit(&s->bins, ck, rounded); h != BFC_NONE; h = bfc_bins_next(&s->bins, ck, h)) {
        /* binned chunks are all LOWER: the upper partition is not modelled */
        if (ck[h].size >= rounded + align_padding(s, ck[h].addr))
            return h;
        if (s->alignment == BFC_MIN_ALLOC)
            break; /* no padding: the best fit is the answer */
    }
    if (s->gap != BFC_NONE && ck[s->gap].size >= rounded + align_padding(s, ck[s->gap].addr))
        return s->gap;
    return BFC_NONE;
}

/* The merged tag of two free neighbours (MergedChunkTag): the common tag, else GAP. */
static uint8_t merged_tag(uint8_t a, uint8_t b)
{
    return a == b ? a : (uint8_t)BFC_TAG_GAP;
}

/* MarkFree + TryToCoalesce + InsertFreeChunk (rule 6):
 *   [ prev ][ h ][ next ]  =>  [ ---------- prev ---------- ]  when both are free
 * The merged chunk keeps the record of a free neighbour, prev's else next's, which
 * grows in place in its free structure where its order allows (bfc_bins_rekey);
 * the result is TF's either way: chunk records are not visible. */
static void release_chunk(strategy *s, uint32_t h)
{
    bfc_chunk *ck = bfc_chunk_table(s);
    bfc_chunk *c = &ck[h];
    s->bytes_in_use -= c->size;
    c->state = CHUNK_FREE;
    c->requested = 0;
    c->stream = 0;
    uint32_t n = c->next, p = c->prev;
    bool n_free = n != BFC_NONE && ck[n].state == CHUNK_FREE;
    bool p_free = p != BFC_NONE && ck[p].state == CHUNK_FREE;
    uint8_t tag = BFC_TAG_LOWER; /* every chunk's, without spatial partitioning */
    if (s->opt.spatial) {
        /* ReturnBoundaryChunkToGap (rule 10): a lower chunk with no lower chunk above
         * it borders the gap (or the region's end) and becomes gap */
        if (c->tag == BFC_TAG_LOWER && (n == BFC_NONE || ck[n].tag != BFC_TAG_LOWER))
            c->tag = BFC_TAG_GAP;
        tag = c->tag;
        if (n_free)
            tag = merged_tag(tag, ck[n].tag);
        if (p_free)
            tag = merged_tag(ck[p].tag, tag);
        /* a second central gap (another region holds the first; only after a
         * backpedalled first region): the source CHECKs in InsertFreeChunk and the
         * process aborts. gpusim counts it (stat xla_aborts) and keeps the chunk as a
         * lower hole, so that the state stays one it can go on from. */
        if (tag == BFC_TAG_GAP && s->gap != BFC_NONE && s->gap != n && s->gap != p) {
            s->xla_aborts++;
            tag = BFC_TAG_LOWER;
        }
    }
    if (!n_free && !p_free) {
        c->tag = tag; /* nothing to merge */
        free_insert(s, h);
        return;
    }
    uint64_t addr = p_free ? ck[p].addr : c->addr;
    uint64_t end = n_free ? ck[n].addr + ck[n].size : c->addr + c->size;
    uint32_t keep;
    if (p_free) {
        /* prev absorbs h and a free next: [ prev ][ h ][ next ] => [ prev ] */
        uint32_t after = n_free ? ck[n].next : c->next;
        ck[p].next = after;
        if (after != BFC_NONE)
            ck[after].prev = p;
        if (n_free) {
            free_erase(s, n);
            chunk_drop(s, n);
        }
        chunk_drop(s, h);
        keep = p;
    } else {
        /* next absorbs h: [ h ][ next ] => [ next ], which now starts at h's address */
        ck[n].prev = p;
        if (p != BFC_NONE)
            ck[p].next = n;
        else
            s->regions[c->region].first = n;
        chunk_drop(s, h);
        keep = n;
    }
    bool in_gap = keep == s->gap;
    if (in_gap == (tag == BFC_TAG_GAP)) {
        ck[keep].tag = tag;
        free_rekey(s, keep, end - addr, addr);
        return;
    }
    free_erase(s, keep); /* it changes partition: out of the gap or out of the bins */
    ck[keep].size = end - addr;
    ck[keep].addr = addr;
    ck[keep].tag = tag;
    free_insert(s, keep);
}

static void fill_oom(const strategy *s, uint64_t size, uint64_t rounded, strategy_oom *oom)
{
    uint64_t free_bytes = s->pool_bytes - s->bytes_in_use;
    uint64_t largest = largest_free(s);
    uint64_t dev_free = device_free_bytes(s->dev);
    *oom = (strategy_oom){
        .size_bytes = rounded,
        .free_bytes = free_bytes,
        .largest_free_bytes = largest,
        .reserved_bytes = s->pool_bytes,
        .device_free_bytes = dev_free,
        .usable_bytes = s->limit, /* design.md §3: a BFC process may use its limit */
    };
    /* the cause is the engine's (design.md §3); what only the allocator knows is said here */
    const char *why = s->spatial_abort ? " The device granted a second region, but spatial partitioning allows one "
                                         "central gap: XLA aborts here (a CHECK in InsertFreeChunk)."
                                       : "";
    uint64_t gap = s->gap != BFC_NONE ? bfc_chunk_table(s)[s->gap].size : 0;
    char gap_text[64] = "";
    if (s->opt.spatial)
        snprintf(gap_text, sizeof gap_text, ", central gap %llu", (unsigned long long)gap);
    snprintf(oom->detail, sizeof oom->detail,
             "Allocator (GPU_0_bfc) ran out of memory trying to allocate %llu bytes "
             "(rounded to %llu). Limit: %llu, InUse: %llu, pool: %llu in %u region(s), "
             "largest free chunk %llu of %llu free%s; device free %llu.%s",
             (unsigned long long)size, (unsigned long long)rounded, (unsigned long long)s->limit,
             (unsigned long long)s->bytes_in_use, (unsigned long long)s->pool_bytes, s->live_regions,
             (unsigned long long)largest, (unsigned long long)free_bytes, gap_text,
             (unsigned long long)dev_free, why);
}

/* No chunk fits (rules 7 to 9): Extend, then garbage collection and Extend again,
 * else the OOM. SIM_OK with a fitting chunk in *h. Off the hot path. */
static __attribute__((noinline)) sim_status alloc_grow(strategy *s, uint64_t size, uint64_t rounded, uint32_t *h,
                                                       strategy_oom *oom)
{
    sim_status st = extend(s, rounded);
    if (st == SIM_ENOMEM)
        return st;
    if (st == SIM_OK)
        *h = find_chunk(s, rounded);
    if (*h == BFC_NONE && !s->spatial_abort && collect_free_regions(s, rounded)) {
        st = extend(s, rounded);
        if (st == SIM_ENOMEM)
            return st;
        if (st == SIM_OK)
            *h = find_chunk(s, rounded);
    }
    if (*h == BFC_NONE) {
        fill_oom(s, size, rounded, oom);
        return SIM_OOM;
    }
    return SIM_OK;
}

/* rule 1: no chunk, no memory, no stats; a distinct handle the engine can free */
static sim_status alloc_zero(strategy *s, uint32_t stream, strategy_handle *out)
{
    uint32_t z = chunk_new(s);
    if (z == BFC_NONE)
        return SIM_ENOMEM;
    bfc_chunk *c = &bfc_chunk_table(s)[z];
    c->state = CHUNK_ZERO;
    c->stream = stream;
    s->zero_live++;
    *out = z;
    return SIM_OK;
}

static sim_status bfc_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *out,
                            strategy_oom *oom)
{
    if (size == 0)
        return alloc_zero(s, stream, out);
    uint64_t rounded = rounded_bytes(size);
    s->spatial_abort = false;
    uint32_t h = find_chunk(s, rounded);
    if (h == BFC_NONE) {
        sim_status st = alloc_grow(s, size, rounded, &h, oom);
        if (st != SIM_OK)
            return st;
    }
    uint32_t got = BFC_NONE;
    sim_status st = take_chunk(s, h, rounded, size, stream, &got);
    if (st != SIM_OK)
        return st;
    *out = got;
    return SIM_OK;
}

static void bfc_free_ready(strategy *s, strategy_handle h)
{
    bfc_chunk *c = &bfc_chunk_table(s)[h];
    if (c->state == CHUNK_ZERO) {
        s->zero_live--;
        slots_put(&s->chunks, h);
        return;
    }
    release_chunk(s, h);
}

static void bfc_free(strategy *s, strategy_handle h, bool deferred)
{
    bfc_chunk *c = &bfc_chunk_table(s)[h];
    if (deferred) {
        /* design.md §3: BFC frees the block at ready_t; until then it stays in use */
        if (c->state == CHUNK_USED)
            c->state = CHUNK_PENDING;
        return;
    }
    bfc_free_ready(s, h);
}

static void bfc_empty_cache(strategy *s)
{
    /* TF and XLA have no empty_cache for BFC: memory goes back to the device only by
     * garbage collection on a failed allocation (rule 8). */
    (void)s;
}

/* ==== create / destroy ==== */

static sim_status bfc_create_mode(bfc_mode mode, const strategy_config *cfg, strategy **out, sim_error *err)
{
    strategy *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating the BFC allocator");
    s->dev = cfg->dev;
    s->proc = cfg->proc;
    s->mode = mode;
    s->rng = 0x9E3779B9u;
    slots_init_aligned(&s->chunks, sizeof(bfc_chunk), 64); /* a record per cache line */
    s->spare_head = BFC_NONE;
    bfc_bins_init(&s->bins);
    s->gap = BFC_NONE;

    sim_status st = bfc_limits_parse(mode, cfg, &s->opt, err);
    if (st != SIM_OK) {
        free(s);
        return st;
    }
    device_info info = device_get_info(s->dev);
    s->limit = bfc_limits_bytes(mode, &s->opt, &info);
    /* greedy: TF's allow_growth proto default false, JAX preallocate=true;
     * growth: set_memory_growth / XLA_PYTHON_CLIENT_PREALLOCATE=false; limit: false */
    s->allow_growth = mode == BFC_GROWTH;
    /* BFCAllocator constructor (§1.1) */
    s->curr_region_bytes = s->allow_growth
        ? rounded_bytes(s->limit < BFC_INITIAL_GROWTH_REGION ? s->limit : BFC_INITIAL_GROWTH_REGION)
        : rounded_bytes(s->limit);
    /* AllocateRawInternal: max(alignment, kMinAllocationSize) (PR #40979, 5a75e91ea5,
     * 2026-04-17); tsl of 2024 ignores the alignment: every chunk is 256-aligned */
    s->alignment = s->opt.version == BFC_VERSION_XLA2026 && s->opt.alignment > BFC_MIN_ALLOC ? s->opt.alignment
                                                                                             : BFC_MIN_ALLOC;
    s->max_frag = s->opt.frag_fraction > 0.0 ? bfc_limits_fraction(s->opt.frag_fraction, s->limit)
                                             : BFC_DEFAULT_MAX_FRAG;
    *out = s;
    return SIM_OK;
}

static sim_status greedy_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    return bfc_create_mode(BFC_GREEDY, cfg, out, err);
}

static sim_status growth_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    return bfc_create_mode(BFC_GROWTH, cfg, out, err);
}

static sim_status limit_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    return bfc_create_mode(BFC_LIMIT, cfg, out, err);
}

static void bfc_destroy(strategy *s)
{
    if (s == NULL)
        return;
    slots_release(&s->chunks);
    free(s->regions);
    free(s);
}

/* ==== queries ==== */

static void bfc_sample(const strategy *s, strategy_sample *out)
{
    *out = (strategy_sample){
        .allocated_bytes = s->bytes_in_use,
        .reserved_bytes = s->pool_bytes,
        .free_bytes = s->pool_bytes - s->bytes_in_use,
        .largest_free_bytes = largest_free(s),
        .num_device_allocs = s->num_device_allocs,
        .num_device_frees = s->num_device_frees,
    };
}

static void bfc_stats(const strategy *s, const strategy_stat_sink *sink)
{
    uint64_t free_bytes = s->pool_bytes - s->bytes_in_use;
    uint64_t largest = largest_free(s);
    sink->u64(sink->ctx, "bytes_in_use", s->bytes_in_use);
    sink->u64(sink->ctx, "peak_bytes_in_use", s->peak_bytes_in_use);
    sink->u64(sink->ctx, "pool_bytes", s->pool_bytes);
    sink->u64(sink->ctx, "peak_pool_bytes", s->peak_pool_bytes);
    sink->u64(sink->ctx, "largest_alloc_size", s->largest_alloc_size);
    sink->u64(sink->ctx, "num_allocs", s->num_allocs);
    sink->u64(sink->ctx, "regions", s->live_regions);
    sink->u64(sink->ctx, "largest_free_block_bytes", largest);
    sink->u64(sink->ctx, "bytes_limit", s->limit);
    /* GetFragmentation: (free − largest free chunk) / free; 0/0 is reported as 0 */
    sink->real(sink->ctx, "fragmentation_metric",
               free_bytes == 0 ? 0.0 : (double)(free_bytes - largest) / (double)free_bytes);
    if (s->opt.spatial) {
        /* the two partitions (DumpMemoryLog's spatial summary): the central gap, and
         * the lower partition's free holes; the upper partition is empty */
        uint64_t gap = s->gap != BFC_NONE ? bfc_chunk_table(s)[s->gap].size : 0;
        sink->u64(sink->ctx, "central_gap_bytes", gap);
        sink->u64(sink->ctx, "lower_hole_bytes", free_bytes - gap);
        sink->u64(sink->ctx, "largest_lower_hole_bytes", bfc_bins_largest(&s->bins));
        /* events at which XLA would have aborted on its one-gap CHECK (rule 10) */
        sink->u64(sink->ctx, "xla_aborts", s->xla_aborts);
    }
}

static void bfc_options(const strategy *s, const strategy_stat_sink *sink)
{
    /* every key of this mode's slice of bfc_limits_options, with a value
     * bfc_limits_parse accepts back; allow_growth and limit_bytes are derived */
    char buf[32];
    strategy_emit_text(sink, "bfc_preset", s->opt.preset == BFC_PRESET_JAX ? "jax" : "tf");
    strategy_emit_text(sink, "bfc_version", s->opt.version == BFC_VERSION_XLA2026 ? "xla2026" : "tsl2024");
    if (s->mode != BFC_GROWTH) /* growth has no bfc_spatial (XLA CHECKs it off) */
        strategy_emit_text(sink, "bfc_spatial", s->opt.spatial ? "on" : "off");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->opt.alignment);
    strategy_emit_text(sink, "bfc_alignment", buf);
    strategy_emit_text(sink, "allow_growth", s->allow_growth ? "true" : "false");
    strategy_emit_text(sink, "bfc_gc", s->opt.gc ? "on" : "off");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->limit);
    strategy_emit_text(sink, "limit_bytes", buf);
    if (s->mode == BFC_LIMIT)
        strategy_emit_text(sink, "limit", buf); /* the limit is --limit exactly */
    else
        strategy_emit_text(sink, "mem_fraction", s->opt.has_mem_fraction ? s->opt.mem_fraction_text : "");
    strategy_emit_text(sink, "bfc_fragmentation_fraction", s->opt.has_frag_fraction ? s->opt.frag_fraction_text : "0");
}

static uint64_t bfc_limit(const strategy *s, char *source, size_t n)
{
    device_info info = device_get_info(s->dev);
    bfc_limits_source(s->mode, &s->opt, &info, source, n);
    return s->limit;
}

/* ==== ops tables ==== */

/* After an OOM under any mode, the report asks whether greedy (one region that can
 * coalesce) or limit (a logical device of all a process can have) would have fit. */
static const char *const BFC_WHATIF[] = {"greedy", "limit", NULL};

/* What a trace's pool scopes become under every mode: TensorFlow has no private pools. */
#define BFC_NO_POOLS_NOTE                                                                                              \
    "TensorFlow's BFC allocator has no private pools (no CUDA graph pools, no MemPool); the pools' allocations "       \
    "were replayed in its regions with every other allocation"

/* The entry points every mode shares: the modes differ only in how regions are taken. */
#define BFC_SHARED_OPS                                                                                                 \
    .no_pools_note = BFC_NO_POOLS_NOTE, .destroy = bfc_destroy, .alloc = bfc_alloc, .free = bfc_free,                  \
    .free_ready = bfc_free_ready, .empty_cache = bfc_empty_cache, .sample = bfc_sample, .stats = bfc_stats,            \
    .options = bfc_options, .check = bfc_check, .walk = bfc_walk, .locate = bfc_locate, .limit = bfc_limit

/* One table per mode, in bfc_mode order; they differ in name, options, create and advice. */
static const strategy_ops BFC_OPS_TABLE[3] = {
    {
        .name = "greedy",
        .summary = "TF/XLA BFC, allow_growth=false: the whole limit as one region at the first allocation",
        .opts = BFC_LIMITS_GREEDY_OPTIONS,
        .n_opts = BFC_LIMITS_GREEDY_N,
        .family = STRATEGY_FAMILY_BFC,
        .framework = "tf",
        .advice = "TF_GPU_ALLOCATOR=cuda_malloc_async, or freeing large tensors earlier",
        .whatif_strategies = BFC_WHATIF,
        .takes_region_at_start = true,
        .create = greedy_create,
        BFC_SHARED_OPS,
    },
    {
        .name = "growth",
        .summary = "TF/XLA BFC, allow_growth=true (set_memory_growth): regions of 2, 4, 8 ... MiB, never merged",
        .opts = BFC_LIMITS_GROWTH_OPTIONS,
        .n_opts = BFC_LIMITS_GROWTH_N,
        .family = STRATEGY_FAMILY_BFC,
        .framework = "tf",
        .advice = "allow_growth=false (--strategy=greedy: one region that can coalesce), or "
                  "TF_GPU_ALLOCATOR=cuda_malloc_async",
        .whatif_strategies = BFC_WHATIF,
        .create = growth_create,
        BFC_SHARED_OPS,
    },
    {
        .name = "limit",
        .summary = "TF BFC on a logical device with memory_limit=M: one region of exactly --limit bytes",
        .opts = BFC_LIMITS_LIMIT_OPTIONS,
        .n_opts = BFC_LIMITS_LIMIT_N,
        .family = STRATEGY_FAMILY_BFC,
        .framework = "tf",
        .advice = "TF_GPU_ALLOCATOR=cuda_malloc_async, or freeing large tensors earlier",
        .whatif_strategies = BFC_WHATIF,
        .create = limit_create,
        BFC_SHARED_OPS,
    },
};

const strategy_ops *bfc_strategy(bfc_mode mode)
{
    return &BFC_OPS_TABLE[mode <= BFC_LIMIT ? mode : BFC_GREEDY];
}
