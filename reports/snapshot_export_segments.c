/* What the allocator holds from the device, as the export's segment entries
 * (snapshot_export_types.h). */
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "snapshot_export_types.h"

int sx_seg_visit(void *ctx, const strategy_block *b)
{
    sx_seg_builder *sb = ctx;
    snapshot_export *x = sb->x;
    bool same = sb->open && b->region == sb->region && b->region_addr == sb->region_addr && b->addr == sb->end;
    uint64_t index = sb->index++;
    if (b->state == BLOCK_UNMAPPED) {
        sb->open = false;
        return 0;
    }
    if (same) {
        sb->out->v[sb->out->n - 1].size += b->size_bytes;
        sb->out->v[sb->out->n - 1].count++;
        sb->end += b->size_bytes;
        return 0;
    }
    if (!SIM_GROW(sb->out->v, sb->out->n + 1, sb->out->cap)) {
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return 1;
    }
    sb->out->v[sb->out->n++] = (xseg){
        .addr = b->addr, .size = b->size_bytes, .first = index, .count = 1, .stream = x->is_torch ? b->stream : 0,
        .small = b->pool != NULL && strcmp(b->pool, "small") == 0, .pool = b->pool_id};
    sb->open = true;
    sb->region = b->region;
    sb->region_addr = b->region_addr;
    sb->end = b->addr + b->size_bytes;
    return 0;
}

static int seg_cmp(const void *a, const void *b)
{
    uint64_t p = ((const xseg *)a)->addr, q = ((const xseg *)b)->addr;
    return (p > q) - (p < q);
}

/* Address order: a walk visits segments in creation order, and a replay that places
 * them where a recording's cudaMalloc did (device_plan_va) may go downwards. */
void sx_segs_sort(xsegs *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, seg_cmp);
}

/* The ranges of a that b does not cover (both sorted, disjoint), as `action` entries. */
static void ranges_minus(snapshot_export *x, const xsegs *a, const xsegs *b, const char *action, bool removing,
                         uint64_t us)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        uint64_t at = a->v[i].addr, end = a->v[i].addr + a->v[i].size;
        while (j < b->n && b->v[j].addr + b->v[j].size <= at)
            j++;
        for (uint32_t k = j; at < end; k++) {
            uint64_t stop = k < b->n && b->v[k].addr < end ? b->v[k].addr : end;
            if (stop > at) {
                if (removing)
                    sx_complete_inside(x, at, stop - at, us);
                sx_entry(x, action, at, stop - at, a->v[i].stream, us, a->v[i].pool);
            }
            if (k >= b->n || b->v[k].addr >= end)
                break;
            at = b->v[k].addr + b->v[k].size;
        }
    }
}

/* Whole segments of a that are not in b, as `action` entries. */
static void segs_minus(snapshot_export *x, const xsegs *a, const xsegs *b, const char *action, bool removing,
                       uint64_t us)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        while (j < b->n && b->v[j].addr < a->v[i].addr)
            j++;
        if (j < b->n && b->v[j].addr == a->v[i].addr && b->v[j].size == a->v[i].size)
            continue;
        if (removing)
            sx_complete_inside(x, a->v[i].addr, a->v[i].size, us);
        sx_entry(x, action, a->v[i].addr, a->v[i].size, a->v[i].stream, us, a->v[i].pool);
    }
}

/* What the allocator holds now against the last walk: releases first, then the new ones. */
void sx_segments_update(snapshot_export *x, const strategy *s, uint64_t us)
{
    x->next_segs.n = 0;
    sx_seg_builder sb = {.x = x, .out = &x->next_segs};
    if (x->ops->walk(s, sx_seg_visit, &sb) < 0)
        sx_fail(x, SIM_ENOMEM, "out of memory");
    if (x->st != SIM_OK)
        return;
    sx_segs_sort(&x->next_segs);
    if (x->expandable) {
        ranges_minus(x, &x->segs, &x->next_segs, "segment_unmap", true, us);
        ranges_minus(x, &x->next_segs, &x->segs, "segment_map", false, us);
    } else {
        segs_minus(x, &x->segs, &x->next_segs, "segment_free", true, us);
        segs_minus(x, &x->next_segs, &x->segs, "segment_alloc", false, us);
    }
    xsegs t = x->segs;
    x->segs = x->next_segs;
    x->next_segs = t;
}

/* One region more or less without a walk, where the tick tells which: with whole
 * segments (not expandable), an event that took exactly one region from the device
 * and nothing back, or gave exactly one back and took nothing. A walk would
 * find the same: a region's blocks tile it, so its segment is the bytes the device
 * count moved. Any other change is walked (sx_segments_update). */

/* The index of the first segment of l at or above addr. */
static uint32_t segs_lower(const xsegs *l, uint64_t addr)
{
    return sx_lower_u64(l->v, sizeof *l->v, l->n, addr); /* addr leads xseg */
}

/* An allocation took one new region of bytes from the device, and b is its block:
 * when b starts that region, which lies clear of the others, it is the new segment
 * as sx_seg_visit would begin it. False (nothing changed) when not certain. */
bool sx_segs_add_region(snapshot_export *x, const strategy_block *b, uint64_t bytes, uint64_t us)
{
    xsegs *l = &x->segs;
    if (b->addr != b->region_addr || b->size_bytes > bytes || bytes > UINT64_MAX - b->addr)
        return false;
    uint32_t i = segs_lower(l, b->addr);
    if ((i < l->n && l->v[i].addr < b->addr + bytes) || (i > 0 && l->v[i - 1].addr + l->v[i - 1].size > b->addr))
        return false;
    if (!SIM_GROW(l->v, l->n + 1, l->cap)) {
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return true;
    }
    memmove(&l->v[i + 1], &l->v[i], (size_t)(l->n - i) * sizeof *l->v);
    l->v[i] = (xseg){.addr = b->addr, .size = bytes, .count = 1, .stream = x->is_torch ? b->stream : 0,
                     .small = b->pool != NULL && strcmp(b->pool, "small") == 0, .pool = b->pool_id};
    l->n++;
    sx_entry(x, "segment_alloc", b->addr, bytes, l->v[i].stream, us, l->v[i].pool);
    return true;
}

/* A free gave one region of bytes back, and the freed block was at addr: the
 * segment holding addr, when it has that size (every strategy gives back at a free
 * only the region of the block freed: raw's own allocation). False when not found. */
bool sx_segs_drop_region(snapshot_export *x, uint64_t addr, uint64_t bytes, uint64_t us)
{
    xsegs *l = &x->segs;
    uint32_t i = segs_lower(l, addr + 1);
    if (i == 0 || addr - l->v[i - 1].addr >= l->v[i - 1].size || l->v[i - 1].size != bytes)
        return false;
    xseg g = l->v[--i];
    memmove(&l->v[i], &l->v[i + 1], (size_t)(l->n - i - 1) * sizeof *l->v);
    l->n--;
    sx_complete_inside(x, g.addr, g.size, us);
    sx_entry(x, "segment_free", g.addr, g.size, g.stream, us, g.pool);
    return true;
}
