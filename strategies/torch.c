/* The `torch` strategy: PyTorch's CUDA caching allocator, native backend
 * (c10/cuda/CUDACachingAllocator.cpp @ 001074d2, DeviceCachingAllocator; rules as
 * collected in shared/reference/allocators.md §2). Byte-exact on the replay
 * semantics of design.md §3.
 *
 * Rules (allocators.md section in brackets):
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
 *     record_stream case) keeps the block active and unusable until free_ready, or
 *     until a synchronize (empty_cache, rung 7 of the ladder) completes it early.
 *     free_block merges with free neighbours of the same segment and mapped state.
 *  7. empty_cache [2.8] = release_cached_blocks without the retry.
 *  8. Expandable segments [2.11]: one address range of ceil(1⅛·capacity / page) pages
 *     per (stream, pool), pages of 2 MiB (small) or large_segment_size (large); a
 *     request maps just enough pages at the lowest free address that fits; release
 *     unmaps the whole pages strictly inside free blocks.
 *  9. Memory fraction [2.10]: allowed = (uint64)(f · capacity); it bounds reserved.
 *
 * Data: block, segment and allocation records live in side tables (slots.h) linked
 * by uint32 handles. Each pool's free set is cut into size bins, TLSF-like: exact
 * bins below 16 KiB, then 32 bins per power of two (size_bin, monotone in size).
 * Each bin is a small treap ordered by (stream, size, address) (priorities hash
 * the handle: deterministic, expected depth O(log b), b = blocks in the bin, a
 * handful in practice). An index sorted by stream holds, per stream with free
 * blocks in the pool, a bitmap of the bins holding its blocks with a summary word,
 * so the next occupied bin is two count-trailing-zeros away. Best fit is
 * std::set's lower_bound on (stream, size, 0) unchanged: a lower bound in the
 * request's bin, else the first block of the stream's next occupied bin; the
 * release paths walk the set in the same (stream, size, address) order (streams in
 * index order, bins in size order, each treap in order). Expandable segments keep
 * their unmapped ranges in one treap per pool by (stream, address). The largest
 * free block is kept as a number, recomputed (per stream, the last block of its
 * highest occupied bin) only when the block holding it leaves a set.
 * Allocation handles are separate from block records: a deferred free completed
 * early by a synchronize lets its block merge away while the engine still holds the
 * handle.
 * Complexity: alloc and free O(log b + log s) expected (b blocks in one bin, s
 * streams with free blocks; O(1) stream lookup when it repeats); the release paths
 * (empty_cache, OOM ladder, GC) are O(f + pending) (f free blocks), sample() O(1);
 * the walker O(n), the checker O(n + bins). No allocation per event once the side
 * tables have grown (the stream index grows only when a stream appears).
 * Speed (in memory, one core of a shared 2-core VM, best of 5, noisy): a 1M-event
 * bert-base training trace (synth transformer, 600 steps) ~7-9 M events/s, was
 * ~5.2 M with one treap per pool (engine alone, `ideal`: ~18-22 M; torch/ideal
 * ~2.0x, was ~4.3x); gpusim_bench's random churn ~5-6 M events/s, was ~2.6 M.
 * Internal fragmentation per block: < 512 B from rounding, plus an unsplit remainder
 * of up to 1 MiB (large pool), or up to max_non_split_rounding for oversize blocks. */
#include "torch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "slots.h"
#include "torch_conf.h"
#include "torch_internal.h"

/* ==== Constants (allocators.md 2.1) ==== */

#define T_MIN_BLOCK ((uint64_t)512)            /* kMinBlockSize */
#define T_SMALL_SIZE ((uint64_t)1 << 20)       /* kSmallSize: largest small request */
#define T_SMALL_BUFFER ((uint64_t)2 << 20)     /* kSmallBuffer: small segment / page */
#define T_MIN_LARGE_ALLOC ((uint64_t)10 << 20) /* kMinLargeAlloc */
#define T_ROUND_LARGE ((uint64_t)2 << 20)      /* kRoundLarge */
#define T_ONE_EIB ((uint64_t)1 << 60)          /* allocate(): "more than 1EB" */
#define T_NONE SLOTS_NONE

enum { POOL_SMALL = 0, POOL_LARGE = 1, N_POOLS = 2 };
enum { ST_ALL = 0, ST_SMALL = 1, ST_LARGE = 2, N_ST = 3 };

/* ==== Records ==== */

/* One block. Valid in every state: addr, size, seg, prev/next (neighbours in the
 * segment, T_NONE at its ends), stream, pool, state. requested and alloc are set for
 * BLOCK_USED and BLOCK_PENDING only. left/right are treap links, meaningful
 * while the block sits in a set: BLOCK_FREE blocks are in free[pool], BLOCK_UNMAPPED
 * ones (expandable segments) in unmapped[pool]; USED and PENDING blocks in neither.
 * gc_base is the pool's get_free_block counter when the block entered its set. */
typedef struct tblock {
    /* the set key and links first: one tree step touches only these */
    uint64_t addr;
    uint64_t size;
    uint32_t stream;
    uint32_t left, right;
    uint32_t prev, next;
    uint32_t seg;
    uint32_t alloc;
    uint32_t gc_base; /* low 32 bits: ages are differences, modulo 2^32 */
    uint64_t requested;
    uint8_t state;
    uint8_t pool;
    uint8_t expandable;
} tblock;
_Static_assert(sizeof(tblock) == 64, "a block record is one cache line");

/* One segment: a cudaMalloc (size = its bytes, mapped = size) or an expandable
 * address range (size = the reserved range, mapped = bytes backed by pages). Linked
 * in creation order, which is also address order (fresh bases only grow). */
typedef struct tseg {
    uint64_t base;
    uint64_t size;
    uint64_t mapped;
    uint32_t seq;
    uint32_t head;
    uint32_t stream;
    uint32_t list_prev, list_next;
    uint8_t pool;
    uint8_t expandable;
} tseg;

enum { A_LIVE = 0, A_PENDING = 1, A_DONE = 2 };

/* One allocation the engine holds. block is T_NONE for a zero-byte allocation and
 * for a deferred free that a synchronize completed early (A_DONE). */
typedef struct talloc {
    uint32_t block;
    uint8_t state;
} talloc;

/* One Stat of DeviceStats (c10/core/CachingDeviceAllocator.h). */
typedef struct tstat {
    int64_t current, peak, allocated, freed;
} tstat;

typedef struct tstats {
    tstat allocation[N_ST], segment[N_ST], active[N_ST], inactive_split[N_ST];
    tstat allocated_bytes[N_ST], reserved_bytes[N_ST], active_bytes[N_ST];
    tstat inactive_split_bytes[N_ST], requested_bytes[N_ST];
    tstat oversize_allocations, oversize_segments;
    uint64_t num_alloc_retries, num_ooms, num_sync_all_streams, num_device_alloc, num_device_free;
} tstats;

/* Free sets (one per pool). Bin b holds the free blocks whose size maps to b
 * (size_bin), in a treap ordered by (stream, size, address); each stream with
 * free blocks in the pool has an entry in an index sorted by stream, with a
 * bitmap of the bins holding its blocks (TLSF's occupancy bitmaps: a 64-bit
 * summary over FB_WORDS words). */
#define FB_SL 5u                              /* log2 of the bins per power of two */
#define FB_SUB (1u << FB_SL)                  /* bins per power of two */
#define FB_BINS ((64u - 9u - FB_SL + 1u) * FB_SUB) /* sizes up to 2^64 in 512 B units */
#define FB_WORDS ((FB_BINS + 63u) / 64u)
#define FB_NONE UINT32_MAX
#define FB_KEEP_EMPTY 8u                      /* empty stream entries kept up to this many */
_Static_assert(FB_WORDS <= 64, "one summary word covers the bitmap");

typedef struct tstream {
    uint32_t stream;
    uint32_t n;               /* free blocks of this stream in the pool */
    uint64_t summary;         /* bit w: bits[w] != 0 */
    uint64_t bits[FB_WORDS];  /* bit b: bin b holds a free block of this stream */
} tstream;

typedef struct tfree {
    uint32_t root[FB_BINS];   /* treap per bin */
    tstream *ent;             /* stream index, sorted by stream */
    uint32_t n_ent, cap_ent;
    uint32_t hint;            /* the entry found last */
} tfree;


struct strategy {
    device *dev;
    uint32_t proc;
    uint64_t capacity_bytes;
    uint64_t context_bytes;
    torch_conf conf;
    char conf_text[256];
    bool set_fraction;
    double fraction;
    uint64_t allowed_bytes;
    bool gc_on;

    slots blocks, segs, allocs;
    tfree free_set[N_POOLS];
    uint32_t unmapped_root[N_POOLS]; /* treaps by (stream, address) */
    int64_t gc_counter[N_POOLS];
    uint64_t free_bytes;       /* sum of BLOCK_FREE sizes (both pools) */
    uint64_t largest;          /* largest BLOCK_FREE size, valid unless largest_dirty */
    bool largest_dirty;        /* the largest free block left a set: recompute */
    uint32_t seg_first, seg_last;
    uint32_t seg_seq;
    uint32_t n_pending;        /* allocations in A_PENDING that still own a block */
    bool host_oom;             /* a side table could not grow; reported by alloc */

    uint32_t *scratch;         /* handles collected by the release paths */
    uint32_t scratch_len, scratch_cap;

    tstats st;
};

/* Typed indexing (the record size is known here): the hot paths avoid the
 * generic slots_get multiply. */
static inline tblock *B(const strategy *s, uint32_t h)
{
    return (tblock *)(void *)s->blocks.data + h;
}

static inline tseg *SEG(const strategy *s, uint32_t h)
{
    return slots_get(&s->segs, h);
}

static inline talloc *AL(const strategy *s, uint32_t h)
{
    return slots_get(&s->allocs, h);
}

static inline uint64_t u64_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static inline uint64_t u64_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* ==== Ordered sets: treaps over block handles ==== */

/* Priority = a 32-bit mix of the handle (murmur3 finalizer): deterministic, and
 * random enough that expected depth is O(log n) whatever the key order. */
static inline uint32_t tree_pri(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* Whether block x orders before the key (stream, size, addr). */
static inline bool key_less(const tblock *x, uint32_t stream, uint64_t size, uint64_t addr, bool by_addr)
{
    if (x->stream != stream)
        return x->stream < stream;
    if (!by_addr && x->size != size)
        return x->size < size;
    return x->addr < addr;
}

/* Whether the key orders before block x. */
static inline bool key_greater(const tblock *x, uint32_t stream, uint64_t size, uint64_t addr, bool by_addr)
{
    if (x->stream != stream)
        return x->stream > stream;
    if (!by_addr && x->size != size)
        return x->size > size;
    return x->addr > addr;
}

static inline bool blk_less(const tblock *a, const tblock *b, bool by_addr)
{
    return key_greater(b, a->stream, a->size, a->addr, by_addr);
}

/* Insert h into the treap at *root: descend while the parent's priority is at
 * least h's, then split the subtree found there around h's key (iterative: the
 * links are written in place). */
static void tree_insert(strategy *s, uint32_t *root, bool by_addr, uint32_t h)
{
    tblock *x = B(s, h);
    uint32_t pri = tree_pri(h);
    uint32_t *link = root;
    while (*link != T_NONE && tree_pri(*link) >= pri) {
        tblock *n = B(s, *link);
        link = blk_less(x, n, by_addr) ? &n->left : &n->right;
    }
    uint32_t t = *link;
    uint32_t *l = &x->left, *r = &x->right;
    while (t != T_NONE) {
        tblock *n = B(s, t);
        if (blk_less(n, x, by_addr)) {
            *l = t;
            l = &n->right;
            t = n->right;
        } else {
            *r = t;
            r = &n->left;
            t = n->left;
        }
    }
    *l = *r = T_NONE;
    *link = h;
}

/* Erase h (found by its key): its two subtrees are merged in its place. Returns
 * false, the treap unchanged, when h is not in it (the checker reports that). */
static bool tree_erase(strategy *s, uint32_t *root, bool by_addr, uint32_t h)
{
    tblock *x = B(s, h);
    uint32_t *link = root;
    while (*link != T_NONE && *link != h) {
        tblock *n = B(s, *link);
        link = blk_less(x, n, by_addr) ? &n->left : &n->right;
    }
    if (*link == T_NONE)
        return false;
    uint32_t l = x->left, r = x->right;
    while (l != T_NONE && r != T_NONE) {
        if (tree_pri(l) > tree_pri(r)) {
            *link = l;
            link = &B(s, l)->right;
            l = *link;
        } else {
            *link = r;
            link = &B(s, r)->left;
            r = *link;
        }
    }
    *link = l != T_NONE ? l : r;
    x->left = x->right = T_NONE;
    return true;
}

/* The first node whose key is ≥ (stream, size, addr): std::set::lower_bound. */
static uint32_t tree_lower_bound(const strategy *s, uint32_t root, bool by_addr, uint32_t stream, uint64_t size,
                                 uint64_t addr)
{
    uint32_t best = T_NONE;
    for (uint32_t t = root; t != T_NONE;) {
        const tblock *n = B(s, t);
        if (key_less(n, stream, size, addr, by_addr)) {
            t = n->right;
        } else {
            best = t;
            t = n->left;
        }
    }
    return best;
}

/* The last node whose key is < (stream, size, addr): std::prev(lower_bound). */
static uint32_t tree_last_below(const strategy *s, uint32_t root, bool by_addr, uint32_t stream, uint64_t size,
                                uint64_t addr)
{
    uint32_t best = T_NONE;
    for (uint32_t t = root; t != T_NONE;) {
        const tblock *n = B(s, t);
        if (key_less(n, stream, size, addr, by_addr)) {
            best = t;
            t = n->right;
        } else {
            t = n->left;
        }
    }
    return best;
}

static uint32_t tree_next(const strategy *s, uint32_t root, bool by_addr, uint32_t h)
{
    const tblock *x = B(s, h);
    uint32_t best = T_NONE;
    for (uint32_t t = root; t != T_NONE;) {
        const tblock *n = B(s, t);
        if (key_greater(n, x->stream, x->size, x->addr, by_addr)) {
            best = t;
            t = n->left;
        } else {
            t = n->right;
        }
    }
    return best;
}

static uint32_t tree_prev(const strategy *s, uint32_t root, bool by_addr, uint32_t h)
{
    const tblock *x = B(s, h);
    return tree_last_below(s, root, by_addr, x->stream, x->size, x->addr);
}

/* The last node of one stream (keys (stream, size, addr); sizes < 2^64 - 1). */
static uint32_t tree_last_of(const strategy *s, uint32_t root, uint32_t stream)
{
    return tree_last_below(s, root, false, stream, UINT64_MAX, UINT64_MAX);
}

/* ==== Free sets: size bins over small treaps ==== */

/* The bin of a free block of this size: exact below 32·512 B, then 32 bins per
 * power of two (TLSF's two-level mapping). Monotone in size, so bins in index
 * order are blocks in size order. */
static inline uint32_t size_bin(uint64_t size)
{
    uint64_t u = size >> 9;
    if (u < FB_SUB)
        return (uint32_t)u;
    uint32_t fl = 63u - (uint32_t)__builtin_clzll(u);
    return (fl - FB_SL + 1) * FB_SUB + (uint32_t)((u >> (fl - FB_SL)) & (FB_SUB - 1));
}

static inline void bits_set(tstream *e, uint32_t b)
{
    e->bits[b >> 6] |= (uint64_t)1 << (b & 63);
    e->summary |= (uint64_t)1 << (b >> 6);
}

static inline void bits_clear(tstream *e, uint32_t b)
{
    e->bits[b >> 6] &= ~((uint64_t)1 << (b & 63));
    if (e->bits[b >> 6] == 0)
        e->summary &= ~((uint64_t)1 << (b >> 6));
}

static inline bool bits_test(const tstream *e, uint32_t b)
{
    return (e->bits[b >> 6] >> (b & 63)) & 1;
}

/* The first set bin above b, or FB_NONE. */
static inline uint32_t bits_next(const tstream *e, uint32_t b)
{
    uint32_t w = b >> 6;
    uint64_t m = e->bits[w] & (~(uint64_t)1 << (b & 63));
    if (m != 0)
        return w * 64 + (uint32_t)__builtin_ctzll(m);
    uint64_t sm = e->summary & (~(uint64_t)1 << w);
    if (sm == 0)
        return FB_NONE;
    w = (uint32_t)__builtin_ctzll(sm);
    return w * 64 + (uint32_t)__builtin_ctzll(e->bits[w]);
}

/* The last set bin below b, or FB_NONE. */
static inline uint32_t bits_prev(const tstream *e, uint32_t b)
{
    uint32_t w = b >> 6;
    uint64_t m = e->bits[w] & (((uint64_t)1 << (b & 63)) - 1);
    if (m != 0)
        return w * 64 + 63u - (uint32_t)__builtin_clzll(m);
    uint64_t sm = e->summary & (((uint64_t)1 << w) - 1);
    if (sm == 0)
        return FB_NONE;
    w = 63u - (uint32_t)__builtin_clzll(sm);
    return w * 64 + 63u - (uint32_t)__builtin_clzll(e->bits[w]);
}

/* The highest set bin, or FB_NONE. */
static inline uint32_t bits_top(const tstream *e)
{
    if (e->summary == 0)
        return FB_NONE;
    uint32_t w = 63u - (uint32_t)__builtin_clzll(e->summary);
    return w * 64 + 63u - (uint32_t)__builtin_clzll(e->bits[w]);
}

/* Index of the stream's entry in the sorted index, or where it would go. */
static inline uint32_t fs_search(const tfree *f, uint32_t stream)
{
    uint32_t lo = 0, hi = f->n_ent;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->ent[mid].stream < stream)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The stream's entry, or NULL (no free block of it in this pool). */
static inline tstream *fs_entry(tfree *f, uint32_t stream)
{
    if (f->hint < f->n_ent && f->ent[f->hint].stream == stream)
        return &f->ent[f->hint];
    uint32_t i = fs_search(f, stream);
    if (i < f->n_ent && f->ent[i].stream == stream) {
        f->hint = i;
        return &f->ent[i];
    }
    return NULL;
}

/* A new, empty entry for the stream (host memory out: NULL). */
static tstream *fs_entry_add(strategy *s, tfree *f, uint32_t stream)
{
    if (f->n_ent == f->cap_ent) {
        uint32_t cap = f->cap_ent ? f->cap_ent * 2 : 4;
        tstream *p = realloc(f->ent, (size_t)cap * sizeof *p);
        if (p == NULL) {
            s->host_oom = true;
            return NULL;
        }
        f->ent = p;
        f->cap_ent = cap;
    }
    uint32_t i = fs_search(f, stream);
    memmove(&f->ent[i + 1], &f->ent[i], (size_t)(f->n_ent - i) * sizeof *f->ent);
    memset(&f->ent[i], 0, sizeof *f->ent);
    f->ent[i].stream = stream;
    f->n_ent++;
    f->hint = i;
    return &f->ent[i];
}

static void fs_entry_drop(tfree *f, tstream *e)
{
    uint32_t i = (uint32_t)(e - f->ent);
    memmove(&f->ent[i], &f->ent[i + 1], (size_t)(f->n_ent - i - 1) * sizeof *f->ent);
    f->n_ent--;
    f->hint = 0;
}

/* Whether bin root holds a block of the stream (the root itself, in the usual
 * one-stream case). */
static inline bool bin_has_stream(const strategy *s, uint32_t root, uint32_t stream)
{
    if (root == T_NONE)
        return false;
    if (B(s, root)->stream == stream)
        return true;
    uint32_t t = tree_lower_bound(s, root, false, stream, 0, 0);
    return t != T_NONE && B(s, t)->stream == stream;
}

/* Put free block h into its pool's set. */
static void fs_insert(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    tfree *f = &s->free_set[b->pool];
    uint32_t bin = size_bin(b->size);
    tstream *e = fs_entry(f, b->stream);
    if (e == NULL && (e = fs_entry_add(s, f, b->stream)) == NULL)
        return;
    tree_insert(s, &f->root[bin], false, h);
    e->n++;
    bits_set(e, bin);
}

/* Take h out of its pool's set; a block not there leaves the set unchanged. */
static void fs_erase(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    tfree *f = &s->free_set[b->pool];
    uint32_t bin = size_bin(b->size);
    if (!tree_erase(s, &f->root[bin], false, h))
        return;
    tstream *e = fs_entry(f, b->stream);
    if (e == NULL)
        return;
    e->n--;
    if (!bin_has_stream(s, f->root[bin], b->stream))
        bits_clear(e, bin);
    /* keep a few empty entries (no churn of the index in the usual case), drop
     * the rest: the index stays O(streams with free blocks) */
    if (e->n == 0 && f->n_ent > FB_KEEP_EMPTY)
        fs_entry_drop(f, e);
}

/* The first block of the stream in a bin its bitmap marks. */
static inline uint32_t bin_first(const strategy *s, const tfree *f, uint32_t bin, uint32_t stream)
{
    uint32_t t = f->root[bin];
    if (t == T_NONE)
        return T_NONE; /* a bitmap out of step with its bins: the checker says so */
    const tblock *n = B(s, t);
    if (n->left == T_NONE && n->stream == stream)
        return t;
    return tree_lower_bound(s, t, false, stream, 0, 0);
}

/* lower_bound of (stream, size, 0) among the stream's blocks: the smallest block
 * ≥ size, lowest address among equal sizes; T_NONE if the stream has none. */
static uint32_t fs_lower_bound(strategy *s, unsigned pool, uint32_t stream, uint64_t size)
{
    tfree *f = &s->free_set[pool];
    const tstream *e = fs_entry(f, stream);
    if (e == NULL)
        return T_NONE;
    uint32_t bin = size_bin(size);
    if (bits_test(e, bin)) {
        uint32_t t = tree_lower_bound(s, f->root[bin], false, stream, size, 0);
        if (t != T_NONE && B(s, t)->stream == stream)
            return t;
    }
    bin = bits_next(e, bin);
    return bin == FB_NONE ? T_NONE : bin_first(s, f, bin, stream);
}

/* The stream's last block below (stream, size, 0), or T_NONE. */
static uint32_t fs_last_below(strategy *s, unsigned pool, uint32_t stream, uint64_t size)
{
    tfree *f = &s->free_set[pool];
    const tstream *e = fs_entry(f, stream);
    if (e == NULL)
        return T_NONE;
    uint32_t bin = size_bin(size);
    if (bits_test(e, bin)) {
        uint32_t t = tree_last_below(s, f->root[bin], false, stream, size, 0);
        if (t != T_NONE && B(s, t)->stream == stream)
            return t;
    }
    bin = bits_prev(e, bin);
    return bin == FB_NONE ? T_NONE : tree_last_of(s, f->root[bin], stream);
}

/* The next block of h's stream in (size, address) order, or T_NONE. */
static uint32_t fs_next(strategy *s, uint32_t h)
{
    const tblock *x = B(s, h);
    tfree *f = &s->free_set[x->pool];
    uint32_t bin = size_bin(x->size);
    uint32_t t = tree_next(s, f->root[bin], false, h);
    if (t != T_NONE && B(s, t)->stream == x->stream)
        return t;
    const tstream *e = fs_entry(f, x->stream);
    if (e == NULL || (bin = bits_next(e, bin)) == FB_NONE)
        return T_NONE;
    return bin_first(s, f, bin, x->stream);
}

/* The previous block of h's stream in (size, address) order, or T_NONE. */
static uint32_t fs_prev(strategy *s, uint32_t h)
{
    const tblock *x = B(s, h);
    tfree *f = &s->free_set[x->pool];
    uint32_t bin = size_bin(x->size);
    uint32_t t = tree_prev(s, f->root[bin], false, h);
    if (t != T_NONE && B(s, t)->stream == x->stream)
        return t;
    const tstream *e = fs_entry(f, x->stream);
    if (e == NULL || (bin = bits_prev(e, bin)) == FB_NONE)
        return T_NONE;
    return tree_last_of(s, f->root[bin], x->stream);
}

/* The largest free block of one stream in a pool (0 if none). */
static uint64_t fs_largest(const strategy *s, const tfree *f, const tstream *e)
{
    uint32_t bin = bits_top(e);
    if (bin == FB_NONE)
        return 0;
    uint32_t t = tree_last_of(s, f->root[bin], e->stream);
    return t == T_NONE ? 0 : B(s, t)->size;
}

/* ==== Scratch list of handles (release paths) ==== */

static bool scratch_push(strategy *s, uint32_t h)
{
    if (s->scratch_len == s->scratch_cap) {
        uint32_t cap = s->scratch_cap ? s->scratch_cap * 2 : 256;
        uint32_t *p = realloc(s->scratch, (size_t)cap * sizeof *p);
        if (p == NULL) {
            s->host_oom = true;
            return false;
        }
        s->scratch = p;
        s->scratch_cap = cap;
    }
    s->scratch[s->scratch_len++] = h;
    return true;
}

/* In-order walk of the stream's nodes in a treap (subtrees wholly on other
 * streams are skipped): O(depth + nodes of the stream). */
static void scratch_collect_at(strategy *s, uint32_t t, uint32_t stream)
{
    while (t != T_NONE) {
        const tblock *n = B(s, t);
        if (n->stream < stream) {
            t = n->right;
            continue;
        }
        if (n->stream > stream) {
            t = n->left;
            continue;
        }
        scratch_collect_at(s, n->left, stream);
        scratch_push(s, t);
        t = B(s, t)->right;
    }
}

/* The pool's free blocks in (stream, size, address) order, into the scratch list:
 * streams in index order, each stream's bins in size order. */
static void scratch_collect(strategy *s, unsigned pool)
{
    const tfree *f = &s->free_set[pool];
    s->scratch_len = 0;
    for (uint32_t i = 0; i < f->n_ent; i++) {
        const tstream *e = &f->ent[i];
        for (uint32_t bin = bits_test(e, 0) ? 0 : bits_next(e, 0); bin != FB_NONE; bin = bits_next(e, bin))
            scratch_collect_at(s, f->root[bin], e->stream);
    }
}

/* ==== Statistics (allocators.md 2.12; increase_stat/decrease_stat) ==== */

static inline void stat_up(tstat *x, uint64_t amount)
{
    x->current += (int64_t)amount;
    if (x->current > x->peak)
        x->peak = x->current;
    x->allocated += (int64_t)amount;
}

static inline void stat_down(tstat *x, uint64_t amount)
{
    x->current -= (int64_t)amount;
    x->freed += (int64_t)amount;
}

/* The aggregate entry and the pool's entry (get_stat_types_for_pool). */
static inline void stats_up(tstat *arr, unsigned pool, uint64_t amount)
{
    stat_up(&arr[ST_ALL], amount);
    stat_up(&arr[1 + pool], amount);
}

static inline void stats_down(tstat *arr, unsigned pool, uint64_t amount)
{
    stat_down(&arr[ST_ALL], amount);
    stat_down(&arr[1 + pool], amount);
}

static inline uint64_t reserved_now(const strategy *s)
{
    return (uint64_t)s->st.reserved_bytes[ST_ALL].current;
}

/* ==== Blocks, segments, pools ==== */

static uint32_t blk_take(strategy *s)
{
    uint32_t h = slots_take(&s->blocks);
    if (h == T_NONE)
        s->host_oom = true;
    return h;
}

static inline bool blk_is_split(const strategy *s, uint32_t h)
{
    const tblock *b = B(s, h);
    return b->prev != T_NONE || b->next != T_NONE;
}

static inline uint64_t seg_page(const strategy *s, unsigned pool)
{
    return pool == POOL_SMALL ? T_SMALL_BUFFER : s->conf.large_segment_size_bytes;
}

/* Insert a free block into its pool's set (BlockPool::insert_into_blocks). */
static void pool_insert(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    b->state = BLOCK_FREE;
    b->gc_base = (uint32_t)s->gc_counter[b->pool];
    s->free_bytes += b->size;
    if (b->size > s->largest)
        s->largest = b->size; /* a dirty value only grows toward the truth too */
    fs_insert(s, h);
}

static void pool_erase(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    s->free_bytes -= b->size;
    if (b->size >= s->largest)
        s->largest_dirty = true;
    fs_erase(s, h);
}

static uint32_t seg_new(strategy *s, unsigned pool, uint32_t stream, uint64_t base, uint64_t size, bool expandable)
{
    uint32_t g = slots_take(&s->segs);
    if (g == T_NONE) {
        s->host_oom = true;
        return T_NONE;
    }
    tseg *seg = SEG(s, g);
    *seg = (tseg){.base = base, .size = size, .mapped = expandable ? 0 : size, .seq = s->seg_seq++,
                  .head = T_NONE, .stream = stream, .list_prev = s->seg_last, .list_next = T_NONE,
                  .pool = (uint8_t)pool, .expandable = expandable};
    if (s->seg_last != T_NONE)
        SEG(s, s->seg_last)->list_next = g;
    else
        s->seg_first = g;
    s->seg_last = g;
    return g;
}

static void seg_drop(strategy *s, uint32_t g)
{
    tseg *seg = SEG(s, g);
    if (seg->list_prev != T_NONE)
        SEG(s, seg->list_prev)->list_next = seg->list_next;
    else
        s->seg_first = seg->list_next;
    if (seg->list_next != T_NONE)
        SEG(s, seg->list_next)->list_prev = seg->list_prev;
    else
        s->seg_last = seg->list_prev;
    slots_put(&s->segs, g);
}

/* A fresh block record; h must come from blk_take (pointers into the table may
 * have moved). */
static void blk_init(strategy *s, uint32_t h, uint64_t addr, uint64_t size, uint32_t seg, strategy_block_state st)
{
    const tseg *g = SEG(s, seg);
    *B(s, h) = (tblock){.addr = addr, .size = size, .prev = T_NONE, .next = T_NONE, .left = T_NONE,
                        .right = T_NONE, .seg = seg, .stream = g->stream, .alloc = T_NONE,
                        .state = (uint8_t)st, .pool = g->pool, .expandable = g->expandable};
}

/* Link h between before and after (Block::splice). */
static void blk_splice(strategy *s, uint32_t h, uint32_t before, uint32_t after)
{
    tblock *b = B(s, h);
    b->prev = before;
    b->next = after;
    if (before != T_NONE)
        B(s, before)->next = h;
    else
        SEG(s, b->seg)->head = h;
    if (after != T_NONE)
        B(s, after)->prev = h;
}

/* ==== Size rules (allocators.md 2.2, 2.3) ==== */

static uint64_t round_size(const strategy *s, uint64_t size)
{
    if (size < T_MIN_BLOCK)
        return T_MIN_BLOCK;
    uint64_t d = torch_conf_divisions(&s->conf, size);
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
    return units_round_up(size, T_MIN_BLOCK);
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
    uint64_t remaining = b->size - size;
    if (b->pool == POOL_SMALL || s->conf.expandable_segments)
        return remaining >= T_MIN_BLOCK;
    return size < s->conf.max_split_size_bytes && remaining > T_SMALL_SIZE;
}

/* ==== Free path (allocators.md 2.6) ==== */

/* Merge src into dst when src is free in the same mapped state (try_merge_blocks);
 * returns the bytes subsumed. dst is in no set. */
static uint64_t try_merge(strategy *s, uint32_t dst, uint32_t src)
{
    if (src == T_NONE)
        return 0;
    tblock *d = B(s, dst);
    tblock *x = B(s, src);
    bool dst_mapped = d->state != BLOCK_UNMAPPED;
    if (x->state != (dst_mapped ? BLOCK_FREE : BLOCK_UNMAPPED))
        return 0;
    if (dst_mapped)
        pool_erase(s, src);
    else
        tree_erase(s, &s->unmapped_root[x->pool], true, src);
    d = B(s, dst);
    x = B(s, src);
    if (d->prev == src) {
        d->addr = x->addr;
        d->prev = x->prev;
        if (d->prev != T_NONE)
            B(s, d->prev)->next = dst;
        else
            SEG(s, d->seg)->head = dst;
    } else {
        d->next = x->next;
        if (d->next != T_NONE)
            B(s, d->next)->prev = dst;
    }
    uint64_t subsumed = x->size;
    d->size += subsumed;
    slots_put(&s->blocks, src);
    return subsumed;
}

/* free_block: the block returns to its pool, merged with its free neighbours. */
static void free_block(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    uint64_t original_size = b->size;
    uint64_t requested = b->requested;
    unsigned pool = b->pool;
    bool expandable = b->expandable;
    uint32_t cand[2] = {b->prev, b->next};
    b->state = BLOCK_FREE;
    b->requested = 0;
    b->alloc = T_NONE;

    int64_t net_blocks = 0, net_bytes = 0;
    for (int i = 0; i < 2; i++) {
        uint64_t sub = try_merge(s, h, cand[i]);
        if (sub > 0) {
            net_blocks -= 1;
            net_bytes -= (int64_t)sub;
        }
    }
    pool_insert(s, h);
    if (blk_is_split(s, h)) {
        net_blocks += 1;
        net_bytes += (int64_t)B(s, h)->size;
    }
    /* inactive_split counts only cudaMalloc segments: whole free pages of
     * expandable segments can always be released */
    if (!expandable) {
        if (net_blocks > 0)
            stats_up(s->st.inactive_split, pool, (uint64_t)net_blocks);
        else if (net_blocks < 0)
            stats_down(s->st.inactive_split, pool, (uint64_t)-net_blocks);
        if (net_bytes > 0)
            stats_up(s->st.inactive_split_bytes, pool, (uint64_t)net_bytes);
        else if (net_bytes < 0)
            stats_down(s->st.inactive_split_bytes, pool, (uint64_t)-net_bytes);
    }
    stats_down(s->st.active, pool, 1);
    stats_down(s->st.active_bytes, pool, original_size);
    stats_down(s->st.requested_bytes, pool, requested);
}

/* ==== Releasing memory (allocators.md 2.8) ==== */

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
    if (size >= s->conf.max_split_size_bytes)
        stat_down(&s->st.oversize_segments, 1);
    pool_erase(s, h);
    slots_put(&s->blocks, h);
    seg_drop(s, g);
}

/* Whether release_block may take h: a whole cudaMalloc segment. PyTorch asserts
 * the first and assumes the second; max_split_size with a large_segment_size above
 * it can leave a free split block ≥ max_split_size, which PyTorch would cudaFree
 * from the middle of its segment. We keep such blocks instead. */
static bool releasable(const strategy *s, uint32_t h)
{
    return !B(s, h)->expandable && !blk_is_split(s, h);
}

/* Unmap the whole pages strictly inside a free expandable block (unmap_block). */
static void unmap_block(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    const tseg *g = SEG(s, b->seg);
    uint64_t page = seg_page(s, b->pool);
    uint64_t rel = b->addr - g->base;
    uint64_t begin = units_round_up(rel, page);
    uint64_t end = units_round_down(rel + b->size, page);
    if (begin >= end)
        return;
    uint64_t before = begin - rel;
    uint64_t after = rel + b->size - end;
    uint32_t hb = T_NONE, ha = T_NONE;
    if (before > 0 && (hb = blk_take(s)) == T_NONE)
        return;
    if (after > 0 && (ha = blk_take(s)) == T_NONE) {
        if (hb != T_NONE)
            slots_put(&s->blocks, hb);
        return;
    }
    pool_erase(s, h);
    b = B(s, h);
    uint64_t base = SEG(s, b->seg)->base;
    uint32_t seg = b->seg;
    uint32_t old_prev = b->prev, old_next = b->next;
    if (hb != T_NONE) {
        blk_init(s, hb, b->addr, before, seg, BLOCK_FREE);
        blk_splice(s, hb, old_prev, h);
        pool_insert(s, hb);
    }
    if (ha != T_NONE) {
        blk_init(s, ha, base + end, after, seg, BLOCK_FREE);
        blk_splice(s, ha, h, old_next);
        pool_insert(s, ha);
    }
    b = B(s, h);
    b->addr = base + begin;
    b->size = end - begin;
    b->state = BLOCK_UNMAPPED;
    try_merge(s, h, B(s, h)->prev);
    try_merge(s, h, B(s, h)->next);
    tree_insert(s, &s->unmapped_root[B(s, h)->pool], true, h);

    uint64_t bytes = end - begin;
    unsigned pool = B(s, h)->pool;
    SEG(s, seg)->mapped -= bytes;
    device_release(s->dev, s->proc, bytes);
    stats_down(s->st.reserved_bytes, pool, bytes);
    s->st.num_device_free++;
}

/* An expandable segment with nothing mapped gives back its address range. */
static void release_expandable_segment(strategy *s, uint32_t h)
{
    uint32_t g = B(s, h)->seg;
    tree_erase(s, &s->unmapped_root[B(s, h)->pool], true, h);
    slots_put(&s->blocks, h);
    seg_drop(s, g);
}

/* release_blocks: every unsplit cached segment of the pool, and the whole free
 * pages of its expandable segments. */
static void release_blocks(strategy *s, unsigned pool)
{
    scratch_collect(s, pool);
    /* cudaFree the whole segments now; keep the expandable blocks, compacted to
     * the front of the list, for unmapping afterwards (PyTorch's to_unmap): a
     * handle freed here may be reused by a block the unmapping creates */
    uint32_t n_unmap = 0;
    for (uint32_t i = 0; i < s->scratch_len; i++) {
        uint32_t h = s->scratch[i];
        if (B(s, h)->expandable)
            s->scratch[n_unmap++] = h;
        else if (!blk_is_split(s, h))
            release_block(s, h);
    }
    /* These handles stay valid: unmapping merges only unmapped blocks, and the
     * free blocks still to come are mapped. */
    for (uint32_t i = 0; i < n_unmap; i++) {
        uint32_t h = s->scratch[i];
        unmap_block(s, h);
        if (B(s, h)->state == BLOCK_UNMAPPED && !blk_is_split(s, h))
            release_expandable_segment(s, h);
    }
}

/* synchronize_and_free_events: every deferred free completes now. */
static void synchronize(strategy *s)
{
    s->st.num_sync_all_streams++;
    if (s->n_pending == 0)
        return;
    for (uint32_t a = 0; a < s->allocs.n_used_hw && s->n_pending > 0; a++) {
        if (!slots_valid(&s->allocs, a))
            continue;
        talloc *al = AL(s, a);
        if (al->state != A_PENDING || al->block == T_NONE)
            continue;
        uint32_t h = al->block;
        al->block = T_NONE;
        al->state = A_DONE;
        s->n_pending--;
        free_block(s, h);
    }
}

/* release_cached_blocks: synchronize, then release both pools. */
static bool release_cached_blocks(strategy *s)
{
    synchronize(s);
    release_blocks(s, POOL_LARGE);
    release_blocks(s, POOL_SMALL);
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
    uint32_t it = fs_lower_bound(s, pool, stream, key);
    if (it != T_NONE) {
        if (!releasable(s, it))
            return false;
        release_block(s, it);
        return true;
    }
    it = fs_last_below(s, pool, stream, key);
    if (it == T_NONE)
        return false;
    uint64_t released = 0;
    while (released < key && B(s, it)->size >= m && B(s, it)->stream == stream && releasable(s, it)) {
        uint32_t cur = it;
        released += B(s, cur)->size;
        it = fs_prev(s, cur);
        release_block(s, cur);
        if (it == T_NONE)
            break;
    }
    return released >= key;
}

/* ==== Garbage collection (allocators.md 2.9) ==== */

static uint64_t gc_age(const strategy *s, uint32_t h)
{
    const tblock *b = B(s, h);
    return (uint32_t)((uint32_t)s->gc_counter[b->pool] - b->gc_base);
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
    scratch_collect(s, POOL_LARGE);
    for (uint32_t i = 0; i < s->scratch_len; i++) {
        if (releasable(s, s->scratch[i])) {
            total_age += gc_age(s, s->scratch[i]);
            count++;
        }
    }
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        double age_threshold = (double)total_age / (double)count;
        freed = false;
        /* the whole set is swept each pass: it does not stop at the target */
        scratch_collect(s, POOL_LARGE);
        for (uint32_t i = 0; i < s->scratch_len; i++) {
            uint32_t h = s->scratch[i];
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

/* ==== Expandable segments (allocators.md 2.11) ==== */

static inline bool allocatable(const strategy *s, uint32_t h)
{
    return h != T_NONE && (B(s, h)->state == BLOCK_FREE || B(s, h)->state == BLOCK_UNMAPPED);
}

static bool has_room(const strategy *s, uint32_t h, uint64_t size)
{
    uint64_t bytes = 0;
    while (bytes < size && allocatable(s, h)) {
        bytes += B(s, h)->size;
        h = B(s, h)->next;
    }
    return bytes >= size;
}

/* find_expandable_block: the lowest address of free + unmapped space ≥ size in a
 * segment of this stream and pool, or a new address range. */
static uint32_t find_expandable_block(strategy *s, unsigned pool, uint32_t stream, uint64_t size)
{
    uint32_t *root = &s->unmapped_root[pool];
    for (uint32_t it = tree_lower_bound(s, *root, true, stream, 0, 0); it != T_NONE && B(s, it)->stream == stream;
         it = tree_next(s, *root, true, it)) {
        uint32_t c = it;
        if (allocatable(s, B(s, c)->prev))
            c = B(s, c)->prev;
        if (has_room(s, c, size))
            return c;
    }
    uint64_t page = seg_page(s, pool);
    uint64_t total = s->capacity_bytes;
    /* 1⅛ of totalGlobalMem, in whole pages */
    uint64_t va = units_round_up(total + total / 8, page);
    if (va == 0)
        va = page;
    uint32_t h = blk_take(s);
    if (h == T_NONE)
        return T_NONE;
    uint32_t g = seg_new(s, pool, stream, 0, va, true);
    if (g == T_NONE) {
        slots_put(&s->blocks, h);
        return T_NONE;
    }
    SEG(s, g)->base = device_reserve_va(s->dev, va);
    blk_init(s, h, SEG(s, g)->base, va, g, BLOCK_UNMAPPED);
    SEG(s, g)->head = h;
    tree_insert(s, root, true, h);
    return h;
}

/* map_block: back the first `size` bytes (whole pages) of an unmapped block. */
static bool map_block(strategy *s, uint32_t h, uint64_t size)
{
    tblock *b = B(s, h);
    uint64_t page = seg_page(s, b->pool);
    uint64_t bytes = u64_min(units_round_up(size, page), b->size);
    uint32_t rest = T_NONE;
    if (bytes < b->size && (rest = blk_take(s)) == T_NONE)
        return false;
    if (device_map(s->dev, s->proc, bytes) != SIM_OK) {
        if (rest != T_NONE)
            slots_put(&s->blocks, rest);
        return false;
    }
    b = B(s, h);
    tree_erase(s, &s->unmapped_root[b->pool], true, h);
    b = B(s, h);
    b->state = BLOCK_FREE;
    if (rest != T_NONE) {
        blk_init(s, rest, b->addr + bytes, b->size - bytes, b->seg, BLOCK_UNMAPPED);
        blk_splice(s, rest, h, B(s, h)->next);
        tree_insert(s, &s->unmapped_root[B(s, h)->pool], true, rest);
        B(s, h)->size = bytes;
    }
    try_merge(s, h, B(s, h)->prev);
    try_merge(s, h, B(s, h)->next);
    pool_insert(s, h);
    b = B(s, h);
    SEG(s, b->seg)->mapped += bytes;
    stats_up(s->st.reserved_bytes, b->pool, bytes);
    s->st.num_device_alloc++;
    return true;
}

/* try_allocate_expandable_block: a free block of ≥ size, taken out of its set. */
static uint32_t try_allocate_expandable_block(strategy *s, unsigned pool, uint32_t stream, uint64_t size)
{
    uint32_t c = find_expandable_block(s, pool, stream, size);
    if (c == T_NONE)
        return T_NONE;
    if (B(s, c)->state == BLOCK_UNMAPPED && !map_block(s, c, u64_min(B(s, c)->size, size)))
        return T_NONE;
    while (B(s, c)->size < size) {
        /* free → unmapped → ...: map part of the next block, which absorbs c */
        uint64_t remaining = size - B(s, c)->size;
        uint32_t nc = B(s, c)->next;
        if (nc == T_NONE || B(s, nc)->state != BLOCK_UNMAPPED || !map_block(s, nc, u64_min(remaining, B(s, nc)->size)))
            return T_NONE;
        c = nc;
    }
    pool_erase(s, c);
    return c;
}

/* ==== The malloc path (allocators.md 2.4, 2.5, 2.7) ==== */

static uint32_t get_free_block(strategy *s, unsigned pool, uint32_t stream, uint64_t size)
{
    if (s->gc_on)
        s->gc_counter[pool]++; /* block reuse interval, tracked only with GC on */
    uint32_t it = fs_lower_bound(s, pool, stream, size);
    if (it == T_NONE)
        return T_NONE;
    if (B(s, it)->expandable) {
        /* best fit counts the unmapped space right after a block as its size
         * (expandable_segments is fixed for a run, so the branch that skips
         * expandable blocks when the option was turned off cannot arise) */
        for (;;) {
            uint32_t nx = fs_next(s, it);
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
    /* oversize blocks are kept for oversize requests */
    if (size < m && bsize >= m)
        return T_NONE;
    /* and an oversize request takes one at most max_non_split_rounding larger */
    if (size >= m && bsize >= size + s->conf.max_non_split_rounding_bytes)
        return T_NONE;
    pool_erase(s, it);
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
        return try_allocate_expandable_block(s, pool, stream, size);
    uint32_t h = blk_take(s);
    if (h == T_NONE)
        return T_NONE;
    uint64_t addr = 0;
    if (device_alloc(s->dev, s->proc, alloc_size, &addr) != SIM_OK) {
        slots_put(&s->blocks, h);
        return T_NONE;
    }
    uint32_t g = seg_new(s, pool, stream, addr, alloc_size, false);
    if (g == T_NONE) {
        device_release(s->dev, s->proc, alloc_size);
        slots_put(&s->blocks, h);
        return T_NONE;
    }
    blk_init(s, h, addr, alloc_size, g, BLOCK_FREE);
    SEG(s, g)->head = h;
    stats_up(s->st.segment, pool, 1);
    stats_up(s->st.reserved_bytes, pool, alloc_size);
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
            blk_init(s, nb, r->addr, size, r->seg, BLOCK_USED);
            blk_splice(s, nb, B(s, rem)->prev, rem);
            r = B(s, rem);
            r->addr += size;
            r->size -= size;
            pool_insert(s, rem);
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
    stats_up(s->st.active, pool, 1);
    stats_up(s->st.active_bytes, pool, b->size);
    stats_up(s->st.requested_bytes, pool, orig_size);
    if (b->size >= s->conf.max_split_size_bytes)
        stat_up(&s->st.oversize_allocations, 1);
    return h;
}

/* ==== OOM report ==== */

/* format_size of CUDACachingAllocator.cpp: "N bytes" up to 1 KiB, then KiB, MiB,
 * GiB with two decimals, each unit used up to and including its next power. */
static const char *torch_format_size(uint64_t size, char *buf, size_t cap)
{
    if (size <= 1024)
        snprintf(buf, cap, "%llu bytes", (unsigned long long)size);
    else if (size <= ((uint64_t)1 << 20))
        snprintf(buf, cap, "%.2f KiB", (double)size / 1024.0);
    else if (size <= ((uint64_t)1 << 30))
        snprintf(buf, cap, "%.2f MiB", (double)size / 1048576.0);
    else
        snprintf(buf, cap, "%.2f GiB", (double)size / 1073741824.0);
    return buf;
}

/* The largest free block: per pool and stream, the last block of the highest
 * bin its bitmap marks. O(streams · log b) (b = blocks in that bin); run only when
 * the largest block may have left. */
static uint64_t largest_free(const strategy *s)
{
    uint64_t m = 0;
    for (unsigned p = 0; p < N_POOLS; p++) {
        const tfree *f = &s->free_set[p];
        for (uint32_t i = 0; i < f->n_ent; i++)
            m = u64_max(m, fs_largest(s, f, &f->ent[i]));
    }
    return m;
}

static void refresh_largest(strategy *s)
{
    if (s->largest_dirty) {
        s->largest = largest_free(s);
        s->largest_dirty = false;
    }
}

static void fill_oom(strategy *s, uint64_t size, uint64_t alloc_size, strategy_oom *oom)
{
    uint64_t allocated = (uint64_t)s->st.allocated_bytes[ST_ALL].current;
    uint64_t reserved = reserved_now(s);
    uint64_t dev_free = device_free_bytes(s->dev);
    uint64_t limit = s->capacity_bytes > s->context_bytes ? s->capacity_bytes - s->context_bytes : 0;
    if (s->set_fraction)
        limit = u64_min(limit, s->allowed_bytes);
    uint64_t could_free = limit > allocated ? limit - allocated : 0;
    *oom = (strategy_oom){
        .size_bytes = size,
        .free_bytes = s->free_bytes,
        .largest_free_bytes = largest_free(s),
        .reserved_bytes = reserved,
        .device_free_bytes = dev_free,
        .cause = size > could_free ? SIM_OOM_CAPACITY : SIM_OOM_FRAGMENTATION,
    };
    char a[32], c[32], f[32], al[32], r[32], lg[32], allowed[64] = "";
    if (s->set_fraction)
        snprintf(allowed, sizeof allowed, "%s allowed; ", torch_format_size(s->allowed_bytes, a, sizeof a));
    /* PyTorch names the segment size (alloc_size) here, not the rounded request */
    snprintf(oom->detail, sizeof oom->detail,
             "CUDA out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which %s is free. "
             "%sOf the allocated memory %s is allocated by PyTorch, and %s is reserved by PyTorch but "
             "unallocated. The largest free block is %s.",
             torch_format_size(alloc_size, a, sizeof a), torch_format_size(s->capacity_bytes, c, sizeof c),
             torch_format_size(dev_free, f, sizeof f), allowed, torch_format_size(allocated, al, sizeof al),
             torch_format_size(reserved - allocated, r, sizeof r), torch_format_size(oom->largest_free_bytes, lg, sizeof lg));
}

/* ==== Operations ==== */

static sim_status torch_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    torch_conf conf;
    const char *text = strategy_config_get(cfg, "alloc_conf");
    sim_status st = torch_conf_parse(text, &conf, err);
    if (st != SIM_OK)
        return st;
    double fraction = 1.0;
    const char *ftext = strategy_config_get(cfg, "memory_fraction");
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
    snprintf(s->conf_text, sizeof s->conf_text, "%s", text ? text : "");
    if (ftext != NULL) {
        s->set_fraction = true;
        s->fraction = fraction;
        /* setMemoryFraction: static_cast<size_t>(fraction * total), truncating */
        s->allowed_bytes = (uint64_t)(fraction * (double)info.capacity_bytes);
    }
    s->gc_on = s->set_fraction && conf.garbage_collection_threshold > 0.0;
    slots_init(&s->blocks, sizeof(tblock));
    slots_init(&s->segs, sizeof(tseg));
    slots_init(&s->allocs, sizeof(talloc));
    for (unsigned p = 0; p < N_POOLS; p++) {
        for (uint32_t b = 0; b < FB_BINS; b++)
            s->free_set[p].root[b] = T_NONE;
        s->unmapped_root[p] = T_NONE;
    }
    s->seg_first = s->seg_last = T_NONE;
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
    for (unsigned p = 0; p < N_POOLS; p++)
        free(s->free_set[p].ent);
    free(s->scratch);
    free(s);
}

static sim_status torch_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *out, strategy_oom *oom)
{
    uint32_t ah = slots_take(&s->allocs);
    if (ah == T_NONE)
        return SIM_ENOMEM;
    *AL(s, ah) = (talloc){.block = T_NONE, .state = A_LIVE};
    if (size == 0) {
        /* allocate(0) returns no block and takes no memory */
        *out = ah;
        return SIM_OK;
    }
    if (size >= T_ONE_EIB) {
        fill_oom(s, size, size, oom);
        snprintf(oom->detail, sizeof oom->detail, "CUDA out of memory. Tried to allocate more than 1EB memory.");
        s->st.num_ooms++;
        slots_put(&s->allocs, ah);
        return SIM_OOM;
    }
    uint64_t rs = round_size(s, size);
    unsigned pool = rs <= T_SMALL_SIZE ? POOL_SMALL : POOL_LARGE;
    uint64_t alloc_size = allocation_size(s, rs);

    uint32_t b = get_free_block(s, pool, stream, rs);
    if (b == T_NONE) {
        if (s->gc_on)
            garbage_collect(s);
        b = alloc_block(s, pool, stream, rs, alloc_size, false);
        if (b == T_NONE && release_available_cached_blocks(s, pool, stream, rs))
            b = alloc_block(s, pool, stream, rs, alloc_size, false);
        if (b == T_NONE && release_cached_blocks(s))
            b = alloc_block(s, pool, stream, rs, alloc_size, true);
    }
    if (b == T_NONE) {
        s->st.num_ooms++;
        fill_oom(s, rs, alloc_size, oom);
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
    unsigned pool = blk->pool;
    stats_down(s->st.allocation, pool, 1);
    stats_down(s->st.allocated_bytes, pool, blk->size);
    if (blk->size >= s->conf.max_split_size_bytes)
        stat_down(&s->st.oversize_allocations, 1);
    if (deferred) {
        /* the record_stream case: active, unusable until its events complete */
        blk->state = BLOCK_PENDING;
        a->state = A_PENDING;
        s->n_pending++;
        return;
    }
    free_block(s, b);
    slots_put(&s->allocs, h);
    refresh_largest(s);
}

static void torch_free_ready(strategy *s, strategy_handle h)
{
    talloc *a = AL(s, h);
    if (a->block != T_NONE) {
        uint32_t b = a->block;
        s->n_pending--;
        free_block(s, b);
    }
    /* else: zero bytes, or a synchronize already completed it */
    slots_put(&s->allocs, h);
    refresh_largest(s);
}

static void torch_empty_cache(strategy *s)
{
    release_cached_blocks(s);
    refresh_largest(s);
}

static void torch_sample(const strategy *s, strategy_sample *out)
{
    *out = (strategy_sample){
        .allocated_bytes = (uint64_t)s->st.allocated_bytes[ST_ALL].current,
        .reserved_bytes = reserved_now(s),
        .free_bytes = s->free_bytes,
        .largest_free_bytes = s->largest,
        .num_device_allocs = s->st.num_device_alloc,
        .num_device_frees = s->st.num_device_free,
    };
}

static void emit_stat(const strategy_stat_sink *sink, const char *name, const tstat *x)
{
    char key[96];
    static const char *const parts[4] = {"current", "peak", "allocated", "freed"};
    const int64_t v[4] = {x->current, x->peak, x->allocated, x->freed};
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s.%s", name, parts[i]);
        sink->u64(sink->ctx, key, v[i] < 0 ? 0 : (uint64_t)v[i]);
    }
}

static void emit_array(const strategy_stat_sink *sink, const char *name, const tstat *arr)
{
    static const char *const types[N_ST] = {"all", "small_pool", "large_pool"};
    char key[64];
    for (int t = 0; t < N_ST; t++) {
        snprintf(key, sizeof key, "%s.%s", name, types[t]);
        emit_stat(sink, key, &arr[t]);
    }
}

static void torch_stats(const strategy *s, const strategy_stat_sink *sink)
{
    const tstats *st = &s->st;
    emit_array(sink, "allocation", st->allocation);
    emit_array(sink, "segment", st->segment);
    emit_array(sink, "active", st->active);
    emit_array(sink, "inactive_split", st->inactive_split);
    emit_array(sink, "allocated_bytes", st->allocated_bytes);
    emit_array(sink, "reserved_bytes", st->reserved_bytes);
    emit_array(sink, "active_bytes", st->active_bytes);
    emit_array(sink, "inactive_split_bytes", st->inactive_split_bytes);
    emit_array(sink, "requested_bytes", st->requested_bytes);
    emit_stat(sink, "oversize_allocations", &st->oversize_allocations);
    emit_stat(sink, "oversize_segments", &st->oversize_segments);
    sink->u64(sink->ctx, "num_alloc_retries", st->num_alloc_retries);
    sink->u64(sink->ctx, "num_ooms", st->num_ooms);
    sink->u64(sink->ctx, "num_sync_all_streams", st->num_sync_all_streams);
    sink->u64(sink->ctx, "num_device_alloc", st->num_device_alloc);
    sink->u64(sink->ctx, "num_device_free", st->num_device_free);
    /* memory_stats() shows SIZE_MAX cast to int64, i.e. -1, when unset */
    if (s->conf.max_split_size_bytes == TORCH_CONF_NO_MAX_SPLIT)
        sink->real(sink->ctx, "max_split_size", -1.0);
    else
        sink->u64(sink->ctx, "max_split_size", s->conf.max_split_size_bytes);
}

static void torch_options(const strategy *s, const strategy_stat_sink *sink)
{
    char buf[256];
    const torch_conf *c = &s->conf;
    sink->text(sink->ctx, "alloc_conf", s->conf_text);
    sink->text(sink->ctx, "backend", "native");
    if (c->max_split_size_bytes == TORCH_CONF_NO_MAX_SPLIT)
        snprintf(buf, sizeof buf, "unlimited");
    else
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)(c->max_split_size_bytes >> 20));
    sink->text(sink->ctx, "max_split_size_mb", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(c->max_non_split_rounding_bytes >> 20));
    sink->text(sink->ctx, "max_non_split_rounding_mb", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(c->large_segment_size_bytes >> 20));
    sink->text(sink->ctx, "large_segment_size_mb", buf);
    snprintf(buf, sizeof buf, "%g", c->garbage_collection_threshold);
    sink->text(sink->ctx, "garbage_collection_threshold", buf);
    sink->text(sink->ctx, "roundup_power2_divisions", torch_conf_format_divisions(c, buf, sizeof buf));
    sink->text(sink->ctx, "expandable_segments", c->expandable_segments ? "True" : "False");
    /* memory_fraction: "" when unset (no cap), which create() reads back as unset */
    buf[0] = '\0';
    if (s->set_fraction)
        snprintf(buf, sizeof buf, "%.17g", s->fraction);
    sink->text(sink->ctx, "memory_fraction", buf);
    if (c->ignored[0] != '\0') {
        snprintf(buf, sizeof buf, "%s (accepted; they do not change device memory placement)", c->ignored);
        sink->text(sink->ctx, "ignored_keys", buf);
    }
}

/* ==== Walker ==== */

/* Segments in creation (= address) order, blocks by address. An expandable
 * segment shows its mapped blocks and the unmapped holes between them, not the
 * unmapped tail of its 1⅛-capacity address range. */
static int torch_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    for (uint32_t g = s->seg_first; g != T_NONE; g = SEG(s, g)->list_next) {
        const tseg *seg = SEG(s, g);
        for (uint32_t h = seg->head; h != T_NONE; h = B(s, h)->next) {
            const tblock *b = B(s, h);
            if (b->state == BLOCK_UNMAPPED && b->next == T_NONE)
                break;
            strategy_block out = {
                .addr = b->addr,
                .size_bytes = b->size,
                .requested_bytes = (b->state == BLOCK_USED || b->state == BLOCK_PENDING) ? b->requested : 0,
                .region_addr = seg->base,
                .region = seg->seq,
                .stream = b->stream,
                .state = (strategy_block_state)b->state,
                .pool = b->pool == POOL_SMALL ? "small" : "large",
            };
            int r = v(ctx, &out);
            if (r != 0)
                return r;
        }
    }
    return 0;
}

/* ==== Checker ==== */

typedef struct check_sums {
    int64_t allocated[N_ST], active[N_ST], requested[N_ST], reserved[N_ST];
    int64_t allocation[N_ST], active_n[N_ST], segment[N_ST], isplit[N_ST], isplit_bytes[N_ST];
    uint64_t free_bytes;
    uint64_t largest_free;
    uint64_t n_free[N_POOLS], n_unmapped[N_POOLS];
    uint64_t blocks_seen;
    uint64_t pending;
} check_sums;

static void sums_add(int64_t *arr, unsigned pool, int64_t v)
{
    arr[ST_ALL] += v;
    arr[1 + pool] += v;
}

static bool large_segment_size_ok(const strategy *s, uint64_t size)
{
    /* get_allocation_size for a large request: large_segment_size, or a multiple
     * of 2 MiB of at least 10 MiB */
    return size == s->conf.large_segment_size_bytes || (size % T_ROUND_LARGE == 0 && size >= T_MIN_LARGE_ALLOC);
}

static void check_segment(const strategy *s, uint32_t g, check_sums *c, sim_report *r)
{
    const tseg *seg = SEG(s, g);
    unsigned pool = seg->pool;
    if (pool >= N_POOLS) {
        sim_report_insist(r, false, "torch: segment %u has pool %u", seg->seq, pool);
        return;
    }
    if (!seg->expandable) {
        sim_report_insist(r, pool == POOL_SMALL ? seg->size == T_SMALL_BUFFER : large_segment_size_ok(s, seg->size),
                          "torch: pool %s holds segment %u of %llu bytes, not one of its sizes",
                          pool == POOL_SMALL ? "small" : "large", seg->seq, (unsigned long long)seg->size);
        sums_add(c->segment, pool, 1);
    }
    sums_add(c->reserved, pool, (int64_t)seg->mapped);
    sim_report_insist(r, seg->head != T_NONE && slots_valid(&s->blocks, seg->head),
                      "torch: segment %u has no first block", seg->seq);
    if (seg->head == T_NONE || !slots_valid(&s->blocks, seg->head))
        return;
    sim_report_insist(r, B(s, seg->head)->prev == T_NONE, "torch: segment %u's first block has a prev", seg->seq);
    uint64_t at = seg->base, mapped = 0;
    uint32_t prev = T_NONE;
    uint64_t limit = s->blocks.n_used_hw + 1;
    for (uint32_t h = seg->head; h != T_NONE && limit-- > 0; prev = h, h = B(s, h)->next) {
        if (!sim_report_insist(r, slots_valid(&s->blocks, h), "torch: segment %u links a dead block", seg->seq))
            return;
        const tblock *b = B(s, h);
        c->blocks_seen++;
        sim_report_insist(r, b->addr == at,
                          "torch: blocks do not tile segment %u: block at %llu, expected %llu (gap or overlap)",
                          seg->seq, (unsigned long long)b->addr, (unsigned long long)at);
        sim_report_insist(r, b->size > 0 && b->size % T_MIN_BLOCK == 0,
                          "torch: block at %llu has size %llu, not a positive multiple of 512",
                          (unsigned long long)b->addr, (unsigned long long)b->size);
        sim_report_insist(r, b->prev == prev, "torch: block at %llu has a wrong prev link", (unsigned long long)b->addr);
        sim_report_insist(r, b->seg == g && b->pool == pool && b->expandable == seg->expandable &&
                                 (!seg->expandable || b->stream == seg->stream),
                          "torch: block at %llu disagrees with segment %u on segment, pool, kind or stream",
                          (unsigned long long)b->addr, seg->seq);
        at = b->addr + b->size;
        if (prev != T_NONE) {
            const tblock *p = B(s, prev);
            bool both_free = p->state == BLOCK_FREE && b->state == BLOCK_FREE;
            bool both_unmapped = p->state == BLOCK_UNMAPPED && b->state == BLOCK_UNMAPPED;
            sim_report_insist(r, !both_free && !both_unmapped,
                              "torch: adjacent %s blocks at %llu and %llu should have merged",
                              both_free ? "free" : "unmapped", (unsigned long long)p->addr,
                              (unsigned long long)b->addr);
        }
        bool split = b->prev != T_NONE || b->next != T_NONE;
        switch ((strategy_block_state)b->state) {
        case BLOCK_USED:
        case BLOCK_PENDING: {
            bool used = b->state == BLOCK_USED;
            mapped += b->size;
            sums_add(c->active, pool, (int64_t)b->size);
            sums_add(c->active_n, pool, 1);
            sums_add(c->requested, pool, (int64_t)b->requested);
            if (used) {
                sums_add(c->allocated, pool, (int64_t)b->size);
                sums_add(c->allocation, pool, 1);
            } else {
                c->pending++;
            }
            bool link = b->alloc != T_NONE && slots_valid(&s->allocs, b->alloc) && AL(s, b->alloc)->block == h &&
                        AL(s, b->alloc)->state == (used ? A_LIVE : A_PENDING);
            sim_report_insist(r, link, "torch: %s block at %llu is not owned by its allocation handle",
                              used ? "used" : "pending", (unsigned long long)b->addr);
            break;
        }
        case BLOCK_FREE:
            mapped += b->size;
            c->free_bytes += b->size;
            c->largest_free = u64_max(c->largest_free, b->size);
            c->n_free[pool]++;
            if (split && !seg->expandable) {
                sums_add(c->isplit, pool, 1);
                sums_add(c->isplit_bytes, pool, (int64_t)b->size);
            }
            break;
        case BLOCK_UNMAPPED: {
            c->n_unmapped[pool]++;
            uint64_t page = seg_page(s, pool);
            sim_report_insist(r, seg->expandable && (b->addr - seg->base) % page == 0 &&
                                     ((b->addr + b->size - seg->base) % page == 0 ||
                                      b->addr + b->size == seg->base + seg->size),
                              "torch: unmapped block at %llu is not page-aligned in an expandable segment",
                              (unsigned long long)b->addr);
            break;
        }
        default:
            sim_report_insist(r, false, "torch: block at %llu has state %u", (unsigned long long)b->addr, b->state);
        }
    }
    sim_report_insist(r, at == seg->base + seg->size,
                      "torch: blocks do not tile segment %u: they end at %llu, the segment at %llu", seg->seq,
                      (unsigned long long)at, (unsigned long long)(seg->base + seg->size));
    sim_report_insist(r, mapped == seg->mapped, "torch: segment %u maps %llu bytes, its blocks %llu", seg->seq,
                      (unsigned long long)seg->mapped, (unsigned long long)mapped);
}

typedef struct tree_check {
    unsigned char *seen;
    uint64_t nodes;
    uint64_t budget;
    const tblock *last;
    bool order_ok;
    /* free bins only: the bin walked, the pool's set, and per index entry the
     * blocks found and the bins holding them */
    uint32_t bin;
    const tfree *f;
    uint64_t *counts;
    uint64_t *bits;
} tree_check;

/* In-order walk of one treap: a bin of a free set (tc->f set) or an unmapped set. */
static void check_tree_at(const strategy *s, uint32_t t, unsigned pool, tree_check *tc, sim_report *r)
{
    bool free_set = tc->f != NULL;
    if (t == T_NONE)
        return;
    if (tc->budget == 0 || !slots_valid(&s->blocks, t)) {
        sim_report_insist(r, false, "torch: %s set of pool %u links a dead block or loops", free_set ? "free" : "unmapped",
                          pool);
        tc->budget = 0;
        return;
    }
    tc->budget--;
    const tblock *n = B(s, t);
    check_tree_at(s, n->left, pool, tc, r);
    if (tc->seen[t]) {
        sim_report_insist(r, false, "torch: block at %llu is in a set twice", (unsigned long long)n->addr);
    }
    tc->seen[t] = 1;
    tc->nodes++;
    sim_report_insist(r, n->state == (free_set ? BLOCK_FREE : BLOCK_UNMAPPED) && n->pool == pool,
                      "torch: the %s set of the %s pool holds a block at %llu that is not one of its %s blocks",
                      free_set ? "free" : "unmapped", pool == POOL_SMALL ? "small" : "large",
                      (unsigned long long)n->addr, free_set ? "free" : "unmapped");
    if (tc->last != NULL && !blk_less(tc->last, n, !free_set))
        tc->order_ok = false;
    tc->last = n;
    if (free_set) {
        sim_report_insist(r, size_bin(n->size) == tc->bin,
                          "torch: free block at %llu of %llu bytes sits in size bin %u, its size belongs in bin %u",
                          (unsigned long long)n->addr, (unsigned long long)n->size, tc->bin, size_bin(n->size));
        uint32_t i = fs_search(tc->f, n->stream);
        if (i < tc->f->n_ent && tc->f->ent[i].stream == n->stream) {
            tc->counts[i]++;
            tc->bits[(size_t)i * FB_WORDS + tc->bin / 64] |= (uint64_t)1 << (tc->bin % 64);
        } else {
            sim_report_insist(r, false, "torch: free block at %llu is on stream %u, which the stream index of the %s pool lacks",
                              (unsigned long long)n->addr, n->stream, pool == POOL_SMALL ? "small" : "large");
        }
    }
    check_tree_at(s, n->right, pool, tc, r);
}

/* A pool's free set: every bin's treap, and the stream index against them. */
static void check_free_set(const strategy *s, unsigned pool, tree_check *tc, sim_report *r)
{
    const tfree *f = &s->free_set[pool];
    const char *pname = pool == POOL_SMALL ? "small" : "large";
    for (uint32_t i = 1; i < f->n_ent; i++)
        sim_report_insist(r, f->ent[i - 1].stream < f->ent[i].stream,
                          "torch: the stream index of the %s pool is out of order at stream %u", pname,
                          f->ent[i].stream);
    tc->f = f;
    tc->counts = calloc((size_t)f->n_ent + 1, sizeof *tc->counts);
    tc->bits = calloc(((size_t)f->n_ent + 1) * FB_WORDS, sizeof *tc->bits);
    if (tc->counts == NULL || tc->bits == NULL) {
        free(tc->counts);
        free(tc->bits);
        tc->f = NULL;
        return;
    }
    bool order_ok = true;
    for (uint32_t bin = 0; bin < FB_BINS; bin++) {
        tc->bin = bin;
        tc->last = NULL;
        tc->order_ok = true;
        check_tree_at(s, f->root[bin], pool, tc, r);
        order_ok = order_ok && tc->order_ok;
    }
    sim_report_insist(r, order_ok, "torch: the free set of pool %u is out of (stream, size, address) order", pool);
    for (uint32_t i = 0; i < f->n_ent; i++) {
        const tstream *e = &f->ent[i];
        sim_report_insist(r, e->n == tc->counts[i],
                          "torch: the stream index of the %s pool counts %u free blocks of stream %u, its bins hold %llu",
                          pname, e->n, e->stream, (unsigned long long)tc->counts[i]);
        uint64_t summary = 0;
        bool same = true;
        for (uint32_t w = 0; w < FB_WORDS; w++) {
            uint64_t want = tc->bits[(size_t)i * FB_WORDS + w];
            same = same && e->bits[w] == want;
            if (want != 0)
                summary |= (uint64_t)1 << w;
        }
        sim_report_insist(r, same && e->summary == summary,
                          "torch: the bin bitmap of stream %u in the %s pool disagrees with the bins holding its blocks",
                          e->stream, pname);
    }
    free(tc->counts);
    free(tc->bits);
    tc->f = NULL;
}

static void check_counter(sim_report *r, const char *name, const tstat *arr, const int64_t *sum)
{
    static const char *const types[N_ST] = {"all", "small_pool", "large_pool"};
    for (int t = 0; t < N_ST; t++) {
        sim_report_insist(r, arr[t].current == sum[t], "torch: %s.%s.current is %lld, the blocks sum to %lld", name,
                          types[t], (long long)arr[t].current, (long long)sum[t]);
        sim_report_insist(r, arr[t].peak >= arr[t].current, "torch: %s.%s peak %lld < current %lld", name, types[t],
                          (long long)arr[t].peak, (long long)arr[t].current);
    }
}

static void torch_check(const strategy *s, sim_report *r)
{
    check_sums c;
    memset(&c, 0, sizeof c);
    uint64_t nseg = 0;
    for (uint32_t g = s->seg_first; g != T_NONE && nseg <= s->segs.n_used_hw; g = SEG(s, g)->list_next, nseg++) {
        if (!sim_report_insist(r, slots_valid(&s->segs, g), "torch: the segment list links a dead segment"))
            break;
        check_segment(s, g, &c, r);
    }
    sim_report_insist(r, nseg == s->segs.live, "torch: %llu segments listed, %u live", (unsigned long long)nseg,
                      s->segs.live);
    sim_report_insist(r, c.blocks_seen == s->blocks.live, "torch: %llu blocks in segments, %u block records live",
                      (unsigned long long)c.blocks_seen, s->blocks.live);

    /* every free block in its pool's set exactly once, and nothing else there */
    tree_check tc = {.seen = calloc((size_t)s->blocks.n_used_hw + 1, 1)};
    if (tc.seen != NULL) {
        for (unsigned p = 0; p < N_POOLS; p++) {
            for (int kind = 0; kind < 2; kind++) {
                tc.nodes = 0;
                tc.budget = (uint64_t)s->blocks.n_used_hw + 1;
                tc.last = NULL;
                tc.order_ok = true;
                if (kind == 0) {
                    check_free_set(s, p, &tc, r);
                } else {
                    check_tree_at(s, s->unmapped_root[p], p, &tc, r);
                    sim_report_insist(r, tc.order_ok, "torch: the unmapped set of pool %u is out of (stream, address) order",
                                      p);
                }
                uint64_t expect = kind == 0 ? c.n_free[p] : c.n_unmapped[p];
                sim_report_insist(r, tc.nodes == expect,
                                  "torch: the %s set of the %s pool holds %llu blocks, its segments %llu %s blocks",
                                  kind == 0 ? "free" : "unmapped", p == POOL_SMALL ? "small" : "large",
                                  (unsigned long long)tc.nodes, (unsigned long long)expect,
                                  kind == 0 ? "free" : "unmapped");
            }
        }
        for (uint32_t h = 0; h < s->blocks.n_used_hw; h++) {
            if (!slots_valid(&s->blocks, h))
                continue;
            const tblock *b = B(s, h);
            if ((b->state == BLOCK_FREE || b->state == BLOCK_UNMAPPED) && !tc.seen[h])
                sim_report_insist(r, false, "torch: %s block at %llu is missing from its pool's set",
                                  b->state == BLOCK_FREE ? "free" : "unmapped", (unsigned long long)b->addr);
        }
        free(tc.seen);
    }

    /* counters equal the sums */
    const tstats *st = &s->st;
    check_counter(r, "allocated_bytes", st->allocated_bytes, c.allocated);
    check_counter(r, "reserved_bytes", st->reserved_bytes, c.reserved);
    check_counter(r, "active_bytes", st->active_bytes, c.active);
    check_counter(r, "requested_bytes", st->requested_bytes, c.requested);
    check_counter(r, "allocation", st->allocation, c.allocation);
    check_counter(r, "active", st->active, c.active_n);
    check_counter(r, "segment", st->segment, c.segment);
    check_counter(r, "inactive_split", st->inactive_split, c.isplit);
    check_counter(r, "inactive_split_bytes", st->inactive_split_bytes, c.isplit_bytes);
    sim_report_insist(r, st->oversize_allocations.peak >= st->oversize_allocations.current &&
                             st->oversize_segments.peak >= st->oversize_segments.current &&
                             st->oversize_allocations.current >= 0 && st->oversize_segments.current >= 0,
                      "torch: oversize counters are negative or above their peaks");
    sim_report_insist(r, s->free_bytes == c.free_bytes, "torch: free bytes counter %llu, free blocks sum to %llu",
                      (unsigned long long)s->free_bytes, (unsigned long long)c.free_bytes);
    sim_report_insist(r, s->largest_dirty || s->largest == c.largest_free,
                      "torch: largest free block counter %llu, the largest free block is %llu",
                      (unsigned long long)s->largest, (unsigned long long)c.largest_free);
    sim_report_insist(r, s->n_pending == c.pending, "torch: %u pending frees counted, %llu pending blocks",
                      s->n_pending, (unsigned long long)c.pending);
    /* one map call can be undone by several unmap calls (expandable segments) */
    sim_report_insist(r, s->conf.expandable_segments || st->num_device_alloc >= st->num_device_free,
                      "torch: more device frees than allocs");
    /* the fraction check compares the segment size, not the pages an expandable
     * segment maps (alloc_block), so only cudaMalloc segments respect the cap */
    sim_report_insist(r, !s->set_fraction || s->conf.expandable_segments || reserved_now(s) <= s->allowed_bytes,
                      "torch: reserved %llu exceeds the memory fraction cap %llu",
                      (unsigned long long)reserved_now(s), (unsigned long long)s->allowed_bytes);
    sim_report_insist(r, !device_proc_alive(s->dev, s->proc) || device_proc_held(s->dev, s->proc) == reserved_now(s),
                      "torch: device holds %llu for the process, reserved_bytes is %llu",
                      (unsigned long long)device_proc_held(s->dev, s->proc), (unsigned long long)reserved_now(s));

    /* every allocation handle that owns a block points at a block that points back */
    for (uint32_t a = 0; a < s->allocs.n_used_hw; a++) {
        if (!slots_valid(&s->allocs, a))
            continue;
        const talloc *al = AL(s, a);
        if (al->block == T_NONE)
            continue;
        bool ok = slots_valid(&s->blocks, al->block) && B(s, al->block)->alloc == a &&
                  B(s, al->block)->state == (al->state == A_LIVE ? BLOCK_USED : BLOCK_PENDING);
        sim_report_insist(r, ok, "torch: allocation handle %u does not own the block it names", a);
    }
}

/* ==== Test hook (torch_internal.h) ==== */

static uint32_t find_block(const strategy *s, strategy_block_state st, uint64_t min_size)
{
    for (uint32_t h = 0; h < s->blocks.n_used_hw; h++)
        if (slots_valid(&s->blocks, h) && B(s, h)->state == st && B(s, h)->size >= min_size)
            return h;
    return T_NONE;
}

bool torch_debug_corrupt(strategy *s, torch_corruption kind)
{
    uint32_t h;
    switch (kind) {
    case TORCH_CORRUPT_TILE_GAP:
        if ((h = find_block(s, BLOCK_USED, 1024)) == T_NONE)
            return false;
        B(s, h)->size -= T_MIN_BLOCK;
        return true;
    case TORCH_CORRUPT_UNMERGED_FREE: {
        if ((h = find_block(s, BLOCK_FREE, 2 * T_MIN_BLOCK)) == T_NONE)
            return false;
        uint32_t n = blk_take(s);
        if (n == T_NONE)
            return false;
        pool_erase(s, h);
        tblock *b = B(s, h);
        uint64_t half = units_round_down(b->size / 2, T_MIN_BLOCK);
        blk_init(s, n, b->addr + half, b->size - half, b->seg, BLOCK_FREE);
        blk_splice(s, n, h, B(s, h)->next);
        B(s, h)->size = half;
        pool_insert(s, h);
        pool_insert(s, n);
        return true;
    }
    case TORCH_CORRUPT_FREE_NOT_IN_SET:
        if ((h = find_block(s, BLOCK_FREE, 0)) == T_NONE)
            return false;
        tree_erase(s, &s->free_set[B(s, h)->pool].root[size_bin(B(s, h)->size)], false, h);
        return true;
    case TORCH_CORRUPT_USED_IN_SET:
        if ((h = find_block(s, BLOCK_USED, 0)) == T_NONE)
            return false;
        tree_insert(s, &s->free_set[B(s, h)->pool].root[size_bin(B(s, h)->size)], false, h);
        return true;
    case TORCH_CORRUPT_WRONG_POOL:
        if (s->seg_first == T_NONE)
            return false;
        SEG(s, s->seg_first)->pool ^= 1;
        return true;
    case TORCH_CORRUPT_ALLOCATED_COUNTER:
        s->st.allocated_bytes[ST_ALL].current += 512;
        return true;
    case TORCH_CORRUPT_RESERVED_COUNTER:
        s->st.reserved_bytes[ST_ALL].current += 512;
        return true;
    case TORCH_CORRUPT_ACTIVE_COUNTER:
        s->st.active_bytes[ST_ALL].current += 512;
        return true;
    case TORCH_CORRUPT_REQUESTED_COUNTER:
        s->st.requested_bytes[ST_ALL].current += 1;
        return true;
    case TORCH_CORRUPT_INACTIVE_SPLIT:
        s->st.inactive_split_bytes[ST_ALL].current += 512;
        return true;
    case TORCH_CORRUPT_PEAK:
        s->st.allocated_bytes[ST_ALL].peak = s->st.allocated_bytes[ST_ALL].current - 1;
        return true;
    case TORCH_CORRUPT_FREE_BYTES:
        s->free_bytes += 512;
        return true;
    case TORCH_CORRUPT_SET_ORDER: {
        /* the second free block of a pool moves next to the first, in its bin,
         * then its key drops below the first's */
        for (unsigned p = 0; p < N_POOLS; p++) {
            scratch_collect(s, p);
            if (s->scratch_len < 2)
                continue;
            tblock *lo = B(s, s->scratch[0]), *hi = B(s, s->scratch[1]);
            tree_erase(s, &s->free_set[p].root[size_bin(hi->size)], false, s->scratch[1]);
            hi->stream = lo->stream;
            hi->size = lo->size;
            hi->addr = lo->addr + 1;
            tree_insert(s, &s->free_set[p].root[size_bin(lo->size)], false, s->scratch[1]);
            hi->addr = lo->addr - 1;
            return true;
        }
        return false;
    }
    case TORCH_CORRUPT_WRONG_BIN: {
        if ((h = find_block(s, BLOCK_FREE, 0)) == T_NONE)
            return false;
        uint32_t *roots = s->free_set[B(s, h)->pool].root;
        uint32_t bin = size_bin(B(s, h)->size);
        tree_erase(s, &roots[bin], false, h);
        tree_insert(s, &roots[bin ^ 1], false, h);
        return true;
    }
    case TORCH_CORRUPT_BIN_BITMAP:
    case TORCH_CORRUPT_BIN_SUMMARY:
    case TORCH_CORRUPT_STREAM_COUNT:
    case TORCH_CORRUPT_STREAM_MISSING: {
        if ((h = find_block(s, BLOCK_FREE, 0)) == T_NONE)
            return false;
        tfree *f = &s->free_set[B(s, h)->pool];
        tstream *e = fs_entry(f, B(s, h)->stream);
        if (e == NULL)
            return false;
        uint32_t bin = size_bin(B(s, h)->size);
        if (kind == TORCH_CORRUPT_BIN_BITMAP)
            e->bits[bin / 64] ^= (uint64_t)1 << (bin % 64);
        else if (kind == TORCH_CORRUPT_BIN_SUMMARY)
            e->summary ^= (uint64_t)1 << 63; /* past the last word */
        else if (kind == TORCH_CORRUPT_STREAM_COUNT)
            e->n++;
        else
            fs_entry_drop(f, e);
        return true;
    }
    case TORCH_CORRUPT_STREAM_ORDER:
        for (unsigned p = 0; p < N_POOLS; p++) {
            tfree *f = &s->free_set[p];
            if (f->n_ent < 2)
                continue;
            tstream t = f->ent[0];
            f->ent[0] = f->ent[1];
            f->ent[1] = t;
            return true;
        }
        return false;
    case TORCH_CORRUPT_HANDLE:
        if ((h = find_block(s, BLOCK_USED, 0)) == T_NONE)
            return false;
        AL(s, B(s, h)->alloc)->block = T_NONE;
        return true;
    case TORCH_CORRUPT_COUNT:
        break;
    }
    return false;
}

/* The torch strategy's options, described once (strategy_option, sim/strategy.h):
 * the keys torch's create() reads and its options() writes back. */
static const strategy_option torch_conf_options[2] = {
    {.key = "alloc_conf",
     .cli = "alloc-conf",
     .kind = STRATEGY_OPTION_TEXT,
     .default_text = "PyTorch's, or the recording's own",
     .example = "expandable_segments:True",
     .help = "PYTORCH_CUDA_ALLOC_CONF, key:value,... (max_split_size_mb, expandable_segments, ...)"},
    {.key = "memory_fraction",
     .cli = "memory-fraction",
     .kind = STRATEGY_OPTION_REAL,
     .default_text = "none, the whole device",
     .example = "0.5",
     .help = "torch.cuda.set_per_process_memory_fraction(F): reserved memory stays within F of total"},
};

static const strategy_ops TORCH_OPS = {
    .name = "torch",
    .summary = "PyTorch CUDA caching allocator (native backend), PYTORCH_CUDA_ALLOC_CONF options",
    .opts = torch_conf_options,
    .n_opts = 2,
    .create = torch_create,
    .destroy = torch_destroy,
    .alloc = torch_alloc,
    .free = torch_free,
    .free_ready = torch_free_ready,
    .empty_cache = torch_empty_cache,
    .sample = torch_sample,
    .stats = torch_stats,
    .options = torch_options,
    .check = torch_check,
    .walk = torch_walk,
};

const strategy_ops *torch_strategy(void)
{
    return &TORCH_OPS;
}
