/* registry.h — the list of strategies the program knows, in the order `gpusim
 * strategies` prints them. Adding a strategy takes its own file (one getter of its
 * ops table) and one line in registry.c; a strategy with options also needs its
 * entries in the option tables of cli/cli.h (help), cli/cli.c (cli_strategy_kv),
 * sweep/spec.c (spec keys), cli/check.c (baseline keys) and cli/compare.c (order). */
#ifndef GPUSIM_REGISTRY_H
#define GPUSIM_REGISTRY_H

#include <stddef.h>

#include "sim/strategy.h"

/* The strategy every command uses when none is named: PyTorch's allocator, the one most
 * users run (docs/decisions.md). */
#define GPUSIM_DEFAULT_STRATEGY "torch"

size_t registry_count(void);
/* The i-th strategy, i < registry_count(). */
const strategy_ops *registry_get(size_t i);
/* The strategy called name, or NULL. */
const strategy_ops *registry_find(const char *name);

#endif
