/* registry.h — the strategies the program knows, in their usual order (the order of
 * `gpusim strategies` and of compare's and plan's default list), and lookups over the
 * options they describe in their ops tables (strategy_option, sim/strategy.h). */

/* Adding a strategy: write strategies/NAME.{h,c} (the build takes every .c of the
 * folder) exporting one getter of a `const strategy_ops` table (each member written out:
 * .create = NAME_create ... .walk = NAME_walk), with opts listing its options
 * (STRATEGY_OPTS_OF) and its traits set (family, framework, advice, whatif_strategies,
 * takes_region_at_start, recorded_conf_key: sim/strategy.h; the reports, what-ifs,
 * --summary, --node and the recorded settings follow from them), and add the getter
 * to GETTERS in registry.c at its place in the usual order. Its checker's corruption
 * tests reach its private NAME_types.h from tests/support/corrupt_NAME.c.
 *
 * Adding an option to a strategy: one STRATEGY_OPT_<KIND> entry in its opts table,
 * read in its create() and written back by its options() (strategy.h); the command
 * line, --help, check's baselines, sweep specs, compare's default list and `gpusim
 * strategies` follow from the table, and tests/cli_options.sh round-trips the new
 * option. */
#ifndef GPUSIM_REGISTRY_H
#define GPUSIM_REGISTRY_H

#include <stdbool.h>
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
/* The first strategy, in the usual order, that models framework's allocator
 * (ops->framework: "torch" finds torch, "tf" greedy), or NULL: what reproduces a
 * recording of that framework by default. */
const strategy_ops *registry_find_framework(const char *framework);

/* ops's own entry for the sim_kv key, or NULL when ops does not take it. */
const strategy_option *registry_option_of(const strategy_ops *ops, const char *key);
/* The option of ops that a recording's own allocator settings feed (its
 * recorded_conf_key: torch's --alloc-conf), or NULL when ops takes none. */
const strategy_option *registry_recorded_conf(const strategy_ops *ops);
/* The option spelt --cli (without the dashes) by any strategy, or NULL. */
const strategy_option *registry_option_by_cli(const char *cli);
/* The option whose sim_kv key is key in any strategy, or NULL. */
const strategy_option *registry_option_by_key(const char *key);
/* The i-th distinct option (by key) over all strategies, in registry order and then
 * table order; NULL when i is past the last. */
const strategy_option *registry_option_get(size_t i);
/* The names of the strategies that take key, ", "-separated, into buf (always
 * NUL-terminated; whole names only when cap is short); returns buf. */
char *registry_option_owners(const char *key, char *buf, size_t cap);
/* Whether key belongs to at least one of the n strategies in ops. */
bool registry_option_applies(const char *key, const strategy_ops *const *ops, size_t n);

#endif
