/* Two passes over a replay for the pictures (capture.h).
 *
 * The probe is a strategy_ops table that forwards every call to the real strategy
 * and watches three of them: alloc/free/free_ready (requested bytes per instance,
 * as the engine counts them), sample (called once per measured event; the probe
 * adds the device totals to its min/max curve) and check (under --paranoid the
 * engine calls check then sample: that sample is not an event). The probe reaches
 * its own state from create() through the options array it handed the engine
 * (engine_config.opts points into the probe), so no global state is needed.
 *
 * Rejected: snapshotting the allocator at every new peak during the first pass
 * (a walk per new maximum: quadratic on growing traces); the engine's timeline
 * (per-row maxima only: a sawtooth would draw as a flat line at its tops). */
#include "capture.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_MAX_KV 32

/* ---------------------------------------------------------------- the curve */

bool capture_curve_init(capture_curve *c, uint64_t max)
{
    memset(c, 0, sizeof *c);
    if (max == 0)
        max = 1;
    c->max = max;
    c->per = 1;
    c->b = malloc((size_t)(2 * max) * sizeof *c->b);
    return c->b != NULL;
}

static void bucket_merge(capture_bucket *a, const capture_bucket *b)
{
#define LO(f) if (b->f < a->f) a->f = b->f
#define HI(f) if (b->f > a->f) a->f = b->f
    LO(req_min); HI(req_max);
    LO(alloc_min); HI(alloc_max);
    LO(res_min); HI(res_max);
    LO(frag_min); HI(frag_max);
#undef LO
#undef HI
    a->count += b->count;
}

static void curve_halve(capture_curve *c)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < c->n; i += 2) {
        capture_bucket r = c->b[i];
        if (i + 1 < c->n)
            bucket_merge(&r, &c->b[i + 1]);
        c->b[k++] = r;
    }
    c->n = k;
    c->per *= 2;
}

void capture_curve_add(capture_curve *c, uint64_t event, uint64_t req, uint64_t alloc, uint64_t res, double frag)
{
    if (c->b == NULL)
        return;
    capture_bucket x = {event, 1, req, req, alloc, alloc, res, res, frag, frag};
    if (c->n > 0 && c->b[c->n - 1].count < c->per) {
        bucket_merge(&c->b[c->n - 1], &x);
        return;
    }
    if (c->n == 2 * c->max) {
        curve_halve(c);
        if (c->b[c->n - 1].count < c->per) {
            bucket_merge(&c->b[c->n - 1], &x);
            return;
        }
    }
    c->b[c->n++] = x;
}

void capture_curve_finish(capture_curve *c)
{
    while (c->n > c->max)
        curve_halve(c);
}

/* ---------------------------------------------------------------- the probe */

typedef struct probe probe;

typedef struct probe_inst {
    strategy *inner;
    probe *p;
    uint64_t requested;
    uint64_t *sizes;        /* requested bytes by handle */
    uint64_t cap_sizes;
    strategy_sample last;
    bool counted;           /* part of the device totals */
    bool dying;             /* OOM under on-oom=stop: measured once more, then gone */
    bool skip_sample;       /* the next sample belongs to a paranoid check */
} probe_inst;

struct probe {
    sim_kv kv[PROBE_MAX_KV];   /* first: handed to the engine as its options */
    uint32_t n_kv;
    strategy_ops ops;
    const strategy_ops *inner;
    bool on_oom_stop;
    probe_inst **inst;
    uint32_t n_inst, cap_inst;
    capture_curve curve;
    uint64_t events;
    uint64_t ooms;
    uint64_t oom_event;
};

static probe *probe_of(const strategy_config *cfg)
{
    return (probe *)(void *)((const char *)(const void *)cfg->opts - offsetof(probe, kv));
}

static probe_inst *inst_of(strategy *s)
{
    return (probe_inst *)(void *)s;
}

static const probe_inst *cinst_of(const strategy *s)
{
    return (const probe_inst *)(const void *)s;
}

static sim_status pr_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    probe *p = probe_of(cfg);
    probe_inst *pi = calloc(1, sizeof *pi);
    if (pi == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (p->n_inst == p->cap_inst) {
        uint32_t cap = p->cap_inst ? 2 * p->cap_inst : 4;
        probe_inst **a = realloc(p->inst, cap * sizeof *a);
        if (a == NULL) {
            free(pi);
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
        p->inst = a;
        p->cap_inst = cap;
    }
    sim_status st = p->inner->create(cfg, &pi->inner, err);
    if (st != SIM_OK) {
        free(pi);
        return st;
    }
    pi->p = p;
    pi->counted = true;
    p->inst[p->n_inst++] = pi;
    *out = (strategy *)(void *)pi;
    return SIM_OK;
}

static void pr_destroy(strategy *s)
{
    probe_inst *pi = inst_of(s);
    probe *p = pi->p;
    for (uint32_t i = 0; i < p->n_inst; i++)
        if (p->inst[i] == pi) {
            memmove(&p->inst[i], &p->inst[i + 1], (p->n_inst - i - 1) * sizeof *p->inst);
            p->n_inst--;
            break;
        }
    p->inner->destroy(pi->inner);
    free(pi->sizes);
    free(pi);
}

static sim_status pr_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h, strategy_oom *oom)
{
    probe_inst *pi = inst_of(s);
    probe *p = pi->p;
    sim_status st = p->inner->alloc(pi->inner, size, stream, h, oom);
    if (st == SIM_OOM) {
        p->ooms++;
        if (p->oom_event == 0)
            p->oom_event = p->events + 1; /* the engine measures this event next */
        if (p->on_oom_stop)
            pi->dying = true;
        return st;
    }
    if (st != SIM_OK)
        return st;
    if (*h >= pi->cap_sizes) {
        uint64_t cap = pi->cap_sizes ? pi->cap_sizes : 64;
        while (cap <= *h)
            cap *= 2;
        uint64_t *a = realloc(pi->sizes, (size_t)cap * sizeof *a);
        if (a == NULL) {
            /* give the block back: the engine reports this as an internal failure */
            p->inner->free(pi->inner, *h, false);
            return SIM_ENOMEM;
        }
        pi->sizes = a;
        pi->cap_sizes = cap;
    }
    pi->sizes[*h] = size;
    pi->requested += size;
    return SIM_OK;
}

static void pr_free(strategy *s, strategy_handle h, bool deferred)
{
    probe_inst *pi = inst_of(s);
    pi->p->inner->free(pi->inner, h, deferred);
    if (!deferred && h < pi->cap_sizes)
        pi->requested -= pi->sizes[h];
}

static void pr_free_ready(strategy *s, strategy_handle h)
{
    probe_inst *pi = inst_of(s);
    pi->p->inner->free_ready(pi->inner, h);
    if (h < pi->cap_sizes)
        pi->requested -= pi->sizes[h];
}

static void pr_empty_cache(strategy *s)
{
    probe_inst *pi = inst_of(s);
    pi->p->inner->empty_cache(pi->inner);
}

static void pr_sample(const strategy *s, strategy_sample *out)
{
    /* the op takes a const instance; the probe's bookkeeping beside it is its own */
    probe_inst *pi = (probe_inst *)(void *)s;
    probe *p = pi->p;
    p->inner->sample(pi->inner, out);
    if (pi->skip_sample) {
        pi->skip_sample = false;
        return;
    }
    pi->last = *out;
    uint64_t req = 0, alloc = 0, res = 0, fr = 0, largest = 0;
    for (uint32_t i = 0; i < p->n_inst; i++) {
        const probe_inst *q = p->inst[i];
        if (!q->counted)
            continue;
        req += q->requested;
        alloc += q->last.allocated_bytes;
        res += q->last.reserved_bytes;
        fr += q->last.free_bytes;
        if (q->last.largest_free_bytes > largest)
            largest = q->last.largest_free_bytes;
    }
    p->events++;
    capture_curve_add(&p->curve, p->events, req, alloc, res, sim_fragmentation(fr, largest));
    if (pi->dying)
        pi->counted = false;
}

static void pr_stats(const strategy *s, const strategy_stat_sink *sink)
{
    cinst_of(s)->p->inner->stats(cinst_of(s)->inner, sink);
}

static void pr_options(const strategy *s, const strategy_stat_sink *sink)
{
    cinst_of(s)->p->inner->options(cinst_of(s)->inner, sink);
}

static void pr_check(const strategy *s, sim_report *r)
{
    probe_inst *pi = (probe_inst *)(void *)s;
    pi->skip_sample = true;
    pi->p->inner->check(pi->inner, r);
}

static int pr_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    return cinst_of(s)->p->inner->walk(cinst_of(s)->inner, v, ctx);
}

static probe *probe_new(const engine_config *cfg, uint32_t buckets)
{
    probe *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->inner = cfg->ops;
    p->on_oom_stop = !cfg->on_oom_skip;
    p->n_kv = cfg->n_opts < PROBE_MAX_KV ? cfg->n_opts : PROBE_MAX_KV;
    for (uint32_t i = 0; i < p->n_kv; i++)
        p->kv[i] = cfg->opts[i];
    p->ops = (strategy_ops){
        .name = cfg->ops->name, .summary = cfg->ops->summary,
        .create = pr_create, .destroy = pr_destroy, .alloc = pr_alloc, .free = pr_free,
        .free_ready = pr_free_ready, .empty_cache = pr_empty_cache, .sample = pr_sample,
        .stats = pr_stats, .options = pr_options, .check = pr_check, .walk = pr_walk,
    };
    if (buckets && !capture_curve_init(&p->curve, buckets)) {
        free(p);
        return NULL;
    }
    return p;
}

static void probe_free(probe *p)
{
    if (p == NULL)
        return;
    free(p->inst); /* instances belong to the run (sim_run_free destroys them first) */
    free(p->curve.b);
    free(p);
}

/* ---------------------------------------------------------------- live allocations */

typedef struct live_slot {
    uint64_t id, size, ready_t;
    uint32_t source, stream;
    uint8_t state;   /* 0 empty, 1 used, 2 deleted */
    bool pending;
    char *tag;
} live_slot;

typedef struct live_table {
    live_slot *s;
    uint64_t cap, used, filled; /* filled counts used + deleted */
    bool oom;
} live_table;

static uint64_t live_hash(uint64_t id, uint32_t source)
{
    uint64_t x = id * 0x9E3779B97F4A7C15ull ^ ((uint64_t)source << 32);
    return x ^ (x >> 29);
}

static live_slot *live_find(live_table *t, uint64_t id, uint32_t source)
{
    if (t->cap == 0)
        return NULL;
    for (uint64_t i = live_hash(id, source) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        live_slot *s = &t->s[i];
        if (s->state == 0)
            return NULL;
        if (s->state == 1 && s->id == id && s->source == source)
            return s;
    }
}

static bool live_grow(live_table *t)
{
    uint64_t cap = t->cap ? t->cap * 2 : 1024;
    if (t->used * 4 < t->cap)
        cap = t->cap; /* mostly deleted slots: rehash in place size */
    live_slot *ns = calloc((size_t)cap, sizeof *ns);
    if (ns == NULL)
        return false;
    for (uint64_t i = 0; i < t->cap; i++) {
        if (t->s[i].state != 1)
            continue;
        uint64_t j = live_hash(t->s[i].id, t->s[i].source) & (cap - 1);
        while (ns[j].state)
            j = (j + 1) & (cap - 1);
        ns[j] = t->s[i];
    }
    free(t->s);
    t->s = ns;
    t->cap = cap;
    t->filled = t->used;
    return true;
}

static void live_put(live_table *t, const sim_event *ev, uint32_t source)
{
    if ((t->filled + 1) * 10 > t->cap * 6 && !live_grow(t)) {
        t->oom = true;
        return;
    }
    uint64_t i = live_hash(ev->id, source) & (t->cap - 1);
    while (t->s[i].state == 1)
        i = (i + 1) & (t->cap - 1);
    if (t->s[i].state == 0)
        t->filled++;
    live_slot *s = &t->s[i];
    *s = (live_slot){.id = ev->id, .size = ev->size, .source = source, .stream = ev->stream, .state = 1};
    if (ev->tag && ev->tag[0]) {
        size_t n = strlen(ev->tag);
        if (n >= sizeof ((capture_alloc *)0)->tag)
            n = sizeof ((capture_alloc *)0)->tag - 1;
        s->tag = malloc(n + 1);
        if (s->tag) {
            memcpy(s->tag, ev->tag, n);
            s->tag[n] = '\0';
        }
    }
    t->used++;
}

static void live_del(live_table *t, live_slot *s)
{
    free(s->tag);
    s->tag = NULL;
    s->state = 2;
    t->used--;
}

static void live_release(live_table *t)
{
    for (uint64_t i = 0; i < t->cap; i++)
        free(t->s[i].tag);
    free(t->s);
    memset(t, 0, sizeof *t);
}

/* A source that applies each event to the table once the engine asks for the next
 * one (by then it has processed it), so a replay stopped after event N has seen
 * exactly the events up to N. An alloc during which the probe counted an OOM was
 * dropped (--on-oom=skip) or ended its process (stop). */
typedef struct table_src {
    sim_event_source inner;
    live_table *t;
    probe *p;
    uint32_t source;
    bool has_head, dead;
    sim_event head;          /* strings are the inner source's, valid until its next() */
    uint64_t ooms_at_head;
} table_src;

static void table_apply(table_src *ts)
{
    const sim_event *ev = &ts->head;
    if (ts->dead)
        return;
    if (ev->op == SIM_OP_ALLOC) {
        if (ts->p->ooms > ts->ooms_at_head) {
            if (ts->p->on_oom_stop)
                ts->dead = true;
            return;
        }
        live_put(ts->t, ev, ts->source);
    } else if (ev->op == SIM_OP_FREE) {
        live_slot *s = live_find(ts->t, ev->id, ts->source);
        if (s == NULL)
            return;
        if (ev->ready_t > ev->t) {
            s->pending = true;
            s->ready_t = ev->ready_t;
        } else {
            live_del(ts->t, s);
        }
    }
}

static sim_status table_next(void *ctx, sim_event *ev, sim_error *err)
{
    table_src *ts = ctx;
    if (ts->has_head)
        table_apply(ts);
    ts->has_head = false;
    sim_status st = ts->inner.next(ts->inner.ctx, ev, err);
    if (st == SIM_OK) {
        ts->head = *ev;
        ts->has_head = true;
        ts->ooms_at_head = ts->p->ooms;
    }
    return st;
}

/* ---------------------------------------------------------------- walking */

typedef struct walk_ctx {
    capture *c;
    uint64_t cap;
    uint32_t proc;
} walk_ctx;

#define CAPTURE_MAX_BLOCKS ((uint64_t)1 << 20)

static int collect_block(void *ctx, const strategy_block *b)
{
    walk_ctx *w = ctx;
    capture *c = w->c;
    if (c->n_blocks == CAPTURE_MAX_BLOCKS) {
        c->blocks_truncated = true;
        return 1;
    }
    if (c->n_blocks == w->cap) {
        uint64_t cap = w->cap ? 2 * w->cap : 256;
        capture_block *a = realloc(c->blocks, (size_t)cap * sizeof *a);
        if (a == NULL) {
            c->blocks_truncated = true;
            return 1;
        }
        c->blocks = a;
        w->cap = cap;
    }
    c->blocks[c->n_blocks++] = (capture_block){*b, w->proc};
    return 0;
}

static int alloc_order(const void *a, const void *b)
{
    const capture_alloc *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void take_top(capture *c, const live_table *t, uint64_t peak_t)
{
    for (uint64_t i = 0; i < t->cap; i++) {
        const live_slot *s = &t->s[i];
        if (s->state != 1 || (s->pending && s->ready_t <= peak_t))
            continue;
        c->live_count++;
        c->live_bytes += s->size;
        capture_alloc a = {.id = s->id, .size = s->size, .source = s->source, .stream = s->stream,
                           .pending = s->pending};
        if (s->tag)
            snprintf(a.tag, sizeof a.tag, "%s", s->tag);
        if (c->n_top < CAPTURE_TOP) {
            c->top[c->n_top++] = a;
            qsort(c->top, c->n_top, sizeof c->top[0], alloc_order);
        } else if (alloc_order(&a, &c->top[CAPTURE_TOP - 1]) < 0) {
            c->top[CAPTURE_TOP - 1] = a;
            qsort(c->top, c->n_top, sizeof c->top[0], alloc_order);
        }
    }
}

/* ---------------------------------------------------------------- the passes */

static sim_status second_pass(const engine_config *cfg, const capture_sources *src, capture *c, sim_error *err)
{
    const sim_metrics *m = &c->run->total;
    if (m->peak_reserved_event == 0)
        return SIM_OK;
    probe *p = probe_new(cfg, 0);
    table_src *ts = calloc(src->n ? src->n : 1, sizeof *ts);
    sim_event_source *raw = calloc(src->n ? src->n : 1, sizeof *raw);
    sim_event_source *wrapped = calloc(src->n ? src->n : 1, sizeof *wrapped);
    live_table t = {0};
    sim_run *run = NULL;
    sim_status st;
    if (p == NULL || ts == NULL || raw == NULL || wrapped == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    if ((st = src->open(src->ctx, raw, err)) != SIM_OK)
        goto done;
    for (uint32_t i = 0; i < src->n; i++) {
        ts[i] = (table_src){.inner = raw[i], .t = &t, .p = p, .source = i};
        wrapped[i] = raw[i];
        wrapped[i].next = table_next;
        wrapped[i].ctx = &ts[i];
    }
    engine_config c2 = *cfg;
    c2.ops = &p->ops;
    c2.opts = p->kv;
    c2.n_opts = p->n_kv;
    c2.stop_after_event = m->peak_reserved_event;
    c2.timeline_rows = 0;
    c2.paranoid = false;
    c2.progress = NULL;
    st = engine_run(&c2, wrapped, src->n, &run, err);
    if (st == SIM_OK) {
        walk_ctx w = {c, 0, 0};
        for (uint32_t i = 0; i < run->n_procs && !c->blocks_truncated; i++) {
            w.proc = i;
            run->ops->walk(run->procs[i].s, collect_block, &w);
        }
        take_top(c, &t, m->peak_reserved_t);
    }
    src->close(src->ctx);
done:
    sim_run_free(run);
    live_release(&t);
    free(wrapped);
    free(raw);
    free(ts);
    probe_free(p);
    return st;
}

sim_status capture_run(const engine_config *cfg, const capture_sources *src, uint32_t buckets, capture **out,
                       sim_error *err)
{
    *out = NULL;
    capture *c = calloc(1, sizeof *c);
    probe *p = probe_new(cfg, buckets ? buckets : 1);
    sim_event_source *srcs = calloc(src->n ? src->n : 1, sizeof *srcs);
    sim_status st;
    if (c == NULL || p == NULL || srcs == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto fail;
    }
    if ((st = src->open(src->ctx, srcs, err)) != SIM_OK)
        goto fail;
    engine_config c1 = *cfg;
    c1.ops = &p->ops;
    c1.opts = p->kv;
    c1.n_opts = p->n_kv;
    st = engine_run(&c1, srcs, src->n, &c->run, err);
    src->close(src->ctx);
    if (st != SIM_OK)
        goto fail;
    capture_curve_finish(&p->curve);
    c->buckets = p->curve.b;
    c->n_buckets = p->curve.n;
    p->curve.b = NULL;
    c->events = p->events;
    c->oom_event = p->oom_event;
    if ((st = second_pass(cfg, src, c, err)) != SIM_OK)
        goto fail;
    free(srcs);
    /* c->run's instances call back into p: c owns it from here */
    c->probe = p;
    *out = c;
    return SIM_OK;
fail:
    free(srcs);
    capture_free(c);
    probe_free(p);
    return st;
}

void capture_free(capture *c)
{
    if (c == NULL)
        return;
    sim_run_free(c->run);
    probe_free(c->probe);
    free(c->buckets);
    free(c->blocks);
    free(c);
}
