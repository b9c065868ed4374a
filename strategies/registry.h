/* registry.h — the list of strategies the program knows, in the order `gpusim
 * strategies` prints them. Adding a strategy = one line in registry.c. */
#ifndef GPUSIM_REGISTRY_H
#define GPUSIM_REGISTRY_H

#include <stddef.h>

#include "sim/strategy.h"

size_t registry_count(void);
/* The i-th strategy, i < registry_count(). */
const strategy_ops *registry_get(size_t i);
/* The strategy called name, or NULL. */
const strategy_ops *registry_find(const char *name);

#endif
