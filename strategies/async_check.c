/* The async strategy's walker (blocks in address order), locate and its full
 * invariant checker (async_types.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async_types.h"

/* ==== walker, locate and checker ==== */

static int chunk_addr_asc(const void *a, const void *b)
{
    uint64_t x = ((const achunk *const *)a)[0]->addr, y = ((const achunk *const *)b)[0]->addr;
    return (x > y) - (x < y);
}

/* What the walker shows of piece x of chunk c. */
static strategy_block piece_block(const ablock *x, const achunk *c)
{
    static const strategy_block_state MAP[] = {BLOCK_USED, BLOCK_FREE, BLOCK_PENDING};
    return (strategy_block){
        .addr = x->addr,
        .size_bytes = x->size,
        .requested_bytes = x->state == AB_USED ? x->requested : 0,
        .region_addr = c->addr,
        .region = c->seq,
        .stream = x->state == AB_FREE ? 0 : x->stream,
        .state = MAP[x->state],
        .pool = NULL,
    };
}

int async_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    uint32_t n = s->chunks.live, k = 0;
    if (n == 0)
        return 0;
    const achunk **order = malloc((size_t)n * sizeof *order);
    if (order == NULL)
        return -1;
    for (uint32_t c = 0; c < s->chunks.n_used_hw; c++)
        if (slots_valid(&s->chunks, c))
            order[k++] = chk(s, c);
    qsort(order, k, sizeof *order, chunk_addr_asc);
    int r = 0;
    for (uint32_t i = 0; i < k && r == 0; i++) {
        for (uint32_t b = order[i]->first; b != A_NONE && r == 0; b = blk(s, b)->next) {
            strategy_block sb = piece_block(blk(s, b), order[i]);
            r = v(ctx, &sb);
        }
    }
    free(order);
    return r;
}

/* The allocation's record names its piece (aalloc.block): O(1). A freed handle whose
 * pending piece a same-stream allocation took in part names the rest it waits on. */
bool async_locate(const strategy *s, strategy_handle h, strategy_block *out)
{
    if (!slots_valid(&s->allocs, h))
        return false;
    uint32_t b = alc(s, h)->block;
    if (b == A_NONE)
        return false; /* size 0, or a pending piece reused whole or completed by a synchronize */
    const ablock *x = blk(s, b);
    *out = piece_block(x, chk(s, x->chunk));
    return true;
}

/* One node of a set met in order: its links to its children (parent link, heap order of
 * priorities), its class, its key (the block's size and address) after the previous
 * one's, its block's state. False when a link leads outside the block table. */
static bool check_node(const strategy *s, const aset *st, ab_state want, const char *name, uint32_t x, uint32_t cls,
                       const ablock *prev, sim_report *r)
{
    const ablock *e = blk(s, x);
    uint32_t kids[2] = {e->kid[0], e->kid[1]};
    for (int k = 0; k < 2; k++) {
        uint32_t c = kids[k];
        if (c == A_NONE)
            continue;
        if (!sim_report_insist(r, c < s->blocks.n_used_hw, "async: %s index node %u links to %u, outside the table",
                               name, x, c))
            return false;
        sim_report_insist(r, blk(s, c)->parent == x, "async: %s index node %u's child %u names parent %u", name, x, c,
                          blk(s, c)->parent);
        sim_report_insist(r, !async_index_prio_before(c, x),
                          "async: %s index node %u breaks the heap order of priorities", name, c);
    }
    sim_report_insist(r, async_index_class(e->size) == cls,
                      "async: %s index holds %" PRIu64 " B at %" PRIu64 " in size class %u, not %u", name, e->size,
                      e->addr, cls, async_index_class(e->size));
    sim_report_insist(r, prev == NULL || async_index_cmp(e->size, e->addr, prev) > 0,
                      "async: %s index out of (size, address) order at %" PRIu64 " B at %" PRIu64, name, e->size,
                      e->addr);
    sim_report_insist(r, e->in == st->tag, "async: %s index holds node %u tagged for another set", name, x);
    bool ok = slots_valid(&s->blocks, x);
    sim_report_insist(r, ok, "async: %s index names a dead block %u", name, x);
    if (ok)
        sim_report_insist(r, e->state == want,
                          "async: %s index holds block %u (%" PRIu64 " at %" PRIu64 ") in state %d", name, x, e->size,
                          e->addr, (int)e->state);
    return true;
}

/* The bitmap of non-empty classes against the classes' roots, both levels. */
static void check_bitmap(const aset *st, const char *name, sim_report *r)
{
    for (uint32_t w = 0; w < A_CLASS_WORDS; w++) {
        sim_report_insist(r, ((st->summary >> w) & 1) == (st->words[w] != 0),
                          "async: %s index summary bit %u disagrees with its word", name, w);
        for (uint32_t c = w * 64; c < w * 64 + 64; c++) {
            bool marked = (st->words[w] >> (c & 63)) & 1;
            bool held = c < A_CLASSES && st->root[c] != A_NONE;
            sim_report_insist(r, marked == held, "async: %s index size class %u is %s but %s in the bitmap", name, c,
                              held ? "not empty" : "empty", marked ? "marked" : "not marked");
        }
    }
}

/* Every class's treap in order, the classes in ascending order, with an explicit stack;
 * each node is pushed at most once when the links form trees, so more pushes than nodes
 * means they loop. */
static void check_set(const strategy *s, const aset *st, ab_state want, const char *name, sim_report *r)
{
    check_bitmap(st, name, r);
    uint64_t bytes = 0;
    uint32_t n = 0, cap = s->blocks.n_used_hw, top = 0, pushes = 0;
    if (st->summary == 0) {
        sim_report_insist(r, st->n == 0 && st->bytes == 0 && st->last == A_NONE,
                          "async: empty %s index counts %u pieces, %" PRIu64 " B, a last node %u", name, st->n,
                          st->bytes, st->last);
        return;
    }
    uint32_t *stack = malloc((size_t)cap * sizeof *stack);
    if (!sim_report_insist(r, stack != NULL, "async: out of memory checking the %s index", name))
        return;
    bool sound = true;
    const ablock *prev = NULL;
    uint32_t last = A_NONE;
    for (uint32_t c = 0; c < A_CLASSES && sound; c++) {
        uint32_t x = st->root[c];
        if (x == A_NONE)
            continue;
        sound = sim_report_insist(r, x < cap && blk(s, x)->parent == A_NONE,
                                  "async: %s index root %u of size class %u is outside the table or has a parent", name,
                                  x, c);
        top = 0;
        while (sound && (x != A_NONE || top > 0)) {
            while (sound && x != A_NONE) {
                sound = sim_report_insist(r, pushes < cap, "async: %s index links loop", name);
                if (sound) {
                    stack[top++] = x;
                    pushes++;
                    x = blk(s, x)->kid[0];
                }
            }
            if (!sound)
                break;
            x = stack[--top];
            sound = check_node(s, st, want, name, x, c, prev, r);
            prev = blk(s, x);
            last = x;
            bytes += prev->size;
            n++;
            x = prev->kid[1];
        }
    }
    free(stack);
    if (!sound)
        return;
    sim_report_insist(r, n == st->n, "async: %s index holds %u pieces, counts %u", name, n, st->n);
    sim_report_insist(r, last == st->last, "async: %s index ends at node %u, names %u its last", name, last,
                      st->last);
    sim_report_insist(r, bytes == st->bytes, "async: %s index holds %" PRIu64 " B, counts %" PRIu64, name, bytes,
                      st->bytes);
}

void async_check(const strategy *s, sim_report *r)
{
    uint64_t reserved = 0, allocated = 0, used = 0, n_free = 0, n_pend = 0;
    for (uint32_t c = 0; c < s->chunks.n_used_hw; c++) {
        if (!slots_valid(&s->chunks, c))
            continue;
        const achunk *ch = chk(s, c);
        reserved += ch->size;
        sim_report_insist(r, ch->size % s->set.granularity == 0,
                          "async: chunk at %" PRIu64 " of %" PRIu64 " B is not a multiple of the granularity", ch->addr,
                          ch->size);
        uint64_t at = ch->addr;
        uint32_t prev = A_NONE;
        for (uint32_t b = ch->first; b != A_NONE; b = blk(s, b)->next) {
            const ablock *x = blk(s, b);
            if (!sim_report_insist(r, slots_valid(&s->blocks, b) && x->chunk == c && x->prev == prev,
                                   "async: block links of chunk at %" PRIu64 " are broken", ch->addr))
                break;
            sim_report_insist(r, x->addr == at, "async: block at %" PRIu64 " leaves a gap or overlaps (expected %" PRIu64 ")",
                              x->addr, at);
            static const uint8_t TAG[] = {A_IN_NONE, A_IN_FREE, A_IN_PEND};
            sim_report_insist(r, x->in == TAG[x->state],
                              "async: block at %" PRIu64 " is not in the index its state names", x->addr);
            sim_report_insist(r, x->size > 0 && x->size % s->set.alignment == 0,
                              "async: block at %" PRIu64 " has size %" PRIu64 ", not a positive multiple of the alignment",
                              x->addr, x->size);
            if (x->state == AB_USED) {
                allocated += x->size;
                used += x->size;
                sim_report_insist(r, x->size == units_round_up(x->requested, s->set.alignment),
                                  "async: used block at %" PRIu64 " of %" PRIu64 " B for a request of %" PRIu64, x->addr,
                                  x->size, x->requested);
                sim_report_insist(r, slots_valid(&s->allocs, x->owner) && alc(s, x->owner)->block == b &&
                                         !alc(s, x->owner)->freed,
                                  "async: used block at %" PRIu64 " is not its allocation's", x->addr);
            } else if (x->state == AB_PENDING) {
                used += x->size;
                n_pend++;
                sim_report_insist(r, slots_valid(&s->allocs, x->owner) && alc(s, x->owner)->block == b &&
                                         alc(s, x->owner)->freed,
                                  "async: pending block at %" PRIu64 " is not its freed allocation's", x->addr);
            } else {
                n_free++;
                sim_report_insist(r, !s->set.coalesce || prev == A_NONE || blk(s, prev)->state != AB_FREE,
                                  "async: free blocks at %" PRIu64 " and before it were not coalesced", x->addr);
            }
            at += x->size;
            prev = b;
        }
        sim_report_insist(r, at == ch->addr + ch->size, "async: the blocks of chunk at %" PRIu64 " do not cover it",
                          ch->addr);
    }
    check_set(s, &s->free_set, AB_FREE, "free", r);
    check_set(s, &s->pend_set, AB_PENDING, "pending", r);
    sim_report_insist(r, n_free == s->free_set.n && n_pend == s->pend_set.n,
                      "async: %" PRIu64 " free and %" PRIu64 " pending blocks, indexes hold %u and %u", n_free, n_pend,
                      s->free_set.n, s->pend_set.n);
    sim_report_insist(r, reserved == s->reserved, "async: ReservedMemCurrent %" PRIu64 " != sum of chunks %" PRIu64,
                      s->reserved, reserved);
    sim_report_insist(r, allocated == s->allocated, "async: allocated %" PRIu64 " != sum of used blocks %" PRIu64,
                      s->allocated, allocated);
    sim_report_insist(r, used == s->used, "async: UsedMemCurrent %" PRIu64 " != used + pending blocks %" PRIu64,
                      s->used, used);
    sim_report_insist(r, s->reserved_high >= s->reserved && s->used_high >= s->used,
                      "async: a high-water mark is below its current value");
    sim_report_insist(r, s->num_device_allocs - s->num_device_frees == s->chunks.live,
                      "async: %" PRIu64 " growths − %" PRIu64 " releases != %u chunks", s->num_device_allocs,
                      s->num_device_frees, s->chunks.live);
    sim_report_insist(r, !device_proc_alive(s->dev, s->proc) || device_proc_held(s->dev, s->proc) == s->reserved,
                      "async: device holds %" PRIu64 " for the process, the pool %" PRIu64,
                      device_proc_held(s->dev, s->proc), s->reserved);
}
