/* The static overlap index of plan_index.h: a 16-ary max-end tree over the
 * buffers in start order. Level 0 holds each place's end (INT64_MIN until its
 * buffer is committed); an entry of level i + 1 is the maximum of 16 entries of
 * level i. A query scans 16 neighbouring entries at a time (two cache lines), which
 * costs far less per hit than a pointer-chasing binary tree.
 * The LONG_MAX longest-lived buffers (those never freed, the weights of a training
 * run) stay out of the tree, in a plain list every query scans: in the tree each of
 * them would keep its whole path of maxima high for almost every query, and the
 * descent would walk those paths again and again. */
#include "plan_index.h"

#include <stdlib.h>

#define FAN 16u
#define FAN_BITS 4u
#define MAX_LEVELS 9u /* 16^8 = 2^32 places */
#define LONG_MAX_N 256u /* buffers kept in the scanned list */

struct plan_index {
    const plan_buffer *b;
    uint32_t n;
    uint32_t n_levels;
    int64_t *level[MAX_LEVELS];  /* level[0][p]: the end at place p, or INT64_MIN */
    uint32_t level_n[MAX_LEVELS];
    uint32_t *by_start;          /* buffer ids sorted by start */
    uint32_t *pos;               /* pos[id]: its place in by_start */
    int64_t *starts;             /* starts[p] = the start of by_start[p] */
    plan_chunk *leaf;            /* the committed chunk at each place */
    uint32_t *long_ids;          /* the longest-lived buffers, by id */
    uint32_t n_long;
    bool *is_long;               /* per buffer */
    bool *long_on;               /* per long_ids entry: committed */
    plan_chunk *long_chunk;      /* per long_ids entry */
    int64_t (*long_span)[2];     /* per long_ids entry: start, end */
    uint32_t *long_slot;         /* per buffer: its long_ids entry */
    uint32_t *committed;
    uint32_t n_committed;
    plan_chunk *hits, *scratch;
    uint32_t n_hits, cap_hits;
};

static bool start_less(const void *ctx, uint32_t a, uint32_t b)
{
    const plan_buffer *buf = ctx;
    return buf[a].start < buf[b].start;
}

static bool longer(const void *ctx, uint32_t a, uint32_t b)
{
    const plan_buffer *buf = ctx;
    return (uint64_t)(buf[a].end - buf[a].start) > (uint64_t)(buf[b].end - buf[b].start);
}

/* Picks the longest-lived buffers into the scanned list (ties: any). */
static bool pick_long(plan_index *x)
{
    size_t nn = x->n ? x->n : 1;
    x->is_long = calloc(nn, sizeof *x->is_long);
    x->long_slot = malloc(nn * sizeof *x->long_slot);
    x->long_ids = malloc(LONG_MAX_N * sizeof *x->long_ids);
    x->long_on = calloc(LONG_MAX_N, sizeof *x->long_on);
    x->long_chunk = malloc(LONG_MAX_N * sizeof *x->long_chunk);
    x->long_span = malloc(LONG_MAX_N * sizeof *x->long_span);
    uint32_t *ids = malloc(nn * sizeof *ids);
    bool ok = x->is_long && x->long_slot && x->long_ids && x->long_on && x->long_chunk && x->long_span && ids;
    if (ok && x->n > 4 * LONG_MAX_N) { /* small plans: the tree alone */
        for (uint32_t i = 0; i < x->n; i++)
            ids[i] = i;
        ok = plan_sort(ids, x->n, longer, x->b) == SIM_OK;
        for (uint32_t k = 0; ok && k < LONG_MAX_N; k++) {
            x->long_ids[k] = ids[k];
            x->long_span[k][0] = x->b[ids[k]].start;
            x->long_span[k][1] = x->b[ids[k]].end;
            x->long_slot[ids[k]] = k;
            x->is_long[ids[k]] = true;
        }
        x->n_long = ok ? LONG_MAX_N : 0;
    }
    free(ids);
    return ok;
}

plan_index *plan_index_new(const plan_buffer *b, uint32_t n)
{
    plan_index *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    x->b = b;
    x->n = n;
    size_t nn = n ? n : 1;
    bool ok = true;
    uint32_t len = n ? n : 1;
    for (;;) {
        uint32_t i = x->n_levels++;
        x->level_n[i] = len;
        x->level[i] = malloc((size_t)len * sizeof(int64_t));
        ok = ok && x->level[i] != NULL;
        for (uint32_t k = 0; ok && k < len; k++)
            x->level[i][k] = INT64_MIN;
        if (len <= FAN || x->n_levels == MAX_LEVELS)
            break;
        len = (len + FAN - 1) / FAN;
    }
    x->by_start = malloc(nn * sizeof *x->by_start);
    x->pos = malloc(nn * sizeof *x->pos);
    x->committed = malloc(nn * sizeof *x->committed);
    x->leaf = malloc(nn * sizeof *x->leaf);
    x->starts = malloc(nn * sizeof *x->starts);
    if (!ok || x->by_start == NULL || x->pos == NULL || x->committed == NULL || x->leaf == NULL ||
        x->starts == NULL) {
        plan_index_free(x);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        x->by_start[i] = i;
    if (plan_sort(x->by_start, n, start_less, b) != SIM_OK) {
        plan_index_free(x);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        x->pos[x->by_start[i]] = i;
        x->starts[i] = b[x->by_start[i]].start;
    }
    if (!pick_long(x)) {
        plan_index_free(x);
        return NULL;
    }
    return x;
}

void plan_index_free(plan_index *x)
{
    if (x == NULL)
        return;
    for (uint32_t i = 0; i < x->n_levels; i++)
        free(x->level[i]);
    free(x->by_start);
    free(x->pos);
    free(x->committed);
    free(x->leaf);
    free(x->starts);
    free(x->is_long);
    free(x->long_slot);
    free(x->long_ids);
    free(x->long_on);
    free(x->long_chunk);
    free(x->long_span);
    free(x->hits);
    free(x->scratch);
    free(x);
}

void plan_index_commit(plan_index *x, uint32_t i, uint64_t off, uint32_t seq)
{
    uint32_t p = x->pos[i];
    int64_t end = x->b[i].end;
    x->committed[x->n_committed++] = i;
    plan_chunk ch = {.off = off, .size = x->b[i].size, .seq = seq};
    if (x->is_long[i]) {
        x->long_on[x->long_slot[i]] = true;
        x->long_chunk[x->long_slot[i]] = ch;
        return;
    }
    x->leaf[p] = ch;
    /* entries only grow from INT64_MIN to an end, so a maximum is kept by max() */
    for (uint32_t l = 0; l < x->n_levels; l++, p >>= FAN_BITS) {
        if (x->level[l][p] >= end)
            break;
        x->level[l][p] = end;
    }
}

void plan_index_reset(plan_index *x)
{
    for (uint32_t k = 0; k < x->n_committed; k++) {
        if (x->is_long[x->committed[k]]) {
            x->long_on[x->long_slot[x->committed[k]]] = false;
            continue;
        }
        uint32_t p = x->pos[x->committed[k]];
        for (uint32_t l = 0; l < x->n_levels; l++, p >>= FAN_BITS) {
            if (x->level[l][p] == INT64_MIN)
                break;
            x->level[l][p] = INT64_MIN;
        }
    }
    x->n_committed = 0;
}

static sim_status grow_hits(plan_index *x)
{
    uint32_t cap = x->cap_hits ? x->cap_hits * 2 : 256;
    plan_chunk *h = realloc(x->hits, (size_t)cap * sizeof *h);
    if (h == NULL)
        return SIM_ENOMEM;
    x->hits = h;
    h = realloc(x->scratch, (size_t)cap * sizeof *h);
    if (h == NULL)
        return SIM_ENOMEM;
    x->scratch = h;
    x->cap_hits = cap;
    return SIM_OK;
}

/* Entries [lo, hi) of level l that are at or after start; each covers 16^l places,
 * all below the query's prefix bound p (the caller clips hi). */
static sim_status descend(plan_index *x, uint32_t l, uint32_t lo, uint32_t hi, int64_t start, uint32_t p)
{
    const int64_t *v = x->level[l];
    for (uint32_t j = lo; j < hi; j++) {
        if (v[j] < start)
            continue;
        if (l == 0) {
            if (x->n_hits == x->cap_hits && grow_hits(x) != SIM_OK)
                return SIM_ENOMEM;
            x->hits[x->n_hits++] = x->leaf[j];
            continue;
        }
        /* children of j at level l - 1 that hold places below p */
        uint32_t clo = j << FAN_BITS;
        uint32_t chi = clo + FAN;
        uint32_t shift = FAN_BITS * (l - 1);
        uint32_t limit = (uint32_t)(((uint64_t)p + ((UINT64_C(1) << shift) - 1)) >> shift);
        if (chi > limit)
            chi = limit;
        if (chi > x->level_n[l - 1])
            chi = x->level_n[l - 1];
        sim_status st = descend(x, l - 1, clo, chi, start, p);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

sim_status plan_index_query(plan_index *x, int64_t start, int64_t end, plan_chunk **out, uint32_t *n_out)
{
    x->n_hits = 0;
    *out = x->hits;
    *n_out = 0;
    /* p = how many buffers start at or before end: the candidates are places [0, p) */
    uint32_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x->starts[mid] <= end)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t p = lo;
    for (uint32_t k = 0; k < x->n_long; k++) {
        if (!x->long_on[k] || x->long_span[k][0] > end || x->long_span[k][1] < start)
            continue;
        if (x->n_hits == x->cap_hits && grow_hits(x) != SIM_OK)
            return SIM_ENOMEM;
        x->hits[x->n_hits++] = x->long_chunk[k];
    }
    sim_status st = SIM_OK;
    if (p > 0) {
        uint32_t top = x->n_levels - 1;
        uint32_t shift = FAN_BITS * top;
        uint32_t limit = (uint32_t)(((uint64_t)p + ((UINT64_C(1) << shift) - 1)) >> shift);
        if (limit > x->level_n[top])
            limit = x->level_n[top];
        st = descend(x, top, 0, limit, start, p);
    }
    if (st == SIM_OK)
        plan_sort_chunks(x->hits, x->scratch, x->n_hits);
    *out = x->hits;
    *n_out = x->n_hits;
    return st;
}
