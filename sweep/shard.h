/* shard.h — a sweep cut into N shards for job arrays (Slurm, HyperQueue, Kubernetes
 * indexed Jobs, AWS Batch; docs/sweep.md): which jobs shard I of N runs, where its index
 * comes from, the name of its results file and the header line that opens that file. */

/* The partition: the jobs in their order (trace-major) cut into N contiguous ranges of
 * about equal weight, a job weighing its trace's size on disk (the event count's proxy
 * that every shard reads alike without parsing the trace). A cut moves to the nearest
 * trace boundary when that changes the shard's weight by at most an eighth of the mean,
 * so most traces are read by one shard only. The same spec and trace files give the same
 * cuts everywhere; the partition key (FNV-1a of the shard count and every trace's name
 * and size) lets a merge check that the shards were cut alike. */
#ifndef GPUSIM_SWEEP_SHARD_H
#define GPUSIM_SWEEP_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/buf.h"
#include "sim/status.h"
#include "sweep/spec.h"

#define SWEEP_MAX_SHARDS 1000000u

typedef struct sweep_shard {
    uint32_t index, count; /* index < count */
} sweep_shard;

/* --shard's value: "I/N" (0 ≤ I < N), "auto/N" (I from the environment), or "auto" (I
 * and N from it; only Slurm gives N). *from: the variable the index came from, or "".
 * SIM_EUSAGE naming the problem (no index variable, two of them, an index ≥ N). */
sim_status sweep_shard_parse(const char *arg, sweep_shard *out, const char **from, sim_error *err);
/* The index variables, in the order they are looked up ("SLURM_ARRAY_TASK_ID, ..."). */
const char *sweep_shard_env_names(void);

typedef struct sweep_partition sweep_partition;

/* Cut s's jobs into `shards` ranges. SIM_EIO when a trace cannot be stat'ed. */
sim_status sweep_partition_new(const sweep_spec *s, uint32_t shards, sweep_partition **out, sim_error *err);
void sweep_partition_free(sweep_partition *p);
uint32_t sweep_partition_shards(const sweep_partition *p);
/* Shard i's jobs: [first, end). */
void sweep_partition_range(const sweep_partition *p, uint32_t i, uint64_t *first, uint64_t *end);
/* The shard that runs job j. */
uint32_t sweep_partition_shard_of(const sweep_partition *p, uint64_t job);
/* Traces whose jobs more than one shard runs (each of those shards reads it). */
uint32_t sweep_partition_split_traces(const sweep_partition *p);
uint64_t sweep_partition_key(const sweep_partition *p);

/* The results file of shard sh: output with ".shard-I-of-N" before its extension
 * ("out.jsonl" → "out.shard-2-of-7.jsonl"). false when it does not fit in cap. */
bool sweep_shard_path(const char *output, sweep_shard sh, char *out, size_t cap);

/* The first line of a shard's results file: {"gpusim_shard": {"spec", "spec_hash",
 * "partition", "shard", "shards", "first_job", "jobs"}} and '\n'. */
void sweep_shard_header(const sweep_spec *s, const sweep_partition *p, uint32_t shard, sim_buf *out);

/* What a shard's header says. */
typedef struct sweep_shard_info {
    char spec[1024];
    uint64_t spec_hash, partition;
    uint32_t shard, shards;
    uint64_t first_job, jobs;
} sweep_shard_info;

/* Whether a line (without its '\n') is a shard header. */
bool sweep_shard_is_header(const char *line, size_t len);
/* Read the header line of the shard results file at path. SIM_EIO when it cannot be
 * read, SIM_EUSAGE when its first line is not a shard header (naming the file). */
sim_status sweep_shard_read_header(const char *path, sweep_shard_info *out, sim_error *err);

#endif
