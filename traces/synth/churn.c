/* Random allocate/free traffic.
 *
 * Model: a live set of allocations, initially empty. At each event, with L the live
 * bytes and T the target: if L < T an allocation happens with probability 3/4,
 * else a free; if L ≥ T a free happens with probability 3/4 (always an allocation
 * when nothing is live). So the live bytes climb to the target and then random-walk
 * around it. A free picks a live allocation uniformly at random (so lifetimes are
 * geometric, and old and young blocks die alike: the pattern that fragments).
 * Sizes come from the chosen distribution (GSL: uniform, lognormal, exponential;
 * pow2 picks the exponent uniformly), clamped to [min, max]. Each event advances
 * the clock by an exponential time of mean 1 µs. After `events` events everything
 * still live is freed in random order (unless keep_live), so the trace's length is
 * events + the live count at the end. */
#include "churn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

void churn_defaults(churn_config *c)
{
    memset(c, 0, sizeof *c);
    c->events = 100000;
    c->live_bytes = (uint64_t)1 << 30;
    c->dist = CHURN_LOGNORMAL;
    c->min_bytes = 512;
    c->max_bytes = (uint64_t)256 << 20;
    c->median_bytes = 1048576.0;
    c->sigma = 1.5;
    c->mean_bytes = 1048576.0;
    c->streams = 1;
    c->seed = 1;
}

static const char *const DIST_NAMES[] = {"uniform", "lognormal", "exponential", "pow2", "fixed"};

bool churn_dist_parse(const char *text, churn_dist *out)
{
    for (int i = 0; i < 5; i++)
        if (strcmp(text, DIST_NAMES[i]) == 0) {
            *out = (churn_dist)i;
            return true;
        }
    return false;
}

const char *churn_dist_name(churn_dist d)
{
    return DIST_NAMES[d];
}

sim_status churn_validate(const churn_config *c, sim_error *err)
{
    if (c->events == 0 || c->events > 10000000000ull)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--events must be between 1 and 10^10");
    if (c->live_bytes == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--live must be more than 0 bytes");
    if (c->min_bytes == 0 || c->min_bytes > c->max_bytes || c->max_bytes > SIM_MAX_SIZE)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "need 1 ≤ --min ≤ --max ≤ 2^53 bytes");
    if (c->dist == CHURN_LOGNORMAL && (!(c->median_bytes >= 1.0) || !(c->sigma >= 0.0) || c->sigma > 10.0))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "lognormal needs --median ≥ 1 byte and --sigma in [0, 10]");
    if (c->dist == CHURN_EXPONENTIAL && !(c->mean_bytes >= 1.0))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "exponential needs --mean ≥ 1 byte");
    if (c->streams == 0 || c->streams > 1024)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--streams must be between 1 and 1024");
    return SIM_OK;
}

static uint64_t clamp_size(const churn_config *c, double v)
{
    if (!(v >= (double)c->min_bytes))
        return c->min_bytes;
    if (v >= (double)c->max_bytes)
        return c->max_bytes;
    return (uint64_t)llround(v);
}

static uint64_t draw_size(const churn_config *c, synth_rng *r)
{
    switch (c->dist) {
    case CHURN_UNIFORM:
        return c->min_bytes + synth_rng_uniform_int(r, c->max_bytes - c->min_bytes + 1);
    case CHURN_LOGNORMAL:
        return clamp_size(c, synth_rng_lognormal(r, log(c->median_bytes), c->sigma));
    case CHURN_EXPONENTIAL:
        return clamp_size(c, synth_rng_exponential(r, c->mean_bytes));
    case CHURN_POW2: {
        unsigned lo = 0, hi = 0;
        while (lo < 63 && ((uint64_t)1 << lo) < c->min_bytes)
            lo++;
        while (hi < 63 && ((uint64_t)1 << (hi + 1)) <= c->max_bytes)
            hi++;
        if (hi < lo)
            return c->min_bytes;
        return (uint64_t)1 << (lo + synth_rng_uniform_int(r, hi - lo + 1));
    }
    case CHURN_FIXED:
        return c->min_bytes;
    }
    return c->min_bytes;
}

typedef struct live {
    uint64_t id, size;
} live;

sim_status churn_generate(const churn_config *c, synth_out *o, sim_error *err)
{
    sim_status st = churn_validate(c, err);
    if (st != SIM_OK)
        return st;
    synth_rng *r = synth_rng_new(c->seed);
    uint64_t cap = 1024, n = 0, live_bytes = 0;
    live *set = malloc(cap * sizeof *set);
    if (r == NULL || set == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    synth_mark(o, "churn");
    for (uint64_t k = 0; k < c->events && synth_ok(o); k++) {
        synth_advance(o, (uint64_t)llround(synth_rng_exponential(r, 1000.0)));
        double u = synth_rng_uniform(r);
        bool do_alloc = n == 0 || (live_bytes < c->live_bytes ? u < 0.75 : u < 0.25);
        if (do_alloc) {
            if (!SIM_GROW(set, n + 1, cap)) {
                st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                goto done;
            }
            uint64_t size = draw_size(c, r);
            uint32_t stream = (uint32_t)synth_rng_uniform_int(r, c->streams);
            set[n].id = synth_alloc_stream(o, size, stream, NULL);
            set[n].size = size;
            live_bytes += size;
            n++;
        } else {
            uint64_t i = synth_rng_uniform_int(r, n);
            synth_free(o, set[i].id);
            live_bytes -= set[i].size;
            set[i] = set[--n];
        }
    }
    if (!c->keep_live) {
        synth_mark(o, "drain");
        while (n > 0 && synth_ok(o)) {
            synth_advance(o, (uint64_t)llround(synth_rng_exponential(r, 1000.0)));
            uint64_t i = synth_rng_uniform_int(r, n);
            synth_free(o, set[i].id);
            set[i] = set[--n];
        }
    }
done:
    synth_rng_free(r);
    free(set);
    return st;
}
