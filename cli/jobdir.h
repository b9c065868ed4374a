/* jobdir.h — a directory of per-rank traces, as `gpusim synth --ranks` and `gpusim record
 * --ranks` write it: DIR/job.json ({"format":"gpusim-job","version":1,"name":...,"ranks":N,
 * "traces":[{"rank":0,"file":"rank-00000.jsonl",...},...]}) names the traces of the job's
 * ranks in rank order. cli/common.c expands such a directory, given where a trace goes,
 * into those traces, which replay and plan then take as the ranks of one job (a GPU per
 * rank, as a directory of PyTorch snapshots). */
#ifndef GPUSIM_CLI_JOBDIR_H
#define GPUSIM_CLI_JOBDIR_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/status.h"

/* The largest job.json read (a million ranks' entries fit) */
#define JOBDIR_MAX_BYTES (64u << 20)

/* Whether dir holds a job.json (a job directory; anything else is not one). */
bool jobdir_is_job(const char *dir);

/* The paths of the traces dir/job.json lists, in rank order, each a new string
 * ("dir/rank-00000.jsonl") the caller frees: paths[0..*n), at most cap of them. The
 * entries' ranks must be 0, 1, ... in order and each file a plain name inside dir that
 * exists. SIM_ETRACE naming job.json and the line of what is wrong, SIM_EUSAGE when
 * there are more than cap traces, SIM_EIO, SIM_ENOMEM; on error nothing is left
 * allocated and *n is 0. */
sim_status jobdir_traces(const char *dir, char **paths, uint32_t cap, uint32_t *n, sim_error *err);

#endif
