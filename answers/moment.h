/* moment.h — one process's allocator statistics (ops->stats) at a chosen moment of a
 * replay: at its end, where the device's reserved memory first peaked, or at the
 * first out-of-memory. What `replay --summary` renders as the framework's own view
 * (reports/summary.h: torch.cuda.memory_summary(), TF's get_memory_info, XLA's
 * memory_stats()). */

/* The peak and the OOM are taken by the engine's observer during the run (engine.h:
 * engine_tick), the end from the finished run; no second pass. */
#ifndef GPUSIM_MOMENT_H
#define GPUSIM_MOMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/strategy.h"

typedef enum moment_kind { MOMENT_END = 0, MOMENT_PEAK = 1, MOMENT_OOM = 2 } moment_kind;

typedef struct moment_stat {
    char key[96];
    strategy_stat_kind kind; /* U64 or REAL; text statistics are not kept */
    uint64_t u64;
    double real;
} moment_stat;

typedef struct moment {
    moment_kind kind;
    bool found;          /* the moment happened (an OOM did; the end always) */
    bool failed;         /* out of host memory while keeping the statistics */
    uint32_t process;    /* index into sim_run.procs */
    uint64_t event;      /* global event number (engine_tick.event); 0 for the end */
    uint64_t best;       /* MOMENT_PEAK: the reserved bytes of the peak so far */
    sim_oom_record oom;  /* MOMENT_OOM once found: the process's first OOM (the request) */
    const strategy_ops *ops; /* the strategy whose statistics these are, once found; its family
                              * names their vocabulary (reports/summary.h) */
    moment_stat *stats;  /* in the order the strategy emitted them */
    size_t n, cap;
} moment;

/* "end", "peak" or "oom" into *kind; false for anything else. */
bool moment_kind_parse(const char *text, moment_kind *kind);
const char *moment_kind_name(moment_kind kind);

void moment_init(moment *m, moment_kind kind);
void moment_release(moment *m);

/* The observer to add to engine_config.observers with the moment as its context
 * (MOMENT_PEAK and MOMENT_OOM; harmless for MOMENT_END). */
void moment_observe(void *ctx, const engine_tick *t);

/* After the run: MOMENT_END takes process 0's statistics now. SIM_ENOMEM when a
 * statistic could not be kept, during the run or now. */
sim_status moment_finish(moment *m, const sim_run *run, sim_error *err);

/* The statistic called key: true and *value (a real is truncated to an integer), or
 * false. */
bool moment_u64(const moment *m, const char *key, uint64_t *value);

#endif
