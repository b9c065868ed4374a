/* Shared machinery of the synthetic workload generators: the event output and the
 * GSL random number generator wrapper. */
#include "synth.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

/* ---------------------------------------------------------------- output */

struct synth_out {
    trace_writer *w;        /* NULL for a null output */
    sim_status st;          /* sticky: the first error */
    sim_error err;
    uint64_t t;
    uint64_t next_id;
    uint64_t *sizes;        /* sizes[id] while live, UINT64_MAX when not live */
    uint8_t *cats;          /* cats[id]: the synth_cat of the allocation */
    uint64_t sizes_cap, cats_cap;
    uint64_t live_by_cat[SYNTH_CAT_N];
    char last_mark[64];
    uint64_t live_bytes, live_count;
    char *proc;
    evbuf *tee;             /* also every event here (synth_out_tee), or NULL */
    synth_stats stats;
};

#define SYNTH_NOT_LIVE UINT64_MAX

static synth_out *out_new(void)
{
    synth_out *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->next_id = 1;
    sim_error_clear(&o->err);
    return o;
}

sim_status synth_out_open(const char *path, const trace_header *h, uint64_t t0_ns, const char *proc,
                          synth_out **out, sim_error *err)
{
    *out = NULL;
    synth_out *o = out_new();
    if (o == NULL)
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    o->t = t0_ns;
    if (proc) {
        o->proc = strdup(proc);
        if (o->proc == NULL) {
            free(o);
            return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
        }
    }
    sim_status st = trace_writer_open(path, trace_container_for_path(path), h, &o->w, err);
    if (st != SIM_OK) {
        free(o->proc);
        free(o);
        return st;
    }
    *out = o;
    return SIM_OK;
}

synth_out *synth_out_new_null(void)
{
    return out_new();
}

sim_status synth_out_close(synth_out *o, bool commit, synth_stats *stats, sim_error *err)
{
    sim_status st = o->st;
    if (st != SIM_OK && err)
        *err = o->err;
    if (o->w) {
        sim_error cerr;
        sim_error_clear(&cerr);
        sim_status cst = trace_writer_close(o->w, commit && st == SIM_OK, &cerr);
        if (st == SIM_OK && cst != SIM_OK) {
            st = cst;
            if (err)
                *err = cerr;
        }
    }
    if (stats) {
        *stats = o->stats;
        stats->final_live_bytes = o->live_bytes;
        stats->final_live_count = o->live_count;
        stats->t_end_ns = o->t;
    }
    free(o->sizes);
    free(o->cats);
    free(o->proc);
    free(o);
    return st;
}

void synth_out_tee(synth_out *o, evbuf *b)
{
    o->tee = b;
}

uint64_t synth_events(const synth_out *o)
{
    return o->stats.events;
}

bool synth_ok(const synth_out *o)
{
    return o->st == SIM_OK;
}

static void out_fail(synth_out *o, sim_status st, const char *msg)
{
    if (o->st != SIM_OK)
        return;
    o->st = st;
    sim_error_set(&o->err, st, NULL, 0, 0, "%s", msg);
}

void synth_fail(synth_out *o, const char *msg)
{
    out_fail(o, SIM_ENOMEM, msg);
}

static void out_write(synth_out *o, sim_event *ev)
{
    o->stats.events++;
    ev->t = o->t;
    ev->ready_t = o->t; /* every event's, as the readers give it (sim/event.h): the .gtrace writer checks it */
    ev->proc = o->proc;
    ev->index = o->stats.events;
    if (o->tee != NULL && evbuf_push(o->tee, ev) != SIM_OK)
        out_fail(o, SIM_ENOMEM, "out of memory");
    if (o->w == NULL)
        return;
    sim_error e;
    sim_error_clear(&e);
    if (trace_writer_event(o->w, ev, &e) != SIM_OK) {
        o->st = e.status;
        o->err = e;
    }
}

uint64_t synth_alloc_stream(synth_out *o, uint64_t size, uint32_t stream, const char *tag)
{
    if (o->st != SIM_OK)
        return 0;
    if (size > SIM_MAX_SIZE) {
        out_fail(o, SIM_EUSAGE, "an allocation larger than 2^53 bytes: the model is too large");
        return 0;
    }
    uint64_t id = o->next_id++;
    if (!SIM_GROW(o->sizes, id + 1, o->sizes_cap) || !SIM_GROW(o->cats, id + 1, o->cats_cap)) {
        out_fail(o, SIM_ENOMEM, "out of memory");
        return 0;
    }
    synth_cat cat = synth_cat_of(tag);
    o->sizes[id] = size;
    o->cats[id] = (uint8_t)cat;
    o->live_bytes += size;
    o->live_by_cat[cat] += size;
    o->live_count++;
    if (o->live_bytes > o->stats.peak_live_bytes) {
        o->stats.peak_live_bytes = o->live_bytes;
        memcpy(o->stats.peak_by_cat, o->live_by_cat, sizeof o->live_by_cat);
        memcpy(o->stats.peak_mark, o->last_mark, sizeof o->last_mark);
    }
    o->stats.allocs++;
    sim_event ev = {.op = SIM_OP_ALLOC, .id = id, .size = size, .stream = stream, .tag = tag};
    out_write(o, &ev);
    return id;
}

uint64_t synth_alloc(synth_out *o, uint64_t size, const char *tag)
{
    return synth_alloc_stream(o, size, 0, tag);
}

uint64_t synth_allocf(synth_out *o, uint64_t size, const char *fmt, ...)
{
    char tag[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tag, sizeof tag, fmt, ap);
    va_end(ap);
    return synth_alloc_stream(o, size, 0, tag);
}

void synth_free(synth_out *o, uint64_t id)
{
    if (o->st != SIM_OK || id == 0)
        return;
    if (id >= o->next_id || o->sizes[id] == SYNTH_NOT_LIVE) {
        out_fail(o, SIM_EINTERNAL, "generator bug: free of an id that is not live");
        return;
    }
    o->live_bytes -= o->sizes[id];
    o->live_by_cat[o->cats[id]] -= o->sizes[id];
    o->live_count--;
    o->sizes[id] = SYNTH_NOT_LIVE;
    o->stats.frees++;
    sim_event ev = {.op = SIM_OP_FREE, .id = id};
    out_write(o, &ev);
}

void synth_mark(synth_out *o, const char *name)
{
    if (o->st != SIM_OK)
        return;
    o->stats.marks++;
    snprintf(o->last_mark, sizeof o->last_mark, "%.63s", name);
    sim_event ev = {.op = SIM_OP_MARK, .name = name};
    out_write(o, &ev);
}

void synth_markf(synth_out *o, const char *fmt, ...)
{
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    synth_mark(o, name);
}

void synth_empty_cache(synth_out *o)
{
    if (o->st != SIM_OK)
        return;
    sim_event ev = {.op = SIM_OP_EMPTY_CACHE};
    out_write(o, &ev);
}

static void pool_event(synth_out *o, sim_op op, uint64_t pool, uint32_t stream, uint32_t flags, const char *name)
{
    if (o->st != SIM_OK)
        return;
    o->stats.pool_events++;
    sim_event ev = {.op = op, .pool = pool, .stream = stream, .pool_flags = flags, .name = name};
    out_write(o, &ev);
}

void synth_capture_begin(synth_out *o, uint64_t pool, uint32_t stream)
{
    pool_event(o, SIM_OP_POOL_BEGIN, pool, stream, SIM_POOL_CAPTURE, NULL);
}

void synth_capture_end(synth_out *o, uint64_t pool)
{
    pool_event(o, SIM_OP_POOL_END, pool, 0, 0, NULL);
}

void synth_pool_release(synth_out *o, uint64_t pool)
{
    pool_event(o, SIM_OP_POOL_RELEASE, pool, 0, 0, NULL);
}

void synth_graph_replay(synth_out *o, uint64_t pool, const char *name)
{
    pool_event(o, SIM_OP_GRAPH_REPLAY, pool, 0, 0, name);
}

void synth_advance(synth_out *o, uint64_t dt_ns)
{
    o->t = o->t > UINT64_MAX - dt_ns ? UINT64_MAX : o->t + dt_ns;
}

uint64_t synth_now(const synth_out *o)
{
    return o->t;
}

uint64_t synth_live_bytes(const synth_out *o)
{
    return o->live_bytes;
}

/* ---------------------------------------------------------------- vocabulary */

static const char *const CAT_NAMES[SYNTH_CAT_N] = {"weights", "grads", "optimizer", "activations",
                                                   "temporaries", "gathered", "kv", "other"};

const char *synth_cat_name(synth_cat c)
{
    return CAT_NAMES[c];
}

synth_cat synth_cat_of(const char *tag)
{
    static const struct {
        const char *prefix;
        synth_cat cat;
    } MAP[] = {
        {"weight:", SYNTH_CAT_WEIGHT},     {"weight_shard:", SYNTH_CAT_WEIGHT}, {"buffer:", SYNTH_CAT_WEIGHT},
        {"qweight:", SYNTH_CAT_WEIGHT},    {"qconst:", SYNTH_CAT_WEIGHT},       {"grad:", SYNTH_CAT_GRAD},
        {"grad_shard:", SYNTH_CAT_GRAD},   {"adam_m:", SYNTH_CAT_OPTIMIZER},    {"adam_v:", SYNTH_CAT_OPTIMIZER},
        {"momentum:", SYNTH_CAT_OPTIMIZER}, {"master:", SYNTH_CAT_OPTIMIZER},    {"adafactor_", SYNTH_CAT_OPTIMIZER},
        {"act:", SYNTH_CAT_ACT},           {"agrad:", SYNTH_CAT_ACT},           {"tmp:", SYNTH_CAT_TMP},
        {"gather:", SYNTH_CAT_GATHER},     {"p2p:", SYNTH_CAT_GATHER},          {"kv:", SYNTH_CAT_KV},
        {"fsdp_ag:", SYNTH_CAT_GATHER},    {"unsharded:", SYNTH_CAT_GATHER},    {"fsdp_rs:", SYNTH_CAT_GRAD},
        {"fsdp_rs_out:", SYNTH_CAT_GRAD},  {"te_dummy_wgrad:", SYNTH_CAT_GRAD},
    };
    if (tag == NULL)
        return SYNTH_CAT_OTHER;
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (strncmp(tag, MAP[i].prefix, strlen(MAP[i].prefix)) == 0)
            return MAP[i].cat;
    return SYNTH_CAT_OTHER;
}

static const char *const DTYPE_NAMES[] = {"fp32", "fp16", "bf16"};

uint64_t synth_dtype_bytes(synth_dtype d)
{
    return d == SYNTH_FP32 ? 4 : 2;
}

const char *synth_dtype_name(synth_dtype d)
{
    return DTYPE_NAMES[d];
}

bool synth_dtype_parse(const char *text, synth_dtype *out)
{
    static const struct {
        const char *name;
        synth_dtype d;
    } MAP[] = {{"fp32", SYNTH_FP32}, {"float32", SYNTH_FP32}, {"fp16", SYNTH_FP16}, {"float16", SYNTH_FP16},
               {"half", SYNTH_FP16}, {"bf16", SYNTH_BF16},    {"bfloat16", SYNTH_BF16}};
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (strcmp(text, MAP[i].name) == 0) {
            *out = MAP[i].d;
            return true;
        }
    return false;
}

uint64_t synth_optimizer_states(synth_optimizer o)
{
    return o == SYNTH_ADAM ? 2 : o == SYNTH_MOMENTUM || o == SYNTH_ADAFACTOR ? 1 : 0;
}

static const char *const OPT_NAMES[] = {"sgd", "momentum", "adam", "adafactor"};

const char *synth_optimizer_name(synth_optimizer o)
{
    return OPT_NAMES[o];
}

bool synth_optimizer_parse(const char *text, synth_optimizer *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(text, OPT_NAMES[i]) == 0) {
            *out = (synth_optimizer)i;
            return true;
        }
    if (strcmp(text, "adamw") == 0) {
        *out = SYNTH_ADAM;
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- randomness */

struct synth_rng {
    gsl_rng *r;
};

synth_rng *synth_rng_new(uint64_t seed)
{
    synth_rng *s = malloc(sizeof *s);
    if (s == NULL)
        return NULL;
    s->r = gsl_rng_alloc(gsl_rng_mt19937);
    if (s->r == NULL) {
        free(s);
        return NULL;
    }
    /* mt19937 uses the low 32 bits; GSL maps a seed of 0 to 4357, so shift by one */
    gsl_rng_set(s->r, (unsigned long)((seed & 0xffffffffu) + 1u));
    return s;
}

void synth_rng_free(synth_rng *r)
{
    if (r == NULL)
        return;
    gsl_rng_free(r->r);
    free(r);
}

double synth_rng_uniform(synth_rng *r)
{
    return gsl_rng_uniform(r->r);
}

uint64_t synth_rng_uniform_int(synth_rng *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    if (n <= 0xffffffffu)
        return (uint64_t)gsl_rng_uniform_int(r->r, (unsigned long)n);
    return (uint64_t)(gsl_rng_uniform(r->r) * (double)n) % n;
}

double synth_rng_exponential(synth_rng *r, double mean)
{
    return gsl_ran_exponential(r->r, mean);
}

double synth_rng_lognormal(synth_rng *r, double mu, double sigma)
{
    return gsl_ran_lognormal(r->r, mu, sigma);
}

double synth_rng_gamma(synth_rng *r, double shape, double scale)
{
    return gsl_ran_gamma(r->r, shape, scale);
}

uint64_t synth_rng_jitter(synth_rng *r, uint64_t nominal_ns, double sigma)
{
    if (sigma <= 0.0)
        return nominal_ns;
    double v = (double)nominal_ns * gsl_ran_lognormal(r->r, 0.0, sigma);
    if (v < 1.0)
        return 1;
    if (v > 1e18)
        return (uint64_t)1e18;
    return (uint64_t)llround(v);
}
