/* array_source.h — an event source over an in-memory array of events, for the suites
 * that replay hand-written traces through the engine: set it as a sim_event_source's
 * ctx with array_source_next as its next. Each event gets its 1-based index, and a
 * ready time before its time is raised to it (as the trace readers do). */
#ifndef GPUSIM_TEST_ARRAY_SOURCE_H
#define GPUSIM_TEST_ARRAY_SOURCE_H

#include <stdint.h>

#include "sim/event.h"

typedef struct array_source {
    const sim_event *ev;
    uint64_t n, i; /* events, and the next one to hand out */
} array_source;

/* sim_event_source.next over an array_source: SIM_OK with the next event, SIM_END after the last. */
sim_status array_source_next(void *ctx, sim_event *ev, sim_error *err);

#endif
