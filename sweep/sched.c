/* The sweep's scheduler: jobs handed out trace by trace. */
#include "sched.h"

#include <pthread.h>
#include <stdlib.h>

enum { JOB_PENDING = 0, JOB_GIVEN = 1, JOB_DONE = 2, JOB_LOST = 3 };

struct sweep_sched {
    pthread_mutex_t mu;
    const sweep_spec *s;
    uint8_t *state;        /* per job */
    uint32_t *cursor;      /* per trace: first combo that may still be pending */
    uint32_t *pending;     /* per trace: jobs not handed out */
    uint8_t *started;      /* per trace: a job of it was handed out */
    uint32_t next_fresh;   /* traces below it are started or have nothing pending */
    uint64_t unfinished;
};

sweep_sched *sweep_sched_new(const sweep_spec *s, const uint8_t *done)
{
    sweep_sched *q = calloc(1, sizeof *q);
    uint64_t n = sweep_spec_jobs(s);
    if (q == NULL)
        return NULL;
    q->s = s;
    q->state = calloc((size_t)n + 1, 1);
    q->cursor = calloc(s->n_traces, sizeof *q->cursor);
    q->pending = calloc(s->n_traces, sizeof *q->pending);
    q->started = calloc(s->n_traces, 1);
    if (q->state == NULL || q->cursor == NULL || q->pending == NULL || q->started == NULL) {
        sweep_sched_free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    for (uint64_t i = 0; i < n; i++) {
        if (done && done[i]) {
            q->state[i] = JOB_DONE;
            continue;
        }
        q->pending[i / s->n_combos]++;
        q->unfinished++;
    }
    return q;
}

void sweep_sched_free(sweep_sched *q)
{
    if (q == NULL)
        return;
    if (q->state)
        pthread_mutex_destroy(&q->mu);
    free(q->state);
    free(q->cursor);
    free(q->pending);
    free(q->started);
    free(q);
}

uint64_t sweep_sched_next(sweep_sched *q, uint32_t hint)
{
    const sweep_spec *s = q->s;
    pthread_mutex_lock(&q->mu);
    uint32_t t = SWEEP_NO_TRACE;
    if (hint < s->n_traces && q->pending[hint] > 0)
        t = hint;
    if (t == SWEEP_NO_TRACE) {
        while (q->next_fresh < s->n_traces && (q->started[q->next_fresh] || q->pending[q->next_fresh] == 0))
            q->next_fresh++;
        if (q->next_fresh < s->n_traces)
            t = q->next_fresh;
    }
    if (t == SWEEP_NO_TRACE) {
        /* every trace is started: help with the one that has most left */
        uint32_t best = 0;
        for (uint32_t i = 0; i < s->n_traces; i++)
            if (q->pending[i] > best) {
                best = q->pending[i];
                t = i;
            }
    }
    uint64_t job = SWEEP_NO_JOB;
    if (t != SWEEP_NO_TRACE) {
        uint64_t base = (uint64_t)t * s->n_combos;
        while (q->state[base + q->cursor[t]] != JOB_PENDING)
            q->cursor[t]++;
        job = base + q->cursor[t]++;
        q->state[job] = JOB_GIVEN;
        q->pending[t]--;
        q->started[t] = 1;
    }
    pthread_mutex_unlock(&q->mu);
    return job;
}

void sweep_sched_finish(sweep_sched *q, uint64_t job, bool lost)
{
    pthread_mutex_lock(&q->mu);
    if (q->state[job] == JOB_GIVEN) {
        q->state[job] = lost ? JOB_LOST : JOB_DONE;
        q->unfinished--;
    }
    pthread_mutex_unlock(&q->mu);
}

uint64_t sweep_sched_unfinished(sweep_sched *q)
{
    pthread_mutex_lock(&q->mu);
    uint64_t n = q->unfinished;
    pthread_mutex_unlock(&q->mu);
    return n;
}
