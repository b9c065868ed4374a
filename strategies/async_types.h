/* async_types.h — private to the async strategy (async.c, async_check.c): the pool's
 * records (chunks, allocations), its settings and the instance, with the small
 * accessors both files use; the block records and the piece index are async_index.h. */
#ifndef GPUSIM_ASYNC_TYPES_H
#define GPUSIM_ASYNC_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/strategy.h"
#include "sim/units.h"
#include "slots.h"

#include "async_index.h"

#define A_DEFAULT_ALIGNMENT ((uint64_t)512)
#define A_DEFAULT_GRANULARITY ((uint64_t)2 << 20)

typedef enum async_preset { AP_CUDA = 0, AP_PYTORCH = 1, AP_TF = 2 } async_preset;
static const char *const PRESET_NAMES[] = {"cuda", "pytorch", "tf"};

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
    slots blocks, chunks, allocs; /* blocks: ablock records, 64-byte aligned (async_index.h) */
    aset free_set, pend_set; /* the free pieces and the pending ones (async_index.h) */
    uint64_t reserved, reserved_high;
    uint64_t used, used_high;     /* D4: used + pending bytes */
    uint64_t allocated;           /* used blocks only */
    uint64_t requested_live;      /* requests not yet freed by the program (PyTorch's count) */
    uint64_t num_device_allocs, num_device_frees;
    uint64_t syncs, trims;
    uint32_t next_seq;
};

/* The block table, as the index reads it (indexed by block handle). */
static inline ablock *block_table(const strategy *s)
{
    return (ablock *)(void *)s->blocks.data;
}

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

/* The walker, locate and the checker (async_check.c). */
int async_walk(const strategy *s, strategy_visitor v, void *ctx);
bool async_locate(const strategy *s, strategy_handle h, strategy_block *out);
void async_check(const strategy *s, sim_report *r);

#endif
