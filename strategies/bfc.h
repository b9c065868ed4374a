/* bfc.h — TensorFlow/XLA's BFC ("best-fit with coalescing") allocator, byte-exact,
 * in its three configurations: `greedy` (allow_growth=false: the whole limit as one
 * region at the first allocation), `growth` (allow_growth=true: regions of 2, 4, 8 …
 * MiB, never merged) and `limit` (a logical device with memory_limit: one region of
 * exactly --limit bytes). The rules and their sources are in bfc.c's header. */
#ifndef GPUSIM_BFC_H
#define GPUSIM_BFC_H

#include "sim/strategy.h"

typedef enum bfc_mode {
    BFC_GREEDY = 0, /* ops name "greedy" */
    BFC_GROWTH = 1, /* ops name "growth" */
    BFC_LIMIT = 2   /* ops name "limit" */
} bfc_mode;

/* The ops table of one configuration; the same static table on every call.
 * Options (strategy_config keys, raw command-line strings; unknown keys ignored):
 *   bfc_preset  tf (default) | jax        which framework's wiring sets the limit
 *   bfc_gc      on | off                  garbage collection of wholly free regions
 *                                         (default: on for tf, off for jax)
 *   mem_fraction  F in (0, 1]             limit = F × capacity (greedy, growth)
 *   limit       SIZE > 0                  the `limit` strategy's memory_limit (required)
 *   bfc_fragmentation_fraction  f ≥ 0     split slack cap = f × limit (0: 128 MiB) */
const strategy_ops *bfc_strategy(bfc_mode mode);

#endif
