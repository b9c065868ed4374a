/* evbuf.h — a trace held in memory: the events of a source read once, strings
 * interned, so that the same trace can be replayed many times (bench, compare,
 * plan) without parsing it again, pool events included. 40 bytes per event (8 more per event once an
 * alloc shares another's memory).
 * Thread safety: built on one thread; once built it is read-only, and several threads
 * may replay it at once, each with its own cursor. */
#ifndef GPUSIM_EVBUF_H
#define GPUSIM_EVBUF_H

#include <stdint.h>

#include "event.h"
#include "status.h"

typedef struct evbuf evbuf;

evbuf *evbuf_new(const char *path, const char *name);
void evbuf_free(evbuf *b);
/* Append one event (its strings are copied). SIM_ENOMEM on failure. */
sim_status evbuf_push(evbuf *b, const sim_event *ev);
/* Read a whole source into b. */
sim_status evbuf_fill(evbuf *b, const sim_event_source *src, sim_error *err);
uint64_t evbuf_count(const evbuf *b);
/* How many of its allocs share another's memory (trace v1 "share"). */
uint64_t evbuf_shares(const evbuf *b);
/* How many of its events are pool events (pool_begin, pool_end, pool_release, graph_replay). */
uint64_t evbuf_pool_events(const evbuf *b);

/* A cursor over the buffer: a source the engine can read. Several cursors may
 * read one buffer at once (each replay has its own). */
typedef struct evbuf_cursor {
    const evbuf *b;
    uint64_t i;
} evbuf_cursor;

sim_event_source evbuf_source(const evbuf *b, evbuf_cursor *cur);

#endif
