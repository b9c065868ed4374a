/* The settings search of `gpusim tune`: the candidates of each framework, the
 * stages that depend on earlier results (max_split_size_mb refined around its best
 * grid value, the garbage-collection fractions from the current peak, the smallest
 * memory_limit or memory fraction by a fixed-arity search, the best pair of
 * PyTorch settings), and the ranking. */
#include "tune.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers/limit.h"
#include "sim/units.h"
#include "strategies/registry.h"

static const char *const GOALS[] = {"min-reserved", "fit", "no-oom"};
static const char *const FRAMEWORKS[] = {"torch", "tf", "jax"};

const char *tune_goal_name(tune_goal g)
{
    return (unsigned)g < 3 ? GOALS[g] : "?";
}

const char *tune_framework_name(tune_framework f)
{
    return (unsigned)f < 3 ? FRAMEWORKS[f] : "?";
}

bool tune_goal_parse(const char *text, tune_goal *out)
{
    for (unsigned i = 0; i < 3; i++)
        if (text && strcmp(text, GOALS[i]) == 0) {
            *out = (tune_goal)i;
            return true;
        }
    return false;
}

bool tune_framework_parse(const char *text, tune_framework *out)
{
    for (unsigned i = 0; i < 3; i++)
        if (text && strcmp(text, FRAMEWORKS[i]) == 0) {
            *out = (tune_framework)i;
            return true;
        }
    return false;
}

bool tune_candidate_ok(const tune_candidate *c)
{
    return c->st == SIM_OK && c->completed && c->ooms == 0;
}

/* ---------------------------------------------------------------- candidates */

/* PyTorch's grid of max_split_size_mb values: its smallest legal value (20, kLargeBuffer
 * in MiB; strategies/torch_conf.c) and powers of two above it. */
static const unsigned MAX_SPLIT_GRID[] = {20, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
/* roundup_power2_divisions must be a power of two (torch_conf.c). */
static const unsigned ROUNDUP_GRID[] = {1, 2, 4, 8, 16};
/* garbage_collection_threshold values tried, and the memory fractions as multiples of the
 * current setting's peak requested bytes over the card */
static const char *const GC_THRESHOLDS[] = {"0.6", "0.8"};
static const double GC_HEADROOM[] = {1.1, 1.3};
#define SEARCH_PROBES 3u /* points per round of the smallest-value search: fixed, so --jobs changes nothing */

typedef struct tune_ctx {
    const tune_question *q;
    tune_answer *a;
    _Atomic uint64_t done;
} tune_ctx;

static tune_candidate *cand_new(tune_answer *a, const strategy_ops *ops, const char *family)
{
    if (ops == NULL || a->n >= TUNE_MAX_CANDIDATES)
        return NULL;
    tune_candidate *c = &a->c[a->n++];
    memset(c, 0, sizeof *c);
    c->ops = ops;
    c->family = family;
    sim_error_clear(&c->err);
    return c;
}

static void cand_set(tune_candidate *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cand_set(tune_candidate *c, const char *key, const char *fmt, ...)
{
    if (c->n_own >= TUNE_MAX_OWN)
        return;
    snprintf(c->key[c->n_own], sizeof c->key[0], "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->value[c->n_own], sizeof c->value[0], fmt, ap);
    va_end(ap);
    c->n_own++;
}

/* Whether ops's table lists value among the choices of its enum option key. */
static bool table_has_choice(const strategy_ops *ops, const char *key, const char *value)
{
    const strategy_option *o = ops ? registry_option_of(ops, key) : NULL;
    if (o == NULL || o->kind != STRATEGY_OPTION_ENUM || o->choices == NULL)
        return false;
    size_t n = strlen(value);
    for (const char *p = o->choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, value, n) == 0)
            return true;
        p += len + (bar ? 1 : 0);
    }
    return false;
}

/* The user's value of key (the last one), or NULL. */
static const char *user_value(const tune_question *q, const char *key)
{
    const char *v = NULL;
    for (uint32_t i = 0; i < q->n_user; i++)
        if (strcmp(q->user[i].key, key) == 0)
            v = q->user[i].value;
    return v && *v ? v : NULL;
}

/* PYTORCH_CUDA_ALLOC_CONF text `base` with key set to value (its earlier entries
 * dropped, the new one last) into out. */
static void conf_with(const char *base, const char *key, const char *value, char *out, size_t cap)
{
    size_t n = 0, klen = strlen(key);
    out[0] = '\0';
    for (const char *p = base ? base : ""; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool same = len > klen && strncmp(p, key, klen) == 0 && p[klen] == ':';
        if (len > 0 && !same && n + len + 2 < cap) {
            if (n)
                out[n++] = ',';
            memcpy(out + n, p, len);
            n += len;
            out[n] = '\0';
        }
        p += len + (comma ? 1 : 0);
    }
    snprintf(out + n, cap - n, "%s%s:%s", n ? "," : "", key, value);
}

static bool have_setting(const tune_answer *a, const strategy_ops *ops, const char *setting)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (a->c[i].ops == ops && strcmp(a->c[i].setting, setting) == 0)
            return true;
    return false;
}

/* A torch candidate whose alloc_conf is conf (and memory_fraction fraction, or NULL
 * for the user's); NULL when it was tried already. */
static tune_candidate *torch_cand(tune_answer *a, const tune_question *q, const char *family, const char *conf,
                                  const char *fraction)
{
    const strategy_ops *torch = registry_find("torch");
    if (torch == NULL || registry_option_of(torch, "alloc_conf") == NULL)
        return NULL;
    char setting[TUNE_TEXT];
    const char *frac = fraction ? fraction : user_value(q, "memory_fraction");
    snprintf(setting, sizeof setting, "%s%s%s", conf, frac ? " + fraction " : "", frac ? frac : "");
    if (have_setting(a, torch, setting))
        return NULL;
    tune_candidate *c = cand_new(a, torch, family);
    if (c == NULL)
        return NULL;
    cand_set(c, "alloc_conf", "%s", conf);
    if (fraction && registry_option_of(torch, "memory_fraction"))
        cand_set(c, "memory_fraction", "%s", fraction);
    snprintf(c->setting, sizeof c->setting, "%s", setting);
    snprintf(c->env, sizeof c->env, "PYTORCH_ALLOC_CONF=%s", conf);
    if (frac)
        snprintf(c->code, sizeof c->code, "torch.cuda.set_per_process_memory_fraction(%s)", frac);
    return c;
}

static void add_bounds(tune_answer *a)
{
    static const char *const BOUNDS[] = {"ideal", "planned"};
    for (unsigned i = 0; i < 2; i++) {
        tune_candidate *c = cand_new(a, registry_find(BOUNDS[i]), "lower bound");
        if (c == NULL)
            continue;
        c->bound = true;
        snprintf(c->setting, sizeof c->setting, "%s", BOUNDS[i]);
    }
}

/* TensorFlow's and JAX's settings: the BFC strategies with the framework's preset. */
static void bfc_cand_common(tune_candidate *c, const tune_question *q)
{
    const char *preset = q->framework == TUNE_JAX ? "jax" : "tf";
    if (table_has_choice(c->ops, "bfc_preset", preset))
        cand_set(c, "bfc_preset", "%s", preset);
}

static void add_current(tune_answer *a, const tune_question *q)
{
    tune_candidate *c = cand_new(a, q->current, "current");
    c->current = true;
    const char *name = q->current->name;
    const char *conf = user_value(q, "alloc_conf");
    /* the framework's own wiring, as every candidate has it: JAX's defaults are the
     * jax preset's 0.75 of the card, not TensorFlow's reserve */
    if (q->framework != TUNE_TORCH)
        bfc_cand_common(c, q);
    if (q->framework == TUNE_TORCH) {
        snprintf(c->setting, sizeof c->setting, "%s", conf ? conf : "PyTorch's defaults");
    } else if (strcmp(name, "growth") == 0) {
        snprintf(c->setting, sizeof c->setting, "%s",
                 q->framework == TUNE_JAX ? "XLA_PYTHON_CLIENT_PREALLOCATE=false" : "allow_growth=true");
    } else if (strcmp(name, "greedy") == 0) {
        snprintf(c->setting, sizeof c->setting, "%s",
                 q->framework == TUNE_JAX ? "JAX's defaults (preallocate)" : "TensorFlow's defaults (allow_growth=false)");
    } else {
        snprintf(c->setting, sizeof c->setting, "%s", name);
    }
    a->current = a->n - 1;
}

static void torch_stage1(tune_answer *a, const tune_question *q)
{
    const char *cur = user_value(q, "alloc_conf");
    char conf[TUNE_TEXT];
    conf_with(cur, "expandable_segments", "True", conf, sizeof conf);
    torch_cand(a, q, "expandable_segments", conf, NULL);
    uint64_t cap_mib = q->base.device.capacity_bytes / MiB;
    for (size_t i = 0; i < sizeof MAX_SPLIT_GRID / sizeof MAX_SPLIT_GRID[0]; i++) {
        if (MAX_SPLIT_GRID[i] > cap_mib && i > 0)
            break;
        char v[16];
        snprintf(v, sizeof v, "%u", MAX_SPLIT_GRID[i]);
        conf_with(cur, "max_split_size_mb", v, conf, sizeof conf);
        torch_cand(a, q, "max_split_size_mb", conf, NULL);
    }
    for (size_t i = 0; i < sizeof ROUNDUP_GRID / sizeof ROUNDUP_GRID[0]; i++) {
        char v[16];
        snprintf(v, sizeof v, "%u", ROUNDUP_GRID[i]);
        conf_with(cur, "roundup_power2_divisions", v, conf, sizeof conf);
        torch_cand(a, q, "roundup_power2_divisions", conf, NULL);
    }
    /* backend:cudaMallocAsync, when this build models it (the `async` strategy with
     * PyTorch's wiring in its table) */
    const strategy_ops *as = registry_find("async");
    if (table_has_choice(as, "async_preset", "pytorch")) {
        tune_candidate *c = cand_new(a, as, "backend");
        if (c) {
            cand_set(c, "async_preset", "pytorch");
            if (registry_option_of(as, "alloc_conf"))
                cand_set(c, "alloc_conf", "backend:cudaMallocAsync");
            snprintf(c->setting, sizeof c->setting, "backend:cudaMallocAsync");
            snprintf(c->env, sizeof c->env, "PYTORCH_ALLOC_CONF=backend:cudaMallocAsync");
        }
    }
}

static bool better(const tune_question *q, const tune_candidate *x, uint32_t ix, const tune_candidate *y, uint32_t iy);

/* The index of the best candidate of family in c[from, to), or UINT32_MAX. */
static uint32_t best_of(const tune_answer *a, const tune_question *q, const char *family, uint32_t from)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t i = from; i < a->n; i++)
        if (!a->c[i].bound && strcmp(a->c[i].family, family) == 0 &&
            (best == UINT32_MAX || better(q, &a->c[i], i, &a->c[best], best)))
            best = i;
    return best;
}

/* The value after "key:" in a candidate's alloc_conf, or 0. */
static unsigned conf_number(const tune_candidate *c, const char *key)
{
    for (uint32_t k = 0; k < c->n_own; k++) {
        if (strcmp(c->key[k], "alloc_conf") != 0)
            continue;
        char pat[64];
        snprintf(pat, sizeof pat, "%s:", key);
        const char *p = strstr(c->value[k], pat);
        return p ? (unsigned)strtoul(p + strlen(pat), NULL, 10) : 0;
    }
    return 0;
}

static void torch_stage2(tune_answer *a, const tune_question *q)
{
    const char *cur = user_value(q, "alloc_conf");
    char conf[TUNE_TEXT];
    /* max_split_size_mb refined between the grid neighbours of its best value */
    uint32_t b = best_of(a, q, "max_split_size_mb", 0);
    if (b != UINT32_MAX) {
        unsigned v = conf_number(&a->c[b], "max_split_size_mb");
        unsigned lo = MAX_SPLIT_GRID[0], hi = 2 * v;
        for (size_t i = 0; i < sizeof MAX_SPLIT_GRID / sizeof MAX_SPLIT_GRID[0]; i++) {
            if (MAX_SPLIT_GRID[i] < v)
                lo = MAX_SPLIT_GRID[i];
            if (MAX_SPLIT_GRID[i] > v) {
                hi = MAX_SPLIT_GRID[i];
                break;
            }
        }
        for (unsigned k = 1; k < 8; k++) {
            unsigned x = lo + (hi - lo) * k / 8;
            if (x < MAX_SPLIT_GRID[0] || x == v)
                continue;
            char s[16];
            snprintf(s, sizeof s, "%u", x);
            conf_with(cur, "max_split_size_mb", s, conf, sizeof conf);
            torch_cand(a, q, "max_split_size_mb", conf, NULL);
        }
    }
    /* garbage collection only acts under a memory fraction (PyTorch's
     * garbage_collection_threshold is a share of the allowed memory): fractions a
     * little above what the current setting asks for at its peak */
    const tune_candidate *c0 = &a->c[a->current];
    double total = (double)q->base.device.capacity_bytes;
    for (size_t h = 0; h < sizeof GC_HEADROOM / sizeof GC_HEADROOM[0] && total > 0; h++) {
        double f = ceil((double)c0->peak_requested * GC_HEADROOM[h] / total * 100.0) / 100.0;
        if (f > 1.0)
            f = 1.0;
        if (f <= 0.0)
            continue;
        char frac[16];
        snprintf(frac, sizeof frac, "%.2f", f);
        for (size_t g = 0; g < sizeof GC_THRESHOLDS / sizeof GC_THRESHOLDS[0]; g++) {
            conf_with(cur, "garbage_collection_threshold", GC_THRESHOLDS[g], conf, sizeof conf);
            torch_cand(a, q, "garbage_collection_threshold", conf, frac);
        }
    }
}

/* The best max_split_size_mb with the best of each other family, when each beats
 * the current setting on its own. */
static void torch_stage3(tune_answer *a, const tune_question *q)
{
    uint32_t ms = best_of(a, q, "max_split_size_mb", 0);
    const tune_candidate *c0 = &a->c[a->current];
    if (ms == UINT32_MAX || !better(q, &a->c[ms], ms, c0, a->current))
        return;
    unsigned v = conf_number(&a->c[ms], "max_split_size_mb");
    uint32_t ru = best_of(a, q, "roundup_power2_divisions", 0);
    if (ru != UINT32_MAX && better(q, &a->c[ru], ru, c0, a->current)) {
        char s[16], conf[TUNE_TEXT], both[TUNE_TEXT];
        snprintf(s, sizeof s, "%u", conf_number(&a->c[ru], "roundup_power2_divisions"));
        conf_with(user_value(q, "alloc_conf"), "roundup_power2_divisions", s, conf, sizeof conf);
        snprintf(s, sizeof s, "%u", v);
        conf_with(conf, "max_split_size_mb", s, both, sizeof both);
        torch_cand(a, q, "combined", both, NULL);
    }
}

static void bfc_stage1(tune_answer *a, const tune_question *q)
{
    const bool jax = q->framework == TUNE_JAX;
    const strategy_ops *growth = registry_find("growth"), *greedy = registry_find("greedy");
    tune_candidate *c;
    if (q->current != growth && (c = cand_new(a, growth, "growth"))) {
        bfc_cand_common(c, q);
        snprintf(c->setting, sizeof c->setting, "%s", jax ? "XLA_PYTHON_CLIENT_PREALLOCATE=false" : "allow_growth=true");
        snprintf(c->env, sizeof c->env, "%s", jax ? "XLA_PYTHON_CLIENT_PREALLOCATE=false" : "TF_FORCE_GPU_ALLOW_GROWTH=true");
    }
    /* TensorFlow's garbage collection of free regions: off by TF_ENABLE_GPU_GARBAGE_COLLECTION
     * (gpu_bfc_allocator.cc), where bfc_gc takes off */
    if (!jax) {
        const strategy_ops *both[2] = {growth, greedy};
        for (unsigned i = 0; i < 2; i++) {
            if (!table_has_choice(both[i], "bfc_gc", "off") || (c = cand_new(a, both[i], "garbage collection")) == NULL)
                continue;
            bfc_cand_common(c, q);
            cand_set(c, "bfc_gc", "off");
            snprintf(c->setting, sizeof c->setting, "%s, no garbage collection",
                     i == 0 ? "allow_growth=true" : "allow_growth=false");
            snprintf(c->env, sizeof c->env, "%sTF_ENABLE_GPU_GARBAGE_COLLECTION=false",
                     i == 0 ? "TF_FORCE_GPU_ALLOW_GROWTH=true " : "");
        }
        const strategy_ops *as = registry_find("async");
        if (table_has_choice(as, "async_preset", "tf") && (c = cand_new(a, as, "cuda_malloc_async"))) {
            cand_set(c, "async_preset", "tf");
            snprintf(c->setting, sizeof c->setting, "TF_GPU_ALLOCATOR=cuda_malloc_async");
            snprintf(c->env, sizeof c->env, "TF_GPU_ALLOCATOR=cuda_malloc_async");
        }
    } else if ((c = cand_new(a, registry_find("raw"), "platform allocator"))) {
        /* XLA_PYTHON_CLIENT_ALLOCATOR=platform: a cudaMalloc and cudaFree per buffer */
        snprintf(c->setting, sizeof c->setting, "XLA_PYTHON_CLIENT_ALLOCATOR=platform");
        snprintf(c->env, sizeof c->env, "XLA_PYTHON_CLIENT_ALLOCATOR=platform");
    }
}

/* ---------------------------------------------------------------- replays */

static void run_one(tune_ctx *x, tune_candidate *c)
{
    const tune_question *q = x->q;
    sim_kv kv[TUNE_MAX_USER + TUNE_MAX_OWN];
    uint32_t n = 0;
    for (uint32_t i = 0; i < q->n_user && n < TUNE_MAX_USER; i++)
        if (registry_option_of(c->ops, q->user[i].key))
            kv[n++] = q->user[i];
    for (uint32_t i = 0; i < c->n_own; i++)
        kv[n++] = (sim_kv){c->key[i], c->value[i]};
    engine_config cfg = q->base;
    cfg.ops = c->ops;
    cfg.opts = kv;
    cfg.n_opts = n;
    cfg.progress = NULL;
    cfg.n_observers = 0;
    if (q->goal == TUNE_GOAL_NO_OOM)
        cfg.on_oom_skip = true;
    sim_run *run = NULL;
    sim_error_clear(&c->err);
    c->st = batch_replay(q->t, &cfg, &run, &c->err);
    if (c->st == SIM_OK) {
        const sim_metrics *m = &run->total;
        c->completed = m->completed;
        c->peak_requested = m->peak_requested_bytes;
        c->peak_reserved = m->peak_reserved_bytes;
        c->peak_device = m->peak_device_bytes;
        c->ooms = m->ooms;
        c->cause = m->first_oom.cause;
        c->limit_bytes = limit_find(run, c->limit_source, sizeof c->limit_source);
    }
    sim_run_free(run);
    uint64_t done = atomic_fetch_add(&x->done, 1) + 1;
    if (q->progress)
        q->progress(q->progress_ctx, done);
}

typedef struct stage_job {
    tune_ctx *x;
    tune_candidate *c;
} stage_job;

static void stage_task(void *ctx, size_t i)
{
    stage_job *j = ctx;
    run_one(j->x, &j->c[i]);
}

static void run_range(tune_ctx *x, tune_candidate *c, uint32_t n)
{
    stage_job j = {x, c};
    unsigned jobs = x->q->jobs ? x->q->jobs : 1;
    batch_parallel(jobs < n ? jobs : n, n, stage_task, &j);
}

/* Run the candidates added since `from`. */
static void run_stage(tune_ctx *x, uint32_t from)
{
    if (x->a->n > from)
        run_range(x, &x->a->c[from], x->a->n - from);
}

/* The smallest value v in [lo, hi] for which the candidate make(v) meets the goal,
 * found by rounds of SEARCH_PROBES points (hi first); the winning candidate is
 * appended to a. Nothing when even hi does not. */
typedef void (*make_fn)(tune_candidate *c, const tune_question *q, uint64_t v);

static void smallest_value(tune_ctx *x, const strategy_ops *ops, const char *family, uint64_t lo, uint64_t hi,
                           make_fn make)
{
    tune_answer *a = x->a;
    if (lo == 0)
        lo = 1;
    if (ops == NULL || lo > hi || a->n >= TUNE_MAX_CANDIDATES)
        return;
    tune_candidate probe[SEARCH_PROBES], best;
    memset(&best, 0, sizeof best);
    best.ops = ops;
    best.family = family;
    make(&best, x->q, hi);
    run_range(x, &best, 1);
    if (!tune_candidate_ok(&best))
        return;
    uint64_t ok = hi, fail = lo - 1; /* fail: the largest value known (or assumed) to fail */
    while (ok - fail > 1) {
        uint32_t n = 0;
        uint64_t vals[SEARCH_PROBES];
        for (uint32_t k = 1; k <= SEARCH_PROBES; k++) {
            uint64_t v = fail + (ok - fail) * k / (SEARCH_PROBES + 1);
            if (v <= fail || v >= ok || (n && v == vals[n - 1]))
                continue;
            memset(&probe[n], 0, sizeof probe[n]);
            probe[n].ops = ops;
            probe[n].family = family;
            make(&probe[n], x->q, v);
            vals[n++] = v;
        }
        run_range(x, probe, n);
        uint64_t new_ok = ok;
        for (uint32_t i = 0; i < n; i++)
            if (tune_candidate_ok(&probe[i]) && vals[i] < new_ok) {
                new_ok = vals[i];
                best = probe[i];
            }
        uint64_t new_fail = fail;
        for (uint32_t i = 0; i < n; i++)
            if (!tune_candidate_ok(&probe[i]) && vals[i] < new_ok && vals[i] > new_fail)
                new_fail = vals[i];
        if (new_ok == ok && new_fail == fail)
            break;
        ok = new_ok;
        fail = new_fail;
    }
    a->c[a->n++] = best;
}

static void make_limit(tune_candidate *c, const tune_question *q, uint64_t mib)
{
    bfc_cand_common(c, q);
    cand_set(c, "limit", "%lluMiB", (unsigned long long)mib);
    snprintf(c->setting, sizeof c->setting, "memory_limit=%llu", (unsigned long long)mib);
    snprintf(c->code, sizeof c->code,
             "tf.config.set_logical_device_configuration(tf.config.list_physical_devices('GPU')[0], "
             "[tf.config.LogicalDeviceConfiguration(memory_limit=%llu)])",
             (unsigned long long)mib);
}

static void make_fraction(tune_candidate *c, const tune_question *q, uint64_t pct)
{
    bfc_cand_common(c, q);
    cand_set(c, "mem_fraction", "%llu.%02llu", (unsigned long long)(pct / 100), (unsigned long long)(pct % 100));
    snprintf(c->setting, sizeof c->setting, "XLA_PYTHON_CLIENT_MEM_FRACTION=%llu.%02llu",
             (unsigned long long)(pct / 100), (unsigned long long)(pct % 100));
    snprintf(c->env, sizeof c->env, "%s", c->setting);
}

static void bfc_stage2(tune_ctx *x)
{
    const tune_question *q = x->q;
    const tune_answer *a = x->a;
    /* from the live bytes at the peak (the lower bound) up to the card */
    uint64_t need = a->c[a->current].peak_requested;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->c[i].bound && a->c[i].st == SIM_OK && a->c[i].peak_requested)
            need = a->c[i].peak_requested;
    uint64_t cap = q->base.device.capacity_bytes;
    if (q->framework == TUNE_TF) {
        const strategy_ops *limit = registry_find("limit");
        if (limit && registry_option_of(limit, "limit"))
            smallest_value(x, limit, "memory_limit", units_round_up(need, MiB) / MiB, cap / MiB, make_limit);
    } else {
        const strategy_ops *greedy = registry_find("greedy");
        if (greedy && registry_option_of(greedy, "mem_fraction") && cap)
            smallest_value(x, greedy, "memory fraction", need * 100 / cap + 1 > 100 ? 100 : need * 100 / cap + 1, 100,
                           make_fraction);
    }
}

/* ---------------------------------------------------------------- ranking */

/* x before y: meets the goal, then fewer OOMs (no-oom), then the smaller footprint
 * (peak on the device for fit, peak reserved otherwise), then the order tried. */
static bool better(const tune_question *q, const tune_candidate *x, uint32_t ix, const tune_candidate *y, uint32_t iy)
{
    bool ox = tune_candidate_ok(x), oy = tune_candidate_ok(y);
    if (ox != oy)
        return ox;
    if (q->goal == TUNE_GOAL_NO_OOM && x->ooms != y->ooms)
        return x->ooms < y->ooms;
    uint64_t fx = q->goal == TUNE_GOAL_FIT ? x->peak_device : x->peak_reserved;
    uint64_t fy = q->goal == TUNE_GOAL_FIT ? y->peak_device : y->peak_reserved;
    if (fx != fy)
        return fx < fy;
    return ix < iy;
}

static void rank_all(tune_answer *a, const tune_question *q)
{
    a->n_ranked = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->c[i].bound || a->c[i].st != SIM_OK)
            continue;
        uint32_t k = a->n_ranked++;
        while (k > 0 && better(q, &a->c[i], i, &a->c[a->rank[k - 1]], a->rank[k - 1])) {
            a->rank[k] = a->rank[k - 1];
            k--;
        }
        a->rank[k] = i;
    }
}

uint32_t tune_estimate_runs(const tune_question *q)
{
    /* torch: stage 1's grids and bounds (about 24), the refinement (7), the fractions (4)
     * and the pair; tf and jax: a handful of settings and the search's rounds of
     * SEARCH_PROBES replays (eight rounds for 1 MiB steps on an 80 GiB card) */
    return q->framework == TUNE_TORCH ? 40u : 30u;
}

sim_status tune_run(const tune_question *q, tune_answer *a, sim_error *err)
{
    memset(a, 0, sizeof *a);
    a->c = calloc(TUNE_MAX_CANDIDATES, sizeof *a->c);
    if (a->c == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    tune_ctx x = {q, a, 0};
    add_current(a, q);
    if (q->framework == TUNE_TORCH)
        torch_stage1(a, q);
    else
        bfc_stage1(a, q);
    add_bounds(a);
    run_stage(&x, 0);
    /* the user's own setting must run; any other failure but a setting that cannot
     * hold on this card ends the search */
    for (uint32_t i = 0; i < a->n; i++) {
        const tune_candidate *c = &a->c[i];
        if (c->st != SIM_OK && (c->current || c->st != SIM_EUSAGE)) {
            *err = c->err;
            return c->st;
        }
    }
    uint32_t from = a->n;
    if (q->framework == TUNE_TORCH) {
        torch_stage2(a, q);
        run_stage(&x, from);
        from = a->n;
        torch_stage3(a, q);
        run_stage(&x, from);
    } else {
        bfc_stage2(&x);
    }
    for (uint32_t i = from; i < a->n; i++)
        if (a->c[i].st != SIM_OK && a->c[i].st != SIM_EUSAGE) {
            *err = a->c[i].err;
            return a->c[i].st;
        }
    rank_all(a, q);
    return SIM_OK;
}

void tune_answer_release(tune_answer *a)
{
    free(a->c);
    memset(a, 0, sizeof *a);
}
