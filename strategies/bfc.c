/* The `greedy`, `growth` and `limit` strategies: TensorFlow/XLA's BFC allocator.
 *
 * Sources: openxla/xla xla/tsl/framework/bfc_allocator.{h,cc} (2026 snapshot; the
 * same rules as google/tsl tsl/framework/bfc_allocator.cc of 2024 except where noted),
 * tensorflow core/common_runtime/gpu/gpu_device.cc and gpu_bfc_allocator.cc,
 * xla/pjrt/gpu/gpu_helpers.cc. Summarised with citations in
 * shared/reference/allocators.md §1 ("§1.x" below). No source code is reproduced.
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
 * Limits (§1.9, §1.10): see bfc_limit_bytes().
 *
 * Data: chunks in a side table (slots.h) with uint32 handles; physical neighbours
 * prev/next. Each of TF's 21 bins is cut into 16 slices of increasing sizes (a TLSF-like
 * second level, ours: it only shortens searches); each slice is a treap over (size,
 * address) with parent links and cached min and max; a 21-bit bitmap over bins and a
 * 16-bit one per bin skip empty ones. alloc and free are O(log f) expected (f = free
 * chunks in one slice), sample() O(1); Extend O(1); garbage collection O(regions).
 * No host allocation per event once the tables reached their high-water marks.
 * Replay speed (throwaway bench, 1M events in memory, 2.1 GHz Xeon VM, one core):
 * ~40 M events/s on training-step-like traces, ~19-25 M on random sizes.
 * Fragmentation bound: a used chunk exceeds its request by < R + 256 and < 128 MiB
 * (or max_frag) + 256, by rule 4; between chunks, none (regions are tiled). */
#include "bfc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfc_internal.h"
#include "sim/units.h"
#include "slots.h"

/* ==== constants (bfc_allocator.h, §1.1) ==== */

#define BFC_MIN_ALLOC ((uint64_t)256)   /* kMinAllocationSize */
#define BFC_NUM_BINS 21u                /* kNumBins */
#define BFC_SLICES 16u                  /* size-ordered slices per bin (ours, not TF's) */
#define BFC_NO_BIN 0xFFu
#define BFC_NONE SLOTS_NONE
#define BFC_INITIAL_GROWTH_REGION (2 * MiB)
#define BFC_DEFAULT_MAX_FRAG (128 * MiB)
#define BFC_BACKPEDAL 0.9f              /* kBackpedalFactor is a float in the source */
#define BFC_JAX_DEFAULT_FRACTION 0.75   /* FixedMemFraction{0.75}, allocator_config.h */

typedef enum bfc_preset { BFC_PRESET_TF = 0, BFC_PRESET_JAX = 1 } bfc_preset;

typedef enum chunk_state {
    CHUNK_FREE = 0,    /* in exactly one bin */
    CHUNK_USED = 1,    /* handed out */
    CHUNK_PENDING = 2, /* freed by the program, still held until free_ready (ready_t) */
    CHUNK_ZERO = 3     /* a zero-byte allocation: a handle that holds no memory */
} chunk_state;

/* One chunk. Valid fields by state: all states have addr/size (0 for ZERO);
 * prev/next/region only for chunks inside a region (not ZERO); child/parent/bin only
 * for FREE chunks (bin = BFC_NO_BIN, links BFC_NONE otherwise); requested
 * and stream only for USED and PENDING. prio is the treap priority, fixed at birth. */
typedef struct bfc_chunk {
    uint64_t size;         /* the key fields and tree links first: one cache line */
    uint64_t addr;
    uint32_t child[2];     /* treap children inside the bin: lower keys, higher keys */
    uint32_t parent;       /* treap parent; BFC_NONE at the root */
    uint32_t prio;
    uint32_t prev, next;   /* physical neighbours inside the region */
    uint64_t requested;
    uint32_t region;       /* index in regions[] = creation order */
    uint32_t stream;
    uint8_t state;
    uint8_t bin;           /* TF bin, BFC_NO_BIN unless free */
    uint8_t slice;         /* slice inside the bin */
} bfc_chunk;

typedef struct bfc_bin {
    uint32_t root;
    uint32_t min, max; /* first and last chunk in (size, address) order */
} bfc_bin;

/* A region (one Extend). Regions freed by garbage collection stay in the array with
 * live = false, so that indices, which the walker reports as region numbers, are the
 * creation order. first is the chunk at the base address; it never changes, because
 * a chunk only ever merges into its lower neighbour and the base has none. */
typedef struct bfc_region {
    uint64_t addr;
    uint64_t size;
    uint32_t first;
    bool live;
} bfc_region;

struct strategy {
    device *dev;
    uint32_t proc;
    bfc_mode mode;
    bfc_preset preset;
    bool allow_growth;
    bool gc;
    bool has_mem_fraction;
    bool has_frag_fraction;
    char mem_fraction_text[32];
    char frag_fraction_text[32];

    uint64_t limit;              /* memory_limit_ */
    uint64_t max_frag;           /* max_internal_fragmentation_bytes_ */
    uint64_t curr_region_bytes;  /* curr_region_allocation_bytes_ (C) */

    slots chunks;
    /* TF's bin b is bins[b][0..15]: slices of increasing sizes (slice_for), so the
     * slices of a bin, in order, are the bin in (size, address) order */
    bfc_bin bins[BFC_NUM_BINS][BFC_SLICES];
    uint32_t bitmap;             /* bit b set iff TF bin b is non-empty */
    uint16_t slice_mask[BFC_NUM_BINS]; /* bit k set iff slice bins[b][k] is non-empty */
    uint32_t rng;                /* xorshift32 state for treap priorities */

    bfc_region *regions;
    uint32_t n_regions, cap_regions; /* ever created; array capacity */
    uint32_t live_regions;

    /* TF's AllocatorStats names (§1.8) */
    uint64_t bytes_in_use, peak_bytes_in_use;
    uint64_t pool_bytes, peak_pool_bytes;
    uint64_t largest_alloc_size, num_allocs;
    uint64_t num_device_allocs, num_device_frees;
    uint64_t zero_live;          /* live zero-byte handles */
};

/* ==== small helpers ==== */

static inline bfc_chunk *chunk_table(const strategy *s)
{
    /* slots stores records of sizeof(bfc_chunk) contiguously: index it directly */
    return (bfc_chunk *)(void *)s->chunks.data;
}

static inline uint64_t rounded_bytes(uint64_t n)
{
    return units_round_up(n, BFC_MIN_ALLOC);
}

/* BinNumForSize: min(20, floor(log2(max(size, 256) >> 8))). */
static inline unsigned bin_for(uint64_t size)
{
    uint64_t q = size >> 8;
    if (q == 0)
        return 0;
    unsigned b = units_log2(q);
    return b < BFC_NUM_BINS - 1 ? b : BFC_NUM_BINS - 1;
}

/* The slice of a size inside bin b: 16 equal parts of [256·2^b, 256·2^(b+1)) for
 * b < 20; for bin 20 (≥ 256 MiB) one slice per power of two. Non-decreasing in size,
 * which is all the (size, address) order needs. Like TLSF's second level (Masmano et
 * al. 2004), it keeps each tree small; TF's bins and best fit are unchanged. */
static inline unsigned slice_for(uint64_t size, unsigned b)
{
    uint64_t k;
    if (b < BFC_NUM_BINS - 1) {
        uint64_t base = (uint64_t)256 << b;
        k = size >= base ? (size - base) >> (b + 4) : 0;
    } else {
        k = (size >> 28) ? units_log2(size >> 28) : 0;
    }
    return k < BFC_SLICES ? (unsigned)k : BFC_SLICES - 1;
}

static inline bool chunk_less(const bfc_chunk *ck, uint32_t a, uint32_t b)
{
    return ck[a].size < ck[b].size || (ck[a].size == ck[b].size && ck[a].addr < ck[b].addr);
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

/* A fresh chunk record; BFC_NONE when out of host memory. Invalidates chunk pointers. */
static uint32_t chunk_new(strategy *s)
{
    uint32_t h = slots_take(&s->chunks);
    if (h == BFC_NONE)
        return h;
    bfc_chunk *c = &chunk_table(s)[h];
    c->prev = c->next = c->child[0] = c->child[1] = c->parent = BFC_NONE;
    c->bin = BFC_NO_BIN;
    c->prio = next_prio(s);
    return h;
}

/* ==== bins: one treap per bin, keyed by (size, address) ====
 * A treap (Seidel & Aragon 1996) with parent links: a search tree in key order and a
 * max-heap in the random priorities, so its expected depth is O(log n). Parent links
 * let a chunk leave its bin without a search from the root. Descents choose the child
 * by index (child[go_right]) rather than by branch: the comparisons are data-dependent
 * and would mispredict about half the time. A sorted array per bin was rejected: a
 * training step can leave thousands of free chunks in one bin, and O(n) inserts. */

static inline unsigned key_below(const bfc_chunk *ck, uint32_t a, uint32_t b)
{
    /* 1 when chunk a orders before chunk b: (size, address) */
    return (unsigned)(ck[a].size < ck[b].size) | ((unsigned)(ck[a].size == ck[b].size) & (unsigned)(ck[a].addr < ck[b].addr));
}

static uint32_t tree_leftmost(const bfc_chunk *ck, uint32_t t)
{
    while (ck[t].child[0] != BFC_NONE)
        t = ck[t].child[0];
    return t;
}

static uint32_t tree_rightmost(const bfc_chunk *ck, uint32_t t)
{
    while (ck[t].child[1] != BFC_NONE)
        t = ck[t].child[1];
    return t;
}

/* The link that points at n: its parent's child slot, or the bin's root. */
static inline uint32_t *link_to(bfc_chunk *ck, bfc_bin *bn, uint32_t n)
{
    uint32_t p = ck[n].parent;
    return p == BFC_NONE ? &bn->root : &ck[p].child[ck[p].child[1] == n];
}

/* Rotate n above its parent, keeping key order:
 *      p            n
 *     / \          / \
 *    n   c   =>   a   p        (and the mirror image)
 *   / \              / \
 *  a   b            b   c */
static void rotate_up(bfc_chunk *ck, bfc_bin *bn, uint32_t n)
{
    uint32_t p = ck[n].parent;
    unsigned dir = ck[p].child[1] == n;
    uint32_t b = ck[n].child[!dir];
    *link_to(ck, bn, p) = n;
    ck[n].parent = ck[p].parent;
    ck[p].child[dir] = b;
    if (b != BFC_NONE)
        ck[b].parent = p;
    ck[n].child[!dir] = p;
    ck[p].parent = n;
}

static void bin_insert_into(strategy *s, uint32_t h, unsigned b)
{
    bfc_chunk *ck = chunk_table(s);
    unsigned sl = slice_for(ck[h].size, b);
    bfc_bin *bn = &s->bins[b][sl];
    ck[h].bin = (uint8_t)b;
    ck[h].slice = (uint8_t)sl;
    ck[h].child[0] = ck[h].child[1] = BFC_NONE;
    uint32_t parent = BFC_NONE;
    unsigned dir = 0;
    for (uint32_t t = bn->root; t != BFC_NONE; t = ck[t].child[dir]) {
        parent = t;
        dir = key_below(ck, t, h);
    }
    ck[h].parent = parent;
    if (parent == BFC_NONE) {
        bn->root = bn->min = bn->max = h;
        s->bitmap |= 1u << b;
        s->slice_mask[b] = (uint16_t)(s->slice_mask[b] | (1u << sl));
        return;
    }
    ck[parent].child[dir] = h;
    if (key_below(ck, h, bn->min))
        bn->min = h;
    if (key_below(ck, bn->max, h))
        bn->max = h;
    /* restore the heap order: expected fewer than two rotations */
    while (ck[h].parent != BFC_NONE && ck[ck[h].parent].prio < ck[h].prio)
        rotate_up(ck, bn, h);
}

static void bin_insert(strategy *s, uint32_t h)
{
    bin_insert_into(s, h, bin_for(chunk_table(s)[h].size));
}

static void bin_erase(strategy *s, uint32_t h)
{
    bfc_chunk *ck = chunk_table(s);
    unsigned b = ck[h].bin;
    if (b >= BFC_NUM_BINS)
        return; /* not binned: only a corrupted state gets here; the checker reports it */
    unsigned sl = ck[h].slice;
    bfc_bin *bn = &s->bins[b][sl];
    /* the caches move to h's in-order neighbour: a minimum has no left child, so its
     * successor is the leftmost of its right subtree, else its parent (and mirrored) */
    if (bn->min == h)
        bn->min = ck[h].child[1] != BFC_NONE ? tree_leftmost(ck, ck[h].child[1]) : ck[h].parent;
    if (bn->max == h)
        bn->max = ck[h].child[0] != BFC_NONE ? tree_rightmost(ck, ck[h].child[0]) : ck[h].parent;
    /* rotate h down below its higher-priority child until it has at most one child */
    while (ck[h].child[0] != BFC_NONE && ck[h].child[1] != BFC_NONE) {
        uint32_t l = ck[h].child[0], r = ck[h].child[1];
        rotate_up(ck, bn, ck[l].prio > ck[r].prio ? l : r);
    }
    uint32_t only = ck[h].child[0] != BFC_NONE ? ck[h].child[0] : ck[h].child[1];
    *link_to(ck, bn, h) = only;
    if (only != BFC_NONE)
        ck[only].parent = ck[h].parent;
    ck[h].child[0] = ck[h].child[1] = ck[h].parent = BFC_NONE;
    ck[h].bin = BFC_NO_BIN;
    if (bn->root == BFC_NONE) {
        s->slice_mask[b] = (uint16_t)(s->slice_mask[b] & ~(1u << sl));
        if (s->slice_mask[b] == 0)
            s->bitmap &= ~(1u << b);
    }
}

/* FindChunkPtr's choice (rule 3): smallest chunk with size ≥ rounded, lowest address
 * among equals; BFC_NONE if there is none. Bins below bin(rounded) hold only smaller
 * chunks, and every chunk of a higher bin is larger than any of bin(rounded), so only
 * bin(rounded) needs a search; a higher bin answers with its cached minimum. */
static uint32_t find_chunk(const strategy *s, uint64_t rounded)
{
    const bfc_chunk *ck = chunk_table(s);
    unsigned b = bin_for(rounded);
    if (s->bitmap & (1u << b)) {
        unsigned sl = slice_for(rounded, b);
        if (s->slice_mask[b] & (1u << sl)) {
            const bfc_bin *bn = &s->bins[b][sl];
            if (ck[bn->min].size >= rounded)
                return bn->min;
            if (ck[bn->max].size >= rounded) {
                /* lower bound of (rounded, 0): the leftmost node with size ≥ rounded */
                uint32_t best = BFC_NONE;
                for (uint32_t t = bn->root; t != BFC_NONE;) {
                    unsigned fits = ck[t].size >= rounded;
                    best = fits ? t : best;
                    t = ck[t].child[!fits];
                }
                return best;
            }
        }
        /* later slices of the same bin hold only larger chunks */
        unsigned later = s->slice_mask[b] & ~((2u << sl) - 1u);
        if (later)
            return s->bins[b][__builtin_ctz(later)].min;
    }
    uint32_t above = s->bitmap & ~((2u << b) - 1u);
    if (above == 0)
        return BFC_NONE;
    unsigned ab = (unsigned)__builtin_ctz(above);
    return s->bins[ab][__builtin_ctz(s->slice_mask[ab])].min;
}

static uint64_t largest_free(const strategy *s)
{
    if (s->bitmap == 0)
        return 0;
    unsigned top = 31u - (unsigned)__builtin_clz(s->bitmap);
    unsigned sl = 31u - (unsigned)__builtin_clz(s->slice_mask[top]);
    return chunk_table(s)[s->bins[top][sl].max].size;
}

/* ==== regions ==== */

static bool regions_reserve(strategy *s)
{
    if (s->n_regions < s->cap_regions)
        return true;
    uint32_t cap = s->cap_regions ? s->cap_regions * 2 : 16;
    if (cap <= s->cap_regions)
        return false;
    bfc_region *r = realloc(s->regions, (size_t)cap * sizeof *r);
    if (r == NULL)
        return false;
    s->regions = r;
    s->cap_regions = cap;
    return true;
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
    uint64_t addr = 0;
    while (device_alloc(s->dev, s->proc, bytes, &addr) != SIM_OK) {
        /* Backpedal on every failing Extend (tsl 5d950c08, 2024-02-20; before it, once
         * per allocator lifetime). bytes·0.9 is computed in float, as in the source,
         * then rounded up to 256; newest XLA forces 256 B of progress when that
         * rounding gives back the same size (§1.5 step 4). */
        uint64_t next = rounded_bytes((uint64_t)((float)bytes * BFC_BACKPEDAL));
        if (next >= bytes)
            next = bytes - BFC_MIN_ALLOC;
        bytes = next;
        if (bytes < rounded) {
            slots_put(&s->chunks, h);
            return SIM_OOM;
        }
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

    bfc_chunk *c = &chunk_table(s)[h];
    c->addr = addr;
    c->size = bytes;
    c->region = r;
    c->state = CHUNK_FREE;
    bin_insert(s, h); /* regions never coalesce: nothing to merge (rule 6) */
    return SIM_OK;
}

static bool region_wholly_free(const strategy *s, const bfc_region *r)
{
    /* chunks coalesce at once, so a wholly free region is one free chunk */
    const bfc_chunk *c = &chunk_table(s)[r->first];
    return c->state == CHUNK_FREE && c->next == BFC_NONE;
}

/* DeallocateFreeRegions (rule 8). True if regions were freed. */
static bool collect_free_regions(strategy *s, uint64_t rounded)
{
    if (!s->gc)
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
        bin_erase(s, r->first);
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

/* Hand out free chunk h for a request of rounded bytes (rules 4, 5). The split's new
 * record is taken before anything changes, so a host failure leaves the state intact. */
static sim_status take_chunk(strategy *s, uint32_t h, uint64_t rounded, uint64_t requested,
                             uint32_t stream)
{
    uint64_t size = chunk_table(s)[h].size;
    /* size / 2 >= rounded is size >= 2·rounded without overflow (integers) */
    bool split = size / 2 >= rounded || size - rounded >= s->max_frag;
    uint32_t rest = BFC_NONE;
    if (split) {
        rest = chunk_new(s);
        if (rest == BFC_NONE)
            return SIM_ENOMEM;
    }
    bin_erase(s, h);
    bfc_chunk *ck = chunk_table(s);
    bfc_chunk *c = &ck[h];
    if (split) {
        bfc_chunk *n = &ck[rest];
        n->addr = c->addr + rounded;
        n->size = size - rounded;
        n->region = c->region;
        n->state = CHUNK_FREE;
        n->prev = h;
        n->next = c->next;
        if (c->next != BFC_NONE)
            ck[c->next].prev = rest;
        c->next = rest;
        c->size = rounded;
        bin_insert(s, rest);
    }
    c->state = CHUNK_USED;
    c->requested = requested;
    c->stream = stream;
    s->num_allocs++;
    s->bytes_in_use += c->size;
    if (s->bytes_in_use > s->peak_bytes_in_use)
        s->peak_bytes_in_use = s->bytes_in_use;
    if (c->size > s->largest_alloc_size)
        s->largest_alloc_size = c->size;
    return SIM_OK;
}

/* MarkFree + TryToCoalesce + InsertFreeChunk (rule 6):
 *   [ prev ][ h ][ next ]  =>  [ ---------- prev ---------- ]  when both are free */
static void release_chunk(strategy *s, uint32_t h)
{
    bfc_chunk *ck = chunk_table(s);
    bfc_chunk *c = &ck[h];
    s->bytes_in_use -= c->size;
    c->state = CHUNK_FREE;
    c->requested = 0;
    c->stream = 0;
    uint32_t n = c->next;
    if (n != BFC_NONE && ck[n].state == CHUNK_FREE) {
        bin_erase(s, n);
        c->size += ck[n].size;
        c->next = ck[n].next;
        if (c->next != BFC_NONE)
            ck[c->next].prev = h;
        slots_put(&s->chunks, n);
    }
    uint32_t p = c->prev;
    if (p != BFC_NONE && ck[p].state == CHUNK_FREE) {
        bin_erase(s, p);
        ck[p].size += c->size;
        ck[p].next = c->next;
        if (c->next != BFC_NONE)
            ck[c->next].prev = p;
        slots_put(&s->chunks, h);
        h = p;
    }
    bin_insert(s, h);
}

/* What Extend could still add: what the limit leaves, but no more than the device
 * has free (other processes and contexts hold the rest). gpusim's reading of
 * design.md §3 "everything the allocator could still make free" on a shared device. */
static uint64_t oom_extendable(const strategy *s)
{
    uint64_t by_limit = units_round_down(s->limit - s->pool_bytes, BFC_MIN_ALLOC);
    uint64_t by_device = units_round_down(device_free_bytes(s->dev), BFC_MIN_ALLOC);
    return by_limit < by_device ? by_limit : by_device;
}

static void fill_oom(const strategy *s, uint64_t size, uint64_t rounded, strategy_oom *oom)
{
    uint64_t free_bytes = s->pool_bytes - s->bytes_in_use;
    uint64_t largest = largest_free(s);
    uint64_t extendable = oom_extendable(s);
    uint64_t dev_free = device_free_bytes(s->dev);
    /* design.md §3: capacity when the request exceeds everything the allocator could
     * still make free, pool − in_use + floor256(limit − pool) (capped by the device's
     * free memory, see oom_extendable); else fragmentation */
    bool capacity = rounded > free_bytes + extendable;
    *oom = (strategy_oom){
        .size_bytes = rounded,
        .free_bytes = free_bytes,
        .largest_free_bytes = largest,
        .reserved_bytes = s->pool_bytes,
        .device_free_bytes = dev_free,
        .cause = capacity ? SIM_OOM_CAPACITY : SIM_OOM_FRAGMENTATION,
    };
    uint64_t by_limit = units_round_down(s->limit - s->pool_bytes, BFC_MIN_ALLOC);
    const char *why;
    if (capacity && rounded <= free_bytes + by_limit)
        why = "The limit leaves room, but the device does not have that much free: other "
              "processes or contexts hold it (capacity of the shared device).";
    else if (capacity)
        why = "The request is larger than all the memory this allocator could still free "
              "under its limit (capacity): lower the batch size or raise the limit.";
    else
        why = "Enough memory is free in total, but not in one chunk: regions never merge "
              "and chunks only coalesce with free neighbours (fragmentation). TF suggests "
              "TF_GPU_ALLOCATOR=cuda_malloc_async.";
    snprintf(oom->detail, sizeof oom->detail,
             "Allocator (GPU_0_bfc) ran out of memory trying to allocate %llu bytes "
             "(rounded to %llu). Limit: %llu, InUse: %llu, pool: %llu in %u region(s), "
             "largest free chunk %llu of %llu free; device free %llu. %s",
             (unsigned long long)size, (unsigned long long)rounded, (unsigned long long)s->limit,
             (unsigned long long)s->bytes_in_use, (unsigned long long)s->pool_bytes, s->live_regions,
             (unsigned long long)largest, (unsigned long long)free_bytes,
             (unsigned long long)dev_free, why);
}

static sim_status bfc_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *out,
                            strategy_oom *oom)
{
    if (size == 0) {
        /* rule 1: no chunk, no memory, no stats; a distinct handle the engine can free */
        uint32_t z = chunk_new(s);
        if (z == BFC_NONE)
            return SIM_ENOMEM;
        bfc_chunk *c = &chunk_table(s)[z];
        c->state = CHUNK_ZERO;
        c->stream = stream;
        s->zero_live++;
        *out = z;
        return SIM_OK;
    }
    uint64_t rounded = rounded_bytes(size);
    uint32_t h = find_chunk(s, rounded);
    if (h == BFC_NONE) {
        sim_status st = extend(s, rounded);
        if (st == SIM_ENOMEM)
            return st;
        if (st == SIM_OK)
            h = find_chunk(s, rounded);
    }
    if (h == BFC_NONE && collect_free_regions(s, rounded)) {
        sim_status st = extend(s, rounded);
        if (st == SIM_ENOMEM)
            return st;
        if (st == SIM_OK)
            h = find_chunk(s, rounded);
    }
    if (h == BFC_NONE) {
        fill_oom(s, size, rounded, oom);
        return SIM_OOM;
    }
    sim_status st = take_chunk(s, h, rounded, size, stream);
    if (st != SIM_OK)
        return st;
    *out = h;
    return SIM_OK;
}

static void bfc_free_ready(strategy *s, strategy_handle h)
{
    bfc_chunk *c = &chunk_table(s)[h];
    if (c->state == CHUNK_ZERO) {
        s->zero_live--;
        slots_put(&s->chunks, h);
        return;
    }
    release_chunk(s, h);
}

static void bfc_free(strategy *s, strategy_handle h, bool deferred)
{
    bfc_chunk *c = &chunk_table(s)[h];
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

/* ==== limits and options ==== */

/* TF's MinSystemMemory (gpu_device.cc): the bytes left to the system when no fraction
 * is given. One newer copy seen through the index adds cc ≥ 9 → 1800 MiB; its upstream
 * provenance is unconfirmed (§1.9), so the three-tier version is modelled. */
static uint64_t tf_min_system_memory(uint64_t available, unsigned cc_major)
{
    if (available < 2 * GiB)
        return 225 * MiB;
    if (cc_major == 0)
        return 1536 * MiB; /* unknown compute capability: assume a current GPU (≥ 8) */
    if (cc_major <= 6)
        return 500 * MiB;
    if (cc_major == 7)
        return 1050 * MiB;
    return 1536 * MiB;
}

static uint64_t fraction_of(double f, uint64_t capacity)
{
    /* total · fraction in double, truncated to bytes, as both frameworks do */
    double v = f * (double)capacity;
    return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

static uint64_t bfc_limit_bytes(const strategy *s, const device_info *info, double mem_fraction,
                                uint64_t limit_opt)
{
    if (s->mode == BFC_LIMIT)
        return limit_opt; /* virtual device memory_limit: no reserve (§1.9) */
    if (s->preset == BFC_PRESET_JAX) /* CreateBFCAllocator: total · fraction (§1.10) */
        return fraction_of(s->has_mem_fraction ? mem_fraction : BFC_JAX_DEFAULT_FRACTION,
                           info->capacity_bytes);
    if (s->has_mem_fraction) /* per_process_gpu_memory_fraction: of total, not free */
        return fraction_of(mem_fraction, info->capacity_bytes);
    /* SingleVirtualDeviceMemoryLimit: free at start (cudaMemGetInfo after the context
     * exists; modelled as capacity − context) minus the reserve, only if smaller */
    uint64_t available = info->capacity_bytes > info->context_bytes
                             ? info->capacity_bytes - info->context_bytes : 0;
    uint64_t reserve = tf_min_system_memory(available, info->cc_major);
    return reserve < available ? available - reserve : available;
}

static sim_status option_error(sim_error *err, const char *flag, const char *value, const char *expected,
                               const sim_error *inner)
{
    return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s=%s: expected %s%s%s", flag, value ? value : "",
                         expected, inner ? " (" : "", inner ? inner->msg : "");
}

static sim_status parse_options(strategy *s, const strategy_config *cfg, double *mem_fraction,
                                double *frag_fraction, uint64_t *limit_opt, sim_error *err)
{
    sim_error inner;
    sim_error_clear(&inner);
    const char *v = strategy_config_get(cfg, "bfc_preset");
    if (v == NULL || strcmp(v, "tf") == 0)
        s->preset = BFC_PRESET_TF;
    else if (strcmp(v, "jax") == 0)
        s->preset = BFC_PRESET_JAX;
    else
        return option_error(err, "--bfc-preset", v, "tf or jax", NULL);

    /* TF: TF_ENABLE_GPU_GARBAGE_COLLECTION unset → on; XLA/JAX: left off (§1.6) */
    s->gc = s->preset == BFC_PRESET_TF;
    v = strategy_config_get(cfg, "bfc_gc");
    if (v != NULL) {
        if (strcmp(v, "on") == 0)
            s->gc = true;
        else if (strcmp(v, "off") == 0)
            s->gc = false;
        else
            return option_error(err, "--bfc-gc", v, "on or off", NULL);
    }

    v = strategy_config_get(cfg, "mem_fraction");
    if (v != NULL) {
        if (units_parse_real(v, 0.0, 1.0, mem_fraction, &inner) != SIM_OK || !(*mem_fraction > 0.0))
            return option_error(err, "--mem-fraction", v,
                                "a fraction of the GPU's total memory in (0, 1], e.g. 0.5",
                                inner.msg[0] ? &inner : NULL);
        s->has_mem_fraction = true;
        snprintf(s->mem_fraction_text, sizeof s->mem_fraction_text, "%s", v);
    }

    v = strategy_config_get(cfg, "bfc_fragmentation_fraction");
    if (v != NULL) {
        if (units_parse_real(v, 0.0, 1e300, frag_fraction, &inner) != SIM_OK)
            return option_error(err, "--bfc-fragmentation-fraction", v,
                                "a real number >= 0 (0 keeps the 128 MiB split rule)", &inner);
        s->has_frag_fraction = true;
        snprintf(s->frag_fraction_text, sizeof s->frag_fraction_text, "%s", v);
    }

    /* `limit` belongs to the limit strategy; greedy and growth take their limit from
     * the preset (a shared command line may still carry it, so it is ignored there) */
    if (s->mode == BFC_LIMIT) {
        v = strategy_config_get(cfg, "limit");
        if (v == NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "strategy limit needs --limit=SIZE, the logical device's "
                                 "memory_limit (e.g. --limit=4096MiB)");
        if (units_parse_size(v, limit_opt, &inner) != SIM_OK)
            return option_error(err, "--limit", v, "a size such as 4096MiB", &inner);
        if (*limit_opt == 0)
            return option_error(err, "--limit", v, "a size of more than 0 bytes", NULL);
    }
    return SIM_OK;
}

static sim_status bfc_create_mode(bfc_mode mode, const strategy_config *cfg, strategy **out, sim_error *err)
{
    strategy *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating the BFC allocator");
    s->dev = cfg->dev;
    s->proc = cfg->proc;
    s->mode = mode;
    s->rng = 0x9E3779B9u;
    slots_init(&s->chunks, sizeof(bfc_chunk));
    for (unsigned b = 0; b < BFC_NUM_BINS; b++)
        for (unsigned k = 0; k < BFC_SLICES; k++)
            s->bins[b][k] = (bfc_bin){BFC_NONE, BFC_NONE, BFC_NONE};

    double mem_fraction = 0.0, frag_fraction = 0.0;
    uint64_t limit_opt = 0;
    sim_status st = parse_options(s, cfg, &mem_fraction, &frag_fraction, &limit_opt, err);
    if (st != SIM_OK) {
        free(s);
        return st;
    }
    device_info info = device_get_info(s->dev);
    s->limit = bfc_limit_bytes(s, &info, mem_fraction, limit_opt);
    /* greedy: TF's allow_growth proto default false, JAX preallocate=true;
     * growth: set_memory_growth / XLA_PYTHON_CLIENT_PREALLOCATE=false; limit: false */
    s->allow_growth = mode == BFC_GROWTH;
    /* BFCAllocator constructor (§1.1) */
    s->curr_region_bytes = s->allow_growth
        ? rounded_bytes(s->limit < BFC_INITIAL_GROWTH_REGION ? s->limit : BFC_INITIAL_GROWTH_REGION)
        : rounded_bytes(s->limit);
    s->max_frag = frag_fraction > 0.0 ? fraction_of(frag_fraction, s->limit) : BFC_DEFAULT_MAX_FRAG;
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
}

static void bfc_options(const strategy *s, const strategy_stat_sink *sink)
{
    /* every key of bfc_limits_options for this mode, with a value bfc_limits_parse
     * accepts back; allow_growth and limit_bytes are derived, informational */
    char buf[32];
    sink->text(sink->ctx, "bfc_preset", s->preset == BFC_PRESET_JAX ? "jax" : "tf");
    sink->text(sink->ctx, "allow_growth", s->allow_growth ? "true" : "false");
    sink->text(sink->ctx, "bfc_gc", s->gc ? "on" : "off");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->limit);
    sink->text(sink->ctx, "limit_bytes", buf);
    if (s->mode == BFC_LIMIT)
        sink->text(sink->ctx, "limit", buf); /* the limit is --limit exactly */
    else
        sink->text(sink->ctx, "mem_fraction", s->has_mem_fraction ? s->mem_fraction_text : "");
    sink->text(sink->ctx, "bfc_fragmentation_fraction", s->has_frag_fraction ? s->frag_fraction_text : "0");
}

/* Blocks in address order: regions are created at increasing addresses (design.md §3),
 * so creation order is address order. The step budget keeps a corrupted (cyclic)
 * chain from looping forever. */
static int bfc_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    const bfc_chunk *ck = chunk_table(s);
    uint64_t budget = s->chunks.n_used_hw;
    for (uint32_t r = 0; r < s->n_regions; r++) {
        const bfc_region *rg = &s->regions[r];
        if (!rg->live)
            continue;
        for (uint32_t h = rg->first; h != BFC_NONE && h < s->chunks.n_used_hw && budget > 0;
             h = ck[h].next, budget--) {
            const bfc_chunk *c = &ck[h];
            strategy_block b = {
                .addr = c->addr,
                .size_bytes = c->size,
                .requested_bytes = c->state == CHUNK_FREE ? 0 : c->requested,
                .region_addr = rg->addr,
                .region = r,
                .stream = c->state == CHUNK_FREE ? 0 : c->stream,
                .state = c->state == CHUNK_FREE ? BLOCK_FREE
                         : c->state == CHUNK_PENDING ? BLOCK_PENDING : BLOCK_USED,
                .pool = NULL,
            };
            int rc = v(ctx, &b);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* ==== invariant checker ==== */

typedef struct check_totals {
    uint64_t used_bytes;   /* USED + PENDING chunk sizes */
    uint64_t pool;         /* sum of live regions */
    uint64_t free_chunks;
    uint64_t region_chunks;
    uint32_t regions;
} check_totals;

static void check_regions(const strategy *s, sim_report *r, check_totals *t)
{
    const bfc_chunk *ck = chunk_table(s);
    uint32_t hw = s->chunks.n_used_hw;
    for (uint32_t i = 0; i < s->n_regions; i++) {
        const bfc_region *rg = &s->regions[i];
        if (!rg->live)
            continue;
        t->regions++;
        t->pool += rg->size;
        uint64_t expect = rg->addr, sum = 0, steps = 0;
        uint32_t prev = BFC_NONE;
        bool prev_free = false;
        for (uint32_t h = rg->first; h != BFC_NONE; h = ck[h].next) {
            if (!sim_report_insist(r, h < hw && slots_valid(&s->chunks, h) && steps++ < hw,
                                   "bfc: region %u: chain reaches an invalid or repeated chunk %u", i, h))
                break;
            const bfc_chunk *c = &ck[h];
            t->region_chunks++;
            sim_report_insist(r, c->addr == expect,
                              "bfc: region %u: chunk %u at %llu, expected %llu (gap or overlap in the tiling)",
                              i, h, (unsigned long long)c->addr, (unsigned long long)expect);
            sim_report_insist(r, c->prev == prev, "bfc: region %u: chunk %u has prev %u, expected %u", i, h,
                              c->prev, prev);
            sim_report_insist(r, c->region == i, "bfc: chunk %u claims region %u, sits in %u", h, c->region, i);
            sim_report_insist(r, c->size >= BFC_MIN_ALLOC && c->size % BFC_MIN_ALLOC == 0,
                              "bfc: chunk %u has size %llu, not a positive multiple of 256", h,
                              (unsigned long long)c->size);
            bool is_free = c->state == CHUNK_FREE;
            sim_report_insist(r, c->state <= CHUNK_PENDING, "bfc: chunk %u in region %u has state %u", h, i,
                              c->state);
            sim_report_insist(r, !(is_free && prev_free),
                              "bfc: region %u: adjacent free chunks %u and %u at %llu (should have coalesced)",
                              i, prev, h, (unsigned long long)c->addr);
            if (is_free)
                t->free_chunks++;
            else {
                t->used_bytes += c->size;
                sim_report_insist(r, c->bin == BFC_NO_BIN, "bfc: used chunk %u is marked as in bin %u", h,
                                  c->bin);
                sim_report_insist(r, c->size <= s->largest_alloc_size,
                                  "bfc: used chunk %u of %llu exceeds largest_alloc_size %llu", h,
                                  (unsigned long long)c->size, (unsigned long long)s->largest_alloc_size);
            }
            expect = c->addr + c->size;
            sum += c->size;
            prev = h;
            prev_free = is_free;
        }
        sim_report_insist(r, sum == rg->size,
                          "bfc: region %u: chunks tile %llu bytes of %llu (gap or overlap in the tiling)", i,
                          (unsigned long long)sum, (unsigned long long)rg->size);
    }
}

/* Walks slice sl of bin b in order with an explicit stack; checks order (continuing
 * from *last, the previous slice's last chunk), mapping, state, the treap's heap order
 * and parent links, and the cached min/max. Returns the number of chunks seen. */
static uint64_t check_slice(const strategy *s, sim_report *r, unsigned b, unsigned sl, uint32_t *last,
                            uint32_t *stack, uint32_t cap)
{
    const bfc_chunk *ck = chunk_table(s);
    const bfc_bin *bn = &s->bins[b][sl];
    uint32_t hw = s->chunks.n_used_hw;
    uint32_t sp = 0, first = BFC_NONE, mine = BFC_NONE;
    uint64_t seen = 0;
    uint32_t t = bn->root;
    while (t != BFC_NONE || sp > 0) {
        while (t != BFC_NONE) {
            if (!sim_report_insist(r, t < hw && sp < cap && seen + sp <= hw,
                                   "bfc: bin %u.%u: tree reaches an invalid chunk or a cycle at %u", b, sl, t))
                return seen;
            const bfc_chunk *c = &ck[t];
            for (unsigned d = 0; d < 2; d++) {
                uint32_t k = c->child[d];
                if (k == BFC_NONE || k >= hw)
                    continue;
                sim_report_insist(r, ck[k].prio <= c->prio, "bfc: bin %u.%u: treap priority order broken at %u", b,
                                  sl, t);
                sim_report_insist(r, ck[k].parent == t, "bfc: bin %u.%u: chunk %u's parent link is %u, not %u", b,
                                  sl, k, ck[k].parent, t);
            }
            stack[sp++] = t;
            t = c->child[0];
        }
        t = stack[--sp];
        const bfc_chunk *c = &ck[t];
        seen++;
        if (first == BFC_NONE)
            first = t;
        sim_report_insist(r, slots_valid(&s->chunks, t) && c->state == CHUNK_FREE,
                          "bfc: bin %u holds chunk %u that is not free", b, t);
        sim_report_insist(r, bin_for(c->size) == b,
                          "bfc: free chunk %u of size %llu sits in bin %u, belongs in bin %u (wrong bin)", t,
                          (unsigned long long)c->size, b, bin_for(c->size));
        sim_report_insist(r, slice_for(c->size, b) == sl, "bfc: free chunk %u of size %llu sits in slice %u.%u, "
                          "belongs in slice %u (wrong bin)", t, (unsigned long long)c->size, b, sl,
                          slice_for(c->size, b));
        sim_report_insist(r, c->bin == b && c->slice == sl, "bfc: chunk %u in bin %u.%u records bin %u.%u", t, b,
                          sl, c->bin, c->slice);
        if (*last != BFC_NONE)
            sim_report_insist(r, chunk_less(ck, *last, t),
                              "bfc: bin %u out of (size, address) order: %llu@%llu before %llu@%llu (bin order)",
                              b, (unsigned long long)ck[*last].size, (unsigned long long)ck[*last].addr,
                              (unsigned long long)c->size, (unsigned long long)c->addr);
        *last = mine = t;
        t = c->child[1];
    }
    sim_report_insist(r, bn->root == BFC_NONE || bn->root >= hw || ck[bn->root].parent == BFC_NONE,
                      "bfc: bin %u.%u: root %u has a parent", b, sl, bn->root);
    bool nonempty = bn->root != BFC_NONE;
    bool bit = (s->slice_mask[b] >> sl) & 1u;
    sim_report_insist(r, bit == nonempty, "bfc: bitmap bit %u of bin %u's slices is %d but the slice is %s", sl, b,
                      bit, nonempty ? "non-empty" : "empty");
    sim_report_insist(r, bn->min == first && bn->max == mine,
                      "bfc: bin %u.%u caches min %u max %u, its first and last chunks are %u and %u (bin cache)", b,
                      sl, bn->min, bn->max, first, mine);
    return seen;
}

static uint64_t check_bin(const strategy *s, sim_report *r, unsigned b, uint32_t *stack, uint32_t cap)
{
    uint32_t last = BFC_NONE;
    uint64_t seen = 0;
    for (unsigned sl = 0; sl < BFC_SLICES; sl++)
        seen += check_slice(s, r, b, sl, &last, stack, cap);
    bool nonempty = seen > 0;
    bool bit = (s->bitmap >> b) & 1u;
    sim_report_insist(r, bit == nonempty, "bfc: bitmap bit %u is %d but bin %u is %s", b, bit, b,
                      nonempty ? "non-empty" : "empty");
    sim_report_insist(r, bit == (s->slice_mask[b] != 0), "bfc: bitmap bit %u is %d but the slice mask is %#x", b, bit,
                      s->slice_mask[b]);
    return seen;
}

/* Whether free chunk h can be found in the bin (and slice) its size maps to, by key. */
static bool in_its_bin(const strategy *s, uint32_t h)
{
    const bfc_chunk *ck = chunk_table(s);
    uint32_t hw = s->chunks.n_used_hw;
    unsigned b = bin_for(ck[h].size);
    uint32_t t = s->bins[b][slice_for(ck[h].size, b)].root;
    for (uint64_t steps = 0; t != BFC_NONE && t < hw && steps <= hw; steps++) {
        if (t == h)
            return true;
        t = ck[t].child[key_below(ck, t, h)];
    }
    return false;
}

static void bfc_check(const strategy *s, sim_report *r)
{
    check_totals t = {0};
    check_regions(s, r, &t);

    uint32_t cap = s->chunks.n_used_hw + 1;
    uint32_t *stack = malloc((size_t)cap * sizeof *stack);
    if (!sim_report_insist(r, stack != NULL, "bfc: checker out of host memory"))
        return;
    uint64_t binned = 0;
    for (unsigned b = 0; b < BFC_NUM_BINS; b++)
        binned += check_bin(s, r, b, stack, cap);
    free(stack);
    sim_report_insist(r, (s->bitmap >> BFC_NUM_BINS) == 0, "bfc: bitmap has bits above bin 20");
    sim_report_insist(r, binned == t.free_chunks, "bfc: bins hold %llu chunks, regions have %llu free chunks",
                      (unsigned long long)binned, (unsigned long long)t.free_chunks);

    /* every free chunk of every region is found in the bin its size maps to */
    const bfc_chunk *ck = chunk_table(s);
    for (uint32_t i = 0; i < s->n_regions; i++) {
        if (!s->regions[i].live)
            continue;
        uint64_t steps = 0;
        for (uint32_t h = s->regions[i].first; h != BFC_NONE && h < s->chunks.n_used_hw &&
                                               steps <= s->chunks.n_used_hw;
             h = ck[h].next, steps++)
            if (ck[h].state == CHUNK_FREE)
                sim_report_insist(r, in_its_bin(s, h), "bfc: free chunk %u at %llu of size %llu is not in its bin %u",
                                  h, (unsigned long long)ck[h].addr, (unsigned long long)ck[h].size,
                                  bin_for(ck[h].size));
    }

    uint64_t zero = 0;
    for (uint32_t h = 0; h < s->chunks.n_used_hw; h++)
        if (slots_valid(&s->chunks, h) && ck[h].state == CHUNK_ZERO)
            zero++;
    sim_report_insist(r, zero == s->zero_live, "bfc: %llu zero-byte handles live, %llu counted",
                      (unsigned long long)zero, (unsigned long long)s->zero_live);
    sim_report_insist(r, s->chunks.live == t.region_chunks + zero,
                      "bfc: %u chunk records live, %llu in regions and %llu zero-byte (leak)", s->chunks.live,
                      (unsigned long long)t.region_chunks, (unsigned long long)zero);

    sim_report_insist(r, s->bytes_in_use == t.used_bytes, "bfc: bytes_in_use %llu != sum of used chunks %llu",
                      (unsigned long long)s->bytes_in_use, (unsigned long long)t.used_bytes);
    sim_report_insist(r, s->pool_bytes == t.pool, "bfc: pool_bytes %llu != sum of regions %llu",
                      (unsigned long long)s->pool_bytes, (unsigned long long)t.pool);
    sim_report_insist(r, !device_proc_alive(s->dev, s->proc) || device_proc_held(s->dev, s->proc) == s->pool_bytes,
                      "bfc: device holds %llu for the process, pool_bytes %llu",
                      (unsigned long long)device_proc_held(s->dev, s->proc), (unsigned long long)s->pool_bytes);
    sim_report_insist(r, s->pool_bytes <= s->limit, "bfc: pool_bytes %llu exceeds the limit %llu",
                      (unsigned long long)s->pool_bytes, (unsigned long long)s->limit);
    sim_report_insist(r, s->peak_bytes_in_use >= s->bytes_in_use, "bfc: peak_bytes_in_use %llu < bytes_in_use %llu",
                      (unsigned long long)s->peak_bytes_in_use, (unsigned long long)s->bytes_in_use);
    sim_report_insist(r, s->peak_pool_bytes >= s->pool_bytes, "bfc: peak_pool_bytes %llu < pool_bytes %llu",
                      (unsigned long long)s->peak_pool_bytes, (unsigned long long)s->pool_bytes);
    sim_report_insist(r, s->live_regions == t.regions, "bfc: %u regions recorded, %u live (region count)",
                      s->live_regions, t.regions);
    sim_report_insist(r, s->num_device_allocs == s->n_regions &&
                             s->num_device_frees == (uint64_t)(s->n_regions - t.regions),
                      "bfc: %llu device allocs and %llu frees for %u regions created, %u live",
                      (unsigned long long)s->num_device_allocs, (unsigned long long)s->num_device_frees,
                      s->n_regions, t.regions);
}

/* ==== test-only corruption (bfc_internal.h) ==== */

static const bfc_bin *first_slice(const strategy *s, bool (*want)(const bfc_bin *))
{
    for (unsigned b = 0; b < BFC_NUM_BINS; b++)
        for (unsigned k = 0; k < BFC_SLICES; k++)
            if (want(&s->bins[b][k]))
                return &s->bins[b][k];
    return NULL;
}

static bool slice_nonempty(const bfc_bin *bn)
{
    return bn->root != BFC_NONE;
}

static uint32_t find_free_chunk(const strategy *s)
{
    const bfc_bin *bn = first_slice(s, slice_nonempty);
    return bn ? bn->root : BFC_NONE;
}

bool bfc_debug_corrupt(strategy *s, bfc_corruption kind)
{
    bfc_chunk *ck = chunk_table(s);
    switch (kind) {
    case BFC_CORRUPT_GAP: {
        /* a used chunk followed by another chunk: shrink it by 256, leaving a gap */
        for (uint32_t i = 0; i < s->n_regions; i++)
            for (uint32_t h = s->regions[i].live ? s->regions[i].first : BFC_NONE; h != BFC_NONE; h = ck[h].next)
                if (ck[h].state == CHUNK_USED && ck[h].next != BFC_NONE && ck[h].size > BFC_MIN_ALLOC) {
                    ck[h].size -= BFC_MIN_ALLOC;
                    s->bytes_in_use -= BFC_MIN_ALLOC;
                    return true;
                }
        return false;
    }
    case BFC_CORRUPT_ADJACENT_FREE: {
        /* a used chunk whose next neighbour is free turns free and is binned as it is */
        for (uint32_t i = 0; i < s->n_regions; i++)
            for (uint32_t h = s->regions[i].live ? s->regions[i].first : BFC_NONE; h != BFC_NONE; h = ck[h].next)
                if (ck[h].state == CHUNK_USED && ck[h].next != BFC_NONE && ck[ck[h].next].state == CHUNK_FREE) {
                    ck[h].state = CHUNK_FREE;
                    s->bytes_in_use -= ck[h].size;
                    bin_insert(s, h);
                    return true;
                }
        return false;
    }
    case BFC_CORRUPT_WRONG_BIN: {
        uint32_t h = find_free_chunk(s);
        if (h == BFC_NONE)
            return false;
        unsigned b = ck[h].bin;
        bin_erase(s, h);
        bin_insert_into(s, h, b == 0 ? 1u : b - 1u);
        return true;
    }
    case BFC_CORRUPT_NOT_IN_BIN: {
        uint32_t h = find_free_chunk(s);
        if (h == BFC_NONE)
            return false;
        bin_erase(s, h);
        return true;
    }
    case BFC_CORRUPT_BIN_ORDER: {
        for (unsigned b = 0; b < BFC_NUM_BINS; b++)
            for (unsigned k = 0; k < BFC_SLICES; k++) {
                uint32_t root = s->bins[b][k].root;
                if (root != BFC_NONE && (ck[root].child[0] != BFC_NONE || ck[root].child[1] != BFC_NONE)) {
                    uint32_t l = ck[root].child[0];
                    ck[root].child[0] = ck[root].child[1];
                    ck[root].child[1] = l;
                    return true;
                }
            }
        return false;
    }
    case BFC_CORRUPT_BITMAP:
        for (unsigned b = 0; b < BFC_NUM_BINS; b++)
            if (s->slice_mask[b] == 0) {
                s->bitmap |= 1u << b;
                return true;
            }
        return false;
    case BFC_CORRUPT_BYTES_IN_USE:
        s->bytes_in_use += BFC_MIN_ALLOC;
        s->peak_bytes_in_use += BFC_MIN_ALLOC;
        return true;
    case BFC_CORRUPT_POOL_BYTES:
        s->pool_bytes += BFC_MIN_ALLOC;
        s->peak_pool_bytes += BFC_MIN_ALLOC;
        return true;
    case BFC_CORRUPT_PEAK_IN_USE:
        if (s->bytes_in_use == 0)
            return false;
        s->peak_bytes_in_use = s->bytes_in_use - 1;
        return true;
    case BFC_CORRUPT_PEAK_POOL:
        if (s->pool_bytes == 0)
            return false;
        s->peak_pool_bytes = s->pool_bytes - 1;
        return true;
    case BFC_CORRUPT_REGION_COUNT:
        s->live_regions++;
        return true;
    case BFC_CORRUPT_BIN_CACHE:
        for (unsigned b = 0; b < BFC_NUM_BINS; b++)
            for (unsigned k = 0; k < BFC_SLICES; k++)
                if (s->bins[b][k].root != BFC_NONE && s->bins[b][k].min != s->bins[b][k].max) {
                    s->bins[b][k].max = s->bins[b][k].min;
                    return true;
                }
        return false;
    }
    return false;
}

/* ==== the option table ==== */

/* The BFC strategies' options, described once (strategy_option, sim/strategy.h).
 * greedy and growth take the first four; limit the last four (--limit is its
 * memory_limit, so no fraction applies to it). The keys are what bfc_limits_parse
 * reads and the ops' options() writes back. */
static const strategy_option bfc_limits_options[5] = {
    {.key = "mem_fraction",
     .cli = "mem-fraction",
     .kind = STRATEGY_OPTION_REAL,
     .default_text = "tf: total less a reserve by compute capability, jax: 0.75",
     .example = "0.5",
     .help = "the limit as a share of total memory (per_process_gpu_memory_fraction, "
             "XLA_PYTHON_CLIENT_MEM_FRACTION)"},
    {.key = "bfc_preset",
     .cli = "bfc-preset",
     .kind = STRATEGY_OPTION_ENUM,
     .choices = "tf|jax",
     .default_text = "tf",
     .example = "jax",
     .help = "whose wiring sets the limit and garbage collection: TensorFlow's or JAX's"},
    {.key = "bfc_gc",
     .cli = "bfc-gc",
     .kind = STRATEGY_OPTION_ENUM,
     .choices = "on|off",
     .default_text = "on for tf, off for jax",
     .example = "off",
     .help = "on a failed allocation, free the wholly free regions and retry"},
    {.key = "bfc_fragmentation_fraction",
     .cli = "bfc-fragmentation-fraction",
     .kind = STRATEGY_OPTION_REAL,
     .default_text = "0, meaning 128 MiB",
     .example = "0.2",
     .help = "split a chunk when its slack is at least F x the limit (internal_fragmentation_fraction)"},
    {.key = "limit",
     .cli = "limit",
     .kind = STRATEGY_OPTION_SIZE,
     .example = "4096MiB",
     .help = "memory_limit of the logical device",
     .required = true},
};

/* ==== ops tables ==== */

#define BFC_OPS(NAME, SUMMARY, OPTS, CREATE)                                                              \
    {                                                                                                     \
        .name = NAME, .summary = SUMMARY, .opts = OPTS, .n_opts = 4, .create = CREATE, .destroy = bfc_destroy, .alloc = bfc_alloc,  \
        .free = bfc_free, .free_ready = bfc_free_ready, .empty_cache = bfc_empty_cache,                  \
        .sample = bfc_sample, .stats = bfc_stats, .options = bfc_options, .check = bfc_check,            \
        .walk = bfc_walk,                                                                                 \
    }

static const strategy_ops BFC_OPS_TABLE[3] = {
    BFC_OPS("greedy", "TF/XLA BFC, allow_growth=false: the whole limit as one region at the first allocation",
            bfc_limits_options, greedy_create),
    BFC_OPS("growth", "TF/XLA BFC, allow_growth=true (set_memory_growth): regions of 2, 4, 8 ... MiB, never merged",
            bfc_limits_options, growth_create),
    BFC_OPS("limit", "TF BFC on a logical device with memory_limit=M: one region of exactly --limit bytes",
            bfc_limits_options + 1, limit_create),
};

const strategy_ops *bfc_strategy(bfc_mode mode)
{
    return &BFC_OPS_TABLE[mode <= BFC_LIMIT ? mode : BFC_GREEDY];
}
