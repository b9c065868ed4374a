/* Two passes over a replay for the pictures (capture.h).
 *
 * Both passes watch the replay through the engine's observer, which sees every
 * measured event with its outcome and the device totals the engine computed for
 * it. Pass 1 adds each tick's totals to a min/max curve (sim/timeline.h). Pass 2
 * is stopped by the engine at the peak (engine_config.stop_after_event) and keeps
 * the live allocations per process on the way: an id map (sim/idmap.h) from trace
 * id to a record with the size, stream, tag and the strategy's handle, since tags
 * are gone once the source moves on. A free whose memory comes back at ready_t
 * stays listed as pending until then.
 *
 * Rejected: snapshotting the allocator at every new peak during the first pass
 * (a walk per new maximum: quadratic on growing traces); the engine's own timeline
 * (it is the same curve, but its rows are numbered by the engine's global event
 * count, which also counts the events of a process an OOM ended). */
#include "capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "sim/idmap.h"
#include "strategies/planned.h"

/* ---------------------------------------------------------------- pass 1: the curve */

typedef struct curve_pass {
    timeline *curve;
    timeline **procs;          /* the capture's proc_curves, grown as processes appear */
    uint32_t *n_procs;
    uint32_t buckets;
    bool oom;                  /* out of host memory: the pass fails */
    uint64_t events;           /* ticks so far */
    uint64_t oom_event;
    uint64_t oom_run_event, oom_t; /* the first OOM's global event number and time */
    uint32_t oom_process;
    capture *cap; /* its marks */
    uint32_t marks_cap;
} curve_pass;

static void curve_tick(void *ctx, const engine_tick *k)
{
    curve_pass *p = ctx;
    p->events++;
    if (p->oom_event == 0 && (k->outcome == ENGINE_OOM_DROPPED || k->outcome == ENGINE_OOM_ENDED)) {
        p->oom_event = p->events;
        p->oom_run_event = k->event;
        p->oom_t = k->t;
        p->oom_process = k->process;
    }
    if (k->ev != NULL && (k->ev->op == SIM_OP_MARK || k->ev->op == SIM_OP_EMPTY_CACHE)) {
        capture *c = p->cap;
        if (c->n_marks == CAPTURE_MAX_MARKS) {
            c->marks_dropped++;
        } else if (!SIM_GROW(c->marks, c->n_marks + 1, p->marks_cap)) {
            p->oom = true;
        } else {
            capture_mark *m = &c->marks[c->n_marks++];
            *m = (capture_mark){
                .event = p->events, .t = k->t, .process = k->process, .empty_cache = k->ev->op == SIM_OP_EMPTY_CACHE};
            if (!m->empty_cache && k->ev->name)
                snprintf(m->name, sizeof m->name, "%s", k->ev->name);
        }
    }
    timeline_row r = {.t = k->t, .event = p->events, .requested = k->requested,
                      .allocated = k->total.allocated_bytes, .reserved = k->total.reserved_bytes,
                      .fragmentation = k->fragmentation};
    timeline_add(p->curve, &r);
    if (k->run->n_procs > 1 || *p->n_procs > 0) {
        while (*p->n_procs <= k->process && !p->oom) {
            timeline *a = realloc(*p->procs, ((size_t)*p->n_procs + 1) * sizeof *a);
            if (a == NULL || !timeline_init(&a[*p->n_procs], p->buckets)) {
                if (a)
                    *p->procs = a;
                p->oom = true;
                break;
            }
            *p->procs = a;
            (*p->n_procs)++;
        }
        if (!p->oom) {
            timeline_row pr = {.t = k->t, .event = p->events, .requested = k->proc_requested,
                               .allocated = k->proc.allocated_bytes, .reserved = k->proc.reserved_bytes,
                               .fragmentation = sim_fragmentation(k->proc.free_bytes, k->proc.largest_free_bytes)};
            timeline_add(&(*p->procs)[k->process], &pr);
        }
    }
}

/* ---------------------------------------------------------------- pass 2: live allocations */

typedef struct live_rec {
    uint64_t id, size, ready_t;
    uint32_t source, stream, proc;
    strategy_handle handle; /* the strategy's, for ops->locate at the moment */
    bool pending;
    char *tag;                 /* NULL if none */
} live_rec;

typedef struct live_pass {
    idmap *maps;               /* per process: trace id -> index into recs (entry.handle) */
    uint32_t n_maps;
    live_rec *recs;
    uint64_t n, cap;
    bool oom;                  /* out of host memory: the pass fails */
} live_pass;

static idmap *live_map(live_pass *lp, uint32_t proc)
{
    if (proc >= lp->n_maps) {
        idmap *m = realloc(lp->maps, ((size_t)proc + 1) * sizeof *m);
        if (m == NULL)
            return NULL;
        lp->maps = m;
        for (; lp->n_maps <= proc; lp->n_maps++)
            if (!idmap_init(&lp->maps[lp->n_maps]))
                return NULL;
    }
    return &lp->maps[proc];
}

static void live_put(live_pass *lp, idmap *m, const engine_tick *k)
{
    const sim_event *ev = k->ev;
    if (!SIM_GROW(lp->recs, lp->n + 1, lp->cap)) {
        lp->oom = true;
        return;
    }
    idmap_entry *ent = idmap_insert(m, ev->id);
    if (ent == NULL) {
        lp->oom = true;
        return;
    }
    ent->size = ev->size;
    ent->handle = (uint32_t)lp->n;
    live_rec *r = &lp->recs[lp->n++];
    *r = (live_rec){.id = ev->id, .size = ev->size, .source = k->source, .stream = ev->stream,
                    .proc = k->process, .handle = k->handle};
    if (ev->tag && ev->tag[0]) {
        size_t n = strlen(ev->tag);
        if (n >= sizeof ((capture_alloc *)0)->tag)
            n = sizeof ((capture_alloc *)0)->tag - 1;
        r->tag = malloc(n + 1);
        if (r->tag == NULL) {
            lp->oom = true;
            return;
        }
        memcpy(r->tag, ev->tag, n);
        r->tag[n] = '\0';
    }
}

/* Remove the record of ent (in map m); the last record moves into its place. */
static void live_del(live_pass *lp, idmap *m, idmap_entry *ent)
{
    uint64_t i = ent->handle;
    idmap_remove(m, ent);
    free(lp->recs[i].tag);
    if (i != --lp->n) {
        lp->recs[i] = lp->recs[lp->n];
        idmap_entry *moved = idmap_find(&lp->maps[lp->recs[i].proc], lp->recs[i].id);
        moved->handle = (uint32_t)i;
    }
}

static void live_tick(void *ctx, const engine_tick *k)
{
    live_pass *lp = ctx;
    const sim_event *ev = k->ev;
    /* a deferred free coming due: its record says when (ready_t), see take_top;
     * an OOM took nothing (dropped, or the process ended: what it held stays listed
     * as it was at its end, like its instance's blocks in the walk) */
    if (ev == NULL || k->outcome != ENGINE_DONE || lp->oom)
        return;
    if (ev->op != SIM_OP_ALLOC && ev->op != SIM_OP_FREE)
        return;
    idmap *m = live_map(lp, k->process);
    if (m == NULL) {
        lp->oom = true;
        return;
    }
    if (ev->op == SIM_OP_ALLOC) {
        live_put(lp, m, k);
        return;
    }
    idmap_entry *ent = idmap_find(m, ev->id);
    if (ent == NULL)
        return;
    if (ev->ready_t > ev->t) {
        lp->recs[ent->handle].pending = true;
        lp->recs[ent->handle].ready_t = ev->ready_t;
    } else {
        live_del(lp, m, ent);
    }
}

static void live_release(live_pass *lp)
{
    for (uint64_t i = 0; i < lp->n; i++)
        free(lp->recs[i].tag);
    free(lp->recs);
    for (uint32_t i = 0; i < lp->n_maps; i++)
        idmap_release(&lp->maps[i]);
    free(lp->maps);
    memset(lp, 0, sizeof *lp);
}

/* ---------------------------------------------------------------- walking */

/* Where a pass puts what it saw: the peak's fields of the capture or its OOM view's. */
typedef struct view_out {
    capture_block **blocks;
    uint64_t *n_blocks;
    bool *truncated;
    char **tags;
    capture_alloc *top;
    uint32_t *n_top;
    uint64_t *live_count, *live_bytes;
} view_out;

typedef struct walk_ctx {
    view_out *c;
    uint64_t cap;
    uint32_t proc;
} walk_ctx;

#define CAPTURE_MAX_BLOCKS ((uint64_t)1 << 20)

static int collect_block(void *ctx, const strategy_block *b)
{
    walk_ctx *w = ctx;
    view_out *c = w->c;
    if (*c->n_blocks == CAPTURE_MAX_BLOCKS) {
        *c->truncated = true;
        return 1;
    }
    if (!SIM_GROW(*c->blocks, *c->n_blocks + 1, w->cap)) {
        *c->truncated = true;
        return 1;
    }
    (*c->blocks)[(*c->n_blocks)++] = (capture_block){.b = *b, .proc = w->proc};
    return 0;
}

static int alloc_order(const void *a, const void *b)
{
    const capture_alloc *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void take_top(view_out *c, const live_pass *lp, uint64_t peak_t)
{
    for (uint64_t i = 0; i < lp->n; i++) {
        const live_rec *s = &lp->recs[i];
        if (s->pending && s->ready_t <= peak_t)
            continue; /* its memory came back before the moment */
        (*c->live_count)++;
        *c->live_bytes += s->size;
        capture_alloc a = {.id = s->id, .size = s->size, .source = s->source, .stream = s->stream,
                           .pending = s->pending};
        if (s->tag)
            snprintf(a.tag, sizeof a.tag, "%s", s->tag);
        if (*c->n_top < CAPTURE_TOP) {
            c->top[(*c->n_top)++] = a;
            qsort(c->top, *c->n_top, sizeof c->top[0], alloc_order);
        } else if (alloc_order(&a, &c->top[CAPTURE_TOP - 1]) < 0) {
            c->top[CAPTURE_TOP - 1] = a;
            qsort(c->top, *c->n_top, sizeof c->top[0], alloc_order);
        }
    }
}

/* ---------------------------------------------------------------- naming blocks */

/* A live allocation under a key: (process, 0, its block's address) or (process,
 * stream, size). */
typedef struct rec_key {
    uint32_t proc, stream;
    uint64_t v;
    uint64_t rec;              /* index into the live pass's records */
} rec_key;

static int key_order(const void *pa, const void *pb)
{
    const rec_key *x = pa, *y = pb;
    if (x->proc != y->proc)
        return x->proc < y->proc ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* The index of the first of ix[0..n) equal to want and how many are, or n and 0. */
static uint64_t key_range(const rec_key *ix, uint64_t n, const rec_key *want, uint64_t *count)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (key_order(&ix[mid], want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t e = lo;
    while (e < n && key_order(&ix[e], want) == 0)
        e++;
    *count = e - lo;
    return *count ? lo : n;
}

static bool names_in_use(const capture_block *k)
{
    return k->b.state == BLOCK_USED || k->b.state == BLOCK_PENDING;
}

/* Each used or pending block of out gets the trace id and tag of its live
 * allocation. A strategy with ops->locate says where each live allocation is now
 * (the walk and locate see the same moment), so every block one holds is named;
 * without it, a block is named by the one live allocation of its process, stream
 * and requested size when exactly one exists and exactly one such block does (then
 * they are each other's), and with several, alike says how many. Tags are copied
 * into one buffer, *out->tags. A pending free whose memory came back before the
 * moment (t) is not live. */
static bool name_blocks(view_out *out, const live_pass *lp, const sim_run *run, uint64_t t)
{
    capture_block *bl = *out->blocks;
    const uint64_t nb = *out->n_blocks;
    rec_key *at_ix = malloc((size_t)(lp->n ? lp->n : 1) * sizeof *at_ix);
    rec_key *sz_ix = malloc((size_t)(lp->n ? lp->n : 1) * sizeof *sz_ix);
    uint64_t *pick = malloc((size_t)(nb ? nb : 1) * sizeof *pick);
    uint32_t *claims = calloc(lp->n ? lp->n : 1, sizeof *claims);
    bool ok = at_ix && sz_ix && pick && claims;
    uint64_t n_at = 0, n_sz = 0;
    for (uint64_t i = 0; ok && i < lp->n; i++) {
        const live_rec *r = &lp->recs[i];
        if (r->pending && r->ready_t <= t)
            continue;
        strategy_block at;
        if (run->ops->locate == NULL)
            sz_ix[n_sz++] = (rec_key){r->proc, r->stream, r->size, i};
        else if (r->handle != STRATEGY_HANDLE_NONE && r->proc < run->n_procs &&
                 run->ops->locate(run->procs[r->proc].s, r->handle, &at))
            at_ix[n_at++] = (rec_key){r->proc, 0, at.addr, i}; /* else it holds no block (0 B) */
    }
    if (ok) {
        qsort(at_ix, (size_t)n_at, sizeof *at_ix, key_order);
        qsort(sz_ix, (size_t)n_sz, sizeof *sz_ix, key_order);
    }
    for (uint64_t j = 0; ok && j < nb; j++) {
        capture_block *k = &bl[j];
        pick[j] = UINT64_MAX;
        if (!names_in_use(k))
            continue;
        uint64_t cnt;
        rec_key want = {k->proc, 0, k->b.addr, 0};
        uint64_t f = key_range(at_ix, n_at, &want, &cnt);
        if (cnt == 1) {
            pick[j] = at_ix[f].rec;
            continue;
        }
        if (run->ops->locate != NULL)
            continue; /* no live allocation of the trace's there: the start state's, or a
                       * pending block whose free came back before t (torch polls later) */
        want = (rec_key){k->proc, k->b.stream, k->b.requested_bytes, 0};
        f = key_range(sz_ix, n_sz, &want, &cnt);
        k->alike = cnt > UINT32_MAX ? UINT32_MAX : (uint32_t)cnt;
        if (cnt == 1) {
            pick[j] = sz_ix[f].rec;
            claims[f]++;
        }
    }
    size_t tag_bytes = 0;
    for (uint64_t j = 0; ok && j < nb; j++) {
        if (pick[j] == UINT64_MAX)
            continue;
        const live_rec *r = &lp->recs[pick[j]];
        if (run->ops->locate == NULL) {
            rec_key want = {r->proc, r->stream, r->size, 0};
            uint64_t cnt, f = key_range(sz_ix, n_sz, &want, &cnt);
            if (claims[f] != 1) { /* two blocks of that size: neither is known */
                pick[j] = UINT64_MAX;
                continue;
            }
        }
        tag_bytes += r->tag ? strlen(r->tag) + 1 : 0;
    }
    char *tags = ok ? malloc(tag_bytes ? tag_bytes : 1) : NULL;
    ok = ok && tags != NULL;
    *out->tags = tags;
    for (uint64_t j = 0; ok && j < nb; j++) {
        if (pick[j] == UINT64_MAX)
            continue;
        const live_rec *r = &lp->recs[pick[j]];
        capture_block *k = &bl[j];
        k->known = true;
        k->alike = 1;
        k->id = r->id;
        if (r->tag) {
            size_t len = strlen(r->tag) + 1;
            memcpy(tags, r->tag, len);
            k->tag = tags;
            tags += len;
        }
    }
    free(at_ix);
    free(sz_ix);
    free(pick);
    free(claims);
    return ok;
}

/* ---------------------------------------------------------------- the passes */

/* A replay stopped after global event `stop` (time t), walked into out. */
static sim_status view_pass(const engine_config *cfg, const capture_sources *src, uint64_t stop, uint64_t t,
                            view_out *out, sim_error *err)
{
    sim_event_source *srcs = calloc(src->n ? src->n : 1, sizeof *srcs);
    if (srcs == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    sim_status st = src->open(src->ctx, srcs, err);
    if (st != SIM_OK) {
        free(srcs);
        return st;
    }
    live_pass lp = {0};
    engine_config c2 = engine_config_plain(cfg);
    c2.stop_after_event = stop;
    c2.observers[0] = (engine_watch){live_tick, &lp}; /* instead of the caller's */
    c2.n_observers = 1;
    sim_run *run = NULL;
    st = engine_run(&c2, srcs, src->n, &run, err);
    src->close(src->ctx);
    if (st == SIM_OK && lp.oom)
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (st == SIM_OK) {
        walk_ctx w = {out, 0, 0};
        for (uint32_t i = 0; i < run->n_procs && !*out->truncated; i++) {
            w.proc = i;
            run->ops->walk(run->procs[i].s, collect_block, &w);
        }
        take_top(out, &lp, t);
        if (!name_blocks(out, &lp, run, t))
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    sim_run_free(run);
    live_release(&lp);
    free(srcs);
    return st;
}

static int rect_larger(const void *pa, const void *pb)
{
    const capture_rect *a = pa, *b = pb;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

/* The plan's rectangles when the first process's strategy planned offline. */
static sim_status plan_rects(capture *c, sim_error *err)
{
    const sim_run *run = c->run;
    uint32_t n;
    if (run->n_procs == 0 || !planned_plan_info(run->ops, run->procs[0].s, &n, &c->plan_heap, &c->plan_events) ||
        n == 0)
        return SIM_OK;
    capture_rect *all = malloc((size_t)n * sizeof *all);
    if (all == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        planned_rect r;
        planned_plan_rect(run->procs[0].s, i, &r);
        if (r.size > 0)
            all[k++] = (capture_rect){.off = r.off, .size = r.size, .first = r.first, .last = r.last};
    }
    qsort(all, k, sizeof *all, rect_larger);
    c->plan_buffers = k;
    c->n_rects = k < CAPTURE_PLAN_RECTS ? k : CAPTURE_PLAN_RECTS;
    c->rects = all;
    return SIM_OK;
}

sim_status capture_run(const engine_config *cfg, const capture_sources *src, uint32_t buckets, capture **out,
                       sim_error *err)
{
    *out = NULL;
    capture *c = calloc(1, sizeof *c);
    sim_event_source *srcs = calloc(src->n ? src->n : 1, sizeof *srcs);
    sim_status st;
    if (c == NULL || srcs == NULL || !timeline_init(&c->curve, buckets)) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto fail;
    }
    if ((st = src->open(src->ctx, srcs, err)) != SIM_OK)
        goto fail;
    curve_pass cp = {.cap = c,
                     .curve = &c->curve,
                     .procs = &c->proc_curves,
                     .n_procs = &c->n_proc_curves,
                     .buckets = buckets};
    engine_config c1 = *cfg; /* the curve first, then the caller's observers */
    c1.n_observers = 0;
    if ((st = engine_config_observe(&c1, curve_tick, &cp, err)) != SIM_OK)
        goto fail;
    for (uint32_t i = 0; i < cfg->n_observers; i++)
        if ((st = engine_config_observe(&c1, cfg->observers[i].fn, cfg->observers[i].ctx, err)) != SIM_OK)
            goto fail;
    st = engine_run(&c1, srcs, src->n, &c->run, err);
    src->close(src->ctx);
    if (st != SIM_OK)
        goto fail;
    if (cp.oom) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto fail;
    }
    timeline_finish(&c->curve);
    for (uint32_t i = 0; i < c->n_proc_curves; i++)
        timeline_finish(&c->proc_curves[i]);
    c->events = cp.events;
    c->oom_event = cp.oom_event;
    c->oom_process = cp.oom_process;
    if ((st = plan_rects(c, err)) != SIM_OK)
        goto fail;
    const sim_metrics *m = &c->run->total;
    view_out peak = {&c->blocks, &c->n_blocks, &c->blocks_truncated, &c->tags,
                     c->top,     &c->n_top,    &c->live_count,       &c->live_bytes};
    if (m->peak_reserved_event && (st = view_pass(cfg, src, m->peak_reserved_event, m->peak_reserved_t, &peak, err)) != SIM_OK)
        goto fail;
    if (cp.oom_run_event) {
        /* the third pass: the allocator as the failing request found it (the engine
         * stops after measuring that event, before the process leaves the device) */
        capture_view *v = &c->oom_view;
        view_out at = {&c->oom_blocks, &v->n_blocks, &v->blocks_truncated, &c->oom_tags,
                       c->oom_top,     &v->n_top,    &v->live_count,       &v->live_bytes};
        if ((st = view_pass(cfg, src, cp.oom_run_event, cp.oom_t, &at, err)) != SIM_OK)
            goto fail;
        c->has_oom_view = true;
        v->event = cp.oom_run_event;
        v->t = cp.oom_t;
        v->what = "the OOM";
        v->blocks = c->oom_blocks;
        v->top = c->oom_top;
        v->request = m->first_oom.info.size_bytes;
    }
    free(srcs);
    *out = c;
    return SIM_OK;
fail:
    free(srcs);
    capture_free(c);
    return st;
}

void capture_free(capture *c)
{
    if (c == NULL)
        return;
    sim_run_free(c->run);
    timeline_release(&c->curve);
    for (uint32_t i = 0; i < c->n_proc_curves; i++)
        timeline_release(&c->proc_curves[i]);
    free(c->proc_curves);
    free(c->blocks);
    free(c->oom_blocks);
    free(c->tags);
    free(c->oom_tags);
    free(c->marks);
    free(c->rects);
    free(c);
}

capture_view capture_peak_view(const capture *c)
{
    const sim_metrics *m = &c->run->total;
    return (capture_view){.event = m->peak_reserved_event, .t = m->peak_reserved_t, .what = "the peak",
                          .blocks = c->blocks, .n_blocks = c->n_blocks, .blocks_truncated = c->blocks_truncated,
                          .top = c->top, .n_top = c->n_top, .live_count = c->live_count,
                          .live_bytes = c->live_bytes};
}
