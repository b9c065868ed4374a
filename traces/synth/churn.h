/* churn.h — random allocate/free traffic around a live-set target, with a chosen
 * size distribution: the simplest workload that fragments an allocator, for
 * teaching and for stress tests. The model is in churn.c and the README. */
#ifndef GPUSIM_SYNTH_CHURN_H
#define GPUSIM_SYNTH_CHURN_H

#include <stdbool.h>
#include <stdint.h>

#include "synth.h"

typedef enum churn_dist {
    CHURN_UNIFORM = 0,     /* uniform in [min, max] */
    CHURN_LOGNORMAL = 1,   /* lognormal with the given median and sigma, clamped to [min, max] */
    CHURN_EXPONENTIAL = 2, /* exponential with the given mean, clamped to [min, max] */
    CHURN_POW2 = 3,        /* a power of two, log2 uniform in [log2 min, log2 max] */
    CHURN_FIXED = 4        /* always min */
} churn_dist;

typedef struct churn_config {
    uint64_t events;       /* alloc and free events before the final drain */
    uint64_t live_bytes;   /* live-set target */
    churn_dist dist;
    uint64_t min_bytes, max_bytes;
    double median_bytes, sigma, mean_bytes;
    uint64_t streams;      /* allocations spread over this many streams (1 = stream 0 only) */
    bool keep_live;        /* do not free what is live at the end */
    uint64_t seed;
} churn_config;

/* 100000 events, 1 GiB live, lognormal median 1 MiB σ 1.5 clamped to [512 B, 256 MiB]. */
void churn_defaults(churn_config *c);
bool churn_dist_parse(const char *text, churn_dist *out);
const char *churn_dist_name(churn_dist d);
sim_status churn_validate(const churn_config *c, sim_error *err);
sim_status churn_generate(const churn_config *c, synth_out *o, sim_error *err);

#endif
