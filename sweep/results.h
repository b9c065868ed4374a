/* results.h — a sweep's results file: JSONL, appended and flushed per job,
 * resumable after a kill, rewritten in job order at the end, with the summary
 * (reports/sweep.h) computed from it. */
#ifndef GPUSIM_SWEEP_RESULTS_H
#define GPUSIM_SWEEP_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/buf.h"
#include "sim/status.h"
#include "sweep/spec.h"

typedef struct sweep_results sweep_results;

/* Open the JSONL results file. resume: keep the jobs already there (a line cut
 * short by a kill is dropped; a line of another spec is an error). Without
 * resume, an existing non-empty file is an error unless force (start over). */
sim_status sweep_results_open(const sweep_spec *s, const char *path, bool resume, bool force, sweep_results **out,
                              sim_error *err);
/* The jobs that belong in a results file, and the line that opens it: a shard's
 * (shard.h), where sweep_results_open takes every job and no header. */
typedef struct sweep_results_scope {
    uint64_t first, end;  /* jobs [first, end) */
    const char *header;   /* the first line, with its '\n' (NULL: none) */
    size_t header_len;
} sweep_results_scope;
/* sweep_results_open for the jobs of scope: a fresh file starts with its header; on
 * resume the file's first line must be the same header (else SIM_EUSAGE: another
 * shard's, or another spec's) and a job outside the scope is an error. The jobs
 * outside are marked done, so no driver runs them. */
sim_status sweep_results_open_scope(const sweep_spec *s, const char *path, const sweep_results_scope *scope,
                                    bool resume, bool force, sweep_results **out, sim_error *err);
/* Per job: 1 when its line is in the file already (or it is outside the scope). */
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
/* The same, the file in job order written to dest (temporary file + rename) instead
 * of over r's own file, which is then removed (a merge's work file). */
sim_status sweep_results_finish_into(sweep_results *r, const char *dest, sim_buf *text, sim_buf *json, int *exit_code,
                                     sim_error *err);
/* Merging shards: append every complete line of the shard results file at path (its
 * first line, the shard's header, is skipped: the caller read it) whose job lies in
 * [first, end); a line of another job is an error naming the file and line. *jobs:
 * the jobs it holds. Not thread-safe with appends. */
sim_status sweep_results_absorb(sweep_results *r, const char *path, uint64_t first, uint64_t end, uint64_t *jobs,
                                sim_error *err);
void sweep_results_close(sweep_results *r);

#endif
