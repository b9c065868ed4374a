/* job.h — one sweep job: its replay, rendered as one JSONL result line. */
#ifndef GPUSIM_SWEEP_JOB_H
#define GPUSIM_SWEEP_JOB_H

#include <stdint.h>

#include "sim/buf.h"
#include "sweep/cache.h"
#include "sweep/spec.h"

/* Replay job `job` and put its result line (ending in '\n') into line (reset
 * first): {"job": {trace, device, strategy, options}, then the design.md §5
 * object's keys}, or {"job": ..., "error": {"exit": N, "message": ...}} when the
 * trace is invalid. On a node ("node" instead of "device" in "job"): the §5 keys
 * gpusim, trace and strategy, then "node", the node's "result" and "devices"
 * (docs/sweep.md). *events: events replayed. Returns the exit code the job
 * stands for (0, 2 or 3). */
int sweep_job_run(const sweep_spec *s, sweep_cache *c, uint64_t job, sim_buf *line, uint64_t *events);

#endif
