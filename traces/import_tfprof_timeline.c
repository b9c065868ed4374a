/* A TensorFlow memory profile's sampled timeline → native events (import_tfprof_timeline.h).
 *
 * Each point is one real snapshot: its time, the allocator's heap + stack in use after it,
 * and the activity that made it (ALLOCATION or DEALLOCATION, size, address, op). XProf
 * keeps every snapshot when there are at most 1000, else the largest of each window. So:
 *  1. The in-use just before point i is in_use(i) − size (ALLOCATION) or + size
 *     (DEALLOCATION): what the previous point left, when nothing was dropped in between.
 *  2. Where the previous point left something else, the snapshots between them were
 *     dropped: the difference becomes synthetic events in that gap (to go down, frees
 *     of the most recent synthetic blocks, then of the most recent recorded ones; to go
 *     up, one allocation "sampled gap"), then point i's own event, exact, with its
 *     address. A deallocation of an address not live allocates it in the gap first.
 *  3. Before the first point: the blocks the timeline deallocates without allocating
 *     them, then one block for the rest of the in-use, are allocations at the start.
 * Sizes are allocationBytes (TensorFlow's chunk, what heap + stack counts), so the replay's
 * live bytes equal the recorded in-use at every point. */
#include "import_tfprof_timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tl_point {
    uint64_t t;        /* ns */
    uint64_t order;    /* index in the file */
    uint64_t in_use;   /* heap + stack after the point */
    uint64_t size;     /* allocationBytes (requestedBytes when 0) */
    uint64_t addr;
    const char *op_name;
    int activity;      /* 1 ALLOCATION, 2 DEALLOCATION, else none */
} tl_point;

/* The blocks the replay holds, in allocation order; a dead one stays until it is on top. */
typedef struct tl_block {
    uint64_t id, size, addr; /* addr 0: synthetic */
    bool live;
} tl_block;

typedef struct tl_state {
    imp_doc *d;
    tl_block *blk;
    size_t n, cap;
    size_t *syn;         /* the live synthetic blocks (address 0), in allocation order */
    size_t n_syn, cap_syn;
    imp_map live;        /* address → .a: index in blk */
    uint64_t cur;        /* the replay's live bytes */
    uint64_t t;          /* the current point's time */
    bool at_start;       /* before the first point: allocations at the start */
    uint64_t tag_gap, tag_start;
    uint64_t gaps, gap_events, exact, odd, pre_bytes;
} tl_state;

sim_status tfprof_activity(imp_doc *d, const json_value *meta, const imp_loc *l, int *out)
{
    const json_value *a = json_get(meta, "memoryActivity");
    *out = 0;
    if (a == NULL || a->type == JSON_NULL)
        return SIM_OK;
    if (a->type == JSON_STRING) {
        if (strcmp(a->u.str, "ALLOCATION") == 0)
            *out = 1;
        else if (strcmp(a->u.str, "DEALLOCATION") == 0)
            *out = 2;
        else
            *out = 99;
        return SIM_OK;
    }
    uint64_t v = 0;
    if (a->type != JSON_NUMBER || json_to_u64(a, 100, &v) != JSON_INT_OK)
        return imp_fail(d, a, l, "\"memoryActivity\" must be an enum name or number");
    *out = (int)v;
    return SIM_OK;
}

static int point_cmp(const void *a, const void *b)
{
    const tl_point *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

static sim_status point_read(imp_doc *d, const json_value *s, const imp_loc *l, tl_point *p)
{
    if (s->type != JSON_OBJECT)
        return imp_fail(d, s, l, "a timeline point must be an object, not %s", json_type_name(s->type));
    const json_value *tv = json_get(s, "timeOffsetPs");
    if (tv != NULL && tv->type != JSON_NULL && !imp_decimal_scaled(tv, -3, &p->t))
        return imp_fail(d, tv, l, "\"timeOffsetPs\" must be a non-negative integer of picoseconds");
    const json_value *agg = json_get(s, "aggregationStats");
    if (agg == NULL || agg->type != JSON_OBJECT)
        return imp_fail(d, agg ? agg : s, l, "missing \"aggregationStats\" object (the in-use of the point)");
    uint64_t heap = 0, stack = 0, req = 0;
    sim_status st;
    if ((st = imp_get_u64(d, agg, "heapAllocatedBytes", true, SIM_MAX_SIZE, &heap, NULL, l)) != SIM_OK ||
        (st = imp_get_u64(d, agg, "stackReservedBytes", false, SIM_MAX_SIZE, &stack, NULL, l)) != SIM_OK)
        return st;
    p->in_use = heap + stack;
    const json_value *meta = json_get(s, "activityMetadata");
    if (meta == NULL || meta->type == JSON_NULL)
        return SIM_OK; /* a point without its activity: only its in-use is known */
    if (meta->type != JSON_OBJECT)
        return imp_fail(d, meta, l, "\"activityMetadata\" must be an object, not %s", json_type_name(meta->type));
    if ((st = tfprof_activity(d, meta, l, &p->activity)) != SIM_OK ||
        (st = imp_get_u64(d, meta, "requestedBytes", false, SIM_MAX_SIZE, &req, NULL, l)) != SIM_OK ||
        (st = imp_get_u64(d, meta, "allocationBytes", false, SIM_MAX_SIZE, &p->size, NULL, l)) != SIM_OK ||
        (st = imp_get_u64(d, meta, "address", false, UINT64_MAX, &p->addr, NULL, l)) != SIM_OK ||
        (st = imp_get_str(d, meta, "tfOpName", false, &p->op_name, l)) != SIM_OK)
        return st;
    if (p->size == 0)
        p->size = req;
    return SIM_OK;
}

static sim_status nomem(const imp_doc *d)
{
    return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
}

/* A new live block: an allocation at the start, or an event at the current time. */
static sim_status block_new(tl_state *s, uint64_t size, uint64_t addr, uint64_t tag)
{
    imp_doc *d = s->d;
    if (s->n == s->cap) {
        size_t c = s->cap ? 2 * s->cap : 64;
        tl_block *b = realloc(s->blk, c * sizeof *b);
        if (b == NULL)
            return nomem(d);
        s->blk = b;
        s->cap = c;
    }
    imp_event *e = s->at_start ? imp_push_pre(d, size) : imp_push(d);
    if (e == NULL)
        return nomem(d);
    if (!s->at_start) {
        e->op = SIM_OP_ALLOC;
        e->id = imp_new_id(d);
        e->size = size;
        e->t = e->ready_t = s->t;
    } else {
        s->pre_bytes += size;
    }
    e->str = tag;
    if (addr != 0) {
        imp_map_slot *m = imp_map_insert(&s->live, addr);
        if (m == NULL)
            return nomem(d);
        m->a = s->n;
    } else {
        if (s->n_syn == s->cap_syn) {
            size_t c = s->cap_syn ? 2 * s->cap_syn : 64;
            size_t *y = realloc(s->syn, c * sizeof *y);
            if (y == NULL)
                return nomem(d);
            s->syn = y;
            s->cap_syn = c;
        }
        s->syn[s->n_syn++] = s->n;
    }
    s->blk[s->n++] = (tl_block){.id = e->id, .size = size, .addr = addr, .live = true};
    s->cur += size;
    return SIM_OK;
}

static sim_status block_free(tl_state *s, size_t i)
{
    imp_event *e = imp_push(s->d);
    if (e == NULL)
        return nomem(s->d);
    e->op = SIM_OP_FREE;
    e->id = s->blk[i].id;
    e->t = e->ready_t = s->t;
    s->blk[i].live = false;
    s->cur -= s->blk[i].size;
    if (s->blk[i].addr != 0) {
        imp_map_slot *m = imp_map_find(&s->live, s->blk[i].addr);
        if (m != NULL)
            imp_map_remove(&s->live, m);
    }
    while (s->n > 0 && !s->blk[s->n - 1].live)
        s->n--;
    return SIM_OK;
}

/* The block a gap frees next: the most recent synthetic one (they are freed only here,
 * so the top of syn is live), else the most recently allocated live block other than
 * keep (SIZE_MAX: none): a recorded block is freed in a gap only when the synthetic
 * ones do not cover the drop. */
static size_t top_live(tl_state *s, size_t keep)
{
    if (s->n_syn > 0)
        return s->syn[--s->n_syn];
    for (size_t i = s->n; i > 0; i--)
        if (s->blk[i - 1].live && i - 1 != keep)
            return i - 1;
    return SIZE_MAX;
}

/* Rule 2: bring the live bytes to target with synthetic events (none when equal),
 * never freeing the block keep (the one the point itself frees). */
static sim_status gap_fill(tl_state *s, uint64_t target, size_t keep)
{
    if (s->cur == target)
        return SIM_OK;
    size_t before = s->d->n;
    sim_status st = SIM_OK;
    while (s->cur > target && st == SIM_OK) {
        size_t i = top_live(s, keep);
        if (i == SIZE_MAX)
            break; /* only keep is left: it is larger than the target allows (not reached) */
        st = block_free(s, i);
    }
    if (st == SIM_OK && s->cur < target)
        st = block_new(s, target - s->cur, 0, s->at_start ? s->tag_start : s->tag_gap);
    if (!s->at_start)
        s->gap_events += s->d->n - before;
    return st;
}

static sim_status point_alloc(tl_state *s, const tl_point *p)
{
    imp_map_slot *m = imp_map_find(&s->live, p->addr);
    sim_status st = SIM_OK;
    if (m != NULL) { /* its deallocation was dropped */
        st = block_free(s, (size_t)m->a);
        s->gap_events++;
    }
    uint64_t tag = 0;
    if (p->op_name && p->op_name[0] && (tag = imp_str(s->d, p->op_name)) == 0)
        return nomem(s->d);
    if (st == SIM_OK)
        st = gap_fill(s, p->in_use - p->size, SIZE_MAX);
    s->at_start = false;
    return st == SIM_OK ? block_new(s, p->size, p->addr, tag) : st;
}

static sim_status point_free(tl_state *s, const tl_point *p)
{
    imp_map_slot *m = imp_map_find(&s->live, p->addr);
    sim_status st = SIM_OK;
    if (m != NULL && s->blk[m->a].size != p->size) {
        st = block_free(s, (size_t)m->a); /* not the block this frees */
        s->gap_events++;
        m = NULL;
    }
    if (m == NULL) { /* allocated in a gap, or before the profile */
        if (st == SIM_OK)
            st = gap_fill(s, p->in_use, SIZE_MAX);
        if (st == SIM_OK)
            st = block_new(s, p->size, p->addr, s->at_start ? s->tag_start : s->tag_gap);
        if (st == SIM_OK && !s->at_start)
            s->gap_events++;
        m = imp_map_find(&s->live, p->addr);
    }
    if (st != SIM_OK)
        return st;
    size_t x = (size_t)m->a;
    if ((st = gap_fill(s, p->in_use + p->size, x)) != SIM_OK)
        return st;
    s->at_start = false;
    return block_free(s, x);
}

/* One point: the gap before it, then its own event (rule 1). */
static sim_status point_replay(tl_state *s, const tl_point *p)
{
    imp_doc *d = s->d;
    s->t = p->t;
    size_t before = d->n;
    uint64_t synthetic = s->gap_events;
    bool exact = (p->activity == 1 || p->activity == 2) && p->addr != 0 && p->size != 0 &&
                 (p->activity == 2 || p->in_use >= p->size);
    sim_status st;
    if (!exact) {
        s->odd += p->activity == 1 || p->activity == 2;
        st = gap_fill(s, p->in_use, SIZE_MAX);
    } else {
        st = p->activity == 1 ? point_alloc(s, p) : point_free(s, p);
    }
    s->at_start = false;
    s->exact += exact;
    s->gaps += s->gap_events > synthetic;
    if (st == SIM_OK && d->n > before) {
        d->ev[d->n - 1].has_point = 1;
        d->ev[d->n - 1].rec_allocated = p->in_use;
    }
    return st;
}

/* Rule 3: a block the timeline deallocates before (or without) allocating it was live
 * before the first point: an allocation at the start with its address, while the
 * in-use before the first point has room for it; the rest of that in-use is one block. */
static sim_status prelive_add(tl_state *s, const tl_point *p, uint32_t n)
{
    const tl_point *f = &p[0];
    uint64_t room = f->in_use;
    if (f->activity == 1 && f->addr != 0 && f->in_use >= f->size)
        room -= f->size;
    else if (f->activity == 2 && f->addr != 0)
        room += f->size;
    imp_map seen;
    imp_map_init(&seen);
    sim_status st = SIM_OK;
    for (uint32_t i = 0; i < n && st == SIM_OK; i++) {
        if ((p[i].activity != 1 && p[i].activity != 2) || p[i].addr == 0 || imp_map_find(&seen, p[i].addr))
            continue;
        if (imp_map_insert(&seen, p[i].addr) == NULL)
            st = nomem(s->d);
        else if (p[i].activity == 2 && p[i].size <= room && p[i].size != 0) {
            room -= p[i].size;
            st = block_new(s, p[i].size, p[i].addr, s->tag_start);
        }
    }
    imp_map_release(&seen);
    return st;
}

static void timeline_warn(tl_state *s, uint64_t points, uint64_t pruned)
{
    imp_doc *d = s->d;
    char head[96];
    if (pruned == UINT64_MAX)
        snprintf(head, sizeof head, "no \"memoryProfileSnapshots\"");
    else
        snprintf(head, sizeof head, "\"memoryProfileSnapshots\" pruned to %" PRIu64 " allocations live at the peak",
                 pruned);
    if (s->gaps == 0)
        imp_warn(d, "%s: replayed the %" PRIu64 " points of \"sampledTimelineSnapshots\" instead; they follow one "
                    "another without a gap, so this is every allocation and deallocation of the profile",
                 head, points);
    else {
        imp_warn(d, "%s: replayed the %" PRIu64 " points of \"sampledTimelineSnapshots\" instead, %" PRIu64
                    " exact; in %" PRIu64 " gaps between samples %" PRIu64 " synthetic allocations and frees "
                    "(tag \"sampled gap\") give the recorded in-use at every point",
                 head, points, s->exact, s->gaps, s->gap_events);
        imp_warn(d, "inside each gap of the sampled timeline the individual allocation sizes, their order and their "
                    "addresses are lost");
    }
    if (s->odd)
        imp_warn(d, "%" PRIu64 " timeline points had an activity that could not be replayed (address 0, size 0, "
                    "or less in use than their own allocation): only their in-use was kept",
                 s->odd);
}

sim_status tfprof_timeline_import(imp_doc *d, const json_value *points, const char *where, uint64_t pruned)
{
    tl_point *p = calloc(points->len, sizeof *p);
    tl_state s = {.d = d, .at_start = true};
    imp_map_init(&s.live);
    sim_status st = SIM_OK;
    if (p == NULL || (s.tag_gap = imp_str(d, "sampled gap")) == 0 ||
        (s.tag_start = imp_str(d, "live before the profile")) == 0)
        st = nomem(d);
    imp_loc l = {where, 0};
    for (uint32_t i = 0; i < points->len && st == SIM_OK; i++) {
        l.i = i;
        p[i].order = i;
        st = point_read(d, &points->u.items[i], &l, &p[i]);
    }
    if (st == SIM_OK) {
        qsort(p, points->len, sizeof *p, point_cmp);
        st = prelive_add(&s, p, points->len);
        for (uint32_t i = 0; i < points->len && st == SIM_OK; i++)
            st = point_replay(&s, &p[i]);
    }
    if (st == SIM_OK) {
        d->has_allocated = true;
        d->rec.allocated_source = "TensorFlow sampledTimelineSnapshots heapAllocatedBytes + stackReservedBytes";
        d->rec.allocated_counts_event_sizes = true;
        d->rec.allocated_offset = 0;
        d->rec.allocated_offset_known = true;
        d->rec.live_before_bytes = s.pre_bytes;
        timeline_warn(&s, points->len, pruned);
    }
    free(p);
    free(s.blk);
    free(s.syn);
    imp_map_release(&s.live);
    return st;
}
