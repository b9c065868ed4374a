/* sched.h — the sweep's scheduler: hands out jobs trace by trace, so that a worker
 * keeps replaying the trace it already holds; thread-safe. */
#ifndef GPUSIM_SWEEP_SCHED_H
#define GPUSIM_SWEEP_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "sweep/spec.h"

#define SWEEP_NO_JOB UINT64_MAX
#define SWEEP_NO_TRACE UINT32_MAX

typedef struct sweep_sched sweep_sched;

/* done: per job, non-zero when it is already in the results (may be NULL). */
sweep_sched *sweep_sched_new(const sweep_spec *s, const uint8_t *done);
void sweep_sched_free(sweep_sched *q);
/* The next job for a worker holding trace hint (SWEEP_NO_TRACE: none): a job of
 * that trace if one is left, else of a trace nobody started, else of the trace
 * with most jobs left. SWEEP_NO_JOB when every job was handed out. */
uint64_t sweep_sched_next(sweep_sched *q, uint32_t hint);
/* A job handed out is over: done, or lost with the worker that ran it. */
void sweep_sched_finish(sweep_sched *q, uint64_t job, bool lost);
/* Jobs not handed out yet + jobs in flight. */
uint64_t sweep_sched_unfinished(sweep_sched *q);

#endif
