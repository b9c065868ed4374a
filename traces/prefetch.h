/* prefetch.h — a trace source read ahead on a second thread: the thread pulls events
 * from the inner source into a small ring of fixed batches (PREFETCH_SLOTS of
 * PREFETCH_BATCH events, their strings copied beside them) while the caller consumes
 * the batches in order, so reading a file and replaying it overlap. Memory is fixed,
 * whatever the trace's length. */

/* The caller sees exactly what the inner source gives, in the same order: every event
 * before an error, then the error (status and message as the inner source set them); it
 * does not see how far ahead the thread has read. For inputs that never block (regular
 * files): closing waits for the thread to finish the batch it is filling. */
#ifndef GPUSIM_PREFETCH_H
#define GPUSIM_PREFETCH_H

#include "sim/event.h"
#include "sim/status.h"

#define PREFETCH_SLOTS 3
#define PREFETCH_BATCH 4096

typedef struct prefetch prefetch;

/* A reader ahead of inner (which must outlive it); the thread starts at the first
 * event asked for. SIM_ENOMEM. */
sim_status prefetch_new(sim_event_source inner, prefetch **out, sim_error *err);
/* The source the caller reads instead of inner (path, name and seed as inner's).
 * String pointers stay valid until the next call of its next(), as for any source. */
sim_event_source prefetch_source(prefetch *p);
/* Stop the thread (after the batch it is filling) and free p; NULL is allowed. */
void prefetch_free(prefetch *p);

#endif
