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
 * Its options (strategy_config keys, raw command-line strings; unknown keys
 * ignored) are the ops table's opts: bfc_limits_options (bfc_limits.h). */
const strategy_ops *bfc_strategy(bfc_mode mode);

#endif
