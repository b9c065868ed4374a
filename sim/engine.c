/* The replay loop.
 *
 * Order of events (design.md §3): the next event is the earliest of (a) the head
 * event of every trace and (b) the earliest deferred free; at equal times the
 * deferred frees come first (PyTorch reclaims finished events at the start of every
 * malloc), then traces in the order given, each in file order.
 *
 * Memory: one head event per trace, the deferred frees in flight, and one id map per
 * process (live allocations). Nothing grows with the length of a trace except the
 * bounded timeline and mark list. */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "idmap.h"
#include "lifetimes.h"
#include "oom_record.h"
#include "pool_protocol.h"
#include "pqueue.h"

typedef struct proc_state {
    idmap ids;
    pool_protocol *pools; /* its pool events so far (NULL until the first) */
    uint32_t dev_proc;
    uint64_t requested;
    /* after the process's first OOM only (oomed): what it asked for and did not get
     * and is still live in the trace's terms, and the peak of requested + that, the
     * program's demand had every allocation been served (design.md §3 "OOM cause") */
    bool oomed;
    uint64_t dropped_live;
    uint64_t demand_peak;
    strategy_sample last;
    bool stopped;
    bool stop_after_event;  /* an OOM ended the program: stop once the event is measured */
} proc_state;

typedef struct source_state {
    sim_event head;
    bool has_head;
    uint64_t counts[SIM_N_OPS]; /* events per op (copied into sim_run_source at the end) */
    uint32_t default_proc;   /* process of events without "proc", UINT32_MAX until seen */
    uint32_t last_named;     /* process of the last named event (a cache), UINT32_MAX if none */
} source_state;

typedef struct engine {
    const engine_config *cfg;
    const sim_event_source *sources;
    sim_run *run;
    source_state *src;
    proc_state *ps;
    uint32_t cap_procs, cap_ps; /* of run->procs and of ps, which grow together */
    pqueue deferred;
    uint64_t context_bytes;
    bool paranoid;
    uint64_t stop_at;        /* end the run once run->events reaches it (UINT64_MAX: never) */
    /* of the event being measured: ENGINE_DONE unless do_alloc or do_free said
     * otherwise; observe() puts it back to ENGINE_DONE after each tick */
    engine_outcome outcome;
    strategy_handle handle;  /* of the alloc being measured (tick.handle), else STRATEGY_HANDLE_NONE */
    strategy_handle freed;   /* of the free being measured (tick.freed), else STRATEGY_HANDLE_NONE */
    uint32_t n_observers;    /* cfg->n_observers, for the per-event test */
    sim_error *err;
    engine_tick tick;        /* the observer's, refilled per event (its run is set once) */
    const lifetimes *lt;     /* a planning strategy's input (ops->plan), else NULL */
    uint32_t cap_marks;      /* of run->marks, which grows as marks come (most runs have few) */
} engine;

double sim_fragmentation(uint64_t free_bytes, uint64_t largest_free_bytes)
{
    if (free_bytes == 0)
        return 0.0;
    return 1.0 - (double)largest_free_bytes / (double)free_bytes;
}

/* ---------------------------------------------------------------- metrics */

/* Whether 1 − largest/free (sim_fragmentation) can pass max: it cannot when largest is
 * free (0) or when largest/free is clearly at least 1 − max; the margin of 1e-9 covers
 * the rounding of the division, so the test never misses a new maximum and the division
 * runs only near or above it. */
static inline bool fragmentation_may_pass(double max, uint64_t free_bytes, uint64_t largest)
{
    return largest < free_bytes && (double)largest <= (1.0 - max) * (double)free_bytes * (1.0 + 1e-9);
}

static inline __attribute__((always_inline)) void metrics_update(sim_metrics *m, uint64_t requested, const strategy_sample *s, uint64_t device_bytes,
                           uint64_t event, uint64_t t)
{
    if (requested > m->peak_requested_bytes)
        m->peak_requested_bytes = requested;
    /* the high-water marks of the event: the allocator's own running maxima when it
     * keeps them (strategy_sample); above every earlier mark only if reached in
     * this event */
    uint64_t allocated_hw = s->peak_allocated_bytes > s->allocated_bytes ? s->peak_allocated_bytes : s->allocated_bytes;
    uint64_t reserved_hw = s->peak_reserved_bytes > s->reserved_bytes ? s->peak_reserved_bytes : s->reserved_bytes;
    device_bytes += reserved_hw - s->reserved_bytes;
    if (allocated_hw > m->peak_allocated_bytes)
        m->peak_allocated_bytes = allocated_hw;
    double frag = 0.0;
    bool new_peak = reserved_hw > m->peak_reserved_bytes;
    bool may_pass = fragmentation_may_pass(m->fragmentation_max, s->free_bytes, s->largest_free_bytes);
    if (new_peak || may_pass)
        frag = sim_fragmentation(s->free_bytes, s->largest_free_bytes);
    if (new_peak) {
        m->peak_reserved_bytes = reserved_hw;
        m->fragmentation_at_peak = frag;
        m->reserved_unallocated_at_peak_bytes =
            s->reserved_bytes > s->allocated_bytes ? s->reserved_bytes - s->allocated_bytes : 0;
        m->peak_reserved_event = event;
        m->peak_reserved_t = t;
    }
    if (device_bytes > m->peak_device_bytes)
        m->peak_device_bytes = device_bytes;
    if (may_pass && frag > m->fragmentation_max)
        m->fragmentation_max = frag;
    m->final_requested_bytes = requested;
    m->final_allocated_bytes = s->allocated_bytes;
    m->final_reserved_bytes = s->reserved_bytes;
    m->num_device_allocs = s->num_device_allocs;
    m->num_device_frees = s->num_device_frees;
}

/* The device totals over the processes still running. */
static void device_totals(const engine *e, strategy_sample *out, uint64_t *requested)
{
    const sim_run *run = e->run;
    strategy_sample tot = {0};
    uint64_t req = 0, allocs = 0, frees = 0;
    uint32_t running = 0;
    const strategy_sample *only = NULL;
    for (uint32_t i = 0; i < run->n_procs; i++) {
        allocs += e->ps[i].last.num_device_allocs;
        frees += e->ps[i].last.num_device_frees;
        if (e->ps[i].stopped)
            continue;
        const strategy_sample *s = &e->ps[i].last;
        running++;
        only = s;
        req += e->ps[i].requested;
        tot.allocated_bytes += s->allocated_bytes;
        tot.reserved_bytes += s->reserved_bytes;
        tot.free_bytes += s->free_bytes;
        if (s->largest_free_bytes > tot.largest_free_bytes)
            tot.largest_free_bytes = s->largest_free_bytes;
    }
    tot.num_device_allocs = allocs;
    tot.num_device_frees = frees;
    if (running == 1) {
        /* one process: its own maxima are the device's; several: a sum of
         * maxima is no maximum of sums, the samples decide */
        tot.peak_reserved_bytes = only->peak_reserved_bytes;
        tot.peak_allocated_bytes = only->peak_allocated_bytes;
    }
    *out = tot;
    *requested = req;
}

/* The device totals after an event of process p (several processes, or a timeline);
 * row: add the timeline's row (the start state has none: rows are events). */
static void measure_device(engine *e, uint64_t t, bool row)
{
    sim_run *run = e->run;
    uint64_t ev = run->events;
    strategy_sample tot;
    uint64_t req;
    device_totals(e, &tot, &req);
    metrics_update(&run->total, req, &tot, device_used_bytes(run->dev), ev, t);
    if (run->has_timeline && row) {
        double frag = sim_fragmentation(tot.free_bytes, tot.largest_free_bytes);
        timeline_row r = {.t = t,
                          .event = ev,
                          .requested = req,
                          .allocated = tot.allocated_bytes,
                          .reserved = tot.reserved_bytes,
                          .fragmentation = frag};
        timeline_add(&run->tl, &r);
    }
}

/* The observer's tick for the event just measured (engine.h: engine_observer). */
static __attribute__((noinline)) void observe(engine *e, uint32_t p, uint64_t t, const sim_event *ev,
                                              uint64_t deferred_size)
{
    const sim_run *run = e->run;
    const proc_state *ps = &e->ps[p];
    engine_tick *k = &e->tick;
    k->ev = ev;
    k->deferred_size = ev ? 0 : deferred_size;
    k->source = run->procs[p].source;
    k->process = p;
    k->event = run->events;
    k->t = t;
    k->outcome = e->outcome;
    k->handle = e->handle;
    k->freed = e->freed;
    k->proc = ps->last;
    k->proc_requested = ps->requested;
    k->proc_device_bytes = ps->last.reserved_bytes + e->context_bytes;
    k->device_bytes = device_used_bytes(run->dev);
    if (run->n_procs == 1) {
        k->total = ps->last; /* what device_totals gives for one running process */
        k->requested = ps->requested;
    } else {
        device_totals(e, &k->total, &k->requested);
    }
    k->fragmentation = sim_fragmentation(k->total.free_bytes, k->total.largest_free_bytes);
    for (uint32_t i = 0; i < e->n_observers; i++)
        e->cfg->observers[i].fn(e->cfg->observers[i].ctx, k);
    e->outcome = ENGINE_DONE;
    e->handle = STRATEGY_HANDLE_NONE;
    e->freed = STRATEGY_HANDLE_NONE;
}

/* Re-sample process p and the device totals after an event (ev: the trace event,
 * or NULL for a deferred free of deferred_size bytes), then tell the observer. */
static inline __attribute__((always_inline)) void measure(engine *e, uint32_t p, uint64_t t, const sim_event *ev,
                                                          uint64_t deferred_size)
{
    sim_run *run = e->run;
    proc_state *ps = &e->ps[p];
    if (!ps->stopped) {
        sim_run_proc *rp = &run->procs[p];
        run->ops->sample(rp->s, &ps->last);
        metrics_update(&rp->m, ps->requested, &ps->last, ps->last.reserved_bytes + e->context_bytes, run->events, t);
    }
    if (run->n_procs != 1 || run->has_timeline)
        measure_device(e, t, true); /* else the device totals are the process's (copied at the end) */
    if (e->n_observers)
        observe(e, p, t, ev, deferred_size);
}

/* ---------------------------------------------------------------- processes */

static sim_status proc_lookup(engine *e, uint32_t src, const char *name, uint32_t *out);

/* The process an event belongs to; O(1) for the usual case of one process per trace. */
static inline sim_status proc_for(engine *e, uint32_t src, const char *name, uint32_t *out)
{
    source_state *ss = &e->src[src];
    if (name == NULL && ss->default_proc != UINT32_MAX) {
        *out = ss->default_proc;
        return SIM_OK;
    }
    if (name != NULL && ss->last_named != UINT32_MAX && strcmp(e->run->procs[ss->last_named].name, name) == 0) {
        *out = ss->last_named;
        return SIM_OK;
    }
    sim_status st = proc_lookup(e, src, name, out);
    if (st == SIM_OK) {
        if (name == NULL)
            ss->default_proc = *out;
        else
            ss->last_named = *out;
    }
    return st;
}

/* The source starts from a recorded state: the strategy takes it, and the ids of
 * the blocks live in it become live allocations of the process. */
static sim_status proc_seed(engine *e, uint32_t src, uint32_t p, const sim_seed *seed)
{
    sim_run *run = e->run;
    const char *path = e->sources[src].path;
    if (run->ops->seed == NULL)
        return sim_error_set(e->err, SIM_EUSAGE, path, 0, 0, "the %s strategy cannot start from a recorded state",
                             run->ops->name);
    strategy_handle *h = malloc((seed->n_blocks ? seed->n_blocks : 1) * sizeof *h);
    if (h == NULL)
        return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    sim_status st = run->ops->seed(run->procs[p].s, seed, h, e->err);
    if (st == SIM_OOM)
        st = sim_error_set(e->err, SIM_EUSAGE, path, 0, 0, "the recorded start state (%llu B reserved) does not fit "
                           "on the device", (unsigned long long)sim_seed_reserved(seed));
    proc_state *ps = &e->ps[p];
    for (uint32_t i = 0; st == SIM_OK && i < seed->n_blocks; i++) {
        const sim_seed_block *b = &seed->blocks[i];
        if (b->state != SIM_SEED_USED)
            continue;
        bool found = false;
        idmap_entry *ent = idmap_find_or_insert(&ps->ids, b->id, &found);
        if (ent == NULL)
            st = sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        else if (found)
            st = sim_error_set(e->err, SIM_ETRACE, path, 0, 0, "the start state holds id %llu twice",
                               (unsigned long long)b->id);
        else {
            ent->size = b->requested_bytes;
            ent->handle = h[i];
            ps->requested += b->requested_bytes;
        }
    }
    free(h);
    return st;
}

/* A source that starts from a recorded state has its process from the start, and
 * the state is measured before the first event (event 0, no timeline row): a recording with no event
 * after its state (a snapshot taken at an OOM, or with history off) replays to that
 * state, peak = final = what it holds. Observers see events only, so none is called. */
static sim_status seed_sources(engine *e)
{
    sim_run *run = e->run;
    for (uint32_t i = 0; i < run->n_sources; i++) {
        if (e->sources[i].seed == NULL)
            continue;
        uint32_t p = 0;
        sim_status st = proc_for(e, i, NULL, &p);
        if (st != SIM_OK)
            return st;
        proc_state *ps = &e->ps[p];
        sim_run_proc *rp = &run->procs[p];
        uint64_t t = e->src[i].has_head ? e->src[i].head.t : 0;
        run->ops->sample(rp->s, &ps->last);
        metrics_update(&rp->m, ps->requested, &ps->last, ps->last.reserved_bytes + e->context_bytes, 0, t);
        if (run->n_procs != 1 || run->has_timeline)
            measure_device(e, t, false);
    }
    return SIM_OK;
}

static sim_status proc_lookup(engine *e, uint32_t src, const char *name, uint32_t *out)
{
    sim_run *run = e->run;
    const char *display = name ? name : (e->sources[src].name ? e->sources[src].name : e->sources[src].path);
    for (uint32_t i = 0; i < run->n_procs; i++) {
        if (run->procs[i].source != src)
            continue;
        if (strcmp(run->procs[i].name, display) == 0) {
            *out = i;
            return SIM_OK;
        }
    }
    if (!SIM_GROW(run->procs, run->n_procs + 1, e->cap_procs) || !SIM_GROW(e->ps, run->n_procs + 1, e->cap_ps))
        return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    uint32_t p = run->n_procs;
    sim_run_proc *rp = &run->procs[p];
    proc_state *ps = &e->ps[p];
    memset(rp, 0, sizeof *rp);
    memset(ps, 0, sizeof *ps);
    snprintf(rp->name, sizeof rp->name, "%s", display);
    rp->source = src;
    rp->m.completed = true;
    if (!idmap_init(&ps->ids))
        return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    ps->dev_proc = device_proc_start(run->dev);
    if (ps->dev_proc == UINT32_MAX) {
        idmap_release(&ps->ids);
        return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    strategy_config sc = {.dev = run->dev, .proc = ps->dev_proc, .opts = e->cfg->opts, .n_opts = e->cfg->n_opts,
                          .app_data = e->cfg->app_data, .memo = e->cfg->memo};
    sim_status st = run->ops->create(&sc, &rp->s, e->err);
    if (st != SIM_OK) {
        idmap_release(&ps->ids);
        return st;
    }
    if (e->lt != NULL) {
        strategy_lifetimes l = lifetimes_get(e->lt, src, display);
        st = run->ops->plan(rp->s, &l, e->err);
        if (st != SIM_OK) {
            run->ops->destroy(rp->s);
            idmap_release(&ps->ids);
            return st;
        }
    }
    run->n_procs++;
    *out = p;
    if (name == NULL && e->sources[src].seed != NULL)
        return proc_seed(e, src, p, e->sources[src].seed);
    return SIM_OK;
}

static void proc_stop(engine *e, uint32_t p)
{
    proc_state *ps = &e->ps[p];
    ps->stopped = true;
    e->run->procs[p].m.completed = false;
    /* the program exits: the driver takes back its context and memory */
    device_proc_exit(e->run->dev, ps->dev_proc);
}

/* ---------------------------------------------------------------- events */

static sim_status paranoid_check(engine *e, uint32_t p, const sim_event *ev, const char *path)
{
    sim_run *run = e->run;
    if (e->ps[p].stopped)
        return SIM_OK;
    sim_report r;
    sim_report_init(&r);
    run->ops->check(run->procs[p].s, &r);
    strategy_sample s;
    run->ops->sample(run->procs[p].s, &s);
    sim_report_insist(&r, device_proc_held(run->dev, e->ps[p].dev_proc) == s.reserved_bytes,
                      "engine: the device holds %llu bytes for the process, the strategy reports %llu reserved",
                      (unsigned long long)device_proc_held(run->dev, e->ps[p].dev_proc),
                      (unsigned long long)s.reserved_bytes);
    sim_report_insist(&r, s.free_bytes <= s.reserved_bytes && s.largest_free_bytes <= s.free_bytes,
                      "engine: free %llu / largest free %llu inconsistent with reserved %llu",
                      (unsigned long long)s.free_bytes, (unsigned long long)s.largest_free_bytes,
                      (unsigned long long)s.reserved_bytes);
    if (r.violations == 0)
        return SIM_OK;
    return sim_error_set(e->err, SIM_EINTERNAL, path, ev ? ev->line : 0, ev ? ev->index : 0,
                         "--paranoid: %s broke %llu invariant(s) after this event:\n%s", run->ops->name,
                         (unsigned long long)r.violations, r.text);
}

static inline void demand_note(proc_state *ps)
{
    uint64_t d = ps->requested + ps->dropped_live;
    if (d > ps->demand_peak)
        ps->demand_peak = d;
}

/* After the run: every process's first OOM judged on the demand its whole trace
 * reached (the events after an OOM that ended it are still counted, as sizes only). */
static void oom_finish(engine *e)
{
    sim_run *run = e->run;
    for (uint32_t p = 0; p < run->n_procs; p++) {
        sim_oom_record *rec = &run->procs[p].m.first_oom;
        if (!rec->happened)
            continue;
        if (e->ps[p].demand_peak > rec->peak_demand_bytes)
            rec->peak_demand_bytes = e->ps[p].demand_peak;
        oom_record_judge(rec);
        if (run->total.first_oom.happened && run->total.first_oom.process == p) {
            run->total.first_oom.peak_demand_bytes = rec->peak_demand_bytes;
            run->total.first_oom.cause = rec->cause;
        }
    }
}

/* An event of a process an OOM ended: no allocator any more, only the sizes, for the
 * program's demand. The trace's own mistakes (an unknown id) are not judged here. */
static sim_status demand_after_stop(engine *e, uint32_t p, const sim_event *ev)
{
    proc_state *ps = &e->ps[p];
    if (ev->op == SIM_OP_ALLOC) {
        bool found = false;
        idmap_entry *ent = idmap_find_or_insert(&ps->ids, ev->id, &found);
        if (ent == NULL)
            return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        if (found)
            return SIM_OK;
        ent->size = ev->size;
        ent->handle = STRATEGY_HANDLE_NONE;
        ent->flags |= IDMAP_DROPPED;
        ps->dropped_live += ev->size;
        demand_note(ps);
    } else if (ev->op == SIM_OP_FREE) {
        idmap_entry *ent = idmap_find(&ps->ids, ev->id);
        if (ent == NULL)
            return SIM_OK;
        if (ent->flags & IDMAP_DROPPED)
            ps->dropped_live -= ent->size;
        else
            ps->requested -= ent->size;
        idmap_remove(&ps->ids, ent);
    }
    return SIM_OK;
}

static sim_status do_alloc(engine *e, uint32_t src, uint32_t p, const sim_event *ev)
{
    sim_run *run = e->run;
    proc_state *ps = &e->ps[p];
    const char *path = e->sources[src].path;
    bool found = false;
    idmap_entry *ent = idmap_find_or_insert(&ps->ids, ev->id, &found);
    if (ent == NULL)
        return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (found)
        return sim_error_set(e->err, SIM_ETRACE, path, ev->line, ev->line ? 0 : ev->index,
                             "alloc of id %llu that is still allocated (free it first)",
                             (unsigned long long)ev->id);
    ent->size = ev->size;
    strategy_handle h = STRATEGY_HANDLE_NONE;
    strategy_oom oom; /* filled by the strategy on SIM_OOM only: not cleared per event */
    sim_status st = run->ops->alloc(run->procs[p].s, ev->size, ev->stream, &h, &oom);
    if (st == SIM_OK) {
        ent->handle = h;
        ps->requested += ev->size;
        e->handle = h;
        if (ps->oomed)
            demand_note(ps);
        return SIM_OK;
    }
    if (st != SIM_OOM) {
        idmap_remove(&ps->ids, ent);
        return sim_error_set(e->err, st, path, ev->line, ev->index, "%s failed: %s", run->ops->name,
                             sim_strerror(st));
    }
    sim_oom_record rec = {
        .happened = true, .source = src, .process = p, .event = ev->index, .line = ev->line,
        .t = ev->t, .id = ev->id, .size = ev->size, .info = oom,
    };
    oom_record_classify(&rec, run->dev, e->ps[p].dev_proc, e->context_bytes, e->ps[p].requested, ev->tag);
    sim_metrics *pm = &run->procs[p].m;
    pm->ooms++;
    if (!pm->first_oom.happened) {
        oom_record_describe(&rec, run->ops, run->procs[p].s, &e->ps[p].ids);
        pm->first_oom = rec;
    }
    run->total.ooms++;
    if (!run->total.first_oom.happened)
        run->total.first_oom = rec;
    /* kept as dropped in both modes: its free tells the program's demand (oom_finish) */
    ent->flags |= IDMAP_DROPPED;
    ent->handle = STRATEGY_HANDLE_NONE;
    ps->oomed = true;
    ps->dropped_live += ev->size;
    demand_note(ps);
    if (e->cfg->end_at_first_oom) {
        e->stop_at = run->events; /* the loop ends once this event is measured */
        pm->completed = false;
        run->total.completed = false;
    }
    if (e->cfg->on_oom_skip) {
        e->outcome = ENGINE_OOM_DROPPED;
    } else {
        ps->stop_after_event = true;
        e->outcome = ENGINE_OOM_ENDED;
    }
    return SIM_OK;
}

static sim_status do_free(engine *e, uint32_t src, uint32_t p, const sim_event *ev)
{
    sim_run *run = e->run;
    proc_state *ps = &e->ps[p];
    idmap_entry *ent = idmap_find(&ps->ids, ev->id);
    if (ent == NULL)
        return sim_error_set(e->err, SIM_ETRACE, e->sources[src].path, ev->line, ev->line ? 0 : ev->index,
                             "free of id %llu that is not allocated (never allocated, or already freed)",
                             (unsigned long long)ev->id);
    if (ent->flags & IDMAP_DROPPED) {
        ps->dropped_live -= ent->size;
        idmap_remove(&ps->ids, ent);
        e->outcome = ENGINE_IGNORED;
        return SIM_OK;
    }
    bool deferred = ev->ready_t > ev->t;
    strategy_handle h = ent->handle;
    uint64_t size = ent->size;
    idmap_remove(&ps->ids, ent);
    run->ops->free(run->procs[p].s, h, deferred);
    if (deferred && ev->has_ready_stream && run->ops->free_wait != NULL)
        run->ops->free_wait(run->procs[p].s, h, ev->ready_stream);
    e->freed = h;
    if (!deferred) {
        ps->requested -= size;
        return SIM_OK;
    }
    pq_entry d = {.t = ev->ready_t, .size = size, .proc = p, .handle = h};
    if (!pqueue_push(&e->deferred, d))
        return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    return SIM_OK;
}

/* A pool event: check the protocol PyTorch's allocator asserts (sim/pool_protocol.h),
 * then tell a strategy with private pools; one without them replays the allocations
 * in its default pool (design.md §3 "Pools"). A pool's first graph_replay is a mark;
 * later ones (a server replays its graphs thousands of times) would crowd out the
 * trace's own marks. */
/* A new mark at the end of run->marks (below SIM_RUN_MAX_MARKS), growing the array;
 * NULL when out of memory. */
static sim_run_mark *run_mark_push(engine *e, sim_run *run)
{
    if (run->n_marks == e->cap_marks) {
        uint32_t cap = e->cap_marks ? 2 * e->cap_marks : 16;
        sim_run_mark *m = realloc(run->marks, (size_t)cap * sizeof *m);
        if (m == NULL)
            return NULL;
        run->marks = m;
        e->cap_marks = cap;
    }
    sim_run_mark *mk = &run->marks[run->n_marks++];
    memset(mk, 0, sizeof *mk);
    return mk;
}

static sim_status do_pool(engine *e, uint32_t src, uint32_t p, const sim_event *ev)
{
    sim_run *run = e->run;
    char msg[256];
    pool_step step;
    sim_status st = pool_protocol_apply(&e->ps[p].pools, ev, &step, msg, sizeof msg);
    if (st == SIM_ENOMEM)
        return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (st != SIM_OK)
        return sim_error_set(e->err, st, e->sources[src].path, ev->line, ev->line ? 0 : ev->index, "%s", msg);
    strategy *s = run->procs[p].s;
    if (ev->op == SIM_OP_POOL_BEGIN && run->ops->pool_begin != NULL) {
        strategy_pool_scope sc = {.pool = ev->pool, .stream = ev->stream,
                                  .all_streams = (ev->pool_flags & SIM_POOL_ALL_STREAMS) != 0,
                                  .capture = (ev->pool_flags & SIM_POOL_CAPTURE) != 0,
                                  .use_on_oom = (step.options & SIM_POOL_USE_ON_OOM) != 0,
                                  .no_split = (step.options & SIM_POOL_NO_SPLIT) != 0};
        run->ops->pool_begin(s, &sc);
    } else if (ev->op == SIM_OP_POOL_END && run->ops->pool_end != NULL) {
        run->ops->pool_end(s, ev->pool);
    } else if (ev->op == SIM_OP_POOL_RELEASE && run->ops->pool_release != NULL) {
        run->ops->pool_release(s, ev->pool);
    } else if (ev->op == SIM_OP_GRAPH_REPLAY && step.first_replay && run->n_marks < SIM_RUN_MAX_MARKS) {
        sim_run_mark *mk = run_mark_push(e, run);
        if (mk == NULL)
            return sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        mk->t = ev->t;
        mk->event = run->events;
        if (ev->name != NULL)
            snprintf(mk->name, sizeof mk->name, "%s", ev->name);
        else
            snprintf(mk->name, sizeof mk->name, "graph replay (pool %llu)", (unsigned long long)ev->pool);
    }
    return SIM_OK;
}

static sim_status do_event(engine *e, uint32_t src, const sim_event *ev)
{
    sim_run *run = e->run;
    e->src[src].counts[(unsigned)ev->op % SIM_N_OPS]++;
    uint32_t p = 0;
    sim_status st = proc_for(e, src, ev->proc, &p);
    if (st != SIM_OK)
        return st;
    run->events++;
    if (e->ps[p].stopped) /* the program already died of an OOM: the rest never happens */
        return demand_after_stop(e, p, ev);
    switch (ev->op) {
    case SIM_OP_ALLOC:
        st = do_alloc(e, src, p, ev);
        break;
    case SIM_OP_FREE:
        st = do_free(e, src, p, ev);
        break;
    case SIM_OP_EMPTY_CACHE:
        run->ops->empty_cache(run->procs[p].s);
        break;
    case SIM_OP_MARK:
        if (run->n_marks < SIM_RUN_MAX_MARKS) {
            sim_run_mark *mk = run_mark_push(e, run);
            if (mk == NULL) {
                st = sim_error_set(e->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                break;
            }
            mk->t = ev->t;
            mk->event = run->events;
            snprintf(mk->name, sizeof mk->name, "%s", ev->name ? ev->name : "");
        }
        break;
    case SIM_OP_POOL_BEGIN:
    case SIM_OP_POOL_END:
    case SIM_OP_POOL_RELEASE:
    case SIM_OP_GRAPH_REPLAY:
        st = do_pool(e, src, p, ev);
        break;
    }
    if (st != SIM_OK)
        return st;
    measure(e, p, ev->t, ev, 0); /* after an OOM this records what the process held then */
    if (e->paranoid && (st = paranoid_check(e, p, ev, e->sources[src].path)) != SIM_OK)
        return st;
    if (e->ps[p].stop_after_event)
        proc_stop(e, p);
    return SIM_OK;
}

static sim_status do_deferred(engine *e, const pq_entry *d)
{
    sim_run *run = e->run;
    proc_state *ps = &e->ps[d->proc];
    if (ps->stopped) {
        ps->requested -= d->size; /* dropped with its process; the demand counts it freed */
        return SIM_OK;
    }
    run->events++;
    run->ops->free_ready(run->procs[d->proc].s, d->handle);
    e->freed = d->handle;
    ps->requested -= d->size;
    measure(e, d->proc, d->t, NULL, d->size);
    if (e->paranoid)
        return paranoid_check(e, d->proc, NULL, run->sources[run->procs[d->proc].source].path);
    return SIM_OK;
}

static sim_status pull(engine *e, uint32_t i)
{
    source_state *s = &e->src[i];
    sim_status st = e->sources[i].next(e->sources[i].ctx, &s->head, e->err);
    if (st == SIM_END) {
        s->has_head = false;
        return SIM_OK;
    }
    if (st != SIM_OK)
        return st;
    s->has_head = true;
    return SIM_OK;
}

/* ---------------------------------------------------------------- run */

static void sources_counts(engine *e)
{
    for (uint32_t i = 0; i < e->run->n_sources; i++) {
        sim_run_source *rs = &e->run->sources[i];
        const uint64_t *c = e->src[i].counts;
        rs->allocs = c[SIM_OP_ALLOC];
        rs->frees = c[SIM_OP_FREE];
        rs->empty_caches = c[SIM_OP_EMPTY_CACHE];
        rs->marks = c[SIM_OP_MARK];
        rs->pool_events = c[SIM_OP_POOL_BEGIN] + c[SIM_OP_POOL_END] + c[SIM_OP_POOL_RELEASE] + c[SIM_OP_GRAPH_REPLAY];
        rs->events = 0;
        for (unsigned k = 0; k < SIM_N_OPS; k++)
            rs->events += c[k];
    }
}

static sim_status validate_options(const engine_config *cfg, sim_error *err)
{
    /* create one instance on a scratch device so bad options fail before any work */
    device *scratch = device_new(&cfg->device);
    if (scratch == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    strategy_config sc = {.dev = scratch, .proc = device_proc_start(scratch), .opts = cfg->opts,
                          .n_opts = cfg->n_opts, .app_data = cfg->app_data, .memo = cfg->memo};
    strategy *s = NULL;
    sim_status st = cfg->ops->create(&sc, &s, err);
    if (st == SIM_OK)
        cfg->ops->destroy(s);
    device_free(scratch);
    return st;
}

static sim_status run_sources(const engine_config *cfg, const sim_event_source *sources, uint32_t n_sources,
                              const lifetimes *lt, sim_run **out, sim_error *err)
{
    *out = NULL;
    sim_status st = validate_options(cfg, err);
    if (st != SIM_OK)
        return st;
    engine e = {.cfg = cfg, .sources = sources, .err = err, .context_bytes = cfg->device.context_bytes,
                .paranoid = cfg->paranoid, .n_observers = cfg->n_observers < ENGINE_MAX_OBSERVERS ? cfg->n_observers : ENGINE_MAX_OBSERVERS, .handle = STRATEGY_HANDLE_NONE,
                .freed = STRATEGY_HANDLE_NONE, .lt = lt};
    sim_run *run = calloc(1, sizeof *run);
    if (run == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    e.run = run;
    e.tick.run = run;
    run->ops = cfg->ops;
    run->total.completed = true;
    run->dev = device_new(&cfg->device);
    run->n_sources = n_sources;
    run->sources = calloc(n_sources ? n_sources : 1, sizeof *run->sources);
    e.src = calloc(n_sources ? n_sources : 1, sizeof *e.src);
    pqueue_init(&e.deferred);
    if (run->dev == NULL || run->sources == NULL || e.src == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto fail;
    }
    if (cfg->timeline_rows) {
        if (!timeline_init(&run->tl, cfg->timeline_rows)) {
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto fail;
        }
        run->has_timeline = true;
    }
    for (uint32_t i = 0; i < n_sources; i++) {
        snprintf(run->sources[i].path, sizeof run->sources[i].path, "%s", sources[i].path);
        snprintf(run->sources[i].name, sizeof run->sources[i].name, "%s", sources[i].name ? sources[i].name : "");
        e.src[i].default_proc = UINT32_MAX;
        e.src[i].last_named = UINT32_MAX;
        if ((st = pull(&e, i)) != SIM_OK)
            goto fail;
    }
    if ((st = seed_sources(&e)) != SIM_OK)
        goto fail;
    e.stop_at = cfg->stop_after_event ? cfg->stop_after_event : UINT64_MAX;
    for (;;) {
        /* the earliest trace head; ties go to the lower trace index */
        int32_t best = -1;
        if (n_sources == 1)
            best = e.src[0].has_head ? 0 : -1;
        else
            for (uint32_t i = 0; i < n_sources; i++)
                if (e.src[i].has_head && (best < 0 || e.src[i].head.t < e.src[(uint32_t)best].head.t))
                    best = (int32_t)i;
        const pq_entry *d = pqueue_top(&e.deferred);
        if (d != NULL && (best < 0 || d->t <= e.src[(uint32_t)best].head.t)) {
            pq_entry dd = *d;
            pqueue_pop(&e.deferred);
            st = do_deferred(&e, &dd);
        } else if (best >= 0) {
            uint32_t b = (uint32_t)best;
            st = do_event(&e, b, &e.src[b].head);
            if (st == SIM_OK)
                st = pull(&e, b);
        } else {
            break;
        }
        if (st != SIM_OK)
            goto fail;
        if (run->events >= e.stop_at)
            break;
        if ((run->events & 0xFFFF) == 0 && cfg->progress)
            cfg->progress(cfg->progress_ctx, run->events);
    }
    sources_counts(&e);
    if (run->n_procs == 1 && !run->has_timeline) {
        /* the device totals were not tracked separately for one process */
        uint64_t ooms = run->total.ooms;
        sim_oom_record first = run->total.first_oom;
        run->total = run->procs[0].m;
        run->total.ooms = ooms;
        run->total.first_oom = first;
    }
    oom_finish(&e);
    /* totals: completed only if every process completed; final = what each held at its end */
    run->total.final_reserved_bytes = 0;
    run->total.final_allocated_bytes = 0;
    run->total.final_requested_bytes = 0;
    for (uint32_t i = 0; i < run->n_procs; i++) {
        const sim_metrics *m = &run->procs[i].m;
        run->total.completed = run->total.completed && m->completed;
        run->total.final_reserved_bytes += m->final_reserved_bytes;
        run->total.final_allocated_bytes += m->final_allocated_bytes;
        run->total.final_requested_bytes += m->final_requested_bytes;
    }
    if (run->has_timeline)
        timeline_finish(&run->tl);
    for (uint32_t i = 0; i < run->n_procs; i++) {
        idmap_release(&e.ps[i].ids);
        pool_protocol_free(e.ps[i].pools);
    }
    free(e.ps);
    free(e.src);
    pqueue_release(&e.deferred);
    *out = run;
    return SIM_OK;
fail:
    for (uint32_t i = 0; i < run->n_procs; i++) {
        idmap_release(&e.ps[i].ids);
        pool_protocol_free(e.ps[i].pools);
    }
    free(e.ps);
    free(e.src);
    pqueue_release(&e.deferred);
    sim_run_free(run);
    return st;
}

/* A strategy that plans offline (ops->plan) sees every process's whole sequence
 * first: the sources are read once into memory (evbuf: 40 bytes per event plus
 * the interned strings), their per-process sequences taken (lifetimes.h: 4 bytes
 * per alloc or free and 8 per buffer), and the replay reads the spooled copy. */
engine_config engine_config_plain(const engine_config *cfg)
{
    engine_config c = *cfg;
    c.timeline_rows = 0;
    c.paranoid = false;
    c.n_observers = 0;
    c.progress = NULL;
    c.progress_ctx = NULL;
    return c;
}

sim_status engine_config_observe(engine_config *cfg, engine_observer fn, void *ctx, sim_error *err)
{
    if (cfg->n_observers >= ENGINE_MAX_OBSERVERS)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "too many observers of one run (at most %u)",
                             ENGINE_MAX_OBSERVERS);
    cfg->observers[cfg->n_observers++] = (engine_watch){fn, ctx};
    return SIM_OK;
}

sim_status engine_run(const engine_config *cfg, const sim_event_source *sources, uint32_t n_sources,
                      sim_run **out, sim_error *err)
{
    if (cfg->ops->plan == NULL)
        return run_sources(cfg, sources, n_sources, NULL, out, err);
    *out = NULL;
    sim_status st = validate_options(cfg, err);
    if (st != SIM_OK)
        return st;
    uint32_t n = n_sources ? n_sources : 1;
    evbuf **bufs = calloc(n, sizeof *bufs);
    evbuf_cursor *cur = calloc(n, sizeof *cur);
    sim_event_source *spooled = calloc(n, sizeof *spooled);
    lifetimes *lt = lifetimes_new();
    st = SIM_OK;
    if (bufs == NULL || cur == NULL || spooled == NULL || lt == NULL)
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (uint32_t i = 0; st == SIM_OK && i < n_sources; i++) {
        bufs[i] = evbuf_new(sources[i].path, sources[i].name);
        if (bufs[i] == NULL) {
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            break;
        }
        if ((st = evbuf_fill(bufs[i], &sources[i], err)) != SIM_OK)
            break;
        const char *name = sources[i].name ? sources[i].name : sources[i].path;
        if ((st = lifetimes_add(lt, i, bufs[i], name, err)) != SIM_OK)
            break;
        spooled[i] = evbuf_source(bufs[i], &cur[i]);
        spooled[i].seed = sources[i].seed;
    }
    if (st == SIM_OK)
        st = run_sources(cfg, spooled, n_sources, lt, out, err);
    for (uint32_t i = 0; bufs != NULL && i < n_sources; i++)
        evbuf_free(bufs[i]);
    free(bufs);
    free(cur);
    free(spooled);
    lifetimes_free(lt);
    return st;
}

bool sim_run_capacity_blind(const sim_run *run)
{
    if (run->ops->capacity_blind == NULL || !run->total.completed || device_failures(run->dev) != 0)
        return false;
    for (uint32_t p = 0; p < run->n_procs; p++)
        if (run->procs[p].s == NULL || !run->ops->capacity_blind(run->procs[p].s))
            return false;
    return true;
}

void sim_run_free(sim_run *run)
{
    if (run == NULL)
        return;
    for (uint32_t i = 0; i < run->n_procs; i++)
        run->ops->destroy(run->procs[i].s);
    free(run->procs);
    free(run->sources);
    free(run->marks);
    if (run->has_timeline)
        timeline_release(&run->tl);
    device_free(run->dev);
    free(run);
}
