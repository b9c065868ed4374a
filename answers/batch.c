#include "batch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sim_status batch_traces_add(batch_traces *t, trace_input *r, const char *path, sim_error *err)
{
    if (t->n == BATCH_MAX_TRACES)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "at most %d traces", BATCH_MAX_TRACES);
    const trace_header *h = input_header(r);
    if (t->n == 0) {
        if (t->memo == NULL)
            t->memo = sim_memo_new(); /* NULL: every replay plans on its own */
        snprintf(t->dev_name, sizeof t->dev_name, "%s", h->device_name);
        t->dev_capacity = h->device_capacity;
        t->dev_cc_major = h->device_cc_major;
        t->dev_cc_minor = h->device_cc_minor;
        if (h->meta_json != NULL && (t->meta_json = strdup(h->meta_json)) == NULL)
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    sim_event_source src = input_source(r);
    evbuf *b = evbuf_new(path, h->name);
    if (b == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    t->b[t->n++] = b;
    sim_status st = evbuf_fill(b, &src, err);
    if (st == SIM_OK)
        t->events += evbuf_count(b);
    const sim_seed *seed = input_seed(r);
    if (st == SIM_OK && seed != NULL) {
        if ((t->seed[t->n - 1] = sim_seed_dup(seed)) == NULL)
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        t->seed_events[t->n - 1] = input_seed_events(r);
    }
    return st;
}

sim_status batch_traces_load(batch_traces *t, const char *const *paths, uint32_t n, const char *from,
                             const input_options *opt, batch_opened_fn opened, void *ctx, sim_error *err)
{
    memset(t, 0, sizeof *t);
    if (n > BATCH_MAX_TRACES)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "at most %d traces", BATCH_MAX_TRACES);
    for (uint32_t i = 0; i < n; i++) {
        trace_input *r = NULL;
        sim_status st = input_open(paths[i], from, opt, &r, err);
        if (st != SIM_OK) {
            batch_traces_release(t);
            return st;
        }
        if (opened)
            opened(ctx, r);
        st = batch_traces_add(t, r, paths[i], err);
        input_close(r);
        if (st != SIM_OK) {
            batch_traces_release(t);
            return st;
        }
    }
    return SIM_OK;
}

void batch_traces_release(batch_traces *t)
{
    for (uint32_t i = 0; i < t->n; i++) {
        evbuf_free(t->b[i]);
        free(t->seed[i]);
    }
    sim_memo_free(t->memo);
    free(t->meta_json);
    memset(t, 0, sizeof *t);
}

sim_event_source batch_source_alone(const batch_traces *t, uint32_t i, const strategy_ops *ops, evbuf_cursor *cur)
{
    sim_event_source src = evbuf_source(t->b[i], cur);
    if (t->seed[i] != NULL && ops->seed != NULL && !t->from_empty) {
        cur->i = t->seed_events[i]; /* the state holds them: they are not events */
        src.seed = t->seed[i];
    }
    return src;
}

void batch_sources(const batch_traces *t, const strategy_ops *ops, evbuf_cursor *cur, sim_event_source *src)
{
    if (t->n == 1) {
        src[0] = batch_source_alone(t, 0, ops, &cur[0]);
        return;
    }
    for (uint32_t i = 0; i < t->n; i++)
        src[i] = evbuf_source(t->b[i], &cur[i]);
}

sim_status batch_replay(const batch_traces *t, const engine_config *cfg, sim_run **out, sim_error *err)
{
    evbuf_cursor cur[BATCH_MAX_TRACES];
    sim_event_source src[BATCH_MAX_TRACES];
    batch_sources(t, cfg->ops, cur, src);
    engine_config c = *cfg;
    if (c.memo == NULL)
        c.memo = t->memo;
    return engine_run(&c, src, t->n, out, err);
}

typedef struct pool {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t n;
    atomic_size_t next;
} pool;

static void *pool_worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            return NULL;
        p->fn(p->ctx, i);
    }
}

void batch_parallel(unsigned jobs, size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
    pool p = {fn, ctx, n, 0};
    pthread_t th[256];
    unsigned started = 0;
    for (unsigned k = 1; k < jobs && k < 256; k++)
        if (pthread_create(&th[started], NULL, pool_worker, &p) == 0)
            started++;
    pool_worker(&p);
    for (unsigned k = 0; k < started; k++)
        pthread_join(th[k], NULL);
}
