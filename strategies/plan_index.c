/* The static overlap index of plan_index.h: a max-end segment tree over the
 * buffers in start order. Leaves hold INT64_MIN until their buffer is committed. */
#include "plan_index.h"

#include <stdlib.h>

struct plan_index {
    const plan_buffer *b;
    uint32_t n;
    uint32_t leaves;    /* a power of two >= n */
    uint32_t *by_start; /* buffer ids sorted by start */
    uint32_t *pos;      /* pos[id]: its place in by_start */
    int64_t *tree;      /* 2 * leaves nodes, root at 1 */
    uint32_t *committed;
    uint32_t n_committed;
    uint32_t *hits;
    uint32_t n_hits, cap_hits;
    uint32_t *stack;    /* the depth-first descent: at most one pending node per level */
};

static bool start_less(const void *ctx, uint32_t a, uint32_t b)
{
    const plan_buffer *buf = ctx;
    return buf[a].start < buf[b].start;
}

plan_index *plan_index_new(const plan_buffer *b, uint32_t n)
{
    plan_index *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    x->b = b;
    x->n = n;
    x->leaves = 1;
    while (x->leaves < n)
        x->leaves *= 2;
    size_t nn = n ? n : 1;
    x->by_start = malloc(nn * sizeof *x->by_start);
    x->pos = malloc(nn * sizeof *x->pos);
    x->tree = malloc((size_t)x->leaves * 2 * sizeof *x->tree);
    x->committed = malloc(nn * sizeof *x->committed);
    x->stack = malloc(64 * sizeof *x->stack);
    if (x->by_start == NULL || x->pos == NULL || x->tree == NULL || x->committed == NULL ||
        x->stack == NULL) {
        plan_index_free(x);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        x->by_start[i] = i;
    if (plan_sort(x->by_start, n, start_less, b) != SIM_OK) {
        plan_index_free(x);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        x->pos[x->by_start[i]] = i;
    for (uint32_t i = 0; i < 2 * x->leaves; i++)
        x->tree[i] = INT64_MIN;
    return x;
}

void plan_index_free(plan_index *x)
{
    if (x == NULL)
        return;
    free(x->by_start);
    free(x->pos);
    free(x->tree);
    free(x->committed);
    free(x->hits);
    free(x->stack);
    free(x);
}

static void set_leaf(plan_index *x, uint32_t p, int64_t v)
{
    uint32_t i = x->leaves + p;
    x->tree[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
        int64_t l = x->tree[2 * i], r = x->tree[2 * i + 1];
        int64_t m = l > r ? l : r;
        if (x->tree[i] == m)
            break;
        x->tree[i] = m;
    }
}

void plan_index_commit(plan_index *x, uint32_t i)
{
    x->committed[x->n_committed++] = i;
    set_leaf(x, x->pos[i], x->b[i].end);
}

void plan_index_reset(plan_index *x)
{
    for (uint32_t k = 0; k < x->n_committed; k++) {
        uint32_t i = x->leaves + x->pos[x->committed[k]];
        for (; i >= 1 && x->tree[i] != INT64_MIN; i /= 2)
            x->tree[i] = INT64_MIN;
    }
    x->n_committed = 0;
}

static sim_status add_hit(plan_index *x, uint32_t id)
{
    if (x->n_hits == x->cap_hits) {
        uint32_t cap = x->cap_hits ? x->cap_hits * 2 : 256;
        uint32_t *p = realloc(x->hits, (size_t)cap * sizeof *p);
        if (p == NULL)
            return SIM_ENOMEM;
        x->hits = p;
        x->cap_hits = cap;
    }
    x->hits[x->n_hits++] = id;
    return SIM_OK;
}

sim_status plan_index_query(plan_index *x, int64_t start, int64_t end, const uint32_t **out,
                            uint32_t *n_out)
{
    x->n_hits = 0;
    *out = x->hits;
    *n_out = 0;
    /* p = how many buffers start at or before end (the candidates' prefix). */
    uint32_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x->b[x->by_start[mid]].start <= end)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t p = lo;
    if (p == 0 || x->tree[1] < start)
        return SIM_OK;
    /* Descend: a node covers leaves [nlo, nhi); keep it if it meets [0, p) and its
     * latest committed end reaches start. */
    uint32_t depth = 0;
    x->stack[depth++] = 1;
    while (depth > 0) {
        uint32_t node = x->stack[--depth];
        if (x->tree[node] < start)
            continue;
        uint32_t level = 31u - (uint32_t)__builtin_clz(node);
        uint32_t span = x->leaves >> level;
        uint32_t nlo = (node - (1u << level)) * span;
        if (nlo >= p)
            continue;
        if (span == 1) {
            sim_status st = add_hit(x, x->by_start[nlo]);
            if (st != SIM_OK)
                return st;
            continue;
        }
        x->stack[depth++] = 2 * node + 1;
        x->stack[depth++] = 2 * node;
    }
    *out = x->hits;
    *n_out = x->n_hits;
    return SIM_OK;
}
