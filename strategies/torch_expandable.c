/* The `torch` strategy's expandable segments (expandable_segments:True;
 * docs/allocators.md §2.11, CUDACachingAllocator.cpp ExpandableSegment): one
 * address range of ceil(1⅛·capacity / page) pages per (stream, pool), mapped page by
 * page at the lowest free address that fits, unmapped by whole pages strictly inside
 * free blocks. The unmapped ranges sit in one treap per pool by (stream, address). */
#include "sim/units.h"
#include "torch_freeset.h"
#include "torch_segments.h"
#include "torch_types.h"

static inline void unmapped_insert(strategy *s, uint32_t h)
{
    torch_fs_tree_insert(&s->blocks, UNMAPPED(s, B(s, h)->pool), true, h);
}

static inline void unmapped_erase(strategy *s, uint32_t h)
{
    torch_fs_tree_erase(&s->blocks, UNMAPPED(s, B(s, h)->pool), true, h);
}

/* ==== Releasing (release_blocks' to_unmap) ==== */

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
    torch_pool_erase(s, h);
    b = B(s, h);
    uint64_t base = SEG(s, b->seg)->base;
    uint32_t seg = b->seg;
    uint32_t old_prev = b->prev, old_next = b->next;
    if (hb != T_NONE) {
        blk_init(s, hb, b->addr, before, seg, BLOCK_FREE);
        blk_splice(s, hb, old_prev, h);
        torch_pool_insert(s, hb);
    }
    if (ha != T_NONE) {
        blk_init(s, ha, base + end, after, seg, BLOCK_FREE);
        blk_splice(s, ha, h, old_next);
        torch_pool_insert(s, ha);
    }
    b = B(s, h);
    b->addr = base + begin;
    b->size = end - begin;
    b->state = BLOCK_UNMAPPED;
    torch_try_merge(s, h, B(s, h)->prev);
    torch_try_merge(s, h, B(s, h)->next);
    unmapped_insert(s, h);

    uint64_t bytes = end - begin;
    unsigned pool = B(s, h)->pool;
    SEG(s, seg)->mapped -= bytes;
    device_release(s->dev, s->proc, bytes);
    stats_down(s->st.reserved_bytes, pool, bytes);
    pair_reserved(s, pool, -(int64_t)bytes);
    s->st.num_device_free++;
}

/* An expandable segment with nothing mapped gives back its address range. */
static void release_expandable_segment(strategy *s, uint32_t h)
{
    uint32_t g = B(s, h)->seg;
    unmapped_erase(s, h);
    slots_put(&s->blocks, h);
    torch_seg_drop(s, g);
}

void torch_expandable_unmap(strategy *s, uint32_t h)
{
    unmap_block(s, h);
    if (B(s, h)->state == BLOCK_UNMAPPED && !blk_is_split(s, h))
        release_expandable_segment(s, h);
}

/* ==== Allocating (try_allocate_expandable_block) ==== */

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
    uint32_t root = *UNMAPPED(s, pool);
    for (uint32_t it = torch_fs_tree_lower_bound(&s->blocks, root, true, stream, 0, 0);
         it != T_NONE && B(s, it)->stream == stream; it = torch_fs_tree_next(&s->blocks, root, true, it)) {
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
    uint32_t g = torch_seg_new(s, pool, stream, 0, va, true);
    if (g == T_NONE) {
        slots_put(&s->blocks, h);
        return T_NONE;
    }
    SEG(s, g)->base = device_reserve_va(s->dev, va);
    blk_init(s, h, SEG(s, g)->base, va, g, BLOCK_UNMAPPED);
    SEG(s, g)->head = h;
    unmapped_insert(s, h);
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
    unmapped_erase(s, h);
    b = B(s, h);
    b->state = BLOCK_FREE;
    if (rest != T_NONE) {
        blk_init(s, rest, b->addr + bytes, b->size - bytes, b->seg, BLOCK_UNMAPPED);
        blk_splice(s, rest, h, B(s, h)->next);
        unmapped_insert(s, rest);
        B(s, h)->size = bytes;
    }
    torch_try_merge(s, h, B(s, h)->prev);
    torch_try_merge(s, h, B(s, h)->next);
    torch_pool_insert(s, h);
    b = B(s, h);
    SEG(s, b->seg)->mapped += bytes;
    stats_up(s->st.reserved_bytes, b->pool, bytes);
    pair_reserved(s, b->pool, (int64_t)bytes);
    s->st.num_device_alloc++;
    return true;
}

/* try_allocate_expandable_block: a free block of ≥ size, taken out of its set. */
uint32_t torch_expandable_alloc(strategy *s, unsigned pool, uint32_t stream, uint64_t size)
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
    torch_pool_erase(s, c);
    return c;
}
