/* torch_upstream — the differential check of gpusim's `torch` model against
 * PyTorch's own allocator (validate/upstream/torch/README.md).
 *
 *   torch_upstream TRACE [--alloc-conf=S] [--memory-fraction=F] [--torch-version=X.Y]
 *                  [--capacity=SIZE] [--context=SIZE] [--on-oom=stop|skip] [--label=TEXT]
 *
 * Replays TRACE twice through gpusim's engine, once with the `torch` model and
 * once with the real allocator (upstream_strategy.h), with the same device and
 * options, records every memory_stats() counter and the engine's sample after
 * every event, then compares every key of the two result objects and, when they
 * disagree or any counter does, names the first event after which they differ.
 * Prints one line per run: "agree ..." (with PyTorch's final and peak reserved
 * bytes) or "DIFFER ..." with the differences, or "skipped ..." with why when the
 * release cannot make the run (a trace whose pools set MemPool options the
 * release's allocator lacks). Every private pool's numbers (strategy_ops.pools)
 * are compared after every event too, as pool.ID.* counters.
 * Exit status: 0 agree, 1 differ, 2 usage or a run that could not be made. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/result.h"
#include "sim/buf.h"
#include "sim/engine.h"
#include "sim/units.h"
#include "strategies/torch.h"
#include "traces/trace.h"
#include "upstream_strategy.h"

#define MAX_KEYS 320u
#define KEY_LEN 64u

/* The counters and sample of one process after each measured event. */
typedef struct tick_rec {
    uint64_t event;
    sim_op op;
    bool deferred;      /* a deferred free coming due */
    uint64_t id, size;
    uint64_t v[MAX_KEYS];
} tick_rec;

typedef struct recorder {
    char keys[MAX_KEYS][KEY_LEN];
    uint32_t n_keys;
    bool overflow;
    tick_rec *ticks;
    uint64_t n, cap;
    tick_rec *cur;
} recorder;

static uint32_t key_index(recorder *r, const char *key)
{
    for (uint32_t i = 0; i < r->n_keys; i++)
        if (strcmp(r->keys[i], key) == 0)
            return i;
    if (r->n_keys == MAX_KEYS) {
        r->overflow = true;
        return UINT32_MAX;
    }
    snprintf(r->keys[r->n_keys], KEY_LEN, "%s", key);
    return r->n_keys++;
}

static void put(recorder *r, const char *key, uint64_t v)
{
    uint32_t i = key_index(r, key);
    if (i != UINT32_MAX)
        r->cur->v[i] = v;
}

static void sink_u64(void *ctx, const char *key, uint64_t v)
{
    put(ctx, key, v);
}

static void sink_real(void *ctx, const char *key, double v)
{
    /* max_split_size -1 (unset) is the only real the torch stats emit */
    put(ctx, key, v < 0.0 ? UINT64_MAX : (uint64_t)v);
}

/* One private pool's numbers after the event, under pool.ID.* (a pool the allocator
 * no longer keeps has none: every one reads 0, `exists` included). */
static int put_pool(void *ctx, const strategy_pool_info *pi)
{
    recorder *r = ctx;
    const char *names[10] = {
        "exists", "reserved_bytes", "peak_reserved_bytes", "allocated_bytes", "peak_allocated_bytes", "segments",
        "uses",   "routed",         "use_on_oom",          "no_split"};
    const uint64_t v[10] = {1,
                            pi->reserved_bytes,
                            pi->peak_reserved_bytes,
                            pi->allocated_bytes,
                            pi->peak_allocated_bytes,
                            pi->segments,
                            pi->uses,
                            pi->routed,
                            pi->use_on_oom,
                            pi->no_split};
    for (unsigned i = 0; i < 10; i++) {
        char key[KEY_LEN];
        snprintf(key, sizeof key, "pool.%" PRIu64 ".%s", pi->pool, names[i]);
        put(r, key, v[i]);
    }
    return 0;
}

static void observe(void *ctx, const engine_tick *t)
{
    recorder *r = ctx;
    if (r->n == r->cap) {
        uint64_t cap = r->cap ? r->cap * 2 : 1024;
        tick_rec *nt = realloc(r->ticks, cap * sizeof *nt);
        if (nt == NULL) {
            r->overflow = true;
            return;
        }
        r->ticks = nt;
        r->cap = cap;
    }
    tick_rec *k = &r->ticks[r->n++];
    memset(k, 0, sizeof *k);
    k->event = t->event;
    k->deferred = t->ev == NULL;
    if (t->ev != NULL) {
        k->op = t->ev->op;
        k->id = t->ev->id;
        k->size = t->ev->size;
    } else {
        k->op = SIM_OP_FREE;
        k->size = t->deferred_size;
    }
    r->cur = k;
    put(r, "sample.allocated_bytes", t->proc.allocated_bytes);
    put(r, "sample.reserved_bytes", t->proc.reserved_bytes);
    put(r, "sample.free_bytes", t->proc.free_bytes);
    put(r, "sample.largest_free_bytes", t->proc.largest_free_bytes);
    put(r, "sample.num_device_allocs", t->proc.num_device_allocs);
    put(r, "sample.num_device_frees", t->proc.num_device_frees);
    put(r, "sample.peak_reserved_bytes", t->proc.peak_reserved_bytes);
    put(r, "sample.peak_allocated_bytes", t->proc.peak_allocated_bytes);
    const sim_run_proc *p = &t->run->procs[t->process];
    strategy_stat_sink sink = {.u64 = sink_u64, .real = sink_real, .text = NULL, .ctx = r};
    t->run->ops->stats(p->s, &sink);
    if (t->run->ops->pools != NULL)
        t->run->ops->pools(p->s, put_pool, r);
}

typedef struct args {
    const char *trace;
    const char *label;
    sim_kv opts[4];
    uint32_t n_opts;
    uint64_t capacity, context;
    bool skip;
} args;

static sim_status replay(const args *a, const strategy_ops *ops, bool upstream, recorder *rec, sim_buf *result,
                         sim_error *err)
{
    trace_reader *tr = NULL;
    sim_status st = trace_open(a->trace, &tr, err);
    if (st != SIM_OK)
        return st;
    sim_kv opts[4];
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->n_opts; i++) {
        /* the real allocator is one release: it takes no version */
        if (upstream && strcmp(a->opts[i].key, "torch_version") == 0)
            continue;
        opts[n++] = a->opts[i];
    }
    engine_config cfg = {
        .device = {.name = "custom", .capacity_bytes = a->capacity, .context_bytes = a->context},
        .ops = ops,
        .opts = opts,
        .n_opts = n,
        .on_oom_skip = a->skip,
        .observers = {{observe, rec}},
        .n_observers = 1,
    };
    sim_event_source src = trace_source(tr);
    sim_run *run = NULL;
    st = engine_run(&cfg, &src, 1, &run, err);
    if (st == SIM_OK)
        report_json_result(run, 0, -1, result);
    sim_run_free(run);
    trace_close(tr);
    return st;
}

/* Every leaf of a and b under path that differs, as "path gpusim=X pytorch=Y". */
static void diff_json(const cJSON *a, const cJSON *b, const char *path, sim_buf *out, unsigned *n)
{
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        const cJSON *x;
        cJSON_ArrayForEach(x, a)
        {
            char sub[256];
            snprintf(sub, sizeof sub, "%s.%s", path, x->string);
            diff_json(x, cJSON_GetObjectItemCaseSensitive(b, x->string), sub, out, n);
        }
        cJSON_ArrayForEach(x, b)
        {
            if (cJSON_GetObjectItemCaseSensitive(a, x->string) == NULL) {
                char sub[256];
                snprintf(sub, sizeof sub, "%s.%s", path, x->string);
                diff_json(NULL, x, sub, out, n);
            }
        }
        return;
    }
    char *sa = a ? cJSON_PrintUnformatted(a) : NULL;
    char *sb = b ? cJSON_PrintUnformatted(b) : NULL;
    if (sa == NULL || sb == NULL || strcmp(sa, sb) != 0) {
        if (*n < 8)
            sim_buf_printf(out, "%s%s gpusim=%s pytorch=%s", *n ? "; " : "", path, sa ? sa : "(none)",
                           sb ? sb : "(none)");
        (*n)++;
    }
    free(sa);
    free(sb);
}

static const char *op_text(const tick_rec *k, char *buf, size_t cap)
{
    if (k->deferred)
        snprintf(buf, cap, "deferred free of %" PRIu64 " B coming due", k->size);
    else if (k->op == SIM_OP_ALLOC)
        snprintf(buf, cap, "alloc id %" PRIu64 " size %" PRIu64, k->id, k->size);
    else if (k->op == SIM_OP_FREE)
        snprintf(buf, cap, "free id %" PRIu64, k->id);
    else
        snprintf(buf, cap, "%s", sim_op_name(k->op));
    return buf;
}

static bool is_pool_key(const char *key)
{
    return strncmp(key, "pool.", 5) == 0;
}

/* The first tick after which any counter differs, into out. */
static bool first_divergence(const recorder *g, const recorder *u, sim_buf *out)
{
    uint64_t n = g->n < u->n ? g->n : u->n;
    for (uint64_t i = 0; i < n; i++) {
        const tick_rec *kg = &g->ticks[i], *ku = &u->ticks[i];
        unsigned shown = 0;
        char op[128];
        for (uint32_t j = 0; j < u->n_keys; j++) {
            uint32_t jg = UINT32_MAX;
            for (uint32_t q = 0; q < g->n_keys; q++)
                if (strcmp(g->keys[q], u->keys[j]) == 0)
                    jg = q;
            /* a pool one side has never reported reads 0 there (pool.ID.exists 0) */
            uint64_t vg = jg != UINT32_MAX ? kg->v[jg] : is_pool_key(u->keys[j]) ? 0 : UINT64_MAX - 1;
            if (vg == ku->v[j])
                continue;
            if (shown == 0)
                sim_buf_printf(out, "first diverging event %" PRIu64 " (%s):", ku->event, op_text(ku, op, sizeof op));
            if (shown < 6)
                sim_buf_printf(out, " %s gpusim=%" PRIu64 " pytorch=%" PRIu64, u->keys[j], vg, ku->v[j]);
            shown++;
        }
        for (uint32_t q = 0; q < g->n_keys; q++) { /* the pools only gpusim reported */
            if (!is_pool_key(g->keys[q]) || kg->v[q] == 0)
                continue;
            bool in_u = false;
            for (uint32_t j = 0; j < u->n_keys && !in_u; j++)
                in_u = strcmp(g->keys[q], u->keys[j]) == 0;
            if (in_u)
                continue;
            if (shown == 0)
                sim_buf_printf(out, "first diverging event %" PRIu64 " (%s):", ku->event, op_text(ku, op, sizeof op));
            if (shown < 6)
                sim_buf_printf(out, " %s gpusim=%" PRIu64 " pytorch=0", g->keys[q], kg->v[q]);
            shown++;
        }
        if (shown > 0)
            return true;
    }
    if (g->n != u->n) {
        sim_buf_printf(out, "gpusim measured %" PRIu64 " events, pytorch %" PRIu64, g->n, u->n);
        return true;
    }
    return false;
}

/* The MemPool options (SIM_POOL_USE_ON_OOM, SIM_POOL_NO_SPLIT) the trace's pool_begins set. */
static sim_status trace_pool_options(const char *path, uint32_t *sets, sim_error *err)
{
    trace_reader *tr = NULL;
    *sets = 0;
    sim_status st = trace_open(path, &tr, err);
    if (st != SIM_OK)
        return st;
    sim_event_source src = trace_source(tr);
    sim_event ev;
    while ((st = src.next(src.ctx, &ev, err)) == SIM_OK)
        if (ev.op == SIM_OP_POOL_BEGIN)
            *sets |= ev.pool_flags & SIM_POOL_OPTIONS;
    trace_close(tr);
    return st == SIM_END ? SIM_OK : st;
}

static int usage(const char *msg)
{
    fprintf(stderr,
            "torch_upstream: %s\nusage: torch_upstream TRACE [--alloc-conf=S] [--memory-fraction=F] "
            "[--torch-version=X.Y] [--capacity=SIZE] [--context=SIZE] [--on-oom=stop|skip] [--label=TEXT]\n",
            msg);
    return 2;
}

int main(int argc, char **argv)
{
    args a = {.capacity = (uint64_t)80 << 30, .context = 0, .label = ""};
    sim_error err;
    sim_error_clear(&err);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strncmp(s, "--alloc-conf=", 13) == 0)
            a.opts[a.n_opts++] = (sim_kv){"alloc_conf", s + 13};
        else if (strncmp(s, "--memory-fraction=", 18) == 0)
            a.opts[a.n_opts++] = (sim_kv){"memory_fraction", s + 18};
        else if (strncmp(s, "--torch-version=", 16) == 0)
            a.opts[a.n_opts++] = (sim_kv){"torch_version", s + 16};
        else if (strncmp(s, "--capacity=", 11) == 0) {
            if (units_parse_size(s + 11, &a.capacity, &err) != SIM_OK)
                return usage(err.msg);
        } else if (strncmp(s, "--context=", 10) == 0) {
            if (units_parse_size(s + 10, &a.context, &err) != SIM_OK)
                return usage(err.msg);
        } else if (strcmp(s, "--on-oom=skip") == 0)
            a.skip = true;
        else if (strcmp(s, "--on-oom=stop") == 0)
            a.skip = false;
        else if (strncmp(s, "--label=", 8) == 0)
            a.label = s + 8;
        else if (s[0] == '-')
            return usage("unknown option");
        else if (a.trace == NULL)
            a.trace = s;
        else
            return usage("one trace per run");
        if (a.n_opts == 4)
            return usage("too many options");
    }
    if (a.trace == NULL)
        return usage("no trace");

    /* a release without setUseOnOOM (before 2.8) or setNoSplit (before 2.10) cannot run
     * a trace whose pools set it: say so (runs.sh counts these lines), never a silent pass */
    uint32_t options = 0;
    if (trace_pool_options(a.trace, &options, &err) != SIM_OK) {
        fprintf(stderr, "torch_upstream: %s\n", err.msg);
        return 2;
    }
    const char *lacks = (options & SIM_POOL_USE_ON_OOM) && !upstream_torch_has_use_on_oom() ? "use_on_oom (setUseOnOOM)"
                        : (options & SIM_POOL_NO_SPLIT) && !upstream_torch_has_no_split()   ? "no_split (setNoSplit)"
                                                                                            : NULL;
    if (lacks != NULL) {
        printf("skipped %s%s%s: its pools set %s, which this release's allocator does not have\n", a.trace,
               a.label[0] ? " " : "", a.label, lacks);
        return 0;
    }

    recorder *rg = calloc(1, sizeof *rg), *ru = calloc(1, sizeof *ru);
    sim_buf jg, ju, msg;
    sim_buf_init(&jg);
    sim_buf_init(&ju);
    sim_buf_init(&msg);
    int rc = 2;
    if (rg == NULL || ru == NULL) {
        fprintf(stderr, "torch_upstream: out of memory\n");
        goto done;
    }
    if (replay(&a, torch_strategy(), false, rg, &jg, &err) != SIM_OK) {
        fprintf(stderr, "torch_upstream: gpusim: %s\n", err.msg);
        goto done;
    }
    if (replay(&a, upstream_torch_strategy(), true, ru, &ju, &err) != SIM_OK) {
        fprintf(stderr, "torch_upstream: pytorch: %s\n", err.msg);
        goto done;
    }
    cJSON *xg = cJSON_ParseWithLength(jg.data, jg.len), *xu = cJSON_ParseWithLength(ju.data, ju.len);
    unsigned n_diff = 0;
    diff_json(xg, xu, "result", &msg, &n_diff);
    if (n_diff > 8)
        sim_buf_printf(&msg, "; ... %u keys differ", n_diff);
    /* a first out-of-memory that differs only in its text or numbers: name its event,
     * which no counter may show */
    const cJSON *og = cJSON_GetObjectItemCaseSensitive(xg, "first_oom");
    const cJSON *ou = cJSON_GetObjectItemCaseSensitive(xu, "first_oom");
    if (cJSON_IsObject(og) && cJSON_IsObject(ou) && !cJSON_Compare(og, ou, true)) {
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(og, "event");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(og, "id");
        if (cJSON_IsNumber(ev) && cJSON_IsNumber(id))
            sim_buf_printf(&msg, "; first_oom at event %.0f (alloc id %.0f)", ev->valuedouble, id->valuedouble);
    }
    /* PyTorch's own figures, for the agree line: its final and peak reserved memory */
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(xu, "final_reserved_bytes");
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(xu, "peak_reserved_bytes");
    double final_reserved = cJSON_IsNumber(fr) ? fr->valuedouble : -1, peak_reserved = cJSON_IsNumber(pr) ? pr->valuedouble : -1;
    cJSON_Delete(xg);
    cJSON_Delete(xu);
    sim_buf div;
    sim_buf_init(&div);
    bool diverged = first_divergence(rg, ru, &div);
    if (rg->overflow || ru->overflow) {
        fprintf(stderr, "torch_upstream: out of memory or too many counters\n");
        sim_buf_release(&div);
        goto done;
    }
    if (n_diff == 0 && !diverged) {
        printf("agree %s%s%s (%" PRIu64 " events; pytorch reserved %.0f B at the end, %.0f B at its peak)\n", a.trace,
               a.label[0] ? " " : "", a.label, ru->n, final_reserved, peak_reserved);
        rc = 0;
    } else {
        printf("DIFFER %s%s%s: %s%s%s\n", a.trace, a.label[0] ? " " : "", a.label, n_diff ? msg.data : "",
               n_diff && diverged ? "; " : "", diverged ? div.data : "");
        rc = 1;
    }
    sim_buf_release(&div);
done:
    sim_buf_release(&jg);
    sim_buf_release(&ju);
    sim_buf_release(&msg);
    if (rg)
        free(rg->ticks);
    if (ru)
        free(ru->ticks);
    free(rg);
    free(ru);
    return rc;
}
