/* torch_types.h — private to the `torch` strategy (torch.c, torch_events.c, torch_pools.c, torch_segments.c, torch_expandable.c,
 * torch_seed.c, torch_freeset.c, torch_check.c, torch_report.c, torch_oom.c): its constants, its records (blocks, segments,
 * allocation handles, DeviceStats counters, the free sets' storage), `struct
 * strategy`, the small inline record helpers, and the functions its files share.
 * Nothing outside strategies/torch*.c includes it. */
#ifndef GPUSIM_TORCH_TYPES_H
#define GPUSIM_TORCH_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/grow.h"
#include "sim/strategy.h"
#include "slots.h"
#include "torch_conf.h"
#include "torch_version.h"

/* ==== Constants (docs/allocators.md §2.1) ==== */
#define T_MIN_BLOCK ((uint64_t)512)            /* kMinBlockSize */
#define T_SMALL_SIZE ((uint64_t)1 << 20)       /* kSmallSize: largest small request */
#define T_SMALL_BUFFER ((uint64_t)2 << 20)     /* kSmallBuffer: small segment / page */
#define T_MIN_LARGE_ALLOC ((uint64_t)10 << 20) /* kMinLargeAlloc */
#define T_ROUND_LARGE ((uint64_t)2 << 20)      /* kRoundLarge */
#define T_ONE_EIB ((uint64_t)1 << 60)          /* allocate(): "more than 1EB" */
#define T_NONE SLOTS_NONE

/* A pool index (tblock.pool, tseg.pool) is 2 · pair + kind: kind POOL_SMALL or
 * POOL_LARGE, pair 0 the default pools (DeviceCachingAllocator's small_blocks and
 * large_blocks), pair k > 0 a private pool (PrivatePool: CUDA graphs, MemPool). */
enum { POOL_SMALL = 0, POOL_LARGE = 1, N_POOLS = 2 };
#define T_MAX_PAIRS 32768u /* pool indices fit uint16 */
enum { ST_ALL = 0, ST_SMALL = 1, ST_LARGE = 2, N_ST = 3 };

/* ==== Records ==== */

/* One block. Valid in every state: addr, size, seg, prev/next (neighbours in the
 * segment, T_NONE at its ends), stream, pool, state. requested and alloc are set for
 * BLOCK_USED and BLOCK_PENDING only. left/right are treap links, meaningful
 * while the block sits in a set: BLOCK_FREE blocks are in free_set[pool], BLOCK_UNMAPPED
 * ones (expandable segments) in unmapped_root[pool]; USED and PENDING blocks in neither.
 * gc_base is the pool's get_free_block counter when the block entered its set;
 * bin its size bin there (torch_fs_bin, kept so that leaving the set need not recompute it);
 * pri its treap priority, written when it entered its treap (the top 16 bits of a
 * hash of its handle, kept so that a tree step reads it instead of rehashing). */
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
    uint8_t expandable;
    uint16_t pool; /* 2 · pool pair + kind (torch_pool_index): the pair 0 is the default pools */
    uint16_t bin; /* the size bin it went into (torch_fs_insert), while BLOCK_FREE */
    uint16_t pri; /* treap priority, while in a set */
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
    uint16_t pool;
    uint8_t expandable;
} tseg;

/* A_PENDING: freed by the program, its block waits on its event (record_stream);
 * A_READY: the engine reached ready_t (free_ready) but PyTorch has not polled the
 * event yet (process_events at the next malloc, or a synchronize); A_DONE: a
 * synchronize completed it before ready_t, free_ready is still to come. */
/* A_PARKED: freed with stream uses while a pool was routed (a capture underway):
 * PyTorch records its events only once no capture is underway
 * (needs_events_deferred_until_no_capture); its block waits, in no queue. */
enum { A_LIVE = 0, A_PENDING = 1, A_DONE = 2, A_READY = 3, A_PARKED = 4 };

/* One allocation the engine holds: what every allocation has, 8 bytes, so that the
 * free path's lookup of its block touches a dense table. block is T_NONE for a
 * zero-byte allocation and for a deferred free that a synchronize completed early
 * (A_DONE). The links of a deferred free are its tdefer, beside it. */
typedef struct talloc {
    uint32_t block;
    uint8_t state;
    uint8_t captured;          /* allocated while a pool was routed: its stream uses count as the capture's */
    uint8_t parked_ready;      /* A_PARKED: its free_ready came already */
} talloc;
_Static_assert(sizeof(talloc) == 8, "an allocation record is 8 bytes");

/* The deferred-free part of allocation h (strategy.defer[h], written only once it is
 * freed with stream uses). Pending and ready allocations that still own a block are
 * linked in free order through q_next / q_prev (what a synchronize completes). One
 * whose free names the stream its event is recorded on (free_wait) is also queued on
 * that stream through w_next (PyTorch's per-stream event deque: record order); a
 * ready one that waits on nothing, or heads its stream's queue, is on the stack of
 * frees the next process_events completes (c_next). */
typedef struct tdefer {
    uint32_t q_next, q_prev;
    uint32_t w_next, c_next;
    uint32_t wait;             /* index in strategy.waits, or T_NONE */
    uint64_t seq;              /* pending: the deferred free's number, in free order */
} tdefer;

/* A ready free and its number (process_events completes them in free order). */
typedef struct tdue {
    uint64_t seq;
    uint32_t h;
} tdue;

/* The deferred frees recorded on one stream, in record order. */
typedef struct twait {
    uint32_t stream;
    uint32_t head, tail;
} twait;

/* One Stat of DeviceStats (c10/core/CachingDeviceAllocator.h). Its fourth
 * counter, freed, is allocated - current (every change moves current and one of
 * allocated, freed by the same amount): stat_freed, so a decrease is one update. */
typedef struct tstat {
    int64_t current, peak, allocated;
} tstat;

typedef struct tstats {
    tstat allocation[N_ST], segment[N_ST], active[N_ST], inactive_split[N_ST];
    tstat allocated_bytes[N_ST], reserved_bytes[N_ST], active_bytes[N_ST];
    tstat inactive_split_bytes[N_ST], requested_bytes[N_ST];
    tstat oversize_allocations, oversize_segments;
    uint64_t num_alloc_retries, num_ooms, num_sync_all_streams, num_device_alloc, num_device_free;
} tstats;

/* Free sets (one per pool; the operations are torch_freeset.h). Bin b holds the
 * free blocks whose size maps to b (torch_fs_bin), in a treap ordered by (stream, size, address); each stream with
 * free blocks in the pool has an entry in an index sorted by stream, with a
 * bitmap of the bins holding its blocks (TLSF's occupancy bitmaps: a 64-bit
 * summary over FB_WORDS words). */
#define FB_SL 5u                              /* log2 of the bins per power of two */
#define FB_SUB (1u << FB_SL)                  /* bins per power of two */
#define FB_BINS ((64u - 9u - FB_SL + 1u) * FB_SUB) /* sizes up to 2^64 in 512 B units */
#define FB_WORDS ((FB_BINS + 63u) / 64u)
_Static_assert(FB_BINS <= 65536, "a bin number fits tblock.bin");
#define FB_NONE UINT32_MAX
#define FB_KEEP_EMPTY 8u                      /* empty stream entries kept up to this many */
#define FB_HINTS 4u                           /* stream index hints (a power of two) */
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
    uint32_t hint[FB_HINTS];  /* per stream mod FB_HINTS, the entry found last */
    const slots *blocks;      /* the block records the links name (torch_fs_init) */
    uint64_t bytes;           /* sum of the sizes of the blocks in the set */
    uint64_t largest;         /* largest size in the set, valid unless largest_dirty */
    bool largest_dirty;       /* the block holding it left the set: recompute */
    uint64_t *const *born;    /* NULL: ties by address; else by (*born)[handle] (2.12) */
} tfree;

/* A list of block handles (the release paths collect a free set into one). */
typedef struct tlist {
    uint32_t *h;
    uint32_t len, cap;
} tlist;

/* One pool pair: the default pools (pair 0) or one private pool (PrivatePool,
 * CUDACachingAllocator.cpp 2.6 lines 822-842), with its own free sets and unmapped
 * ranges per kind, and what the trace did with it. */
typedef struct tpair {
    tfree fs[N_POOLS];
    uint32_t unmapped_root[N_POOLS]; /* treaps by (stream, address) */
    int64_t gc_counter[N_POOLS];     /* get_free_blocks_call_count of each BlockPool */
    uint64_t id;                     /* the trace's pool id; 0 for the default pools */
    uint32_t uses;                   /* use_count */
    uint32_t segments;               /* segment records of the pair */
    bool live;                       /* a private pool in graph_pools (else a free slot) */
    bool freeable;                   /* in graph_pools_freeable: every use released */
    bool use_on_oom, no_split;       /* MemPool options */
    uint64_t reserved, peak_reserved, allocated, peak_allocated;
} tpair;

/* One entry of captures_underway: allocations on stream (or on every stream)
 * go to pair, in the order the scopes began (get_pool takes the first match). */
typedef struct troute {
    uint32_t pair;
    uint32_t stream;
    bool all_streams;
    bool capture;
} troute;

struct strategy {
    device *dev;
    uint32_t proc;
    uint64_t capacity_bytes;
    uint64_t context_bytes;
    torch_conf conf;
    torch_rules rules;         /* the PyTorch release modelled (torch_version.h) */
    char conf_text[256];
    bool set_fraction;
    double fraction;
    uint64_t allowed_bytes;
    bool gc_on;
    bool has_divisions;        /* some roundup_power2_divisions entry is set (else round_size skips them) */

    slots blocks, segs, allocs;
    tdefer *defer;             /* defer[h]: allocation h's deferred-free links; covers every handle taken */
    uint32_t cap_defer;
    tpair **pairs;             /* pairs[0]: the default pools; then private pools (torch_pools.c) */
    uint32_t n_pairs, cap_pairs;
    troute *routes;            /* captures_underway */
    uint32_t n_routes, cap_routes;
    uint32_t *parked;          /* needs_events_deferred_until_no_capture: allocation handles */
    uint32_t n_parked, cap_parked;
    uint64_t largest;          /* largest BLOCK_FREE size (every pool), as of the last operation */
    uint32_t seg_first, seg_last;
    uint32_t seg_seq;
    uint32_t n_pending;        /* allocations in A_PENDING or A_READY that still own a block */
    uint32_t n_ready;          /* of those, in A_READY */
    uint32_t q_head, q_tail;   /* the list of those allocations, in free order */
    uint32_t c_head;           /* the ready ones process_events completes (a stack) */
    twait *waits;              /* one queue per stream a free was recorded on (grows as they appear) */
    uint32_t n_waits, cap_waits;
    uint64_t free_seq;         /* deferred frees so far */
    tdue *due;                 /* process_events' scratch */
    uint32_t cap_due;
    bool host_oom;             /* a side table could not grow; reported by alloc */

    tlist scratch;             /* handles collected by the release paths */

    /* 2.12's tie order (torch_rules.tie_by_creation): born[h] is the number block h
     * took when PyTorch would have constructed it (blk_take), from born_seq; NULL
     * otherwise */
    uint64_t *born;
    uint32_t born_cap;
    uint64_t born_seq;

    tstats st;
};

/* The pool index of kind in pair, and back. */
static inline unsigned pool_index(uint32_t pair, unsigned kind)
{
    return 2u * pair + kind;
}

static inline unsigned pool_kind(unsigned pool)
{
    return pool & 1u;
}

static inline uint32_t pool_pair(unsigned pool)
{
    return pool >> 1;
}

/* The free set, unmapped-range treap and GC counter of a pool index. */
static inline tfree *FS(const strategy *s, unsigned pool)
{
    return &s->pairs[pool >> 1]->fs[pool & 1u];
}

static inline uint32_t *UNMAPPED(const strategy *s, unsigned pool)
{
    return &s->pairs[pool >> 1]->unmapped_root[pool & 1u];
}

static inline int64_t *GC_COUNTER(const strategy *s, unsigned pool)
{
    return &s->pairs[pool >> 1]->gc_counter[pool & 1u];
}

/* A pair's own reserved and allocated bytes (the per-pool figures of strategy_pool_info). */
static inline void pair_reserved(strategy *s, unsigned pool, int64_t delta)
{
    tpair *p = s->pairs[pool >> 1];
    p->reserved += (uint64_t)delta;
    if (p->reserved > p->peak_reserved)
        p->peak_reserved = p->reserved;
}

static inline void pair_allocated(strategy *s, unsigned pool, int64_t delta)
{
    tpair *p = s->pairs[pool >> 1];
    p->allocated += (uint64_t)delta;
    if (p->allocated > p->peak_allocated)
        p->peak_allocated = p->allocated;
}

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
    return (talloc *)(void *)s->allocs.data + h;
}

static inline tdefer *DF(const strategy *s, uint32_t h)
{
    return &s->defer[h];
}

/* A fresh allocation handle, its record unwritten, with room for its deferred-free
 * links; T_NONE when host memory is out. */
static inline uint32_t alloc_take(strategy *s)
{
    uint32_t ah = slots_take_uninit(&s->allocs);
    if (ah != T_NONE && ah >= s->cap_defer && !SIM_GROW(s->defer, (uint64_t)ah + 1, s->cap_defer)) {
        slots_put(&s->allocs, ah);
        return T_NONE;
    }
    return ah;
}

static inline uint64_t u64_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static inline uint64_t u64_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}


/* ==== Statistics (docs/allocators.md §2.12; increase_stat/decrease_stat) ==== */

static inline int64_t i64_max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* The peak by a max, not a branch: whether a change sets a new peak is data-dependent. */
static inline void stat_up(tstat *x, uint64_t amount)
{
    x->current += (int64_t)amount;
    x->peak = i64_max(x->peak, x->current);
    x->allocated += (int64_t)amount;
}

static inline void stat_down(tstat *x, uint64_t amount)
{
    x->current -= (int64_t)amount;
}

static inline int64_t stat_freed(const tstat *x)
{
    return x->allocated - x->current;
}

/* The pool's entry and the aggregate one (get_stat_types_for_pool). An array
 * keeps the pools' entries whole and of arr[ST_ALL] only its peak: the
 * aggregate's current and allocated are the pools' sums (stat_of), so each
 * update writes one entry and the aggregate's peak. */
static inline void stats_up(tstat *arr, unsigned pool, uint64_t amount)
{
    stat_up(&arr[1 + pool_kind(pool)], amount);
    arr[ST_ALL].peak = i64_max(arr[ST_ALL].peak, arr[ST_SMALL].current + arr[ST_LARGE].current);
}

static inline void stats_down(tstat *arr, unsigned pool, uint64_t amount)
{
    stat_down(&arr[1 + pool_kind(pool)], amount);
}

/* stats_up (delta > 0) or stats_down (delta < 0) by a signed delta, without a
 * branch on its sign or on the peaks: a decrease leaves every peak as it was
 * (current only falls below it) and allocated as it was (freed = allocated −
 * current grows instead), and a zero delta changes nothing. For the hot paths,
 * where the sign and the peak tests are data-dependent. */
static inline void stats_add(tstat *arr, unsigned pool, int64_t delta)
{
    tstat *x = &arr[1 + pool_kind(pool)];
    x->current += delta;
    x->peak = i64_max(x->peak, x->current);
    x->allocated += i64_max(delta, 0);
    arr[ST_ALL].peak = i64_max(arr[ST_ALL].peak, arr[ST_SMALL].current + arr[ST_LARGE].current);
}

/* Entry t (ST_ALL, ST_SMALL, ST_LARGE) of an array as DeviceStats has it. */
static inline tstat stat_of(const tstat *arr, unsigned t)
{
    if (t != ST_ALL)
        return arr[t];
    return (tstat){.current = arr[ST_SMALL].current + arr[ST_LARGE].current,
                   .peak = arr[ST_ALL].peak,
                   .allocated = arr[ST_SMALL].allocated + arr[ST_LARGE].allocated};
}

static inline uint64_t reserved_now(const strategy *s)
{
    return (uint64_t)stat_of(s->st.reserved_bytes, ST_ALL).current;
}

/* ==== Block records ==== */

/* A block record's handle; its bytes are stale until blk_init writes them all. */
static inline uint32_t blk_take(strategy *s)
{
    uint32_t h = slots_take_uninit(&s->blocks);
    if (h == T_NONE) {
        s->host_oom = true;
    } else if (s->born != NULL) {
        /* a new Block: its creation number (2.12's tie order) */
        if (h >= s->born_cap && !SIM_GROW(s->born, (uint64_t)h + 1, s->born_cap)) {
            slots_put(&s->blocks, h);
            s->host_oom = true;
            return T_NONE;
        }
        s->born[h] = ++s->born_seq;
    }
    return h;
}

static inline bool blk_is_split(const strategy *s, uint32_t h)
{
    const tblock *b = B(s, h);
    /* both links T_NONE (all ones) exactly when their AND is: one test, no branch */
    return (b->prev & b->next) != T_NONE;
}

/* The mapping granularity of an expandable segment of this pool. */
static inline uint64_t seg_page(const strategy *s, unsigned pool)
{
    return pool_kind(pool) == POOL_SMALL ? T_SMALL_BUFFER : s->conf.large_segment_size_bytes;
}

/* A fresh block record of segment seg, on its segment's stream, pool and kind as
 * the caller gives them (from a record of the same segment, or the segment's); h
 * must come from blk_take (pointers into the table may have moved). */
static inline void blk_write(strategy *s, uint32_t h, uint64_t addr, uint64_t size, uint32_t seg,
                             strategy_block_state st, uint32_t stream, uint16_t pool, uint8_t expandable)
{
    *B(s, h) = (tblock){.addr = addr, .size = size, .prev = T_NONE, .next = T_NONE, .left = T_NONE,
                        .right = T_NONE, .seg = seg, .stream = stream, .alloc = T_NONE,
                        .state = (uint8_t)st, .pool = pool, .expandable = expandable};
}

/* A fresh block record of segment seg (its stream, pool and kind read there). */
static inline void blk_init(strategy *s, uint32_t h, uint64_t addr, uint64_t size, uint32_t seg,
                            strategy_block_state st)
{
    const tseg *g = SEG(s, seg);
    blk_write(s, h, addr, size, seg, st, g->stream, g->pool, g->expandable);
}

/* Link h between before and after (Block::splice). */
static inline void blk_splice(strategy *s, uint32_t h, uint32_t before, uint32_t after)
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

/* ==== Shared between the files of the strategy ==== */

/* torch_expandable.c: unmap the whole free pages inside free expandable block h,
 * giving back its address range when nothing of it stays mapped (release_blocks);
 * a free block of ≥ size, out of its set, mapping pages as needed, or T_NONE
 * (try_allocate_expandable_block). */
void torch_expandable_unmap(strategy *s, uint32_t h);
uint32_t torch_expandable_alloc(strategy *s, unsigned pool, uint32_t stream, uint64_t size);

/* torch_oom.c: the OOM report of a request of size bytes (rounded) whose segment
 * would have been alloc_size bytes. */
void torch_fill_oom(strategy *s, uint64_t size, uint64_t alloc_size, strategy_oom *oom);

/* torch.c: free_block (the block returns to its pool, merged with its free neighbours);
 * the largest free block of every pool. */
void torch_free_block(strategy *s, uint32_t h);
uint64_t torch_largest_free(strategy *s);

/* torch_events.c: the deferred frees. push: ah (freed with stream uses, its block
 * pending) joins the list in free order; process_events: the ready ones complete
 * (at malloc, no capture underway); synchronize: every one completes
 * (synchronize_and_free_events); free_ready and free_wait are the ops table's. */
void torch_pending_push(strategy *s, uint32_t ah);
void torch_process_events(strategy *s);
void torch_synchronize(strategy *s);
void torch_free_ready(strategy *s, strategy_handle h);
void torch_free_wait(strategy *s, strategy_handle h, uint32_t stream);

/* torch_pools.c: the pool pairs (the default pools are pair 0, made by
 * torch_pools_init), captures_underway and the ops table's pool entries. */
bool torch_pools_init(strategy *s);
void torch_pools_release(strategy *s);
/* The pair of private pool id, made with one use when absent (ensure_exists_and_incref_pool
 * without the incref of an existing one: *made says which); T_NONE without memory. */
uint32_t torch_pool_pair_of(strategy *s, uint64_t id, bool *made);
/* get_pool's pair for an allocation on stream: the first route that matches, else 0. */
static inline uint32_t torch_pool_route(const strategy *s, uint32_t stream)
{
    for (uint32_t i = 0; i < s->n_routes; i++)
        if (s->routes[i].all_streams || s->routes[i].stream == stream)
            return s->routes[i].pair;
    return 0;
}
/* After release_cached_blocks released the freeable pools' segments: drop those with none left. */
void torch_pools_drop_empty(strategy *s);
void torch_pool_begin(strategy *s, const strategy_pool_scope *scope);
void torch_pool_end(strategy *s, uint64_t pool);
void torch_pool_release(strategy *s, uint64_t pool);
int torch_pools(const strategy *s, strategy_pool_visitor v, void *ctx);

/* torch_seed.c: the ops table's seed (a recorded start state) and locate. */
sim_status torch_seed(strategy *s, const sim_seed *seed, strategy_handle *handles, sim_error *err);
bool torch_locate(const strategy *s, strategy_handle h, strategy_block *out);

/* torch_check.c: the ops table's walk and check. */
int torch_walk(const strategy *s, strategy_visitor v, void *ctx);
void torch_check(const strategy *s, sim_report *r);

/* torch_report.c: the ops table's stats and options. */
void torch_stats(const strategy *s, const strategy_stat_sink *sink);
void torch_options(const strategy *s, const strategy_stat_sink *sink);

#endif
