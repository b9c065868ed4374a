/* Per-process alloc/free sequences of spooled sources (lifetimes.h). Processes are
 * few, so they are a plain array searched by (source, name). */
#include "lifetimes.h"

#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "grow.h"

typedef struct lt_proc {
    uint32_t src;
    char *name;
    uint32_t *events;
    uint64_t n_events, cap_events;
    uint64_t *sizes;
    uint32_t *shares; /* per buffer, when the source has shares, else NULL */
    uint32_t n_buffers, cap_buffers, cap_shares;
    idmap ids;  /* live trace id -> buffer number (handle field) */
    idmap past; /* when the source has shares: every id -> its latest buffer */
} lt_proc;

struct lifetimes {
    lt_proc *procs;
    uint32_t n, cap;
};

lifetimes *lifetimes_new(void)
{
    return calloc(1, sizeof(lifetimes));
}

void lifetimes_free(lifetimes *l)
{
    if (l == NULL)
        return;
    for (uint32_t i = 0; i < l->n; i++) {
        free(l->procs[i].name);
        free(l->procs[i].events);
        free(l->procs[i].sizes);
        free(l->procs[i].shares);
        idmap_release(&l->procs[i].ids);
        idmap_release(&l->procs[i].past);
    }
    free(l->procs);
    free(l);
}

static lt_proc *find(const lifetimes *l, uint32_t src, const char *name)
{
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->procs[i].src == src && strcmp(l->procs[i].name, name) == 0)
            return &l->procs[i];
    }
    return NULL;
}

static lt_proc *find_or_add(lifetimes *l, uint32_t src, const char *name)
{
    lt_proc *p = find(l, src, name);
    if (p != NULL)
        return p;
    if (!SIM_GROW(l->procs, l->n + 1, l->cap))
        return NULL;
    p = &l->procs[l->n];
    memset(p, 0, sizeof *p);
    p->src = src;
    p->name = malloc(strlen(name) + 1);
    if (p->name == NULL || !idmap_init(&p->ids) || !idmap_init(&p->past)) {
        free(p->name);
        idmap_release(&p->ids);
        return NULL;
    }
    strcpy(p->name, name);
    l->n++;
    return p;
}

static bool push_event(lt_proc *p, uint32_t e)
{
    if (!SIM_GROW(p->events, p->n_events + 1, p->cap_events))
        return false;
    p->events[p->n_events++] = e;
    return true;
}

/* The buffer an alloc shares, from the ids allocated before it (the source has
 * shares): STRATEGY_PLAN_NO_SHARE without one; SIM_ETRACE when it names none. */
static sim_status shared_buffer(lt_proc *p, const sim_event *ev, const char *path, uint32_t *out, sim_error *err)
{
    *out = STRATEGY_PLAN_NO_SHARE;
    if (!ev->has_share)
        return SIM_OK;
    const idmap_entry *e = idmap_find(&p->past, ev->share);
    if (e == NULL)
        return sim_error_set(err, SIM_ETRACE, path, ev->line, ev->index,
                             "\"share\": %llu names no earlier allocation of this process (a shared buffer is "
                             "allocated before the one that shares it)",
                             (unsigned long long)ev->share);
    *out = e->handle;
    return SIM_OK;
}

static sim_status record_alloc(lt_proc *p, const sim_event *ev, bool shares, const char *path, sim_error *err)
{
    if (p->n_buffers == UINT32_MAX - 1)
        return SIM_ENOMEM;
    bool found = false;
    idmap_entry *ent = idmap_find_or_insert(&p->ids, ev->id, &found);
    if (ent == NULL)
        return SIM_ENOMEM;
    if (found)
        return SIM_OK; /* invalid: the replay reports it */
    if (!SIM_GROW(p->sizes, p->n_buffers + 1, p->cap_buffers))
        return SIM_ENOMEM;
    ent->handle = p->n_buffers;
    if (shares) {
        uint32_t shared;
        sim_status st = shared_buffer(p, ev, path, &shared, err);
        if (st != SIM_OK)
            return st;
        idmap_entry *last = idmap_find_or_insert(&p->past, ev->id, &found);
        if (last == NULL || !SIM_GROW(p->shares, p->n_buffers + 1, p->cap_shares))
            return SIM_ENOMEM;
        last->handle = p->n_buffers;
        p->shares[p->n_buffers] = shared;
    }
    p->sizes[p->n_buffers++] = ev->size;
    return push_event(p, STRATEGY_PLAN_ALLOC) ? SIM_OK : SIM_ENOMEM;
}

static bool record_free(lt_proc *p, const sim_event *ev)
{
    idmap_entry *ent = idmap_find(&p->ids, ev->id);
    if (ent == NULL)
        return true; /* invalid: the replay reports it */
    uint32_t b = ent->handle;
    idmap_remove(&p->ids, ent);
    return push_event(p, b);
}

sim_status lifetimes_add(lifetimes *l, uint32_t src, const evbuf *b, const char *default_name, sim_error *err)
{
    bool shares = evbuf_shares(b) > 0;
    evbuf_cursor cur;
    sim_event_source s = evbuf_source(b, &cur);
    sim_event ev;
    sim_error read_err;
    lt_proc *last = NULL;
    sim_status st;
    while ((st = s.next(s.ctx, &ev, &read_err)) == SIM_OK) {
        if (ev.op != SIM_OP_ALLOC && ev.op != SIM_OP_FREE)
            continue;
        const char *name = ev.proc ? ev.proc : default_name;
        if (last == NULL || strcmp(name, last->name) != 0) {
            last = find_or_add(l, src, name);
            if (last == NULL)
                return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
        if (ev.op == SIM_OP_ALLOC)
            st = record_alloc(last, &ev, shares, s.path, err);
        else
            st = record_free(last, &ev) ? SIM_OK : SIM_ENOMEM;
        if (st == SIM_ENOMEM)
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        if (st != SIM_OK)
            return st;
    }
    return st == SIM_END ? SIM_OK : sim_error_set(err, st, NULL, 0, 0, "out of memory");
}

strategy_lifetimes lifetimes_get(const lifetimes *l, uint32_t src, const char *name)
{
    const lt_proc *p = find(l, src, name);
    if (p == NULL)
        return (strategy_lifetimes){0};
    return (strategy_lifetimes){.events = p->events,
                                .n_events = p->n_events,
                                .sizes = p->sizes,
                                .shares = p->shares,
                                .n_buffers = p->n_buffers};
}
