/* limit.h — the memory limit a replay's allocator worked under, and where it comes
 * from in the user's words: the strategy's own answer (strategy_ops.limit: a BFC
 * preset's reserve, --mem-fraction, --limit), else PyTorch's memory fraction of
 * capacity, else capacity less the processes' contexts. One derivation, read by every
 * command's header (reports/result.h report_limit_text) and by `tune`'s candidates. */
#ifndef GPUSIM_ANSWERS_LIMIT_H
#define GPUSIM_ANSWERS_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"

/* The limit of run's first process in bytes; when source is not NULL, where it comes
 * from into source (at most n bytes, NUL-terminated): "0.8 x 16.00 GiB,
 * --memory-fraction", "--limit", "TF preset: capacity - 1050 MiB reserve". */
uint64_t limit_find(const sim_run *run, char *source, size_t n);

#endif
