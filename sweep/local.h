/* local.h — runs a sweep's jobs on threads of this process, and the worker loop
 * the MPI driver reuses. */
#ifndef GPUSIM_SWEEP_LOCAL_H
#define GPUSIM_SWEEP_LOCAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/status.h"
#include "sweep/cache.h"
#include "sweep/results.h"
#include "sweep/sched.h"
#include "sweep/spec.h"

/* Run every job not done yet with `threads` worker threads of this process.
 * *exit_code: the worst exit code of a job (0, 2 or 3). */
sim_status sweep_run_local(const sweep_spec *s, sweep_results *r, uint32_t threads, bool progress, int *exit_code,
                           sim_error *err);

/* The worker loop of sweep_run_local, for drivers that add their own workers to
 * a shared scheduler (the MPI coordinator runs some on rank 0). */
typedef struct sweep_worker_ctx {
    const sweep_spec *s;
    sweep_sched *q;
    sweep_cache *c;
    sweep_results *r;
    int exit_code;        /* worst over the worker's jobs */
    sim_status st;        /* SIM_OK, or a failure to write the results (in err) */
    sim_error err;
} sweep_worker_ctx;
void *sweep_worker_main(void *arg);
/* The end of a driver's run over w (its threads tid, `started` of them; none: w[0]
 * ran on the calling thread): join the threads, end the progress line, raise
 * *exit_code to the workers' worst, free the scheduler, the cache, w and tid. st,
 * or else the first worker's failure (its error into err). */
sim_status sweep_workers_finish(sweep_worker_ctx *w, pthread_t *tid, uint32_t started, bool progress, sim_status st,
                                int *exit_code, sim_error *err);

#endif
