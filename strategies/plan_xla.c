/* XLA's heap (plan_xla.h for the rules and their source). The committed buffers
 * that share a time with the one being placed come from plan_index; their chunks
 * are sorted by offset and walked once to find the best gap. */
#include "plan_xla.h"

#include <pthread.h>
#include <stdlib.h>

#include "plan_index.h"

/* The unbounded last gap ends here, as XLA's free chunk list ends at INT64_MAX. */
#define XLA_UNBOUNDED ((uint64_t)INT64_MAX)

/* The groups of shared buffers (rule 7), made once for both orders: root i lists
 * its other members as member[first[i] .. first[i + 1]). Without shares every
 * buffer is a root of its own and the arrays are NULL. */
typedef struct xla_groups {
    const plan_buffer *b;
    uint32_t *root;  /* per buffer */
    uint32_t *first; /* n + 1 */
    uint32_t *member;
    uint64_t *max_size; /* per root: the group's largest size */
    int64_t *max_end;   /* per root: the group's latest end */
} xla_groups;

typedef struct xla_work {
    const plan_buffer *b;
    const xla_groups *g;
    uint32_t n;
    uint64_t alignment;
    uint64_t limit;
    plan_index *index;
    uint32_t *ids;          /* the roots to place, in order */
    uint32_t *in_heap;      /* the buffers committed to the current heap */
    plan_chunk *hits, *tmp; /* a group's chunks, gathered over its members */
    uint32_t cap_hits;
} xla_work;

static bool is_root(const xla_groups *g, uint32_t i)
{
    return g->root == NULL || g->root[i] == i;
}

static uint32_t members(const xla_groups *g, uint32_t i, const uint32_t **m)
{
    if (g->first == NULL)
        return 0;
    *m = &g->member[g->first[i]];
    return g->first[i + 1] - g->first[i];
}

static uint64_t group_size(const xla_groups *g, uint32_t i)
{
    return g->max_size != NULL ? g->max_size[i] : g->b[i].size;
}

static uint64_t live_length(const plan_buffer *b)
{
    return (uint64_t)(b->end - b->start);
}

/* The temporal key's length: from the root's start to the group's latest end. */
static uint64_t group_length(const xla_groups *g, uint32_t i)
{
    int64_t end = g->max_end != NULL ? g->max_end[i] : g->b[i].end;
    return (uint64_t)(end - g->b[i].start);
}

static bool spatial_less(const void *ctx, uint32_t x, uint32_t y)
{
    const plan_buffer *b = ((const xla_groups *)ctx)->b;
    if (b[x].size != b[y].size)
        return b[x].size > b[y].size;
    if (live_length(&b[x]) != live_length(&b[y]))
        return live_length(&b[x]) > live_length(&b[y]);
    return x < y;
}

static bool temporal_less(const void *ctx, uint32_t x, uint32_t y)
{
    const xla_groups *g = ctx;
    uint64_t lx = group_length(g, x), ly = group_length(g, y);
    if (lx != ly)
        return lx > ly;
    if (g->b[x].size != g->b[y].size)
        return g->b[x].size > g->b[y].size;
    return x < y;
}

sim_status plan_xla_roots(const plan_buffer *b, uint32_t n, const uint32_t *share, uint32_t *root)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = share[i];
        if (s != PLAN_NONE && s >= i)
            return SIM_EUSAGE;
        root[i] = s == PLAN_NONE || b[i].size == 0 || b[s].size == 0 ? i : root[s];
    }
    return SIM_OK;
}

static void groups_release(xla_groups *g)
{
    free(g->root);
    free(g->first);
    free(g->member);
    free(g->max_size);
    free(g->max_end);
}

/* Builds the groups from share[] (rule 7). SIM_EUSAGE when a share does not name an
 * earlier buffer. */
static sim_status groups_make(xla_groups *g, const plan_buffer *b, uint32_t n, const uint32_t *share)
{
    *g = (xla_groups){.b = b};
    if (share == NULL)
        return SIM_OK;
    size_t nn = n ? n : 1;
    g->root = malloc(nn * sizeof *g->root);
    g->first = calloc(nn + 1, sizeof *g->first);
    g->member = malloc(nn * sizeof *g->member);
    g->max_size = malloc(nn * sizeof *g->max_size);
    g->max_end = malloc(nn * sizeof *g->max_end);
    if (g->root == NULL || g->first == NULL || g->member == NULL || g->max_size == NULL || g->max_end == NULL)
        return SIM_ENOMEM;
    sim_status st = plan_xla_roots(b, n, share, g->root);
    if (st != SIM_OK)
        return st;
    for (uint32_t i = 0; i < n; i++) {
        g->max_size[i] = b[i].size;
        g->max_end[i] = b[i].end;
        uint32_t r = g->root[i];
        if (r == i)
            continue;
        g->first[r + 1]++;
        if (b[i].size > g->max_size[r])
            g->max_size[r] = b[i].size;
        if (b[i].end > g->max_end[r])
            g->max_end[r] = b[i].end;
    }
    for (uint32_t i = 0; i < n; i++)
        g->first[i + 1] += g->first[i];
    uint32_t *at = malloc(nn * sizeof *at);
    if (at == NULL)
        return SIM_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        at[i] = g->first[i];
    for (uint32_t i = 0; i < n; i++)
        if (g->root[i] != i)
            g->member[at[g->root[i]]++] = i;
    free(at);
    return SIM_OK;
}

typedef struct best_gap {
    uint64_t offset;
    uint64_t size;
    bool found;
} best_gap;

/* One entry of the free chunk list [lo, hi): kept when it holds size from lo
 * (MakeFreeChunksList), then a candidate when size fits from its aligned start,
 * the strictly smallest one winning (FindUnslicedChunkCandidates). */
static void consider_gap(best_gap *g, uint64_t lo, uint64_t hi, uint64_t size, uint64_t align)
{
    if (hi < lo || hi - lo < size)
        return;
    uint64_t at = plan_align_up(lo, align);
    if (hi < size || hi - size < at)
        return;
    uint64_t gap = hi - lo;
    if (!g->found || gap < g->size)
        *g = (best_gap){.offset = at, .size = gap, .found = true};
}

/* The chunks live at any time of root id's group: the index's answer for a group of
 * one, else every member's gathered and sorted by offset (repeats do no harm). */
static sim_status group_hits(xla_work *w, uint32_t id, plan_chunk **c, uint32_t *k)
{
    const plan_buffer *me = &w->b[id];
    const uint32_t *m = NULL;
    uint32_t n_m = members(w->g, id, &m);
    sim_status st = plan_index_query(w->index, me->start, me->end, c, k);
    if (st != SIM_OK || n_m == 0)
        return st;
    uint32_t n = 0;
    for (uint32_t j = 0; j <= n_m; j++) {
        if (j > 0 && (st = plan_index_query(w->index, w->b[m[j - 1]].start, w->b[m[j - 1]].end, c, k)) != SIM_OK)
            return st;
        if (n + *k > w->cap_hits) {
            uint32_t cap = (n + *k) * 2;
            plan_chunk *h = realloc(w->hits, (size_t)cap * sizeof *h);
            if (h != NULL)
                w->hits = h;
            plan_chunk *t = h != NULL ? realloc(w->tmp, (size_t)cap * sizeof *t) : NULL;
            if (t == NULL)
                return SIM_ENOMEM;
            w->tmp = t;
            w->cap_hits = cap;
        }
        for (uint32_t i = 0; i < *k; i++)
            w->hits[n++] = (*c)[i];
    }
    plan_sort_chunks(w->hits, w->tmp, n);
    *c = w->hits;
    *k = n;
    return SIM_OK;
}

static sim_status find_offset(xla_work *w, uint32_t id, uint64_t *out)
{
    plan_chunk *c;
    uint32_t k;
    sim_status st = group_hits(w, id, &c, &k);
    if (st != SIM_OK)
        return st;
    if (k == 0) {
        *out = 0;
        return SIM_OK;
    }
    best_gap g = {0};
    uint64_t size = group_size(w->g, id), align = w->alignment;
    uint64_t free_start = 0;
    uint64_t run_off = c[0].off, run_end = c[0].off + c[0].size;
    for (uint32_t i = 1; i < k; i++) {
        const plan_chunk *ci = &c[i];
        uint64_t c_end = ci->off + ci->size;
        if (ci->off < run_end) {
            if (c_end > run_end)
                run_end = c_end;
            continue;
        }
        consider_gap(&g, free_start, run_off, size, align);
        uint64_t next = plan_align_up(run_end, align);
        if (next > free_start)
            free_start = next;
        run_off = ci->off;
        run_end = c_end;
    }
    consider_gap(&g, free_start, run_off, size, align);
    uint64_t next = plan_align_up(run_end, align);
    if (next > free_start)
        free_start = next;
    consider_gap(&g, free_start, XLA_UNBOUNDED, size, align);
    if (!g.found)
        return SIM_EINTERNAL; /* the unbounded gap always fits a size below 2^63 */
    *out = g.offset;
    return SIM_OK;
}

/* One order, with or without a heap limit, into offsets. */
static sim_status plan_order(xla_work *w, plan_less less, uint64_t *offsets, plan_result *res)
{
    uint32_t n_todo = 0;
    for (uint32_t i = 0; i < w->n; i++) {
        offsets[i] = 0;
        if (w->b[i].size > 0 && is_root(w->g, i))
            w->ids[n_todo++] = i;
    }
    sim_status st = plan_sort(w->ids, n_todo, less, w->g);
    if (st != SIM_OK)
        return st;
    uint64_t base = 0;
    uint32_t heaps = 0;
    do {
        plan_index_reset(w->index);
        uint64_t heap = 0;
        uint32_t n_in = 0, n_left = 0;
        for (uint32_t k = 0; k < n_todo; k++) {
            uint32_t id = w->ids[k];
            uint64_t off;
            st = find_offset(w, id, &off);
            if (st != SIM_OK)
                return st;
            uint64_t end = off + w->b[id].size;
            if (end <= w->limit || heap == 0) {
                const uint32_t *m = NULL;
                uint32_t n_m = members(w->g, id, &m);
                for (uint32_t j = 0; j <= n_m; j++) {
                    uint32_t x = j == 0 ? id : m[j - 1];
                    offsets[x] = off;
                    plan_index_commit(w->index, x, off, 0);
                    w->in_heap[n_in++] = x;
                    if (off + w->b[x].size > heap)
                        heap = off + w->b[x].size;
                }
            } else {
                w->ids[n_left++] = id;
            }
        }
        for (uint32_t k = 0; k < n_in; k++)
            offsets[w->in_heap[k]] += base;
        base += heap;
        heaps++;
        n_todo = n_left;
    } while (n_todo > 0);
    res->heap_size = base;
    res->n_heaps = heaps;
    return SIM_OK;
}

/* One order's whole plan with its own index and scratch, so that the two orders of
 * PLAN_XLA_BEST can run side by side. */
typedef struct order_job {
    const plan_buffer *b;
    const xla_groups *g;
    uint32_t n;
    const plan_xla_config *cfg;
    plan_less less;
    uint64_t *offsets;
    plan_result res;
    sim_status st;
} order_job;

static void *run_order(void *arg)
{
    order_job *j = arg;
    xla_work w = {.b = j->b,
                  .g = j->g,
                  .n = j->n,
                  .alignment = j->cfg->alignment,
                  .limit = j->cfg->heap_limit ? j->cfg->heap_limit : UINT64_MAX};
    size_t nn = j->n ? j->n : 1;
    w.index = plan_index_new(j->b, j->n);
    if (w.index != NULL) /* every offset find_offset gives is a multiple of it */
        plan_index_set_alignment(w.index, j->cfg->alignment ? j->cfg->alignment : 1);
    w.ids = malloc(nn * sizeof *w.ids);
    w.in_heap = malloc(nn * sizeof *w.in_heap);
    j->st = SIM_ENOMEM;
    if (w.index != NULL && w.ids != NULL && w.in_heap != NULL)
        j->st = plan_order(&w, j->less, j->offsets, &j->res);
    j->res.order = j->less == spatial_less ? "spatial" : "temporal";
    free(w.ids);
    free(w.in_heap);
    free(w.hits);
    free(w.tmp);
    plan_index_free(w.index);
    return NULL;
}

/* Below this many buffers a second thread costs more than it saves. */
#define XLA_THREAD_MIN 20000u

sim_status plan_xla(const plan_buffer *b, uint32_t n, const plan_xla_config *cfg, uint64_t *offsets,
                    plan_result *res)
{
    if (cfg->alignment == 0)
        return SIM_EINTERNAL;
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].size >= XLA_UNBOUNDED / 2)
            return SIM_EUSAGE; /* XLA's int64 sizes; keeps offset + size below 2^63 */
    }
    xla_groups g;
    sim_status gst = groups_make(&g, b, n, cfg->share);
    if (gst != SIM_OK) {
        groups_release(&g);
        return gst;
    }
    order_job spatial = {.b = b, .g = &g, .n = n, .cfg = cfg, .less = spatial_less, .offsets = offsets};
    if (cfg->order != PLAN_XLA_BEST) {
        if (cfg->order == PLAN_XLA_TEMPORAL)
            spatial.less = temporal_less;
        run_order(&spatial);
        *res = spatial.res;
        groups_release(&g);
        return spatial.st;
    }
    /* ChooseBestHeapAlgorithm: both orders, the strictly smaller heap, spatial on a tie */
    uint64_t *other = malloc((n ? n : 1) * sizeof *other);
    if (other == NULL) {
        groups_release(&g);
        return SIM_ENOMEM;
    }
    order_job temporal = {.b = b, .g = &g, .n = n, .cfg = cfg, .less = temporal_less, .offsets = other};
    pthread_t th;
    bool threaded = n >= XLA_THREAD_MIN && pthread_create(&th, NULL, run_order, &temporal) == 0;
    run_order(&spatial);
    if (threaded)
        pthread_join(th, NULL);
    else
        run_order(&temporal);
    sim_status st = spatial.st != SIM_OK ? spatial.st : temporal.st;
    *res = spatial.res;
    if (st == SIM_OK && temporal.res.heap_size < spatial.res.heap_size) {
        *res = temporal.res;
        for (uint32_t i = 0; i < n; i++)
            offsets[i] = other[i];
    }
    free(other);
    groups_release(&g);
    return st;
}
