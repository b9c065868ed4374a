/* cache.h — a per-process cache of a sweep's parsed traces: each trace read once
 * (any format traces/input.h reads) and replayed from memory by every job that
 * needs it, the least recently used evicted beyond a bound; thread-safe. */
#ifndef GPUSIM_SWEEP_CACHE_H
#define GPUSIM_SWEEP_CACHE_H

#include <stdint.h>

#include "sim/evbuf.h"
#include "sim/memo.h"
#include "sweep/spec.h"

typedef struct sweep_cache sweep_cache;

/* keep: how many parsed traces may stay in memory while nobody uses them. */
sweep_cache *sweep_cache_new(const sweep_spec *s, uint32_t keep);
void sweep_cache_free(sweep_cache *c);
/* The parsed trace (read on first use), or NULL with err filled when it cannot
 * be read (the failure is remembered: the trace is not read again). Pair every
 * successful acquire with a release. */
const evbuf *sweep_cache_acquire(sweep_cache *c, uint32_t trace, sim_error *err);
void sweep_cache_release(sweep_cache *c, uint32_t trace);
/* What the jobs of this process share besides the traces (engine_config.memo:
 * planned's plans, one per trace and option set, kept to the end), or NULL. */
sim_memo *sweep_cache_memo(sweep_cache *c);

#endif
