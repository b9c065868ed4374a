#include "evbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strings are kept as offsets into one growing pool (offset 0 = none), so the
 * pool can move without invalidating events. */
typedef struct stored_event {
    sim_event ev;       /* string pointers unused here */
    uint64_t tag, name, proc;
} stored_event;

struct evbuf {
    stored_event *ev;
    uint64_t n, cap;
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
    if (b->pool_len + n > b->pool_cap) {
        uint64_t cap = b->pool_cap * 2;
        while (b->pool_len + n > cap)
            cap *= 2;
        char *p = realloc(b->pool, (size_t)cap);
        if (p == NULL)
            return UINT64_MAX;
        b->pool = p;
        b->pool_cap = cap;
    }
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

sim_status evbuf_push(evbuf *b, const sim_event *ev)
{
    if (b->n == b->cap) {
        uint64_t cap = b->cap ? b->cap * 2 : 1024;
        stored_event *e = realloc(b->ev, (size_t)cap * sizeof *e);
        if (e == NULL)
            return SIM_ENOMEM;
        b->ev = e;
        b->cap = cap;
    }
    stored_event *prev = b->n ? &b->ev[b->n - 1] : NULL;
    stored_event *s = &b->ev[b->n];
    s->ev = *ev;
    s->ev.tag = s->ev.name = s->ev.proc = NULL;
    s->tag = intern_repeat(b, ev->tag, prev ? prev->tag : 0);
    s->name = intern(b, ev->name);
    s->proc = intern_repeat(b, ev->proc, prev ? prev->proc : 0);
    if (s->tag == UINT64_MAX || s->name == UINT64_MAX || s->proc == UINT64_MAX)
        return SIM_ENOMEM;
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

static sim_status cursor_next(void *ctx, sim_event *ev, sim_error *err)
{
    (void)err;
    evbuf_cursor *c = ctx;
    if (c->i >= c->b->n)
        return SIM_END;
    const stored_event *s = &c->b->ev[c->i++];
    *ev = s->ev;
    ev->tag = s->tag ? c->b->pool + s->tag : NULL;
    ev->name = s->name ? c->b->pool + s->name : NULL;
    ev->proc = s->proc ? c->b->pool + s->proc : NULL;
    return SIM_OK;
}

sim_event_source evbuf_source(const evbuf *b, evbuf_cursor *cur)
{
    cur->b = b;
    cur->i = 0;
    sim_event_source s = {.next = cursor_next, .ctx = cur, .path = b->path, .name = b->name[0] ? b->name : NULL};
    return s;
}
