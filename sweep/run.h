/* run.h — the parts that run a sweep (spec.h) and that the local (threads) and the
 * MPI drivers share: the scheduler, the trace cache, one job's replay, the results
 * file and the summary table. It knows nothing of MPI. One header per part; this one
 * includes them all. */

/* The scheduler hands out jobs trace by trace, so that a worker keeps replaying the
 * trace it already holds; the per-process cache parses each trace once, and every job
 * that needs it replays it from memory; a job's replay is rendered as a JSONL line; the
 * results file is appended and flushed per job, resumable, and rewritten in job order
 * at the end. */
#ifndef GPUSIM_SWEEP_RUN_H
#define GPUSIM_SWEEP_RUN_H

#include "sweep/cache.h"
#include "sweep/job.h"
#include "sweep/local.h"
#include "sweep/results.h"
#include "sweep/sched.h"

#endif
