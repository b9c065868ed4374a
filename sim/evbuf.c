#include "evbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* Events are packed into 40 bytes (a replay streams through them, so size is
 * speed): a free's ready_t is kept as a delay in the size field, strings are
 * offsets into one growing pool (0 = none; the pool can move without
 * invalidating events). Lines and indices are usually "first + position": they
 * take no room until a source breaks that rule, then a column is allocated. */
typedef struct packed_event {
    uint64_t id;        /* alloc, free: id; pool events: the pool */
    uint64_t size;      /* alloc: size; free: ready_t − t; pool_begin: its pool_flags */
    uint64_t t;
    uint32_t stream;    /* alloc, pool_begin: stream; free: ready_stream (EV_READY_STREAM) */
    uint32_t str;       /* alloc: tag, mark and graph_replay: name */
    uint32_t proc;
    uint32_t op;        /* sim_op, | EV_READY_STREAM: a free's stream field is its ready_stream */
} packed_event;

#define EV_READY_STREAM 0x80000000u

/* A column of uint64 that stays implicit (first + i) while it can. */
typedef struct lazy_col {
    uint64_t first;
    uint64_t *v;        /* NULL while implicit */
} lazy_col;

/* The allocs' shares (trace v1 "share"): no room until the first one, then one
 * entry per event, NO_SHARE where there is none. */
#define NO_SHARE UINT64_MAX

struct evbuf {
    packed_event *ev;
    uint64_t n, cap;
    lazy_col line, index;
    uint64_t *share;
    uint64_t n_shares;
    uint64_t n_pool_events;
    char *pool;
    uint64_t pool_len, pool_cap;
    char path[512];
    char name[256];
};

evbuf *evbuf_new(const char *path, const char *name)
{
    evbuf *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    snprintf(b->path, sizeof b->path, "%s", path ? path : "");
    snprintf(b->name, sizeof b->name, "%s", name ? name : "");
    return b;
}

void evbuf_free(evbuf *b)
{
    if (b == NULL)
        return;
    free(b->ev);
    free(b->line.v);
    free(b->index.v);
    free(b->share);
    free(b->pool);
    free(b);
}

static uint64_t intern(evbuf *b, const char *s)
{
    if (s == NULL)
        return 0;
    /* consecutive events usually repeat the same proc/tag: reuse the last copy */
    size_t n = strlen(s) + 1;
    if (b->pool_len == 0) {
        b->pool = malloc(4096);
        if (b->pool == NULL)
            return UINT64_MAX;
        b->pool_cap = 4096;
        b->pool[0] = '\0';
        b->pool_len = 1;
    }
    if (!SIM_GROW(b->pool, b->pool_len + n, b->pool_cap))
        return UINT64_MAX;
    uint64_t off = b->pool_len;
    memcpy(b->pool + off, s, n);
    b->pool_len += n;
    return off;
}

static uint64_t intern_repeat(evbuf *b, const char *s, uint64_t prev)
{
    if (s && prev && prev != UINT64_MAX && strcmp(b->pool + prev, s) == 0)
        return prev;
    return intern(b, s);
}

static bool lazy_set(lazy_col *c, uint64_t i, uint64_t cap, uint64_t v)
{
    if (c->v == NULL) {
        if (i == 0)
            c->first = v;
        if (v == c->first + i)
            return true;
        c->v = malloc((size_t)cap * sizeof *c->v);
        if (c->v == NULL)
            return false;
        for (uint64_t k = 0; k < i; k++)
            c->v[k] = c->first + k;
    }
    c->v[i] = v;
    return true;
}

static bool lazy_grow(lazy_col *c, uint64_t cap)
{
    if (c->v == NULL)
        return true;
    uint64_t *v = realloc(c->v, (size_t)cap * sizeof *v);
    if (v == NULL)
        return false;
    c->v = v;
    return true;
}

static bool share_set(evbuf *b, const sim_event *ev)
{
    bool has = ev->op == SIM_OP_ALLOC && ev->has_share;
    if (b->share == NULL && !has)
        return true;
    if (b->share == NULL) {
        b->share = malloc((size_t)b->cap * sizeof *b->share);
        if (b->share == NULL)
            return false;
        for (uint64_t k = 0; k < b->n; k++)
            b->share[k] = NO_SHARE;
    }
    b->share[b->n] = has ? ev->share : NO_SHARE;
    b->n_shares += has;
    return true;
}

static bool share_grow(evbuf *b)
{
    if (b->share == NULL)
        return true;
    uint64_t *v = realloc(b->share, (size_t)b->cap * sizeof *v);
    if (v == NULL)
        return false;
    b->share = v;
    return true;
}

static inline uint64_t lazy_get(const lazy_col *c, uint64_t i)
{
    return c->v ? c->v[i] : c->first + i;
}

sim_status evbuf_push(evbuf *b, const sim_event *ev)
{
    if (b->n == b->cap) {
        /* the lazy columns follow the event array's capacity */
        if (!SIM_GROW(b->ev, b->n + 1, b->cap) || !lazy_grow(&b->line, b->cap) || !lazy_grow(&b->index, b->cap) ||
            !share_grow(b))
            return SIM_ENOMEM;
    }
    const packed_event *prev = b->n ? &b->ev[b->n - 1] : NULL;
    packed_event *s = &b->ev[b->n];
    bool named = ev->op == SIM_OP_MARK || ev->op == SIM_OP_GRAPH_REPLAY;
    bool pool_op = ev->op >= SIM_OP_POOL_BEGIN;
    const char *str = named ? ev->name : ev->op == SIM_OP_ALLOC ? ev->tag : NULL;
    uint64_t so = named ? intern(b, str) : intern_repeat(b, str, prev ? prev->str : 0);
    uint64_t po = intern_repeat(b, ev->proc, prev ? prev->proc : 0);
    if (so >= UINT32_MAX || po >= UINT32_MAX)
        return SIM_ENOMEM;
    s->id = pool_op ? ev->pool : ev->id;
    if (ev->op == SIM_OP_FREE)
        s->size = ev->ready_t - ev->t;
    else
        s->size = pool_op ? (ev->op == SIM_OP_POOL_BEGIN ? ev->pool_flags : 0) : ev->size;
    s->t = ev->t;
    bool rs = ev->op == SIM_OP_FREE && ev->has_ready_stream;
    s->stream = rs ? ev->ready_stream : ev->stream;
    s->str = (uint32_t)so;
    s->proc = (uint32_t)po;
    s->op = (uint32_t)ev->op | (rs ? EV_READY_STREAM : 0u);
    if (!lazy_set(&b->line, b->n, b->cap, ev->line) || !lazy_set(&b->index, b->n, b->cap, ev->index) ||
        !share_set(b, ev))
        return SIM_ENOMEM;
    b->n_pool_events += pool_op;
    b->n++;
    return SIM_OK;
}

sim_status evbuf_fill(evbuf *b, const sim_event_source *src, sim_error *err)
{
    sim_event ev;
    sim_status st;
    while ((st = src->next(src->ctx, &ev, err)) == SIM_OK)
        if (evbuf_push(b, &ev) != SIM_OK)
            return sim_error_set(err, SIM_ENOMEM, src->path, 0, 0, "out of memory holding the trace");
    return st == SIM_END ? SIM_OK : st;
}

uint64_t evbuf_count(const evbuf *b)
{
    return b->n;
}

uint64_t evbuf_shares(const evbuf *b)
{
    return b->n_shares;
}

uint64_t evbuf_pool_events(const evbuf *b)
{
    return b->n_pool_events;
}

static sim_status cursor_next(void *ctx, sim_event *ev, sim_error *err)
{
    (void)err;
    evbuf_cursor *c = ctx;
    const evbuf *b = c->b;
    uint64_t i = c->i;
    if (i >= b->n)
        return SIM_END;
    c->i = i + 1;
    const packed_event *s = &b->ev[i];
    sim_op op = (sim_op)(s->op & ~EV_READY_STREAM);
    bool pool_op = op >= SIM_OP_POOL_BEGIN;
    ev->op = op;
    ev->id = pool_op ? 0 : s->id;
    ev->pool = pool_op ? s->id : 0;
    ev->pool_flags = op == SIM_OP_POOL_BEGIN ? (uint32_t)s->size : 0;
    ev->t = s->t;
    ev->has_ready_stream = (s->op & EV_READY_STREAM) != 0;
    ev->ready_stream = ev->has_ready_stream ? s->stream : 0;
    ev->stream = ev->has_ready_stream ? 0 : s->stream;
    ev->size = op == SIM_OP_FREE || pool_op ? 0 : s->size;
    ev->ready_t = op == SIM_OP_FREE ? s->t + s->size : s->t;
    const char *str = s->str ? b->pool + s->str : NULL;
    ev->tag = op == SIM_OP_ALLOC ? str : NULL;
    ev->name = op == SIM_OP_MARK || op == SIM_OP_GRAPH_REPLAY ? str : NULL;
    ev->proc = s->proc ? b->pool + s->proc : NULL;
    ev->line = lazy_get(&b->line, i);
    ev->index = lazy_get(&b->index, i);
    ev->has_share = b->share != NULL && b->share[i] != NO_SHARE;
    ev->share = ev->has_share ? b->share[i] : 0;
    return SIM_OK;
}

sim_event_source evbuf_source(const evbuf *b, evbuf_cursor *cur)
{
    cur->b = b;
    cur->i = 0;
    sim_event_source s = {.next = cursor_next, .ctx = cur, .path = b->path, .name = b->name[0] ? b->name : NULL};
    return s;
}
