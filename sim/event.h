/* event.h — one trace event as the engine sees it, and the pull interface through
 * which the engine reads events from any trace reader (native JSON/JSONL, importers,
 * in-memory traces). The engine never sees files, only sources.
 * Thread safety: a source is not thread-safe; separate sources may run on separate threads. */
#ifndef GPUSIM_EVENT_H
#define GPUSIM_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

typedef enum sim_op {
    SIM_OP_ALLOC = 0,
    SIM_OP_FREE = 1,
    SIM_OP_EMPTY_CACHE = 2,
    SIM_OP_MARK = 3
} sim_op;

#define SIM_MAX_SIZE ((uint64_t)1 << 53) /* sizes above 2^53 are rejected */

typedef struct sim_event {
    sim_op op;
    uint64_t id;        /* alloc, free */
    uint64_t size;      /* alloc */
    uint64_t t;         /* always set (missing = previous event's t) */
    uint64_t ready_t;   /* free: == t unless the free is deferred */
    uint32_t stream;    /* alloc */
    bool has_ready_stream; /* free: it names the stream its event is recorded on */
    uint32_t ready_stream; /* free, when has_ready_stream: that stream (design.md §3) */
    const char *tag;    /* alloc: optional label, NULL if none */
    const char *name;   /* mark: the annotation */
    const char *proc;   /* optional process name, NULL = the source's default process */
    uint64_t line;      /* where the event came from, for messages (0 if unknown) */
    uint64_t index;     /* 1-based event index within its source */
} sim_event;
/* String pointers stay valid until the next call of the source's next(). */

typedef struct sim_event_source {
    /* SIM_OK with *ev filled, SIM_END when done, or an error with err filled
     * (file, line/event, message). */
    sim_status (*next)(void *ctx, sim_event *ev, sim_error *err);
    void *ctx;
    const char *path;   /* shown in messages and results */
    const char *name;   /* the trace's name (header), or NULL */
    /* The allocator state the source's process starts from (sim/seed.h), or NULL:
     * the engine hands it to the strategy's `seed` entry before the first event. */
    const struct sim_seed *seed;
} sim_event_source;

const char *sim_op_name(sim_op op);

#endif
