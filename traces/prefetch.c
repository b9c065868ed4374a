/* A source read ahead on a second thread (prefetch.h): a ring of batches, the
 * thread filling slot k % PREFETCH_SLOTS while the caller reads the ones before. */
#include "prefetch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_CAP ((size_t)64 << 10) /* a batch's strings; more ends the batch early */

typedef struct pf_batch {
    sim_event ev[PREFETCH_BATCH];
    uint32_t n;
    char *text;            /* the events' tag, name and proc strings */
    size_t text_len, text_cap;
    sim_status end;        /* SIM_OK: more batches follow; else what the source said after ev[n-1] */
    sim_error err;         /* with end an error: its message */
} pf_batch;

struct prefetch {
    sim_event_source inner;
    pf_batch slot[PREFETCH_SLOTS];
    pthread_mutex_t mu;
    pthread_cond_t data, space;
    uint64_t filled;       /* batches published by the thread (under mu) */
    uint64_t released;     /* batches the caller is done with (under mu) */
    bool stop;             /* under mu: prefetch_free asks the thread to end */
    pthread_t thread;
    bool started, direct;  /* the thread runs; it could not start, so inner is read here */
    /* the thread's own: an event pulled whose strings did not fit the last batch's text */
    sim_event pending;
    bool has_pending;
    /* the caller's own */
    pf_batch *cur;
    uint32_t pos;
};

static size_t str_need(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static const char *str_put(pf_batch *b, const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = b->text + b->text_len;
    memcpy(d, s, n);
    b->text_len += n;
    return d;
}

/* Fill b with the next events, up to the end of the source or of b. The source
 * writes straight into the batch; only an event whose strings do not fit is kept
 * aside for the next batch (its strings live until the next pull). */
static void fill(prefetch *p, pf_batch *b)
{
    b->n = 0;
    b->text_len = 0;
    b->end = SIM_OK;
    while (b->n < PREFETCH_BATCH) {
        sim_event *d = &b->ev[b->n];
        if (p->has_pending) {
            *d = p->pending;
            p->has_pending = false;
        } else {
            sim_status st = p->inner.next(p->inner.ctx, d, &b->err);
            if (st != SIM_OK) {
                b->end = st;
                return;
            }
        }
        if (d->tag != NULL || d->name != NULL || d->proc != NULL) {
            size_t need = str_need(d->tag) + str_need(d->name) + str_need(d->proc);
            if (b->text_len + need > b->text_cap) {
                if (b->n > 0) {
                    p->pending = *d;
                    p->has_pending = true;
                    return;
                }
                char *t = realloc(b->text, need);
                if (t == NULL) {
                    b->end = sim_error_set(&b->err, SIM_ENOMEM, p->inner.path, d->line, d->index, "out of memory");
                    return;
                }
                b->text = t;
                b->text_cap = need;
            }
            d->tag = str_put(b, d->tag);
            d->name = str_put(b, d->name);
            d->proc = str_put(b, d->proc);
        }
        b->n++;
    }
}

static void *run(void *arg)
{
    prefetch *p = arg;
    for (uint64_t k = 0;; k++) {
        pthread_mutex_lock(&p->mu);
        while (k - p->released >= PREFETCH_SLOTS && !p->stop)
            pthread_cond_wait(&p->space, &p->mu);
        bool stop = p->stop;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return NULL;
        pf_batch *b = &p->slot[k % PREFETCH_SLOTS];
        fill(p, b);
        pthread_mutex_lock(&p->mu);
        p->filled = k + 1;
        pthread_cond_signal(&p->data);
        pthread_mutex_unlock(&p->mu);
        if (b->end != SIM_OK)
            return NULL;
    }
}

static sim_status pf_next(void *ctx, sim_event *ev, sim_error *err)
{
    prefetch *p = ctx;
    for (;;) {
        pf_batch *b = p->cur;
        if (b != NULL) {
            if (p->pos < b->n) {
                *ev = b->ev[p->pos++];
                return SIM_OK;
            }
            if (b->end != SIM_OK) {
                /* the end, or an error after the events before it; asked again, the same */
                if (b->end != SIM_END)
                    *err = b->err;
                return b->end;
            }
            pthread_mutex_lock(&p->mu);
            p->released++;
            pthread_cond_signal(&p->space);
            pthread_mutex_unlock(&p->mu);
            p->cur = NULL;
        }
        if (p->direct)
            return p->inner.next(p->inner.ctx, ev, err);
        if (!p->started) {
            pthread_t t;
            if (pthread_create(&t, NULL, run, p) != 0) {
                p->direct = true; /* no thread to be had: read in this one, as without prefetch */
                continue;
            }
            p->thread = t;
            p->started = true;
        }
        pthread_mutex_lock(&p->mu);
        while (p->filled <= p->released)
            pthread_cond_wait(&p->data, &p->mu);
        p->cur = &p->slot[p->released % PREFETCH_SLOTS];
        pthread_mutex_unlock(&p->mu);
        p->pos = 0;
    }
}

sim_status prefetch_new(sim_event_source inner, prefetch **out, sim_error *err)
{
    *out = NULL;
    prefetch *p = calloc(1, sizeof *p);
    if (p == NULL)
        return sim_error_set(err, SIM_ENOMEM, inner.path, 0, 0, "out of memory");
    for (int i = 0; i < PREFETCH_SLOTS; i++) {
        p->slot[i].text = malloc(TEXT_CAP);
        if (p->slot[i].text == NULL) {
            for (int j = 0; j < i; j++)
                free(p->slot[j].text);
            free(p);
            return sim_error_set(err, SIM_ENOMEM, inner.path, 0, 0, "out of memory");
        }
        p->slot[i].text_cap = TEXT_CAP;
    }
    p->inner = inner;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->data, NULL);
    pthread_cond_init(&p->space, NULL);
    *out = p;
    return SIM_OK;
}

sim_event_source prefetch_source(prefetch *p)
{
    sim_event_source s = p->inner;
    s.next = pf_next;
    s.ctx = p;
    return s;
}

void prefetch_free(prefetch *p)
{
    if (p == NULL)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_signal(&p->space);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    pthread_cond_destroy(&p->data);
    pthread_cond_destroy(&p->space);
    pthread_mutex_destroy(&p->mu);
    for (int i = 0; i < PREFETCH_SLOTS; i++)
        free(p->slot[i].text);
    free(p);
}
