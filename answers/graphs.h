/* graphs.h — the CUDA graphs' questions on a trace with captures (trace v1 pool
 * events, design.md §3 "Pools"), answered by replays of rewritten copies of the trace
 * (an event-source transform, never an edit of the file): how much each private pool
 * reserved at its high-water mark and at the end of capture, what the same graphs
 * would need with a pool each, and the what-if over pool sharing (one shared pool,
 * as graph_pool_handle() shared across captures gives, or one pool per graph) and
 * capture order (as recorded, largest first, smallest first). The reports render
 * the answer (reports/graphs.h). */

/* A capture scope is the events from a pool_begin that captures (the trace's
 * "capture") to its pool_end. The questions are about the last run of captures: a
 * capture starts a new run when every graph captured before it was released (a
 * server's profiling captures, destroyed before the real ones); earlier runs stay as
 * they are. Reordering moves whole scopes, each with the events
 * between it and the scope before it (the warm-up runs and static inputs a server
 * makes before each capture). The order is fixed by the program, and the rewrite
 * refused with a message naming the event, when another process's event or another
 * pool event lies between the captures, something a capture (or the work before it)
 * allocated is freed by a later one (or the work before it), or an id is allocated by
 * two of them. use_mem_pool scopes are left alone. */
#ifndef GPUSIM_ANSWERS_GRAPHS_H
#define GPUSIM_ANSWERS_GRAPHS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/evbuf.h"
#include "sim/status.h"

typedef enum graphs_sharing {
    GRAPHS_AS_RECORDED = 0, /* the trace's own pool ids */
    GRAPHS_SHARED,          /* every capture into one pool (graph_pool_handle() passed to each) */
    GRAPHS_SEPARATE         /* each capture into a pool of its own */
} graphs_sharing;

typedef enum graphs_order {
    GRAPHS_ORDER_RECORDED = 0,
    GRAPHS_ORDER_LARGEST_FIRST, /* by the bytes each capture holds at once, most first */
    GRAPHS_ORDER_SMALLEST_FIRST
} graphs_order;

const char *graphs_sharing_name(graphs_sharing s);
const char *graphs_order_name(graphs_order o);

/* The rewrite: *out is a new buffer (evbuf_free) holding in's events with the
 * captures' pool ids and order changed. map, when not NULL, gets for each pool id of
 * out (up to map_cap of them, in order of first pool_begin) the id of in it came
 * from; *n_map their number. SIM_ETRACE (the order cannot change: see above; the
 * message names in's path and the event), SIM_ENOMEM. */
typedef struct graphs_pool_map {
    uint64_t pool; /* an id of the rewritten trace */
    uint64_t from; /* the id its captures had in the trace */
} graphs_pool_map;
sim_status graphs_rewrite(const evbuf *in, graphs_sharing sharing, graphs_order order, evbuf **out,
                          graphs_pool_map *map, uint32_t map_cap, uint32_t *n_map, sim_error *err);

/* How many capture scopes in has (0: no question to ask). */
uint32_t graphs_count_captures(const evbuf *in);

#define GRAPHS_MAX_POOLS 64u
#define GRAPHS_UNBOUNDED_BYTES ((uint64_t)1 << 50)
#define GRAPHS_VARIANTS 6u /* shared and separate, each in the three orders */

/* One private pool at the end of capture (the trace's last capture pool_end). */
typedef struct graphs_pool {
    uint64_t pool;
    uint32_t graphs;              /* captures into it */
    uint64_t peak_reserved_bytes; /* its high-water mark */
    uint64_t reserved_bytes;      /* what it held at the end of capture */
    uint64_t one_pool_each_bytes; /* the same graphs, a pool each: the sum of their pools' high-water marks,
                                      * replayed on a device of GRAPHS_UNBOUNDED_BYTES so that every capture runs */
} graphs_pool;

typedef struct graphs_variant {
    graphs_sharing sharing;
    graphs_order order;
    bool recorded; /* this is the trace as it is (sharing and order) */
    sim_status st; /* SIM_ETRACE: the order cannot change (err says why) */
    sim_error err;
    bool completed;
    uint64_t ooms;
    uint64_t peak_reserved_bytes;           /* over the whole replay */
    bool reached_end_of_capture;            /* false: an OOM ended it before the last capture's pool_end */
    uint64_t end_of_capture_reserved_bytes; /* every pool and the default pool, at the end of capture
                                             * (at the last capture's end it reached, if not reached) */
    uint64_t pools_reserved_bytes;          /* the private pools alone then */
    sim_oom_record first_oom;
} graphs_variant;

typedef struct graphs_answer {
    bool present; /* false: no captures, or the strategy has no private pools */
    uint32_t captures;
    uint64_t end_of_capture_event; /* the event of the last capture's pool_end (sim_run numbering) */
    uint64_t end_of_capture_reserved_bytes;
    graphs_pool pools[GRAPHS_MAX_POOLS];
    uint32_t n_pools;
    bool pools_truncated;         /* more pools than GRAPHS_MAX_POOLS */
    const char *recorded_sharing; /* "shared", "separate" or "mixed" */
    graphs_variant variants[GRAPHS_VARIANTS];
    int best; /* index into variants: completes, then least peak reserved, then least at
                                      * the end of capture, then an explicit order before the recorded one;
                                      * -1: none ran */
} graphs_answer;

/* Whether the question applies: cfg's strategy has private pools (ops->pools) and in
 * has captures. */
bool graphs_applies(const engine_config *cfg, const evbuf *in);

/* Replay in under cfg (no timeline, observer or --paranoid) as recorded, with a pool
 * per graph, and as each variant, filling *out. An error of the recorded replay is
 * returned (the trace is wrong); a variant that cannot be built is kept in its st. */
sim_status graphs_answer_compute(const engine_config *cfg, const evbuf *in, graphs_answer *out, sim_error *err);

#endif
