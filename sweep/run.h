/* run.h — the parts that run a sweep (spec.h) and that the local (threads) and
 * the MPI drivers share: a scheduler that hands out jobs trace by trace, so that
 * a worker keeps replaying the trace it already holds; a per-process cache of
 * parsed traces (each trace read once and replayed from memory by every job
 * that needs it); one job's replay rendered as a JSONL line; the results file,
 * appended and flushed per job, resumable, and rewritten in job order at the
 * end; and the summary table. It knows nothing of MPI. One header per part; this one
 * includes them all. */
#ifndef GPUSIM_SWEEP_RUN_H
#define GPUSIM_SWEEP_RUN_H

#include "sweep/cache.h"
#include "sweep/job.h"
#include "sweep/local.h"
#include "sweep/results.h"
#include "sweep/sched.h"

#endif
