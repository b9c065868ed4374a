/* memo.h — work that the replays of one command share: a thread-safe map from a
 * key (bytes, given in parts so that nothing is copied to look one up) to an
 * immutable value (bytes), computed once. The `planned` strategy keeps its plan
 * here, keyed by its options and its process's whole alloc/free sequence, so that
 * plan's bisection, compare, tune and sweep plan each trace once however many
 * replays they make (engine_config.memo, strategy_config.memo). */

/* Computed once: the first caller of sim_memo_begin for a key gets
 * SIM_MEMO_COMPUTE and must call sim_memo_put or sim_memo_abandon; callers for
 * the same key meanwhile wait, then see the value (or compute it themselves
 * after an abandon). A value stays until sim_memo_free, so the pointer that
 * sim_memo_begin returns is valid for the memo's life. */
#ifndef GPUSIM_MEMO_H
#define GPUSIM_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct sim_memo sim_memo;

/* One part of a key: len bytes at data. */
typedef struct sim_memo_part {
    const void *data;
    size_t len;
} sim_memo_part;

typedef enum sim_memo_state {
    SIM_MEMO_FOUND = 0, /* *value, *len: the value */
    SIM_MEMO_COMPUTE,   /* nobody has it: compute it, then sim_memo_put or sim_memo_abandon */
    SIM_MEMO_NONE       /* no room to remember it (out of memory): compute it and keep it yourself */
} sim_memo_state;

/* NULL when the host is out of memory. */
sim_memo *sim_memo_new(void);
void sim_memo_free(sim_memo *m);
/* Looks the key (the parts' bytes one after another) up; see sim_memo_state. */
sim_memo_state sim_memo_begin(sim_memo *m, const sim_memo_part *key, size_t n_parts, const void **value, size_t *len);
/* The value of the key this caller got SIM_MEMO_COMPUTE for (copied); the
 * waiters see it. SIM_ENOMEM: not kept (as an abandon; the caller still has its own). */
sim_status sim_memo_put(sim_memo *m, const sim_memo_part *key, size_t n_parts, const void *value, size_t len);
/* The computation failed: a waiter computes it instead. */
void sim_memo_abandon(sim_memo *m, const sim_memo_part *key, size_t n_parts);
/* Values computed and looked up (found) so far, for tests and --format=json. */
uint64_t sim_memo_computed(sim_memo *m);
uint64_t sim_memo_found(sim_memo *m);

#endif
