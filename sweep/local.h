/* local.h — runs a sweep's jobs on threads of this process, and the worker loop
 * the MPI driver reuses. */
#ifndef GPUSIM_SWEEP_LOCAL_H
#define GPUSIM_SWEEP_LOCAL_H

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

#endif
