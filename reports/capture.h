/* capture.h — what a picture of one replay needs, gathered from outside the engine
 * in two passes: (1) the whole replay through a probe (a forwarding strategy_ops
 * wrapper) that keeps the memory curve as per-bucket minima and maxima, and (2) a
 * replay stopped at the event where reserved memory first peaked, then walked for
 * the memory map, with a side table of the live allocations (trace id, size, tag).
 * Results are identical to a plain replay: the probe only forwards and watches. */
#ifndef GPUSIM_CAPTURE_H
#define GPUSIM_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"

/* Fresh sources from the start of every trace, once per pass. */
typedef struct capture_sources {
    uint32_t n;
    sim_status (*open)(void *ctx, sim_event_source *srcs, sim_error *err);
    void (*close)(void *ctx);
    void *ctx;
} capture_sources;

/* A run of events merged into one bucket: the extremes of each curve over it. */
typedef struct capture_bucket {
    uint64_t event;   /* first event covered (the engine's 1-based global numbering) */
    uint64_t count;   /* events covered */
    uint64_t req_min, req_max;
    uint64_t alloc_min, alloc_max;
    uint64_t res_min, res_max;
    double frag_min, frag_max;
} capture_bucket;

typedef struct capture_block {
    strategy_block b; /* pool points to a static string or is NULL */
    uint32_t proc;
} capture_block;

typedef struct capture_alloc {
    uint64_t id;
    uint64_t size;
    uint32_t source;
    uint32_t stream;
    bool pending;     /* freed by the program, memory back at ready_t (after the peak) */
    char tag[120];
} capture_alloc;

#define CAPTURE_TOP 20u

typedef struct capture {
    sim_run *run;              /* the first pass: the replay's result (owned) */
    capture_bucket *buckets;   /* the curve, at most the requested number of buckets */
    uint64_t n_buckets;
    uint64_t events;           /* events measured by the probe */
    uint64_t oom_event;        /* global event number of the first OOM, 0 if none */
    /* the memory map at the peak (second pass) */
    capture_block *blocks;
    uint64_t n_blocks;
    bool blocks_truncated;
    capture_alloc top[CAPTURE_TOP]; /* largest live allocations at the peak, largest first */
    uint32_t n_top;
    uint64_t live_count, live_bytes;
    struct probe *probe;       /* private: run's instances call back into it */
} capture;

/* Replay cfg over src twice (see above) keeping about `buckets` buckets.
 * cfg->progress is used for the first pass only. On success *out owns the run. */
sim_status capture_run(const engine_config *cfg, const capture_sources *src, uint32_t buckets, capture **out,
                       sim_error *err);
void capture_free(capture *c);

/* The min/max curve on its own (exposed for tests): add one sample per event,
 * merging neighbours in pairs once 2 × max buckets are used; finish to ≤ max. */
typedef struct capture_curve {
    capture_bucket *b;
    uint64_t n, max, per;
} capture_curve;
bool capture_curve_init(capture_curve *c, uint64_t max);
void capture_curve_add(capture_curve *c, uint64_t event, uint64_t req, uint64_t alloc, uint64_t res, double frag);
void capture_curve_finish(capture_curve *c);

#endif
