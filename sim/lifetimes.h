/* lifetimes.h — the whole alloc/free sequence of every process in a set of spooled
 * sources, for strategies that plan offline (strategy_ops.plan, design.md §3
 * "Planned"), built by the engine before a replay.
 * Memory: 4 bytes per alloc or free event and 8 per buffer, plus the live ids.
 * Thread safety: built on one thread; then read-only, and any thread may read it. */

/* For each source it walks the events once, splits them into processes exactly as the
 * replay will (the event's "proc", else the source's name, else its path), numbers
 * each process's buffers by their alloc's position among its allocs, and records its
 * alloc and free events in file order (strategy_lifetimes). An invalid event (the
 * alloc of a live id, the free of an unknown one) is left out here: the replay
 * reports it. An alloc's "share" names the latest allocation of that id in the same
 * process before it, live or freed; a source with shares also keeps, per process,
 * every id's latest buffer (a source without keeps only the live ids). */
#ifndef GPUSIM_LIFETIMES_H
#define GPUSIM_LIFETIMES_H

#include <stdint.h>

#include "evbuf.h"
#include "status.h"
#include "strategy.h"

typedef struct lifetimes lifetimes;

lifetimes *lifetimes_new(void);
void lifetimes_free(lifetimes *l);
/* Adds the processes of source number src, read from b; default_name is the
 * process name of its events without "proc". SIM_ENOMEM when out of host memory,
 * SIM_ETRACE when a share names no earlier allocation of its process; err says which. */
sim_status lifetimes_add(lifetimes *l, uint32_t src, const evbuf *b, const char *default_name, sim_error *err);
/* The sequence of process `name` of source src; an empty one if it has no events. */
strategy_lifetimes lifetimes_get(const lifetimes *l, uint32_t src, const char *name);

#endif
