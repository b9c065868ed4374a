/* run.h — the parts that run a sweep (spec.h) and that the local (threads) and
 * the MPI drivers share: a scheduler that hands out jobs trace by trace, so that
 * a worker keeps replaying the trace it already holds; a per-process cache of
 * parsed traces (each trace read once and replayed from memory by every job
 * that needs it); one job's replay rendered as a JSONL line; the results file,
 * appended and flushed per job, resumable, and rewritten in job order at the
 * end; and the summary table. It knows nothing of MPI. */
#ifndef GPUSIM_SWEEP_RUN_H
#define GPUSIM_SWEEP_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/buf.h"
#include "sim/evbuf.h"
#include "sweep/spec.h"

#define SWEEP_NO_JOB UINT64_MAX
#define SWEEP_NO_TRACE UINT32_MAX

/* ---------------------------------------------------------------- scheduler (thread-safe) */

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

/* ---------------------------------------------------------------- trace cache (thread-safe) */

typedef struct sweep_cache sweep_cache;

/* keep: how many parsed traces may stay in memory while nobody uses them. */
sweep_cache *sweep_cache_new(const sweep_spec *s, uint32_t keep);
void sweep_cache_free(sweep_cache *c);
/* The parsed trace (read on first use), or NULL with err filled when it cannot
 * be read (the failure is remembered: the trace is not read again). Pair every
 * successful acquire with a release. */
const evbuf *sweep_cache_acquire(sweep_cache *c, uint32_t trace, sim_error *err);
void sweep_cache_release(sweep_cache *c, uint32_t trace);

/* ---------------------------------------------------------------- one job */

/* Replay job `job` and put its result line (ending in '\n') into line (reset
 * first): {"job": {trace, device, strategy, options}, then the design.md §5
 * object's keys}, or {"job": ..., "error": {"exit": N, "message": ...}} when the
 * trace is invalid. *events: events replayed. Returns the exit code the job
 * stands for (0, 2 or 3). */
int sweep_job_run(const sweep_spec *s, sweep_cache *c, uint64_t job, sim_buf *line, uint64_t *events);

/* ---------------------------------------------------------------- results file */

typedef struct sweep_results sweep_results;

/* Open the JSONL results file. resume: keep the jobs already there (a line cut
 * short by a kill is dropped; a line of another spec is an error). Without
 * resume, an existing non-empty file is an error unless force (start over). */
sim_status sweep_results_open(const sweep_spec *s, const char *path, bool resume, bool force, sweep_results **out,
                              sim_error *err);
/* Per job: 1 when its line is in the file already. */
const uint8_t *sweep_results_done(const sweep_results *r);
uint64_t sweep_results_count(const sweep_results *r);
/* Append one job's line and flush it (thread-safe). exit_code: what sweep_job_run returned. */
sim_status sweep_results_append(sweep_results *r, uint64_t job, const char *line, size_t len, int exit_code,
                                uint64_t events, sim_error *err);
/* Show "N/M jobs" on stderr as lines are appended. */
void sweep_results_progress(sweep_results *r, bool on);
/* Jobs appended by this run, and the events they replayed. */
void sweep_results_throughput(const sweep_results *r, uint64_t *jobs, uint64_t *events);
/* Rewrite the file in job order (temporary file + rename) and compute the summary:
 * text and JSON into the buffers (either may be NULL). *exit_code: 3 when a job's
 * trace is invalid, else 0. */
sim_status sweep_results_finish(sweep_results *r, sim_buf *text, sim_buf *json, int *exit_code, sim_error *err);
void sweep_results_close(sweep_results *r);

/* ---------------------------------------------------------------- local driver */

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
