/* async_types.h — private to the async strategy (async.c, async_check.c): the pool's
 * records (blocks, chunks, allocations), its index of free pieces, its settings and the
 * instance, with the small accessors both files use. */
#ifndef GPUSIM_ASYNC_TYPES_H
#define GPUSIM_ASYNC_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/strategy.h"
#include "sim/units.h"
#include "slots.h"

#define A_NONE UINT32_MAX
#define A_DEFAULT_ALIGNMENT ((uint64_t)512)
#define A_DEFAULT_GRANULARITY ((uint64_t)2 << 20)

typedef enum async_preset { AP_CUDA = 0, AP_PYTORCH = 1, AP_TF = 2 } async_preset;
static const char *const PRESET_NAMES[] = {"cuda", "pytorch", "tf"};

typedef enum ab_state { AB_USED = 0, AB_FREE = 1, AB_PENDING = 2 } ab_state;

typedef struct ablock {
    uint64_t addr;
    uint64_t size;
    uint64_t requested; /* used: the request; else 0 */
    uint32_t prev, next; /* neighbours in the chunk, address order */
    uint32_t chunk;
    uint32_t stream;     /* used: allocating stream; pending: the stream that freed it */
    uint32_t owner;      /* used or pending: the allocation handle; free: A_NONE */
    ab_state state;
} ablock;

typedef struct achunk {
    uint64_t addr;
    uint64_t size;
    uint32_t first; /* lowest block */
    uint32_t seq;   /* creation order: the walker's region number */
} achunk;

typedef struct aalloc {
    uint32_t block;      /* A_NONE: size 0, or the pending piece was reused or completed */
    uint64_t requested;
    uint32_t stream;
    bool freed;          /* the program freed it; the handle waits for free_ready */
} aalloc;

/* The index of free and pending pieces: two treaps ordered by (size, addr) whose nodes
 * live in one array parallel to the block table (nodes[b] is block b's node; a block is
 * in at most one set: free pieces in free_set, pending ones in pend_set). A node's
 * priority is a hash of its block handle (aset_prio_before), so the shape depends only
 * on which blocks are indexed; the order is entry_cmp's. */
typedef struct anode {
    uint64_t size, addr;          /* the key, copied from the block when indexed */
    uint32_t kid[2];              /* the left (lower) and right child; A_NONE where absent */
    uint32_t parent;
    uint8_t in;                   /* the tag of the set holding it; A_IN_NONE: none */
} anode;

#define A_IN_NONE ((uint8_t)0)
#define A_IN_FREE ((uint8_t)1)
#define A_IN_PEND ((uint8_t)2)

typedef struct aset {
    uint32_t root; /* A_NONE: empty */
    uint32_t last; /* the last node in order (the largest piece), A_NONE: empty */
    uint32_t n;
    uint64_t bytes;
    uint8_t tag;   /* A_IN_FREE or A_IN_PEND */
} aset;

typedef struct async_settings {
    async_preset preset;
    uint64_t threshold;
    uint64_t granularity;
    uint64_t alignment;
    bool first_fit;
    bool coalesce;
    bool empty_cache_trims; /* empty_cache = sync + TrimTo(0); else sync (D1) */
    bool oom_sync_retry;
    bool has_fraction;
    bool threshold_from_capacity; /* the tf preset's threshold, TensorFlow's limit for the device */
    double fraction;
    char fraction_text[32];
    char alloc_conf[256];   /* as given, for options() */
} async_settings;

struct strategy {
    device *dev;
    uint32_t proc;
    uint64_t capacity;
    async_settings set;
    uint64_t fraction_limit; /* has_fraction: fraction · total, truncated */
    slots blocks, chunks, allocs;
    anode *nodes;       /* nodes_cap entries, indexed by block handle */
    uint32_t nodes_cap; /* ensure_capacity keeps it above every block handle */
    aset free_set, pend_set;
    uint64_t reserved, reserved_high;
    uint64_t used, used_high;     /* D4: used + pending bytes */
    uint64_t allocated;           /* used blocks only */
    uint64_t requested_live;      /* requests not yet freed by the program (PyTorch's count) */
    uint64_t num_device_allocs, num_device_frees;
    uint64_t syncs, trims;
    uint32_t next_seq;
};

static inline ablock *blk(const strategy *s, uint32_t b)
{
    return slots_get(&s->blocks, b);
}

static inline achunk *chk(const strategy *s, uint32_t c)
{
    return slots_get(&s->chunks, c);
}

static inline aalloc *alc(const strategy *s, uint32_t h)
{
    return slots_get(&s->allocs, h);
}

/* The piece index's order: by size, then address. */
static inline int entry_cmp(uint64_t size, uint64_t addr, const anode *e)
{
    if (size != e->size)
        return size < e->size ? -1 : 1;
    return (addr > e->addr) - (addr < e->addr);
}

/* key < e and key <= e in the same order, without a branch (the treap descents). */
static inline bool entry_lt(uint64_t size, uint64_t addr, const anode *e)
{
    return (size < e->size) | ((size == e->size) & (addr < e->addr));
}

static inline bool entry_le(uint64_t size, uint64_t addr, const anode *e)
{
    return (size < e->size) | ((size == e->size) & (addr <= e->addr));
}

/* The treap's heap order: a node's priority is a hash of its block handle (the
 * constants of Chris Wellons' lowbias32, from his hash-prospector search), ties broken by
 * the lower handle; a parent always comes before its children. */
static inline uint32_t aset_prio(uint32_t b)
{
    uint32_t h = (b ^ (b >> 16)) * 0x7feb352du;
    h = (h ^ (h >> 15)) * 0x846ca68bu;
    return h ^ (h >> 16);
}

static inline bool aset_prio_before(uint32_t a, uint32_t b)
{
    uint32_t pa = aset_prio(a), pb = aset_prio(b);
    return pa > pb || (pa == pb && a < b);
}

/* The walker, locate and the checker (async_check.c). */
int async_walk(const strategy *s, strategy_visitor v, void *ctx);
bool async_locate(const strategy *s, strategy_handle h, strategy_block *out);
void async_check(const strategy *s, sim_report *r);

#endif
