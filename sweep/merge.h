/* merge.h — `gpusim sweep merge`: the results files of a sweep's shards (shard.h) into
 * the results file and summary of one run of their spec, byte for byte. */

/* Every shard's header must name the same spec (its hash), shard count and partition
 * (the trace files' sizes); the spec is read again (from the path the headers name, or
 * opts.spec) and must hash the same. Each shard may be given once; without partial every
 * shard must be given and finished. With partial the jobs there are so far are merged
 * (a shard still running: its complete lines) and the others count as not run, so a
 * merge may be run again as shards finish. The output is written through a temporary
 * file and a rename: never half-written. */
#ifndef GPUSIM_SWEEP_MERGE_H
#define GPUSIM_SWEEP_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/buf.h"
#include "sim/status.h"

typedef struct sweep_merge_opts {
    const char *spec; /* the spec's path instead of the headers' (NULL: theirs) */
    bool partial;     /* missing and unfinished shards are not an error */
} sweep_merge_opts;

typedef struct sweep_merge_report {
    uint32_t shards;     /* N of the shards' headers */
    uint32_t given;      /* shards merged */
    uint32_t unfinished; /* of them, with jobs missing (partial) */
    uint64_t jobs, done; /* of the spec; merged */
    int exit_code;       /* 3 when a job's trace is invalid (as one run), else 0 */
} sweep_merge_report;

/* Merge the n shard results files (a database, FILE.sqlite, stands for its journal
 * FILE.jsonl) into out (.jsonl, or .sqlite with its journal beside it, as `gpusim sweep
 * --output` writes them), the summary into text and json (either may be NULL).
 * Errors: SIM_EUSAGE (not a shard's file, shards of different specs, a shard given
 * twice, one missing or unfinished, out among the shards), SIM_EIO, naming the files. */
sim_status sweep_merge(const char *out, const char *const *shards, uint32_t n, const sweep_merge_opts *opts,
                       sim_buf *text, sim_buf *json, sweep_merge_report *rep, sim_error *err);

#endif
