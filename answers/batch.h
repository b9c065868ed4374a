/* batch.h — many replays of the same traces: the traces parsed once into memory
 * (evbuf), replayed as often as a question needs (compare's strategies, plan's
 * bisection, check's baseline), each replay with its own cursors so that replays can
 * run on several threads at once; and the small thread pool that runs them. */
#ifndef GPUSIM_BATCH_H
#define GPUSIM_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/evbuf.h"
#include "sim/memo.h"
#include "sim/status.h"
#include "traces/input.h"

#define BATCH_MAX_TRACES 64

/* The traces of one question, held in memory. Caller-owned; batch_traces_release frees. */
typedef struct batch_traces {
    uint32_t n;
    evbuf *b[BATCH_MAX_TRACES];
    /* A recording made mid-run: the state it starts from (a copy, owned here), and
     * how many of its first events are the allocations that state holds. One trace
     * with a state replays from it under a strategy that can take it (ops->seed),
     * as replay does (traces/IMPORT.md); other strategies, several traces, or
     * from_empty (--from-empty) get those allocations as events at the start. */
    sim_seed *seed[BATCH_MAX_TRACES];
    uint64_t seed_events[BATCH_MAX_TRACES];
    bool from_empty;
    uint64_t events;          /* over all traces */
    char dev_name[128];       /* the first trace's header device, "" if none */
    uint64_t dev_capacity;
    unsigned dev_cc_major, dev_cc_minor; /* its compute capability, 0.0 if none */
    char *meta_json;                     /* the first trace's header meta (a copy), NULL if none */
    sim_memo *memo;           /* what the replays of these traces share (planned's plans), made with
                               * the first trace; NULL if the host had no memory for it */
} batch_traces;

/* Called once per opened input, before it is read (e.g. to print its warnings). */
typedef void (*batch_opened_fn)(void *ctx, const trace_input *in);

/* Open each of paths[0..n) (format `from`, NULL = detect) and read it into memory.
 * On failure t holds nothing, and err names the file (SIM_EUSAGE for a bad --from or
 * --device, SIM_EIO, SIM_ETRACE, SIM_ENOMEM). n must be at most BATCH_MAX_TRACES. */
sim_status batch_traces_load(batch_traces *t, const char *const *paths, uint32_t n, const char *from,
                             const input_options *opt, batch_opened_fn opened, void *ctx, sim_error *err);
/* Read the opened input r (named path) into memory as t's next trace (t starts
 * zeroed; its device is the first trace's). On failure the caller releases t and
 * closes r; r is not kept either way. */
sim_status batch_traces_add(batch_traces *t, trace_input *r, const char *path, sim_error *err);
void batch_traces_release(batch_traces *t);

/* The source of trace i under ops when it runs alone on its device (a rank of a
 * node, or the one trace): from its recorded state where seed above says so. */
sim_event_source batch_source_alone(const batch_traces *t, uint32_t i, const strategy_ops *ops, evbuf_cursor *cur);
/* The sources of one replay of t under ops, each with its cursor in cur: trace 0
 * from its recorded state where seed above says so. */
void batch_sources(const batch_traces *t, const strategy_ops *ops, evbuf_cursor *cur, sim_event_source *src);
/* One replay of all the traces as processes on one device, from the recorded state
 * where there is one and the strategy can take it (seed above). Thread-safe: t is
 * only read, every call has its own cursors. Unless cfg names a memo, the replay
 * shares t's: `planned` plans each trace once per option set, however many replays
 * ask. Errors as engine_run's. */
sim_status batch_replay(const batch_traces *t, const engine_config *cfg, sim_run **out, sim_error *err);

/* Run fn(ctx, i) for every i < n on `jobs` threads, the caller's included (at most
 * 256; with one job, or when no thread can be started, the caller does it all). */
void batch_parallel(unsigned jobs, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
