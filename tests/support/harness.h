/* harness.h — drives one strategy instance directly (no trace, no engine) for unit
 * tests: every operation runs the full invariant checker afterwards and fails the
 * test with the checker's report, and layout strings show the walker's view.
 * For a strategy with ops->locate, every check also holds locate to the walker
 * (harness_check_locate) for the allocations the harness made.
 * Layout string: regions in address order separated by " | "; inside a region,
 * blocks by address: used "1024", free "[2048]", pending "(512)", unmapped "~4096";
 * a block on a stream other than 0 gets "@stream" appended. */
#ifndef GPUSIM_TEST_HARNESS_H
#define GPUSIM_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/device.h"
#include "sim/strategy.h"

/* An allocation the harness made that the program has not finished with. */
typedef struct harness_live {
    strategy_handle h;
    uint64_t size;
    bool pending; /* freed deferred, before its free_ready */
} harness_live;

typedef struct harness {
    device *dev;
    const strategy_ops *ops;
    strategy *s;
    uint32_t proc;
    char layout[8192];
    strategy_stat_value option; /* the last harness_option */
    harness_live *live;         /* for harness_check_locate */
    uint32_t n_live, cap_live;
    strategy_block *walked;     /* harness_check_locate's scratch: the walk by address, */
    bool *claimed;              /* and which of its blocks a live allocation was located in */
    uint32_t n_walked, cap_walked;
} harness;

/* opts: "key=value,key=value" or NULL. Fails the test if create fails. */
harness *harness_new(const strategy_ops *ops, uint64_t capacity, uint64_t context, const char *opts);
/* Same with an explicit device (cc for TF presets). */
harness *harness_new_dev(const strategy_ops *ops, const device_info *info, const char *opts);
/* Create; returns the status instead of failing (for option-error tests). */
sim_status harness_try_new(const strategy_ops *ops, uint64_t capacity, const char *opts, harness **out,
                           sim_error *err);
void harness_free(harness *h);

/* Allocation that must succeed. */
strategy_handle harness_alloc(harness *h, uint64_t size, uint32_t stream);
/* Allocation that may fail: returns SIM_OK or SIM_OOM. */
sim_status harness_try_alloc(harness *h, uint64_t size, uint32_t stream, strategy_handle *out,
                             strategy_oom *oom);
/* Two zero-byte allocations, the first on stream 0, the second on stream: each must
 * get a handle of its own and take nothing (an empty layout, 0 reserved). */
void harness_alloc_two_empty(harness *h, uint32_t stream, strategy_handle out[2]);
/* Allocation that must fail with SIM_OOM: its report. */
strategy_oom harness_oom(harness *h, uint64_t size, uint32_t stream);
void harness_free_block(harness *h, strategy_handle b);
void harness_free_deferred(harness *h, strategy_handle b);
/* A deferred free whose event is recorded on stream (ops->free_wait, where the
 * strategy has it). */
void harness_free_deferred_on(harness *h, strategy_handle b, uint32_t stream);
void harness_free_ready(harness *h, strategy_handle b);
void harness_empty_cache(harness *h);
/* The pool entries (the strategy must have them; the caller keeps the engine's
 * protocol, design.md §3 "Pools"): a scope on stream (a capture), or on every stream
 * (use_mem_pool); its end; one use released. */
void harness_pool_begin(harness *h, uint64_t pool, uint32_t stream, bool all_streams);
/* A scope as the engine hands it (the pool's options, a use_mem_pool scope on one
 * stream, ...). */
void harness_pool_scope(harness *h, const strategy_pool_scope *scope);
void harness_pool_end(harness *h, uint64_t pool);
void harness_pool_release(harness *h, uint64_t pool);
/* The strategy's figures for private pool `pool`: false when it keeps no such pool. */
bool harness_pool_info(harness *h, uint64_t pool, strategy_pool_info *out);

/* Run the checker, and harness_check_locate; fail the test with its report on any
 * violation. */
void harness_check(harness *h);
/* When the strategy has ops->locate (else nothing, 0): each allocation the harness
 * made and the program has not freed is located in the very block the walker shows
 * at that address (every field alike), used, with its requested bytes, or located
 * nowhere when it is of 0 bytes; a deferred free before its free_ready is located
 * in a pending block or nowhere (its memory came back early, or went whole to a
 * same-stream reuse); no two share a block; and every used block is one of them.
 * Returns the pending blocks no deferred free is located in: 0 where memory comes
 * back at free_ready, more under torch, which notices a ready free at its next
 * malloc (docs/allocators.md §2.6). */
uint32_t harness_check_locate(harness *h);
/* Run the checker and return the report (for corruption tests). */
sim_report harness_report(harness *h);
/* The layout string (valid until the next call). */
const char *harness_layout(harness *h);
strategy_sample harness_sample(harness *h);

/* The walker's blocks, in its order (more than HARNESS_MAX_BLOCKS fail the test). */
#define HARNESS_MAX_BLOCKS 8192
typedef struct harness_blocks {
    strategy_block b[HARNESS_MAX_BLOCKS];
    uint32_t n;
} harness_blocks;
void harness_walk(harness *h, harness_blocks *out);
/* One statistic by name from ops->stats; fails the test if absent. */
uint64_t harness_stat(harness *h, const char *key);
/* One effective option by name from ops->options, as text (valid until the next call);
 * fails the test if absent. */
const char *harness_option(harness *h, const char *key);

#endif
