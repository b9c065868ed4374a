/* torch_segments.h — the `torch` strategy's record layer (torch_segments.c): a free
 * block entering and leaving its pool's set, segment records, and merging two
 * neighbouring blocks. Below torch.c (the rules) and torch_expandable.c, which both
 * call it and which it never calls. Private to the strategy's files. */
#ifndef GPUSIM_TORCH_SEGMENTS_H
#define GPUSIM_TORCH_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "torch_freeset.h"
#include "torch_types.h"

/* A free block enters its pool's set (BlockPool::insert_into_blocks: state, GC age
 * stamp, the set); inline, for the hot paths. */
static inline void torch_pool_insert(strategy *s, uint32_t h)
{
    tblock *b = B(s, h);
    b->state = BLOCK_FREE;
    if (s->gc_on) /* without GC the counters stay 0, as every record's gc_base */
        b->gc_base = (uint32_t)*GC_COUNTER(s, b->pool);
    if (!torch_fs_insert(FS(s, b->pool), h))
        s->host_oom = true;
}

/* ... and leaves it. */
void torch_pool_erase(strategy *s, uint32_t h);

/* The pool's free blocks in (stream, size, address) order, into s->scratch. */
void torch_scratch_collect(strategy *s, unsigned pool);

/* A new segment record at the end of the list (address order), or T_NONE (host out of
 * memory, s->host_oom set); and its removal. */
uint32_t torch_seg_new(strategy *s, unsigned pool, uint32_t stream, uint64_t base, uint64_t size, bool expandable);
void torch_seg_drop(strategy *s, uint32_t g);

/* try_merge_blocks: merge src into dst when src is free in the same mapped state
 * (dst is in no set); returns the bytes subsumed, 0 when src is T_NONE or not free. */
uint64_t torch_try_merge(strategy *s, uint32_t dst, uint32_t src);

/* dst takes in its neighbour src, which has left its set already: src's bytes (and
 * its address and lower link when src is below, its upper link when above) go to
 * dst, and src's record is given back. Returns the bytes subsumed. */
static inline uint64_t torch_absorb_prev(strategy *s, uint32_t dst, uint32_t src)
{
    tblock *d = B(s, dst);
    const tblock *x = B(s, src);
    uint64_t subsumed = x->size;
    d->addr = x->addr;
    d->prev = x->prev;
    if (d->prev != T_NONE)
        B(s, d->prev)->next = dst;
    else
        SEG(s, d->seg)->head = dst;
    d->size += subsumed;
    slots_put(&s->blocks, src);
    return subsumed;
}

static inline uint64_t torch_absorb_next(strategy *s, uint32_t dst, uint32_t src)
{
    tblock *d = B(s, dst);
    const tblock *x = B(s, src);
    uint64_t subsumed = x->size;
    d->next = x->next;
    if (d->next != T_NONE)
        B(s, d->next)->prev = dst;
    d->size += subsumed;
    slots_put(&s->blocks, src);
    return subsumed;
}

/* torch_try_merge for a mapped block dst and its free neighbour src, the side known
 * (the free path's merges, without the tests try_merge makes): src leaves its set
 * and is absorbed. Returns the bytes subsumed. */
static inline uint64_t torch_merge_prev(strategy *s, uint32_t dst, uint32_t src)
{
    torch_fs_erase(FS(s, B(s, src)->pool), src);
    return torch_absorb_prev(s, dst, src);
}

static inline uint64_t torch_merge_next(strategy *s, uint32_t dst, uint32_t src)
{
    torch_fs_erase(FS(s, B(s, src)->pool), src);
    return torch_absorb_next(s, dst, src);
}

/* The bytes of every free set (the free figure of strategy_sample and the OOM
 * report); the default pools first, without a loop when there is no private pool. */
static inline uint64_t torch_free_bytes(const strategy *s)
{
    const tpair *p = s->pairs[0];
    uint64_t n = torch_fs_bytes(&p->fs[POOL_SMALL]) + torch_fs_bytes(&p->fs[POOL_LARGE]);
    for (uint32_t i = 1; i < s->n_pairs; i++)
        n += torch_fs_bytes(&s->pairs[i]->fs[POOL_SMALL]) + torch_fs_bytes(&s->pairs[i]->fs[POOL_LARGE]);
    return n;
}

#endif
