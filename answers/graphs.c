/* The CUDA graphs' questions (graphs.h): the rewrite of a trace's captures and the
 * replays that answer per pool and per variant. */
#include "graphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "sim/idmap.h"

const char *graphs_sharing_name(graphs_sharing s)
{
    switch (s) {
    case GRAPHS_AS_RECORDED: return "as recorded";
    case GRAPHS_SHARED: return "one shared pool";
    case GRAPHS_SEPARATE: return "one pool per graph";
    }
    return "?";
}

const char *graphs_order_name(graphs_order o)
{
    switch (o) {
    case GRAPHS_ORDER_RECORDED: return "as recorded";
    case GRAPHS_ORDER_LARGEST_FIRST: return "largest first";
    case GRAPHS_ORDER_SMALLEST_FIRST: return "smallest first";
    }
    return "?";
}

/* ---------------------------------------------------------------- the trace in memory */

typedef struct scope {
    uint64_t begin, end; /* positions of its pool_begin and pool_end */
    uint64_t start;      /* the first event that moves with it (after the scope before it) */
    uint64_t pool;
    uint64_t bytes; /* the most requested bytes it held at once (its size for the order) */
    uint64_t new_pool;
} scope;

typedef struct trace_copy {
    sim_event *ev;
    uint64_t n;
    scope *sc;
    uint32_t n_sc, cap_sc;
    uint32_t all_sc; /* capture scopes of every run (n_sc: the last run's) */
    const char *path, *name;
} trace_copy;

static void copy_release(trace_copy *c)
{
    free(c->ev);
    free(c->sc);
}

static bool same_proc(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool is_capture_begin(const sim_event *e)
{
    return e->op == SIM_OP_POOL_BEGIN && (e->pool_flags & SIM_POOL_CAPTURE) != 0;
}

/* Keep the scopes of the last run of captures only: a capture starts a new run when
 * every graph captured before it was released (all uses of their pools ended: a
 * server's profiling captures, destroyed before the real ones). The earlier runs'
 * events stay as they are. */
static sim_status last_run(trace_copy *c, sim_error *err)
{
    uint64_t *ids = NULL;
    uint32_t *uses = NULL, n_ids = 0, cap_ids = 0, cap_uses = 0, first = 0, k = 0;
    for (uint64_t i = 0; i < c->n && k < c->n_sc; i++) {
        const sim_event *e = &c->ev[i];
        if (e->op != SIM_OP_POOL_BEGIN && e->op != SIM_OP_POOL_RELEASE)
            continue;
        if (i == c->sc[k].begin) {
            bool all_released = k > first;
            for (uint32_t j = first; j < k && all_released; j++)
                for (uint32_t m = 0; m < n_ids; m++)
                    if (ids[m] == c->sc[j].pool && uses[m] > 0)
                        all_released = false;
            if (all_released)
                first = k;
            k++;
        }
        uint32_t m = 0;
        while (m < n_ids && ids[m] != e->pool)
            m++;
        if (m == n_ids) {
            if (!SIM_GROW(ids, n_ids + 1, cap_ids) || !SIM_GROW(uses, n_ids + 1, cap_uses)) {
                free(ids);
                free(uses);
                return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            }
            ids[n_ids] = e->pool;
            uses[n_ids++] = 0;
        }
        if (e->op == SIM_OP_POOL_BEGIN)
            uses[m]++;
        else if (uses[m] > 0)
            uses[m]--;
    }
    free(ids);
    free(uses);
    c->all_sc = c->n_sc;
    if (first > 0) {
        memmove(c->sc, c->sc + first, (c->n_sc - first) * sizeof *c->sc);
        c->n_sc -= first;
    }
    return SIM_OK;
}

/* Read in and find its capture scopes. */
static sim_status copy_read(const evbuf *in, trace_copy *c, sim_error *err)
{
    memset(c, 0, sizeof *c);
    uint64_t n = evbuf_count(in);
    c->ev = malloc((n ? n : 1) * sizeof *c->ev);
    if (c->ev == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(in, &cur);
    c->path = src.path;
    c->name = src.name;
    sim_status st;
    while ((st = src.next(src.ctx, &c->ev[c->n], err)) == SIM_OK)
        c->n++;
    if (st != SIM_END)
        return st;
    idmap live;
    if (!idmap_init(&live))
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    int64_t open = -1; /* the scope being read */
    uint64_t held = 0;
    for (uint64_t i = 0; i < c->n; i++) {
        const sim_event *e = &c->ev[i];
        if (is_capture_begin(e) && open < 0) {
            if (!SIM_GROW(c->sc, c->n_sc + 1, c->cap_sc)) {
                idmap_release(&live);
                return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            }
            c->sc[c->n_sc] = (scope){.begin = i, .pool = e->pool};
            open = c->n_sc++;
            held = 0;
        } else if (e->op == SIM_OP_POOL_END && open >= 0 && e->pool == c->sc[open].pool &&
                   same_proc(e->proc, c->ev[c->sc[open].begin].proc)) {
            c->sc[open].end = i;
            open = -1;
        } else if (open >= 0 && e->op == SIM_OP_ALLOC) {
            bool found = false;
            idmap_entry *x = idmap_find_or_insert(&live, e->id, &found);
            if (x == NULL) {
                idmap_release(&live);
                return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            }
            x->size = e->size;
            held += e->size;
            if (held > c->sc[open].bytes)
                c->sc[open].bytes = held;
        } else if (open >= 0 && e->op == SIM_OP_FREE) {
            idmap_entry *x = idmap_find(&live, e->id);
            if (x != NULL) {
                held -= x->size;
                idmap_remove(&live, x);
            }
        }
    }
    idmap_release(&live);
    if (open >= 0) /* a capture never ended: not a scope */
        c->n_sc--;
    return last_run(c, err);
}

uint32_t graphs_count_captures(const evbuf *in)
{
    trace_copy c;
    sim_error err;
    uint32_t n = copy_read(in, &c, &err) == SIM_OK ? c.n_sc : 0;
    copy_release(&c);
    return n;
}

static sim_status refuse(const trace_copy *c, uint64_t i, const char *why, sim_error *err)
{
    const sim_event *e = &c->ev[i];
    return sim_error_set(err, SIM_ETRACE, c->path, e->line, e->line ? 0 : e->index,
                         "the captures cannot be reordered: %s", why);
}

/* Whether the scopes can move as units (graphs.h): one process, no other pool event,
 * nothing a unit made freed by another, no id made by two units. Sets each scope's
 * start. */
static sim_status check_movable(trace_copy *c, sim_error *err)
{
    scope *sc = c->sc;
    for (uint32_t k = 0; k < c->n_sc; k++)
        sc[k].start = k == 0 ? sc[k].begin : sc[k - 1].end + 1;
    const uint64_t first = sc[0].start, last = sc[c->n_sc - 1].end;
    const char *proc = c->ev[sc[0].begin].proc;
    idmap live, ever; /* id -> 1 + the unit that made it: live now, made at all */
    if (!idmap_init(&live))
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (!idmap_init(&ever)) {
        idmap_release(&live);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    sim_status st = SIM_OK;
    uint32_t unit = 0;
    for (uint64_t i = first; i <= last && st == SIM_OK; i++) {
        const sim_event *e = &c->ev[i];
        while (unit + 1 < c->n_sc && i >= sc[unit + 1].start)
            unit++;
        char why[240];
        if (!same_proc(e->proc, proc)) {
            st = refuse(c, i, "another process's event lies between the captures", err);
            break;
        }
        if ((e->op == SIM_OP_POOL_BEGIN || e->op == SIM_OP_POOL_END) && i != sc[unit].begin && i != sc[unit].end) {
            st = refuse(c, i, "a use_mem_pool scope or a nested pool_begin lies between the captures", err);
        } else if (e->op == SIM_OP_POOL_RELEASE || e->op == SIM_OP_GRAPH_REPLAY) {
            snprintf(why, sizeof why, "a %s of pool %llu lies between the captures", sim_op_name(e->op),
                     (unsigned long long)e->pool);
            st = refuse(c, i, why, err);
        } else if (e->op == SIM_OP_ALLOC) {
            bool found = false, made = false;
            idmap_entry *x = idmap_find_or_insert(&live, e->id, &found);
            idmap_entry *y = x ? idmap_find_or_insert(&ever, e->id, &made) : NULL;
            if (x == NULL || y == NULL) {
                st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            } else if (made && y->handle != unit + 1) {
                snprintf(why, sizeof why,
                         "id %llu is allocated again by a later capture (or the work before it): in another order "
                         "the two would be live at once",
                         (unsigned long long)e->id);
                st = refuse(c, i, why, err);
            } else {
                x->handle = unit + 1;
                y->handle = unit + 1;
            }
        } else if (e->op == SIM_OP_FREE) {
            idmap_entry *x = idmap_find(&live, e->id);
            if (x != NULL && x->handle != unit + 1) {
                snprintf(why, sizeof why,
                         "the free of id %llu, allocated by an earlier capture or between earlier captures, "
                         "lies between the captures (what a graph keeps must outlive every capture)",
                         (unsigned long long)e->id);
                st = refuse(c, i, why, err);
            } else if (x != NULL) {
                idmap_remove(&live, x);
            }
        }
    }
    idmap_release(&live);
    idmap_release(&ever);
    return st;
}

/* the k-th scope of the new order: by bytes, stable */
static int by_bytes_desc(const void *a, const void *b)
{
    const scope *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int by_bytes_asc(const void *a, const void *b)
{
    const scope *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The new id of each scope; the protocol the engine checks must still hold. */
static sim_status assign_pools(trace_copy *c, graphs_sharing sharing, sim_error *err)
{
    uint64_t max_id = 0;
    for (uint64_t i = 0; i < c->n; i++)
        if (c->ev[i].op >= SIM_OP_POOL_BEGIN && c->ev[i].pool > max_id)
            max_id = c->ev[i].pool;
    for (uint32_t k = 0; k < c->n_sc; k++) {
        scope *s = &c->sc[k];
        if (sharing == GRAPHS_AS_RECORDED) {
            s->new_pool = s->pool;
        } else if (sharing == GRAPHS_SHARED) {
            s->new_pool = c->sc[0].pool;
        } else { /* a pool each: the first capture of a pool keeps its id */
            bool taken = false;
            for (uint32_t j = 0; j < k; j++)
                taken |= c->sc[j].pool == s->pool;
            s->new_pool = taken ? ++max_id : s->pool;
        }
    }
    /* a pool mixing captures and use_mem_pool scopes has uses the rewrite cannot split */
    if (sharing != GRAPHS_AS_RECORDED)
        for (uint64_t i = 0; i < c->n; i++) {
            const sim_event *e = &c->ev[i];
            if (e->op != SIM_OP_POOL_BEGIN || is_capture_begin(e))
                continue;
            for (uint32_t k = 0; k < c->n_sc; k++)
                if (c->sc[k].pool == e->pool)
                    return sim_error_set(err, SIM_ETRACE, c->path, e->line, e->line ? 0 : e->index,
                                         "pool %llu is both captured into and used by use_mem_pool: its pool ids "
                                         "cannot be rewritten",
                                         (unsigned long long)e->pool);
        }
    return SIM_OK;
}

/* The new id of a release or replay of old pool p: the i-th release of p goes to the
 * i-th capture of p (in recorded order), later ones and replays to the first. */
static uint64_t remap(const trace_copy *c, uint64_t p, uint32_t nth)
{
    uint64_t first = 0;
    uint32_t seen = 0;
    for (uint32_t k = 0; k < c->n_sc; k++) {
        if (c->sc[k].pool != p)
            continue;
        if (first == 0)
            first = c->sc[k].new_pool;
        if (seen++ == nth)
            return c->sc[k].new_pool;
    }
    return first ? first : p;
}

sim_status graphs_rewrite(const evbuf *in, graphs_sharing sharing, graphs_order order, evbuf **out,
                          graphs_pool_map *map, uint32_t map_cap, uint32_t *n_map, sim_error *err)
{
    *out = NULL;
    if (n_map)
        *n_map = 0;
    trace_copy c;
    sim_status st = copy_read(in, &c, err);
    if (st == SIM_OK && c.n_sc > 0 && order != GRAPHS_ORDER_RECORDED)
        st = check_movable(&c, err);
    if (st == SIM_OK)
        st = assign_pools(&c, sharing, err);
    /* the releases' new ids, from the recorded order of the scopes */
    uint32_t *nth = NULL;
    uint64_t *order_idx = NULL;
    if (st == SIM_OK) {
        nth = calloc(c.n_sc + 1, sizeof *nth);
        order_idx = malloc((c.n ? c.n : 1) * sizeof *order_idx);
        if (nth == NULL || order_idx == NULL)
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    uint64_t n_out = 0;
    if (st == SIM_OK) {
        /* the event order: before the first scope's start, the units, after the last */
        uint64_t first = c.n_sc ? c.sc[0].start : c.n, last = c.n_sc ? c.sc[c.n_sc - 1].end + 1 : c.n;
        if (order == GRAPHS_ORDER_RECORDED || c.n_sc == 0) {
            for (uint64_t i = 0; i < c.n; i++)
                order_idx[n_out++] = i;
        } else {
            scope *units = malloc(c.n_sc * sizeof *units);
            if (units == NULL) {
                st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            } else {
                memcpy(units, c.sc, c.n_sc * sizeof *units);
                qsort(units, c.n_sc, sizeof *units, order == GRAPHS_ORDER_LARGEST_FIRST ? by_bytes_desc : by_bytes_asc);
                for (uint64_t i = 0; i < first; i++)
                    order_idx[n_out++] = i;
                for (uint32_t k = 0; k < c.n_sc; k++)
                    for (uint64_t i = units[k].start; i <= units[k].end; i++)
                        order_idx[n_out++] = i;
                for (uint64_t i = last; i < c.n; i++)
                    order_idx[n_out++] = i;
                free(units);
            }
        }
    }
    evbuf *b = NULL;
    if (st == SIM_OK && (b = evbuf_new(c.path, c.name)) == NULL)
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    /* uses of each new pool, to keep the engine's protocol (a begin after every use of
     * a pool was released is refused: sharing must not join a pool released earlier) */
    uint64_t *pool_ids = NULL;
    uint32_t *uses = NULL, n_ids = 0, cap_ids = 0, cap_u = 0;
    uint32_t *rel_seen = NULL; /* per old pool id index: releases seen so far */
    uint64_t *rel_pool = NULL;
    uint32_t n_rel = 0, cap_rel = 0, cap_rs = 0;
    for (uint64_t j = 0; j < n_out && st == SIM_OK; j++) {
        const uint64_t i = order_idx[j];
        sim_event e = c.ev[i];
        const uint64_t t_here = c.ev[j].t; /* the times stay in file order, the events move */
        if (e.op == SIM_OP_FREE)
            e.ready_t = t_here + (e.ready_t - e.t);
        else
            e.ready_t = t_here;
        e.t = t_here;
        if (e.op == SIM_OP_POOL_BEGIN || e.op == SIM_OP_POOL_END) {
            for (uint32_t k = 0; k < c.n_sc; k++)
                if (c.sc[k].begin == i || c.sc[k].end == i)
                    e.pool = c.sc[k].new_pool;
        } else if (e.op == SIM_OP_POOL_RELEASE || e.op == SIM_OP_GRAPH_REPLAY) {
            uint32_t r = 0;
            while (r < n_rel && rel_pool[r] != e.pool)
                r++;
            if (r == n_rel) {
                if (!SIM_GROW(rel_pool, n_rel + 1, cap_rel) || !SIM_GROW(rel_seen, n_rel + 1, cap_rs)) {
                    st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                    break;
                }
                rel_pool[n_rel] = e.pool;
                rel_seen[n_rel++] = 0;
            }
            e.pool = remap(&c, e.pool, e.op == SIM_OP_POOL_RELEASE ? rel_seen[r]++ : 0);
        }
        if (e.op == SIM_OP_POOL_BEGIN || e.op == SIM_OP_POOL_RELEASE) {
            uint32_t k = 0;
            while (k < n_ids && pool_ids[k] != e.pool)
                k++;
            if (k == n_ids) {
                if (!SIM_GROW(pool_ids, n_ids + 1, cap_ids) || !SIM_GROW(uses, n_ids + 1, cap_u)) {
                    st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                    break;
                }
                pool_ids[n_ids] = e.pool;
                uses[n_ids++] = 0;
                if (map && n_map && *n_map < map_cap && e.op == SIM_OP_POOL_BEGIN)
                    map[(*n_map)++] = (graphs_pool_map){.pool = e.pool, .from = c.ev[i].pool};
            } else if (e.op == SIM_OP_POOL_BEGIN && uses[k] == 0 && sharing == GRAPHS_SHARED) {
                st = sim_error_set(err, SIM_ETRACE, c.path, e.line, e.line ? 0 : e.index,
                                   "the captures cannot share one pool: every graph captured before this one was "
                                   "released first, and a released pool is not used again");
                break;
            }
            if (e.op == SIM_OP_POOL_BEGIN)
                uses[k]++;
            else if (uses[k] > 0)
                uses[k]--;
        }
        if (evbuf_push(b, &e) != SIM_OK)
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    free(pool_ids);
    free(uses);
    free(rel_pool);
    free(rel_seen);
    free(nth);
    free(order_idx);
    copy_release(&c);
    if (st != SIM_OK) {
        evbuf_free(b);
        return st;
    }
    *out = b;
    return SIM_OK;
}

/* ---------------------------------------------------------------- the replays */

/* What an observer keeps of one replay: the pools at the last capture's pool_end. */
typedef struct watch {
    uint64_t capture_pools[GRAPHS_MAX_POOLS]; /* pools opened by a capture pool_begin (per the trace) */
    uint32_t n_capture_pools;
    uint64_t routed_capture[GRAPHS_MAX_POOLS]; /* pools whose open scope is a capture */
    uint32_t n_routed;
    bool seen;
    uint32_t captures_done; /* capture pool_ends seen */
    uint64_t event, total_reserved, pools_reserved;
    strategy_pool_info pools[GRAPHS_MAX_POOLS];
    uint32_t n_pools;
    bool truncated;
} watch;

static int visit_pool(void *ctx, const strategy_pool_info *p)
{
    watch *w = ctx;
    if (w->n_pools < GRAPHS_MAX_POOLS)
        w->pools[w->n_pools++] = *p;
    else
        w->truncated = true;
    w->pools_reserved += p->reserved_bytes;
    return 0;
}

static void observe(void *ctx, const engine_tick *t)
{
    watch *w = ctx;
    const sim_event *e = t->ev;
    if (e == NULL || t->outcome != ENGINE_DONE)
        return;
    if (is_capture_begin(e)) {
        if (w->n_routed < GRAPHS_MAX_POOLS)
            w->routed_capture[w->n_routed++] = e->pool;
        return;
    }
    if (e->op != SIM_OP_POOL_END)
        return;
    bool capture = false;
    for (uint32_t k = 0; k < w->n_routed; k++)
        if (w->routed_capture[k] == e->pool) {
            capture = true;
            w->routed_capture[k] = w->routed_capture[--w->n_routed];
            break;
        }
    if (!capture)
        return;
    const sim_run *run = t->run;
    w->seen = true;
    w->captures_done++;
    w->event = t->event;
    w->total_reserved = t->total.reserved_bytes;
    w->n_pools = 0;
    w->pools_reserved = 0;
    w->truncated = false;
    if (run->ops->pools != NULL)
        run->ops->pools(run->procs[t->process].s, visit_pool, w);
}

static sim_status replay(const engine_config *cfg, const evbuf *b, watch *w, sim_run **out, sim_error *err)
{
    engine_config c = engine_config_plain(cfg);
    c.stop_after_event = 0;
    c.end_at_first_oom = false;
    memset(w, 0, sizeof *w);
    sim_status st = engine_config_observe(&c, observe, w, err);
    if (st != SIM_OK)
        return st;
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(b, &cur);
    return engine_run(&c, &src, 1, out, err);
}

bool graphs_applies(const engine_config *cfg, const evbuf *in)
{
    return cfg->ops->pools != NULL && graphs_count_captures(in) > 0;
}

static void variant_fill(graphs_variant *v, const sim_run *run, const watch *w, uint32_t captures)
{
    v->reached_end_of_capture = w->seen && w->captures_done == captures;
    v->completed = run->total.completed;
    v->ooms = run->total.ooms;
    v->peak_reserved_bytes = run->total.peak_reserved_bytes;
    v->first_oom = run->total.first_oom;
    v->end_of_capture_reserved_bytes = w->seen ? w->total_reserved : 0;
    v->pools_reserved_bytes = w->seen ? w->pools_reserved : 0;
}

static bool better(const graphs_variant *a, const graphs_variant *b)
{
    if (a->completed != b->completed)
        return a->completed;
    if (a->peak_reserved_bytes != b->peak_reserved_bytes)
        return a->peak_reserved_bytes < b->peak_reserved_bytes;
    if (a->end_of_capture_reserved_bytes != b->end_of_capture_reserved_bytes)
        return a->end_of_capture_reserved_bytes < b->end_of_capture_reserved_bytes;
    /* a tie: the setting to write down names an order (the recorded one may be it) */
    return a->order != GRAPHS_ORDER_RECORDED && b->order == GRAPHS_ORDER_RECORDED;
}

sim_status graphs_answer_compute(const engine_config *cfg, const evbuf *in, graphs_answer *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    trace_copy c;
    sim_status st = copy_read(in, &c, err);
    if (st != SIM_OK || c.n_sc == 0 || cfg->ops->pools == NULL) {
        copy_release(&c);
        return st;
    }
    out->present = true;
    out->captures = c.n_sc;
    bool one = true, each = true;
    for (uint32_t k = 0; k < c.n_sc; k++)
        for (uint32_t j = 0; j < k; j++) {
            one &= c.sc[j].pool == c.sc[k].pool;
            each &= c.sc[j].pool != c.sc[k].pool;
        }
    out->recorded_sharing = one && c.n_sc > 1 ? "shared" : each ? "separate" : "mixed";
    /* the trace as it is: each pool at the end of capture */
    watch *w = malloc(sizeof *w);
    if (w == NULL) {
        copy_release(&c);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    sim_run *run = NULL;
    st = replay(cfg, in, w, &run, err);
    if (st == SIM_OK) {
        out->end_of_capture_event = w->seen ? w->event : 0;
        out->end_of_capture_reserved_bytes = w->seen ? w->total_reserved : 0;
        out->pools_truncated = w->truncated;
        for (uint32_t k = 0; k < w->n_pools; k++) {
            graphs_pool *p = &out->pools[out->n_pools++];
            p->pool = w->pools[k].pool;
            p->peak_reserved_bytes = w->pools[k].peak_reserved_bytes;
            p->reserved_bytes = w->pools[k].reserved_bytes;
            for (uint32_t s = 0; s < c.n_sc; s++)
                p->graphs += c.sc[s].pool == p->pool;
        }
    }
    sim_run_free(run);
    /* the variants; the pool each in recorded order answers "one pool per graph" */
    static const graphs_sharing SH[2] = {GRAPHS_SHARED, GRAPHS_SEPARATE};
    static const graphs_order OR[3] = {GRAPHS_ORDER_RECORDED, GRAPHS_ORDER_LARGEST_FIRST, GRAPHS_ORDER_SMALLEST_FIRST};
    for (uint32_t i = 0; i < GRAPHS_VARIANTS && st == SIM_OK; i++) {
        graphs_variant *v = &out->variants[i];
        v->sharing = SH[i / 3];
        v->order = OR[i % 3];
        v->recorded = v->order == GRAPHS_ORDER_RECORDED &&
                      strcmp(out->recorded_sharing, v->sharing == GRAPHS_SHARED ? "shared" : "separate") == 0;
        evbuf *b = NULL;
        graphs_pool_map map[GRAPHS_MAX_POOLS];
        uint32_t n_map = 0;
        sim_error_clear(&v->err);
        v->st = graphs_rewrite(in, v->sharing, v->order, &b, map, GRAPHS_MAX_POOLS, &n_map, &v->err);
        if (v->st == SIM_ENOMEM) {
            *err = v->err;
            st = SIM_ENOMEM;
        }
        if (v->st != SIM_OK)
            continue;
        run = NULL;
        v->st = replay(cfg, b, w, &run, &v->err);
        evbuf_free(b);
        if (v->st == SIM_OK) {
            variant_fill(v, run, w, c.all_sc);
            if (out->best < 0 || better(v, &out->variants[out->best]))
                out->best = (int)i;
        } else if (v->st == SIM_ENOMEM) {
            *err = v->err;
            st = SIM_ENOMEM;
        }
        sim_run_free(run);
    }
    /* what the graphs would need with a pool each: the same rewrite on a device that
     * never runs out, so that every capture happens */
    evbuf *b = NULL;
    graphs_pool_map map[GRAPHS_MAX_POOLS];
    uint32_t n_map = 0;
    sim_error e2;
    if (st == SIM_OK &&
        graphs_rewrite(in, GRAPHS_SEPARATE, GRAPHS_ORDER_RECORDED, &b, map, GRAPHS_MAX_POOLS, &n_map, &e2) == SIM_OK) {
        engine_config big = *cfg;
        big.device.capacity_bytes = GRAPHS_UNBOUNDED_BYTES;
        run = NULL;
        if (replay(&big, b, w, &run, &e2) == SIM_OK)
            for (uint32_t k = 0; k < w->n_pools; k++)
                for (uint32_t m = 0; m < n_map; m++)
                    if (map[m].pool == w->pools[k].pool)
                        for (uint32_t p = 0; p < out->n_pools; p++)
                            if (out->pools[p].pool == map[m].from)
                                out->pools[p].one_pool_each_bytes += w->pools[k].peak_reserved_bytes;
        sim_run_free(run);
    }
    evbuf_free(b);
    free(w);
    copy_release(&c);
    return st;
}
