/* The static overlap index of plan_index.h: a 16-ary max-end tree over the
 * buffers in start order. Level 0 holds each place's end (INT64_MIN until its
 * buffer is committed); an entry of level i + 1 is the maximum of 16 entries of
 * level i. A query scans 16 neighbouring entries at a time (two cache lines), which
 * costs far less per hit than a pointer-chasing binary tree.
 * The LONG_MAX longest-lived buffers (those never freed, the weights of a training
 * run) stay out of the tree, in a plain list every query scans: in the tree each of
 * them would keep its whole path of maxima high for almost every query, and the
 * descent would walk those paths again and again.
 * The resident buffers (plan_index.h: live from their start to past every other
 * buffer's start, the weights and a mid-run snapshot's start blocks) stay out of
 * both: once placed they are kept in offset order and merged into runs (members
 * that touch or overlap become one chunk), so that a query that meets all of them
 * costs their runs, merged into its sorted hits, rather than one hit and one sort
 * place each. */
#include "plan_index.h"

#include <stdlib.h>
#include <string.h>

#define FAN 16u
#define FAN_BITS 4u
#define MAX_LEVELS 9u /* 16^8 = 2^32 places */
#define LONG_MAX_N 256u /* buffers kept in the scanned list */
#define RES_MIN 8u      /* fewer resident buffers than this: none set apart */
#define RES_MAX 8192u   /* at most this many (a placement re-merges them all) */
#define UNI_MAX 16384u  /* the union of every placed chunk in more runs than this: not kept */

enum { KIND_TREE = 0, KIND_LONG = 1, KIND_RESIDENT = 2 };

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
    uint8_t *kind;               /* per buffer: KIND_* */
    bool *long_on;               /* per long_ids entry: committed */
    plan_chunk *long_chunk;      /* per long_ids entry */
    int64_t (*long_span)[2];     /* per long_ids entry: start, end */
    uint32_t *long_slot;         /* per buffer: its long_ids or res_ids entry */
    uint32_t *res_ids;           /* the resident buffers, by start */
    int64_t *res_start;          /* per res_ids entry: its start */
    uint32_t n_res;
    int64_t res_cover_lo;        /* a query [s, e] with e >= res_cover_lo ... */
    int64_t res_cover_hi;        /* ... and s <= res_cover_hi meets every resident buffer */
    bool *res_on;                /* per res_ids entry: committed */
    plan_chunk *res_chunk;       /* per res_ids entry */
    plan_chunk *members;         /* the committed resident chunks by (offset, seq) */
    uint32_t n_members;
    plan_chunk *runs;            /* members that touch or overlap, merged */
    uint32_t n_runs;
    plan_chunk *out;             /* a covering query's hits merged with the runs */
    uint32_t cap_out;
    uint64_t align;              /* every committed offset is a multiple of it */
    /* every committed chunk merged as the resident runs are, for a query that meets
     * them all (a resident buffer's own); off (uni_ok false) past UNI_MAX runs */
    plan_chunk *uni;
    uint32_t n_uni, cap_uni;
    bool uni_ok;
    int64_t max_start, min_end; /* over the committed buffers */
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
    x->long_ids = malloc(LONG_MAX_N * sizeof *x->long_ids);
    x->long_on = calloc(LONG_MAX_N, sizeof *x->long_on);
    x->long_chunk = malloc(LONG_MAX_N * sizeof *x->long_chunk);
    x->long_span = malloc(LONG_MAX_N * sizeof *x->long_span);
    uint32_t *ids = malloc(nn * sizeof *ids);
    bool ok = x->long_ids && x->long_on && x->long_chunk && x->long_span && ids;
    uint32_t m = 0;
    for (uint32_t i = 0; ok && i < x->n; i++)
        if (x->kind[i] == KIND_TREE)
            ids[m++] = i;
    if (ok && m > 4 * LONG_MAX_N) { /* small plans: the tree alone */
        ok = plan_sort(ids, m, longer, x->b) == SIM_OK;
        for (uint32_t k = 0; ok && k < LONG_MAX_N; k++) {
            x->long_ids[k] = ids[k];
            x->long_span[k][0] = x->b[ids[k]].start;
            x->long_span[k][1] = x->b[ids[k]].end;
            x->long_slot[ids[k]] = k;
            x->kind[ids[k]] = KIND_LONG;
        }
        x->n_long = ok ? LONG_MAX_N : 0;
    }
    free(ids);
    return ok;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sets the resident buffers apart: of those of a positive size that live to the
 * last start or later, the k earliest to start, k chosen to save the most
 * (k times the queries that end at or after the k-th one's start, and so meet
 * all k). */
static bool pick_resident(plan_index *x)
{
    const plan_buffer *b = x->b;
    int64_t last_start = INT64_MIN;
    for (uint32_t i = 0; i < x->n; i++)
        if (b[i].start > last_start)
            last_start = b[i].start;
    size_t nn = x->n ? x->n : 1;
    uint32_t *cand = malloc(nn * sizeof *cand);
    int64_t *ends = malloc(nn * sizeof *ends);
    bool ok = cand != NULL && ends != NULL;
    uint32_t m = 0;
    for (uint32_t i = 0; ok && i < x->n; i++) {
        ends[i] = b[i].end;
        if (b[i].size > 0 && b[i].end >= last_start)
            cand[m++] = i;
    }
    uint32_t best_k = 0;
    if (ok && m >= RES_MIN) {
        ok = plan_sort(cand, m, start_less, b) == SIM_OK;
        qsort(ends, x->n, sizeof *ends, cmp_i64);
        uint64_t best = 0;
        uint32_t lo = 0; /* ends[0 .. lo) < the k-th start, which only grows with k */
        for (uint32_t k = 1; ok && k <= m && k <= RES_MAX; k++) {
            while (lo < x->n && ends[lo] < b[cand[k - 1]].start)
                lo++;
            uint64_t saved = (uint64_t)k * (x->n - lo);
            if (saved > best) {
                best = saved;
                best_k = k;
            }
        }
    }
    if (ok && best_k >= RES_MIN) {
        x->res_ids = malloc((size_t)best_k * sizeof *x->res_ids);
        x->res_start = malloc((size_t)best_k * sizeof *x->res_start);
        x->res_on = calloc(best_k, sizeof *x->res_on);
        x->res_chunk = malloc((size_t)best_k * sizeof *x->res_chunk);
        x->members = malloc((size_t)best_k * sizeof *x->members);
        x->runs = malloc((size_t)best_k * sizeof *x->runs);
        ok = x->res_ids && x->res_start && x->res_on && x->res_chunk && x->members && x->runs;
        x->res_cover_hi = INT64_MAX;
        for (uint32_t k = 0; ok && k < best_k; k++) {
            uint32_t i = cand[k];
            x->res_ids[k] = i;
            x->res_start[k] = b[i].start;
            x->kind[i] = KIND_RESIDENT;
            x->long_slot[i] = k;
            if (b[i].end < x->res_cover_hi)
                x->res_cover_hi = b[i].end;
        }
        x->res_cover_lo = b[cand[best_k - 1]].start;
        x->n_res = ok ? best_k : 0;
    }
    free(cand);
    free(ends);
    return ok;
}

plan_index *plan_index_new(const plan_buffer *b, uint32_t n)
{
    plan_index *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    x->b = b;
    x->n = n;
    x->align = 1;
    x->uni_ok = true;
    x->max_start = INT64_MIN;
    x->min_end = INT64_MAX;
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
    x->kind = calloc(nn, sizeof *x->kind);
    x->long_slot = malloc(nn * sizeof *x->long_slot);
    if (x->kind == NULL || x->long_slot == NULL || !pick_resident(x) || !pick_long(x)) {
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
    free(x->kind);
    free(x->long_slot);
    free(x->res_ids);
    free(x->res_start);
    free(x->res_on);
    free(x->res_chunk);
    free(x->members);
    free(x->runs);
    free(x->out);
    free(x->uni);
    free(x->long_ids);
    free(x->long_on);
    free(x->long_chunk);
    free(x->long_span);
    free(x->hits);
    free(x->scratch);
    free(x);
}

static inline bool chunk_before(const plan_chunk *a, const plan_chunk *b)
{
    return a->off < b->off || (a->off == b->off && a->seq < b->seq);
}

/* Resident entry k placed as ch: into the members in (offset, seq) order, and the
 * runs made again (a run: members each starting at or before the end of those
 * before it; its chunk spans them, with its first member's seq). */
static void commit_resident(plan_index *x, uint32_t k, plan_chunk ch)
{
    x->res_on[k] = true;
    x->res_chunk[k] = ch;
    uint32_t lo = 0, hi = x->n_members;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (chunk_before(&x->members[mid], &ch))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&x->members[lo + 1], &x->members[lo], (size_t)(x->n_members - lo) * sizeof *x->members);
    x->members[lo] = ch;
    x->n_members++;
    uint32_t r = 0;
    uint64_t end = 0;
    for (uint32_t j = 0; j < x->n_members; j++) {
        const plan_chunk *m = &x->members[j];
        if (r > 0 && m->off <= plan_align_up(end, x->align)) { /* no aligned start fits between */
            if (m->off + m->size > end)
                end = m->off + m->size;
            x->runs[r - 1].size = end - x->runs[r - 1].off;
            continue;
        }
        x->runs[r++] = *m;
        end = m->off + m->size;
    }
    x->n_runs = r;
}

/* ch into the union of every committed chunk: runs in offset order, each merged
 * with what starts at or before its end rounded up to the alignment, with the
 * (offset, seq) of its first member. Past UNI_MAX runs (or without memory) the
 * union is given up until the next reset. */
static void union_add(plan_index *x, plan_chunk ch)
{
    if (!x->uni_ok)
        return;
    uint32_t lo = 0, hi = x->n_uni;
    while (lo < hi) { /* the first run after ch in (offset, seq) order */
        uint32_t mid = lo + (hi - lo) / 2;
        if (chunk_before(&ch, &x->uni[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    uint32_t at = lo;
    plan_chunk cur = ch;
    uint64_t end = ch.off + ch.size;
    if (at > 0 && ch.off <= plan_align_up(x->uni[at - 1].off + x->uni[at - 1].size, x->align)) {
        at--; /* it joins the run before it, which keeps its start */
        cur = x->uni[at];
        if (x->uni[at].off + x->uni[at].size > end)
            end = x->uni[at].off + x->uni[at].size;
    }
    uint32_t past = at + (at < lo ? 1u : 0u); /* the first run not yet absorbed */
    while (past < x->n_uni && x->uni[past].off <= plan_align_up(end, x->align)) {
        if (x->uni[past].off + x->uni[past].size > end)
            end = x->uni[past].off + x->uni[past].size;
        past++;
    }
    cur.size = end - cur.off;
    uint32_t removed = past - at; /* runs replaced by cur */
    if (removed == 0) {
        if (x->n_uni >= UNI_MAX) {
            x->uni_ok = false;
            return;
        }
        if (x->n_uni == x->cap_uni) {
            uint32_t cap = x->cap_uni ? x->cap_uni * 2 : 64;
            plan_chunk *u = realloc(x->uni, (size_t)cap * sizeof *u);
            if (u == NULL) {
                x->uni_ok = false;
                return;
            }
            x->uni = u;
            x->cap_uni = cap;
        }
        memmove(&x->uni[at + 1], &x->uni[at], (size_t)(x->n_uni - at) * sizeof *x->uni);
        x->n_uni++;
    } else if (removed > 1) {
        memmove(&x->uni[at + 1], &x->uni[past], (size_t)(x->n_uni - past) * sizeof *x->uni);
        x->n_uni -= removed - 1;
    }
    x->uni[at] = cur;
}

void plan_index_commit(plan_index *x, uint32_t i, uint64_t off, uint32_t seq)
{
    uint32_t p = x->pos[i];
    int64_t end = x->b[i].end;
    x->committed[x->n_committed++] = i;
    if (x->b[i].start > x->max_start)
        x->max_start = x->b[i].start;
    if (x->b[i].end < x->min_end)
        x->min_end = x->b[i].end;
    if (x->b[i].size > 0)
        union_add(x, (plan_chunk){.off = off, .size = x->b[i].size, .seq = seq});
    else
        x->uni_ok = false; /* a zero-byte chunk (TFLite GPU) is not a run's */
    plan_chunk ch = {.off = off, .size = x->b[i].size, .seq = seq};
    if (x->kind[i] == KIND_LONG) {
        x->long_on[x->long_slot[i]] = true;
        x->long_chunk[x->long_slot[i]] = ch;
        return;
    }
    if (x->kind[i] == KIND_RESIDENT) {
        commit_resident(x, x->long_slot[i], ch);
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

void plan_index_set_alignment(plan_index *x, uint64_t align)
{
    x->align = align ? align : 1;
}

void plan_index_reset(plan_index *x)
{
    for (uint32_t k = 0; k < x->n_committed; k++) {
        uint8_t kind = x->kind[x->committed[k]];
        if (kind != KIND_TREE) {
            if (kind == KIND_LONG)
                x->long_on[x->long_slot[x->committed[k]]] = false;
            else
                x->res_on[x->long_slot[x->committed[k]]] = false;
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
    x->n_members = x->n_runs = 0;
    x->n_uni = 0;
    x->uni_ok = true;
    x->max_start = INT64_MIN;
    x->min_end = INT64_MAX;
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

static sim_status push_hit(plan_index *x, const plan_chunk *c)
{
    if (x->n_hits == x->cap_hits && grow_hits(x) != SIM_OK)
        return SIM_ENOMEM;
    x->hits[x->n_hits++] = *c;
    return SIM_OK;
}

/* The sorted hits and the resident runs merged by (offset, seq) into x->out. */
static sim_status merge_runs(plan_index *x, plan_chunk **out, uint32_t *n_out)
{
    uint32_t need = x->n_hits + x->n_runs;
    if (need > x->cap_out) {
        uint32_t cap = x->cap_out ? x->cap_out : 256;
        while (cap < need)
            cap *= 2;
        plan_chunk *o = realloc(x->out, (size_t)cap * sizeof *o);
        if (o == NULL)
            return SIM_ENOMEM;
        x->out = o;
        x->cap_out = cap;
    }
    uint32_t i = 0, j = 0, k = 0;
    while (i < x->n_hits && j < x->n_runs)
        x->out[k++] = chunk_before(&x->runs[j], &x->hits[i]) ? x->runs[j++] : x->hits[i++];
    while (i < x->n_hits)
        x->out[k++] = x->hits[i++];
    while (j < x->n_runs)
        x->out[k++] = x->runs[j++];
    *out = x->out;
    *n_out = k;
    return SIM_OK;
}

static sim_status query(plan_index *x, int64_t start, int64_t end, bool merged, plan_chunk **out, uint32_t *n_out)
{
    if (merged && x->uni_ok && start <= x->min_end && end >= x->max_start) {
        *out = x->uni; /* it meets every committed buffer: their union */
        *n_out = x->n_uni;
        return SIM_OK;
    }
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
        if (push_hit(x, &x->long_chunk[k]) != SIM_OK)
            return SIM_ENOMEM;
    }
    /* the resident buffers: all of them as runs, or those that meet it one by one */
    bool runs = merged && x->n_res > 0 && end >= x->res_cover_lo && start <= x->res_cover_hi;
    for (uint32_t k = 0; !runs && k < x->n_res && x->res_start[k] <= end; k++) {
        if (!x->res_on[k] || x->b[x->res_ids[k]].end < start)
            continue;
        if (push_hit(x, &x->res_chunk[k]) != SIM_OK)
            return SIM_ENOMEM;
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
    if (st != SIM_OK)
        return st;
    plan_sort_chunks(x->hits, x->scratch, x->n_hits);
    if (runs && x->n_runs > 0)
        return merge_runs(x, out, n_out);
    *out = x->hits;
    *n_out = x->n_hits;
    return SIM_OK;
}

sim_status plan_index_query(plan_index *x, int64_t start, int64_t end, plan_chunk **out, uint32_t *n_out)
{
    return query(x, start, end, true, out, n_out);
}

sim_status plan_index_query_all(plan_index *x, int64_t start, int64_t end, plan_chunk **out, uint32_t *n_out)
{
    return query(x, start, end, false, out, n_out);
}
