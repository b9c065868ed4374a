/* pool_protocol.h — the rules a process's pool events keep (design.md §3 "Pools"),
 * as PyTorch's allocator asserts them: which private pools exist, how many uses
 * each has (pool_begins not released), which are being allocated to now, and their
 * options. The engine keeps one per process and checks every pool event against it
 * before a strategy sees the event, so that every strategy refuses the same traces.
 * Thread safety: one per process of one replay; not shared. */
#ifndef GPUSIM_POOL_PROTOCOL_H
#define GPUSIM_POOL_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "status.h"

typedef struct pool_protocol pool_protocol;

/* What an accepted pool event means beyond itself. */
typedef struct pool_step {
    uint32_t options;  /* the pool's options (SIM_POOL_OPTIONS bits), from its first pool_begin */
    bool first_replay; /* a graph_replay, the pool's first */
} pool_step;

/* Check ev (a pool event) against *p and apply it; *p is made at the first event
 * (NULL before). SIM_OK with *step filled; SIM_ETRACE with the problem in msg (n
 * bytes, no file or line: the caller adds them), *p unchanged; SIM_ENOMEM. */
sim_status pool_protocol_apply(pool_protocol **p, const sim_event *ev, pool_step *step, char *msg, size_t n);
void pool_protocol_free(pool_protocol *p);

#endif
