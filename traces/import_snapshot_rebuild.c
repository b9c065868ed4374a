/* Undoing a snapshot's trace back to its first entry. */
#include "import_snapshot_rebuild.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

#define RB_MIN_BLOCK ((uint64_t)512)          /* kMinBlockSize */
#define RB_SMALL_SIZE ((uint64_t)1 << 20)     /* kSmallSize: a large-pool remainder ≤ this is not split */
#define RB_SMALL_SEGMENT ((uint64_t)2 << 20)  /* kSmallBuffer: the small pool's segment size */

/* c10/cuda/CUDACachingAllocator.cpp @ 001074d2, round_size and
 * roundup_power2_next_division: below 512 B → 512; with d divisions for the size's
 * power-of-two interval (from 1 MiB) and size > 512·d, the next multiple of
 * 2^floor(log2 size) / d (powers of two unchanged); otherwise a multiple of 512. */
uint64_t rb_round_size(const rb_settings *s, uint64_t size)
{
    if (size < RB_MIN_BLOCK)
        return RB_MIN_BLOCK;
    unsigned lg = 63u - (unsigned)__builtin_clzll(size);
    unsigned index = lg > 20 ? lg - 20 : 0;
    if (index > 15)
        index = 15;
    uint64_t d = s->divisions[index];
    if (d > 1 && size > RB_MIN_BLOCK * d) {
        if ((size & (size - 1)) == 0)
            return size;
        uint64_t floor2 = (uint64_t)1 << lg;
        unsigned ld = 63u - (unsigned)__builtin_clzll(d);
        uint64_t step = floor2 >> ld;
        if (step == 0)
            return floor2 << 1;
        return (size + step - 1) / step * step;
    }
    return (size + RB_MIN_BLOCK - 1) / RB_MIN_BLOCK * RB_MIN_BLOCK;
}

typedef struct wseg {
    uint64_t addr, size;
    uint32_t stream;
    bool small_pool, expandable;
    uint64_t pool_id;
} wseg;

typedef struct wlist {
    wseg *s;
    size_t n, cap;
} wlist;

static bool wl_push(wlist *w, wseg g)
{
    if (!SIM_GROW(w->s, w->n + 1, w->cap))
        return false;
    w->s[w->n++] = g;
    return true;
}

static void wl_remove(wlist *w, size_t i)
{
    w->s[i] = w->s[--w->n];
}

/* The segment holding [addr, addr + size), or SIZE_MAX. */
static size_t wl_find(const wlist *w, uint64_t addr, uint64_t size)
{
    for (size_t i = 0; i < w->n; i++)
        if (addr >= w->s[i].addr && addr - w->s[i].addr <= w->s[i].size && size <= w->s[i].addr + w->s[i].size - addr)
            return i;
    return SIZE_MAX;
}

static bool wl_overlaps(const wlist *w, uint64_t addr, uint64_t size)
{
    for (size_t i = 0; i < w->n; i++)
        if (addr < w->s[i].addr + w->s[i].size && w->s[i].addr < addr + size)
            return true;
    return false;
}

static int wseg_cmp(const void *a, const void *b)
{
    const wseg *x = a, *y = b;
    return x->addr < y->addr ? -1 : (x->addr > y->addr);
}

static int live_cmp(const void *a, const void *b)
{
    const rb_live *x = a, *y = b;
    return x->addr < y->addr ? -1 : (x->addr > y->addr);
}

static const char *ACTION[] = {"segment_alloc", "segment_free", "segment_map", "segment_unmap"};

/* Undo one segment entry on w; false with why set when the state does not allow it. */
static bool undo(wlist *w, const rb_seg_event *e, char *why, size_t cap, bool *nomem)
{
    size_t i;
    switch (e->action) {
    case RB_SEG_ALLOC:
        /* it did not exist before this entry */
        for (i = 0; i < w->n; i++)
            if (w->s[i].addr == e->addr && w->s[i].size == e->size && !w->s[i].expandable)
                break;
        if (i == w->n)
            break;
        wl_remove(w, i);
        return true;
    case RB_SEG_FREE:
        /* it existed before: put it back (a 2 MiB segment is the small pool's) */
        if (wl_overlaps(w, e->addr, e->size))
            break;
        if (!wl_push(w, (wseg){e->addr, e->size, e->stream, e->size == RB_SMALL_SEGMENT, false, e->pool_id}))
            return *nomem = true, false;
        return true;
    case RB_SEG_MAP: {
        /* the range was unmapped before: cut it out of its mapped range */
        i = wl_find(w, e->addr, e->size);
        if (i == SIZE_MAX || !w->s[i].expandable)
            break;
        wseg g = w->s[i];
        wl_remove(w, i);
        if (e->addr > g.addr) {
            wseg lo = g;
            lo.size = e->addr - g.addr;
            if (!wl_push(w, lo))
                return *nomem = true, false;
        }
        if (e->addr + e->size < g.addr + g.size) {
            wseg hi = g;
            hi.addr = e->addr + e->size;
            hi.size = g.addr + g.size - hi.addr;
            if (!wl_push(w, hi))
                return *nomem = true, false;
        }
        return true;
    }
    case RB_SEG_UNMAP: {
        /* it was mapped before: put it back, joined to mapped neighbours of its stream */
        if (wl_overlaps(w, e->addr, e->size))
            break;
        wseg g = {e->addr, e->size, e->stream, false, true, e->pool_id};
        bool pool_known = false;
        for (size_t k = 0; k < w->n;) {
            wseg *x = &w->s[k];
            if (x->expandable && x->stream == g.stream && (x->addr + x->size == g.addr || g.addr + g.size == x->addr)) {
                g.small_pool = x->small_pool;
                if (!e->has_pool)
                    g.pool_id = x->pool_id;
                pool_known = true;
                uint64_t lo = x->addr < g.addr ? x->addr : g.addr;
                g.size += x->size;
                g.addr = lo;
                wl_remove(w, k);
                continue;
            }
            k++;
        }
        if (!pool_known)
            g.small_pool = g.size % (20u << 20) != 0 && g.size % RB_SMALL_SEGMENT == 0;
        if (!wl_push(w, g))
            return *nomem = true, false;
        return true;
    }
    }
    snprintf(why, cap, "device_traces entry %" PRIu64 " (%s of %" PRIu64 " B at 0x%" PRIx64 ") does not fit the "
             "segments that follow it", e->entry, ACTION[e->action], e->size, e->addr);
    return false;
}

/* The first allocation (in trace order) at an address in [lo, hi) made before the
 * importer's event `before`, or NULL. in->allocs is sorted by (addr, at). */
static const rb_addr *first_alloc_in(const rb_input *in, uint64_t lo, uint64_t hi, uint64_t before)
{
    size_t a = 0, b = in->n_allocs;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (in->allocs[mid].addr < lo)
            a = mid + 1;
        else
            b = mid;
    }
    const rb_addr *best = NULL;
    for (size_t k = a; k < in->n_allocs && in->allocs[k].addr < hi; k++)
        if (in->allocs[k].at < before && (best == NULL || in->allocs[k].at < best->at))
            best = &in->allocs[k];
    return best;
}

/* The importer's event before which the segment at addr, existing at the start,
 * was given back (its first segment_free), or UINT64_MAX. */
static uint64_t segment_gone_at(const rb_input *in, uint64_t addr)
{
    for (size_t k = 0; k < in->n_events; k++)
        if (in->events[k].action == RB_SEG_FREE && in->events[k].addr == addr)
            return in->events[k].next_event;
    return UINT64_MAX;
}

/* The size of a live block known only from its free (b->size == 0) at the start of
 * segment g, next being where the next live block (or the segment's end) begins. */
static uint64_t inferred_size(const rb_input *in, const wseg *g, const rb_live *b, uint64_t next, rb_result *out)
{
    uint64_t size = rb_round_size(&in->settings, b->requested);
    out->inferred++;
    if (g->small_pool || g->expandable || b->addr + size >= next)
        return size; /* the small pool always splits; no room after it */
    /* a large-pool block keeps the rest of the free block it was cut from when that
     * rest is ≤ 1 MiB, or when it is ≥ max_split_size (should_split): a gap of ≤ 1 MiB
     * cannot be a free block of the large pool, so it is all the block's */
    uint64_t gap = next - (b->addr + size);
    bool unsplit = size >= in->settings.max_split_size;
    if (gap <= RB_SMALL_SIZE)
        return size + gap;
    /* the first allocation in the gap, before the block was freed and before its
     * segment went, took the low end of the free block there: the block ends at it */
    uint64_t before = b->freed_at;
    uint64_t gone = segment_gone_at(in, g->addr);
    if (gone < before)
        before = gone;
    const rb_addr *x = first_alloc_in(in, b->addr, next, before);
    if (x != NULL && x->addr >= b->addr + size && (x->addr - (b->addr + size) <= RB_SMALL_SIZE || unsplit)) {
        if (x->addr > b->addr + size)
            out->by_address++;
        return x->addr - b->addr;
    }
    if (x != NULL) {
        out->contradicted++; /* inside the block, or further than any remainder it keeps */
        return size;
    }
    if (unsplit)
        return size + gap;
    out->undetermined++;
    return size;
}

void rb_result_release(rb_result *r)
{
    free(r->segs);
    free(r->blocks);
    free(r->planned);
    r->segs = NULL;
    r->blocks = NULL;
    r->planned = NULL;
}

bool rb_rebuild(const rb_input *in, rb_result *out)
{
    memset(out, 0, sizeof *out);
    wlist w = {0};
    rb_live *live = NULL;
    bool nomem = false, ok = false;
    for (size_t i = 0; i < in->n_segs; i++) {
        const rb_segment *g = &in->segs[i];
        if (!wl_push(&w, (wseg){g->addr, g->size, g->stream, g->small_pool, g->expandable, g->pool_id}))
            goto nomem;
    }
    for (size_t k = in->n_events; k-- > 0;)
        if (!undo(&w, &in->events[k], out->why, sizeof out->why, &nomem)) {
            if (nomem)
                goto nomem;
            goto fail;
        }
    if (w.n)
        qsort(w.s, w.n, sizeof *w.s, wseg_cmp);
    for (size_t i = 0; i < w.n; i++)
        if (w.s[i].expandable) {
            /* a snapshot reports an expandable segment as its mapped ranges, not as
             * the address range reserved for it, so its layout cannot be rebuilt */
            snprintf(out->why, sizeof out->why, "expandable segments were mapped at the start (0x%" PRIx64 "); a "
                     "snapshot records their mapped ranges, not the address range each was reserved in",
                     w.s[i].addr);
            goto fail;
        }
    for (size_t i = 1; i < w.n; i++)
        if (w.s[i].addr < w.s[i - 1].addr + w.s[i - 1].size) {
            snprintf(out->why, sizeof out->why, "segments 0x%" PRIx64 " and 0x%" PRIx64 " overlap at the start",
                     w.s[i - 1].addr, w.s[i].addr);
            goto fail;
        }
    live = malloc((in->n_live ? in->n_live : 1) * sizeof *live);
    /* at most one free block before each used block, and one at the end */
    out->segs = malloc((w.n ? w.n : 1) * sizeof *out->segs);
    out->blocks = malloc((2 * in->n_live + w.n + 1) * sizeof *out->blocks);
    if (live == NULL || out->segs == NULL || out->blocks == NULL)
        goto nomem;
    if (in->n_live)
        memcpy(live, in->live, in->n_live * sizeof *live);
    if (in->n_live)
        qsort(live, in->n_live, sizeof *live, live_cmp);
    size_t lp = 0;
    uint32_t nb = 0;
    for (size_t i = 0; i < w.n; i++) {
        const wseg *g = &w.s[i];
        sim_seed_segment *sg = &out->segs[i];
        *sg = (sim_seed_segment){.addr = g->addr, .size_bytes = g->size, .stream = g->stream,
                                 .small_pool = g->small_pool, .expandable = g->expandable, .pool_id = g->pool_id,
                                 .first_block = nb};
        if (lp < in->n_live && live[lp].addr < g->addr) {
            snprintf(out->why, sizeof out->why, "the block at 0x%" PRIx64 ", live at the start, lies in no segment "
                     "that existed then", live[lp].addr);
            goto fail;
        }
        uint64_t end = g->addr + g->size, at = g->addr;
        while (lp < in->n_live && live[lp].addr < end) {
            const rb_live *b = &live[lp++];
            uint64_t next = lp < in->n_live && live[lp].addr < end ? live[lp].addr : end;
            uint64_t size = b->size;
            if (size == 0)
                size = inferred_size(in, g, b, next, out);
            if (b->addr < at || size > next - b->addr) {
                snprintf(out->why, sizeof out->why, "the block at 0x%" PRIx64 " (%" PRIu64 " B), live at the start, "
                         "overlaps another block or its segment's end", b->addr, size);
                goto fail;
            }
            if (b->addr > at)
                out->blocks[nb++] = (sim_seed_block){.offset = at - g->addr, .size_bytes = b->addr - at,
                                                     .state = SIM_SEED_FREE};
            out->blocks[nb++] = (sim_seed_block){.offset = b->addr - g->addr, .size_bytes = size,
                                                 .requested_bytes = b->requested <= size ? b->requested : size,
                                                 .id = b->id, .state = SIM_SEED_USED};
            at = b->addr + size;
        }
        if (at < end)
            out->blocks[nb++] = (sim_seed_block){.offset = at - g->addr, .size_bytes = end - at,
                                                 .state = SIM_SEED_FREE};
        sg->n_blocks = nb - sg->first_block;
    }
    if (lp < in->n_live) {
        snprintf(out->why, sizeof out->why, "the block at 0x%" PRIx64 ", live at the start, lies in no segment that "
                 "existed then", live[lp].addr);
        goto fail;
    }
    uint32_t np = 0;
    out->planned = malloc((in->n_events ? in->n_events : 1) * sizeof *out->planned);
    if (out->planned == NULL)
        goto nomem;
    for (size_t k = 0; k < in->n_events; k++)
        if (in->events[k].action == RB_SEG_ALLOC)
            out->planned[np++] = (sim_range){in->events[k].addr, in->events[k].size};
    out->seed = (sim_seed){.segs = out->segs, .n_segs = (uint32_t)w.n, .blocks = out->blocks, .n_blocks = nb,
                           .planned = out->planned, .n_planned = np};
    sim_error err;
    if (sim_seed_check(&out->seed, NULL, &err) != SIM_OK) {
        snprintf(out->why, sizeof out->why, "%.300s", err.msg);
        goto fail;
    }
    ok = true;
    goto done;
nomem:
    out->why[0] = '\0';
fail:
    rb_result_release(out);
done:
    free(w.s);
    free(live);
    return ok;
}
