/* The `torch` strategy's record layer (torch_segments.h): pool sets, segment
 * records and the merge of two neighbouring blocks, below the rules (torch.c) and
 * expandable segments (torch_expandable.c), which both call it. */
#include "torch_segments.h"

/* ==== Pools ==== */

void torch_pool_erase(strategy *s, uint32_t h)
{
    torch_fs_erase(FS(s, B(s, h)->pool), h);
}

void torch_scratch_collect(strategy *s, unsigned pool)
{
    if (!torch_fs_collect(FS(s, pool), &s->scratch))
        s->host_oom = true;
}

/* ==== Segments ==== */

uint32_t torch_seg_new(strategy *s, unsigned pool, uint32_t stream, uint64_t base, uint64_t size, bool expandable)
{
    uint32_t g = slots_take_uninit(&s->segs); /* written whole below */
    if (g == T_NONE) {
        s->host_oom = true;
        return T_NONE;
    }
    tseg *seg = SEG(s, g);
    *seg = (tseg){.base = base, .size = size, .mapped = expandable ? 0 : size, .seq = s->seg_seq++,
                  .head = T_NONE, .stream = stream, .list_prev = s->seg_last, .list_next = T_NONE,
                  .pool = (uint16_t)pool, .expandable = expandable};
    s->pairs[pool_pair(pool)]->segments++;
    if (s->seg_last != T_NONE)
        SEG(s, s->seg_last)->list_next = g;
    else
        s->seg_first = g;
    s->seg_last = g;
    return g;
}

void torch_seg_drop(strategy *s, uint32_t g)
{
    tseg *seg = SEG(s, g);
    s->pairs[pool_pair(seg->pool)]->segments--;
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

/* ==== Blocks ==== */

uint64_t torch_try_merge(strategy *s, uint32_t dst, uint32_t src)
{
    if (src == T_NONE)
        return 0;
    tblock *d = B(s, dst);
    tblock *x = B(s, src);
    bool dst_mapped = d->state != BLOCK_UNMAPPED;
    if (x->state != (dst_mapped ? BLOCK_FREE : BLOCK_UNMAPPED))
        return 0;
    if (dst_mapped)
        torch_fs_erase(FS(s, x->pool), src);
    else
        torch_fs_tree_erase(&s->blocks, UNMAPPED(s, x->pool), true, src);
    return B(s, dst)->prev == src ? torch_absorb_prev(s, dst, src) : torch_absorb_next(s, dst, src);
}
