/* The sweep's cache of parsed traces. */
#include "cache.h"

#include <pthread.h>
#include <stdlib.h>

#include "sweep/sched.h"
#include "traces/input.h"

enum { TRACE_NONE = 0, TRACE_LOADING = 1, TRACE_READY = 2, TRACE_FAILED = 3 };

typedef struct cache_entry {
    int state;
    evbuf *b;
    uint32_t users;
    uint64_t last_use;
    sim_error *err;      /* TRACE_FAILED */
} cache_entry;

struct sweep_cache {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const sweep_spec *s;
    cache_entry *e;
    uint32_t keep, loaded;
    uint64_t tick;
    sim_memo *memo;      /* NULL if the host had no memory for it: each job plans alone */
};

sweep_cache *sweep_cache_new(const sweep_spec *s, uint32_t keep)
{
    sweep_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->e = calloc(s->n_traces, sizeof *c->e);
    if (c->e == NULL) {
        free(c);
        return NULL;
    }
    c->s = s;
    c->keep = keep ? keep : 1;
    c->memo = sim_memo_new();
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    return c;
}

void sweep_cache_free(sweep_cache *c)
{
    if (c == NULL)
        return;
    for (uint32_t i = 0; i < c->s->n_traces; i++) {
        evbuf_free(c->e[i].b);
        free(c->e[i].err);
    }
    free(c->e);
    sim_memo_free(c->memo);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

/* The one place a sweep opens a trace: when importers arrive (traces/input.h),
 * this is what switches. The buffer is named by the trace's display path, so
 * results do not depend on the directory the sweep runs from. */
static sim_status load_trace(const sweep_trace *t, evbuf **out, sim_error *err)
{
    /* any format gpusim reads: native, gtrace, PyTorch snapshots, Kineto, TF profiles */
    trace_input *r = NULL;
    input_options opt = {.device = -1};
    sim_status st = input_open(t->path, "auto", &opt, &r, err);
    if (st != SIM_OK)
        return st;
    evbuf *b = evbuf_new(t->display, input_header(r)->name);
    if (b == NULL) {
        input_close(r);
        return sim_error_set(err, SIM_ENOMEM, t->path, 0, 0, "out of memory holding the trace");
    }
    sim_event_source src = input_source(r);
    st = evbuf_fill(b, &src, err);
    input_close(r);
    if (st != SIM_OK) {
        evbuf_free(b);
        return st;
    }
    *out = b;
    return SIM_OK;
}

static void evict_locked(sweep_cache *c)
{
    while (c->loaded > c->keep) {
        uint32_t victim = SWEEP_NO_TRACE;
        for (uint32_t i = 0; i < c->s->n_traces; i++) {
            const cache_entry *e = &c->e[i];
            if (e->state == TRACE_READY && e->users == 0 &&
                (victim == SWEEP_NO_TRACE || e->last_use < c->e[victim].last_use))
                victim = i;
        }
        if (victim == SWEEP_NO_TRACE)
            return;
        evbuf_free(c->e[victim].b);
        c->e[victim].b = NULL;
        c->e[victim].state = TRACE_NONE;
        c->loaded--;
    }
}

const evbuf *sweep_cache_acquire(sweep_cache *c, uint32_t trace, sim_error *err)
{
    cache_entry *e = &c->e[trace];
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (e->state == TRACE_READY) {
            e->users++;
            e->last_use = ++c->tick;
            const evbuf *b = e->b;
            pthread_mutex_unlock(&c->mu);
            return b;
        }
        if (e->state == TRACE_FAILED) {
            *err = *e->err;
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        if (e->state == TRACE_LOADING) {
            pthread_cond_wait(&c->cv, &c->mu);
            continue;
        }
        e->state = TRACE_LOADING;
        pthread_mutex_unlock(&c->mu);
        evbuf *b = NULL;
        sim_error lerr;
        sim_error_clear(&lerr);
        sim_status st = load_trace(&c->s->traces[trace], &b, &lerr);
        pthread_mutex_lock(&c->mu);
        if (st == SIM_OK) {
            e->b = b;
            e->state = TRACE_READY;
            c->loaded++;
            e->users++; /* held while evicting, so it is not the victim */
            evict_locked(c);
            e->users--;
        } else {
            e->err = malloc(sizeof *e->err);
            if (e->err)
                *e->err = lerr;
            e->state = e->err ? TRACE_FAILED : TRACE_NONE;
            *err = lerr;
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        pthread_cond_broadcast(&c->cv);
    }
}

void sweep_cache_release(sweep_cache *c, uint32_t trace)
{
    pthread_mutex_lock(&c->mu);
    c->e[trace].users--;
    evict_locked(c);
    pthread_mutex_unlock(&c->mu);
}

sim_memo *sweep_cache_memo(sweep_cache *c)
{
    return c->memo;
}
