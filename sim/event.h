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
    SIM_OP_MARK = 3,
    /* Private memory pools (design.md §2 "Pools"; PyTorch's CUDA graphs and MemPool): */
    SIM_OP_POOL_BEGIN = 4,   /* allocations that match a filter go to private pool `pool` from now on
                              * (beginAllocateToPool: creates the pool, or adds one use of it) */
    SIM_OP_POOL_END = 5,     /* they stop going there (endAllocateToPool) */
    SIM_OP_POOL_RELEASE = 6, /* one use of the pool ends: a graph destroyed, a MemPool deleted
                              * (releasePool); at none its cached segments become releasable */
    SIM_OP_GRAPH_REPLAY = 7  /* a replay of a graph captured into `pool`: allocates nothing, a mark */
} sim_op;
#define SIM_N_OPS 8u

/* pool_begin's flags (sim_event.pool_flags). */
#define SIM_POOL_ALL_STREAMS 1u /* every stream's allocations go to the pool (use_mem_pool); else `stream`'s */
#define SIM_POOL_CAPTURE 2u     /* the scope is a CUDA graph capture (torch.cuda.graph), not use_mem_pool */
#define SIM_POOL_USE_ON_OOM 4u  /* the pool's option: MemPool(use_on_oom=True) */
#define SIM_POOL_NO_SPLIT 8u    /* the pool's option: MemPool(no_split=True) */
#define SIM_POOL_OPTIONS (SIM_POOL_USE_ON_OOM | SIM_POOL_NO_SPLIT)

#define SIM_MAX_SIZE ((uint64_t)1 << 53) /* sizes above 2^53 are rejected */

typedef struct sim_event {
    sim_op op;
    uint64_t id;        /* alloc, free */
    uint64_t size;      /* alloc */
    uint64_t t;         /* always set (missing = previous event's t) */
    uint64_t ready_t;   /* free: == t unless the free is deferred */
    uint32_t stream;    /* alloc; pool_begin: the stream whose allocations go to the pool (a capture's) */
    bool has_ready_stream; /* free: it names the stream its event is recorded on */
    uint32_t ready_stream; /* free, when has_ready_stream: that stream (design.md §3) */
    bool has_share;     /* alloc: shares the memory of allocation `share` (trace v1 "share") */
    uint64_t share;     /* alloc: the id of an earlier allocation of its process, live or freed */
    uint64_t pool;      /* pool events: the pool's id (> 0; 0 names the default pool, never given) */
    uint32_t pool_flags;/* pool_begin: SIM_POOL_* */
    const char *tag;    /* alloc: optional label, NULL if none */
    const char *name;   /* mark: the annotation; graph_replay: optional (the graph's name), else NULL */
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
