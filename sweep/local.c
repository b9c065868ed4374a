/* The local driver: a sweep on threads of this process. */
#include "local.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "sweep/job.h"

void *sweep_worker_main(void *arg)
{
    sweep_worker_ctx *w = arg;
    sim_buf line;
    sim_buf_init(&line);
    uint32_t hint = SWEEP_NO_TRACE;
    for (;;) {
        uint64_t job = sweep_sched_next(w->q, hint);
        if (job == SWEEP_NO_JOB)
            break;
        hint = (uint32_t)(job / w->s->n_combos);
        uint64_t events = 0;
        int code = sweep_job_run(w->s, w->c, job, &line, &events);
        if (code > w->exit_code)
            w->exit_code = code;
        if (w->st == SIM_OK && line.oom)
            w->st = sim_error_set(&w->err, SIM_ENOMEM, NULL, 0, 0, "out of memory rendering a result");
        if (w->st == SIM_OK)
            w->st = sweep_results_append(w->r, job, line.data, line.len, code, events, &w->err);
        sweep_sched_finish(w->q, job, w->st != SIM_OK);
    }
    sim_buf_release(&line);
    return NULL;
}

sim_status sweep_run_local(const sweep_spec *s, sweep_results *r, uint32_t threads, bool progress, int *exit_code,
                           sim_error *err)
{
    *exit_code = 0;
    if (threads == 0)
        threads = 1;
    sweep_sched *q = sweep_sched_new(s, sweep_results_done(r));
    sweep_cache *c = sweep_cache_new(s, threads + 1);
    sweep_worker_ctx *w = calloc(threads, sizeof *w);
    pthread_t *tid = calloc(threads, sizeof *tid);
    if (q == NULL || c == NULL || w == NULL || tid == NULL) {
        sweep_sched_free(q);
        sweep_cache_free(c);
        free(w);
        free(tid);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    sweep_results_progress(r, progress);
    uint32_t started = 0;
    for (uint32_t i = 0; i < threads; i++) {
        w[i] = (sweep_worker_ctx){.s = s, .q = q, .c = c, .r = r};
        if (threads == 1)
            break;
        if (pthread_create(&tid[i], NULL, sweep_worker_main, &w[i]) != 0)
            break;
        started++;
    }
    if (started == 0) /* one worker, or no thread could start: this thread works */
        sweep_worker_main(&w[0]);
    return sweep_workers_finish(w, tid, started, progress, SIM_OK, exit_code, err);
}

sim_status sweep_workers_finish(sweep_worker_ctx *w, pthread_t *tid, uint32_t started, bool progress, sim_status st,
                                int *exit_code, sim_error *err)
{
    for (uint32_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    if (progress)
        fputc('\n', stderr);
    for (uint32_t i = 0; i < (started ? started : 1); i++) {
        if (w[i].exit_code > *exit_code)
            *exit_code = w[i].exit_code;
        if (st == SIM_OK && w[i].st != SIM_OK) {
            st = w[i].st;
            *err = w[i].err;
        }
    }
    sweep_results_progress(w[0].r, false);
    sweep_sched_free(w[0].q);
    sweep_cache_free(w[0].c);
    free(w);
    free(tid);
    return st;
}
