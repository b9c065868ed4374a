/* A snapshot's private pools: the pool of each allocation, and the scopes around them. */
#include "import_snapshot_pools.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "traces/pool_id.h"

sim_status snap_pool_get(imp_doc *d, const json_value *obj, const char *key, const imp_loc *l, uint64_t *id,
                         bool *present)
{
    *id = 0;
    *present = false;
    const json_value *v = json_get(obj, key);
    if (v == NULL || v->type == JSON_NULL)
        return SIM_OK;
    uint64_t half[2] = {0, 0};
    bool pair = v->type == JSON_ARRAY && v->len == 2;
    for (uint32_t k = 0; pair && k < 2; k++)
        pair = v->u.items[k].type == JSON_NUMBER && json_to_u64(&v->u.items[k], UINT64_MAX, &half[k]) == JSON_INT_OK;
    if (!pair)
        return imp_fail(d, v, l, "\"%s\" must be a pair of integers (a, b) ≥ 0, as PyTorch's MempoolId_t, not %s", key,
                        v->type == JSON_ARRAY ? "an array of other length or items" : json_type_name(v->type));
    if (!pool_id_from_tuple(half[0], half[1], id))
        return imp_fail(d, v, l,
                        "\"%s\" (%" PRIu64 ", %" PRIu64 ") names no pool PyTorch makes: one half is 0 and the other "
                        "below 2^52 ((0, n) from graph_pool_handle or MemPool, (n, 0) from a CUDA graph)",
                        key, half[0], half[1]);
    *present = true;
    return SIM_OK;
}

typedef struct range {
    uint64_t addr, size, pool;
} range;

typedef struct ranges {
    range *v;
    size_t n, cap;
} ranges;

/* The index of the first range with addr > a. */
static size_t upper(const ranges *r, uint64_t a)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->v[mid].addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const range *range_at(const ranges *r, uint64_t a)
{
    size_t i = upper(r, a);
    if (i == 0 || a - r->v[i - 1].addr >= r->v[i - 1].size)
        return NULL;
    return &r->v[i - 1];
}

static bool range_add(ranges *r, range g)
{
    if (!SIM_GROW(r->v, r->n + 1, r->cap))
        return false;
    size_t i = upper(r, g.addr);
    memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof *r->v);
    r->v[i] = g;
    r->n++;
    return true;
}

/* Take [a, a + size) out of the ranges it overlaps (a segment_free, a segment_unmap). */
static bool range_cut(ranges *r, uint64_t a, uint64_t size)
{
    for (size_t i = 0; i < r->n;) {
        range g = r->v[i];
        if (g.addr >= a + size || a >= g.addr + g.size) {
            i++;
            continue;
        }
        memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
        r->n--;
        if (g.addr < a && !range_add(r, (range){g.addr, a - g.addr, g.pool}))
            return false;
        if (g.addr + g.size > a + size && !range_add(r, (range){a + size, g.addr + g.size - (a + size), g.pool}))
            return false;
        i = 0; /* the list changed under us: the few segments of a snapshot make this cheap */
    }
    return true;
}

typedef struct by_addr {
    uint64_t addr;
    size_t j;
} by_addr;

static int by_addr_cmp(const void *a, const void *b)
{
    const by_addr *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->j < y->j ? -1 : (x->j > y->j);
}

static int range_cmp(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->addr < y->addr ? -1 : (x->addr > y->addr);
}

/* The pool of each segment entry that brings memory (segment_alloc, segment_map):
 * the one it names, else the final segment's at its address when no later entry
 * gives that address back (its segment lived to the end), else the default pool. */
static bool entry_pools(const rb_seg_event *sev, size_t n_sev, const ranges *fin, uint64_t *pool)
{
    by_addr *o = malloc((n_sev ? n_sev : 1) * sizeof *o);
    if (o == NULL)
        return false;
    for (size_t j = 0; j < n_sev; j++)
        o[j] = (by_addr){sev[j].addr, j};
    qsort(o, n_sev, sizeof *o, by_addr_cmp);
    for (size_t k = 0; k < n_sev; k++) {
        const rb_seg_event *e = &sev[o[k].j];
        pool[o[k].j] = e->pool_id;
        if (e->has_pool || (e->action != RB_SEG_ALLOC && e->action != RB_SEG_MAP))
            continue;
        bool given_back = k + 1 < n_sev && o[k + 1].addr == e->addr &&
                          (sev[o[k + 1].j].action == RB_SEG_FREE || sev[o[k + 1].j].action == RB_SEG_UNMAP);
        const range *g = given_back ? NULL : range_at(fin, e->addr);
        pool[o[k].j] = g ? g->pool : 0;
    }
    free(o);
    return true;
}

/* Each alloc's pool: named by its entry, else its segment's at that moment. */
static bool assign(imp_doc *d, const sim_seed *start, const rb_seg_event *sev, size_t n_sev, const ranges *fin,
                   snap_pool_count *out)
{
    ranges live = {0};
    uint64_t *pool = malloc((n_sev ? n_sev : 1) * sizeof *pool);
    bool ok = pool != NULL && entry_pools(sev, n_sev, fin, pool);
    if (start != NULL) {
        for (uint32_t i = 0; ok && i < start->n_segs; i++)
            ok = range_add(&live, (range){start->segs[i].addr, start->segs[i].size_bytes, start->segs[i].pool_id});
    } else {
        /* no start state: the final segments no entry touches were there all along */
        for (size_t i = 0; ok && i < fin->n; i++) {
            bool touched = false;
            for (size_t j = 0; j < n_sev && !touched; j++)
                touched = sev[j].addr < fin->v[i].addr + fin->v[i].size && fin->v[i].addr < sev[j].addr + sev[j].size;
            ok = touched || range_add(&live, fin->v[i]);
        }
    }
    size_t j = 0;
    for (size_t k = 0; ok && k <= d->n; k++) {
        for (; ok && j < n_sev && sev[j].next_event <= k; j++) {
            const rb_seg_event *e = &sev[j];
            if (e->action == RB_SEG_ALLOC || e->action == RB_SEG_MAP)
                ok = range_cut(&live, e->addr, e->size) && range_add(&live, (range){e->addr, e->size, pool[j]});
            else
                ok = range_cut(&live, e->addr, e->size);
        }
        if (k == d->n || d->ev[k].op != SIM_OP_ALLOC)
            continue;
        imp_event *a = &d->ev[k];
        if (!(a->pool_flags & IMP_POOL_RECORDED)) {
            const range *g = range_at(&live, a->addr);
            a->pool = g ? g->pool : 0;
            out->inferred += a->pool != 0;
        }
        out->allocs += a->pool != 0;
    }
    free(live.v);
    free(pool);
    return ok;
}

typedef struct scope {
    size_t first, last; /* the run's first and last alloc in d->ev */
    uint64_t pool;
    uint32_t stream;
    bool all_streams;
} scope;

bool snap_pools_route(imp_doc *d, const sim_seed *start, const rb_seg_event *sev, size_t n_sev, const rb_segment *final,
                      size_t n_final, snap_pool_count *out)
{
    memset(out, 0, sizeof *out);
    ranges fin = {.v = malloc((n_final ? n_final : 1) * sizeof(range)), .n = n_final, .cap = n_final};
    if (fin.v == NULL)
        return false;
    bool any = false;
    for (size_t i = 0; i < n_final; i++) {
        fin.v[i] = (range){final[i].addr, final[i].size, final[i].pool_id};
        any |= final[i].pool_id != 0;
    }
    for (size_t j = 0; j < n_sev; j++)
        any |= sev[j].pool_id != 0;
    for (size_t k = 0; k < d->n; k++)
        any |= d->ev[k].op == SIM_OP_ALLOC && d->ev[k].pool != 0;
    if (!any) { /* the common case: no private pool anywhere */
        free(fin.v);
        return true;
    }
    qsort(fin.v, fin.n, sizeof *fin.v, range_cmp);
    bool ok = assign(d, start, sev, n_sev, &fin, out);
    free(fin.v);
    if (!ok)
        return false;
    /* the runs: consecutive allocs (in trace order) of one private pool */
    scope *sc = NULL;
    size_t n_sc = 0, cap_sc = 0;
    uint64_t *seen = NULL;
    size_t n_seen = 0, cap_seen = 0;
    scope *cur = NULL;
    for (size_t k = 0; k < d->n; k++) {
        const imp_event *a = &d->ev[k];
        if (a->op != SIM_OP_ALLOC)
            continue;
        if (cur != NULL && a->pool == cur->pool) {
            cur->last = k;
            cur->all_streams |= a->stream != cur->stream;
            continue;
        }
        cur = NULL;
        if (a->pool == 0)
            continue;
        if (!SIM_GROW(sc, n_sc + 1, cap_sc))
            goto nomem;
        cur = &sc[n_sc++];
        *cur = (scope){k, k, a->pool, a->stream, false};
        bool known = false;
        for (size_t i = 0; i < n_seen && !known; i++)
            known = seen[i] == a->pool;
        if (!known) {
            if (!SIM_GROW(seen, n_seen + 1, cap_seen))
                goto nomem;
            seen[n_seen++] = a->pool;
        }
    }
    out->scopes = n_sc;
    out->pools = (uint32_t)n_seen;
    free(seen);
    seen = NULL;
    if (n_sc == 0) {
        free(sc);
        return true;
    }
    /* the events again, with a pool_begin before each run and a pool_end after it */
    imp_event *ev = malloc((d->n + 2 * n_sc) * sizeof *ev);
    if (ev == NULL)
        goto nomem;
    size_t n = 0, s = 0;
    for (size_t k = 0; k < d->n; k++) {
        if (s < n_sc && sc[s].first == k) {
            imp_event *b = &ev[n++];
            /* at the alloc's time, with the recorded curve's point before it (before
             * the segment entries that came for it) */
            *b = d->ev[k];
            b->rec_allocated = k > 0 ? d->ev[k - 1].rec_allocated : 0;
            b->rec_reserved = k > 0 ? d->ev[k - 1].rec_reserved : d->rec.reserved_start;
            b->op = SIM_OP_POOL_BEGIN;
            b->ready_t = b->t;
            b->id = b->size = b->str = b->addr = b->share = 0;
            b->has_share = false;
            b->is_oom = 0;
            b->place_seg = UINT32_MAX;
            b->place_off = 0;
            b->pool = sc[s].pool;
            b->stream = sc[s].all_streams ? 0 : sc[s].stream;
            b->pool_flags = sc[s].all_streams ? SIM_POOL_ALL_STREAMS : SIM_POOL_CAPTURE;
        }
        ev[n++] = d->ev[k];
        if (s < n_sc && sc[s].last == k) {
            imp_event *e = &ev[n++];
            *e = d->ev[k];
            e->op = SIM_OP_POOL_END;
            e->ready_t = e->t;
            e->id = e->size = e->str = e->addr = e->share = 0;
            e->has_share = false;
            e->is_oom = 0;
            e->place_seg = UINT32_MAX;
            e->place_off = 0;
            e->pool = sc[s].pool;
            e->stream = 0;
            e->pool_flags = 0;
            s++;
        }
    }
    free(d->ev);
    d->ev = ev;
    d->n = n;
    d->cap = d->n;
    free(sc);
    return true;
nomem:
    free(sc);
    free(seen);
    return false;
}
