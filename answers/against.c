/* Predicted vs recorded: the replay and the event-by-event comparison. */
#include "against.h"

#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "sim/idmap.h"

const char *against_default_strategy(const input_format *f)
{
    return f != NULL ? f->against_strategy : NULL;
}

bool against_has_recorded(const trace_input *in)
{
    const input_recorded *rec = input_get_recorded(in);
    return rec != NULL &&
           (rec->has_allocated || rec->has_reserved || rec->has_peak_allocated || rec->has_peak_reserved);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y);
}

/* The recorded curve alone (its least, most and last), where it cannot be compared. */
static void recorded_range(against_column *c, uint64_t n, const uint8_t *has, const uint64_t *rec)
{
    bool first = true;
    for (uint64_t k = 0; k < n; k++) {
        if (!has[k])
            continue;
        if (first || rec[k] < c->rec_min)
            c->rec_min = rec[k];
        if (first || rec[k] > c->rec_max)
            c->rec_max = rec[k];
        first = false;
        c->final_rec = rec[k];
    }
}

typedef enum against_series { AS_REQUESTED, AS_ALLOCATED, AS_RESERVED } against_series;

static uint64_t series_of(const timeline_row *row, against_series s)
{
    return s == AS_REQUESTED ? row->requested : s == AS_ALLOCATED ? row->allocated : row->reserved;
}

static void compare(against_column *c, const timeline *tl, const uint64_t *row_of, uint64_t n, const uint8_t *has,
                    const uint64_t *rec, against_series s)
{
    if (c->start_unknown) {
        recorded_range(c, n, has, rec);
        return;
    }
    for (uint64_t k = 0; k < n; k++) {
        if (!has[k] || row_of[k] >= tl->n)
            continue;
        const timeline_row *row = &tl->rows[row_of[k]];
        uint64_t pred = series_of(row, s) + c->offset;
        int64_t diff = (int64_t)(pred - rec[k]);
        uint64_t mag = diff < 0 ? (uint64_t)(-(diff + 1)) + 1 : (uint64_t)diff;
        if (c->points == 0 || mag > c->max_abs) {
            c->max_abs = mag;
            c->max_diff = diff;
            c->max_event = k + 1;
            c->max_pred = pred;
            c->max_rec = rec[k];
        }
        c->points++;
        c->final_pred = pred;
        c->final_rec = rec[k];
    }
}

/* Where the replay put each allocation: the strategy's segment number and the
 * offset in it, by event index (UINT32_MAX: not placed, or not locatable). */
typedef struct placed {
    const strategy_ops *ops;
    uint32_t *seg;
    uint64_t *off;
    uint64_t *pool;  /* the block's private pool (strategy_block.pool_id) */
    uint64_t n;
} placed;

/* The engine's observer: each alloc that took effect, located. */
static void on_tick(void *ctx, const engine_tick *t)
{
    placed *p = ctx;
    if (t->ev == NULL || t->ev->op != SIM_OP_ALLOC || t->handle == STRATEGY_HANDLE_NONE)
        return;
    strategy_block b;
    uint64_t k = t->ev->index - 1;
    if (k < p->n && p->ops->locate(t->run->procs[t->process].s, t->handle, &b)) {
        p->seg[k] = b.region;
        p->off[k] = b.addr - b.region_addr;
        p->pool[k] = b.pool_id;
    }
}

static against_event event_at(const trace_input *in, const input_recorded *rec, const placed *p, uint64_t k)
{
    const sim_event *e = input_event_at(in, k);
    against_event a = {.event = k + 1, .op = e->op, .size = e->size, .id = e->id, .stream = e->stream,
                       .deferred = e->ready_t > e->t, .name = e->op == SIM_OP_MARK ? e->name : NULL,
                       .rec_seg = UINT32_MAX, .pred_seg = UINT32_MAX};
    if (e->op == SIM_OP_ALLOC) {
        a.rec_seg = rec->placement_segment[k];
        a.rec_off = rec->placement_offset[k];
        a.pred_seg = p->seg[k];
        a.pred_off = p->off[k];
        a.rec_pool = rec->placement_pool ? rec->placement_pool[k] : 0;
        a.pred_pool = p->seg[k] != UINT32_MAX ? p->pool[k] : 0;
    }
    return a;
}

static void placement_compare(against_placement *pl, const placed *p, const trace_input *in,
                              const input_recorded *rec, uint64_t first)
{
    for (uint64_t k = first; k < p->n; k++) {
        if (rec->placement_segment[k] == UINT32_MAX)
            continue;
        pl->compared++;
        pl->pooled += rec->placement_pool != NULL && rec->placement_pool[k] != 0;
        /* in the same segment at the same offset, and of the same private pool */
        uint64_t pool = rec->placement_pool ? rec->placement_pool[k] : 0;
        if (p->seg[k] == rec->placement_segment[k] && p->off[k] == rec->placement_offset[k] && p->pool[k] == pool) {
            pl->matched++;
        } else if (!pl->has_mismatch) {
            pl->has_mismatch = true;
            pl->first = event_at(in, rec, p, k);
            uint64_t from = k >= first + AGAINST_CONTEXT ? k - AGAINST_CONTEXT : first;
            for (uint64_t j = from; j < k; j++)
                pl->before[pl->n_before++] = event_at(in, rec, p, j);
        }
    }
}

typedef struct done_at {
    uint64_t t, size;
} done_at;

static int done_cmp(const void *a, const void *b)
{
    const done_at *x = a, *y = b;
    return x->t < y->t ? -1 : (x->t > y->t);
}

/* The recording's live requested bytes after each event, from its own alloc and
 * free sizes: an alloc adds its size, a free takes it off, a deferred one at its
 * ready_t (before the events at or after it, as the engine does). false on ENOMEM
 * or a free of an id the trace never allocated. */
static bool trace_requested(const trace_input *in, uint64_t n, uint64_t *out, uint64_t *peak)
{
    idmap ids;
    done_at *due = malloc((n ? n : 1) * sizeof *due);
    if (due == NULL || !idmap_init(&ids)) {
        free(due);
        return false;
    }
    /* first pass: each free's size (kept in out[k]) and the deferred ones by ready_t */
    bool ok = true;
    uint64_t n_due = 0;
    for (uint64_t k = 0; k < n && ok; k++) {
        const sim_event *e = input_event_at(in, k);
        out[k] = 0;
        if (e->op == SIM_OP_ALLOC) {
            idmap_entry *x = idmap_insert(&ids, e->id);
            if ((ok = x != NULL))
                x->size = e->size;
        } else if (e->op == SIM_OP_FREE) {
            idmap_entry *x = idmap_find(&ids, e->id);
            if ((ok = x != NULL)) {
                out[k] = x->size;
                if (e->ready_t > e->t)
                    due[n_due++] = (done_at){e->ready_t, x->size};
                idmap_remove(&ids, x);
            }
        }
    }
    idmap_release(&ids);
    if (ok) {
        qsort(due, n_due, sizeof *due, done_cmp);
        uint64_t cur = 0, dp = 0;
        *peak = 0;
        for (uint64_t k = 0; k < n; k++) {
            const sim_event *e = input_event_at(in, k);
            for (; dp < n_due && due[dp].t <= e->t; dp++)
                cur -= due[dp].size;
            if (e->op == SIM_OP_ALLOC)
                cur += e->size;
            else if (e->op == SIM_OP_FREE && e->ready_t <= e->t)
                cur -= out[k];
            out[k] = cur;
            if (cur > *peak)
                *peak = cur;
        }
    }
    free(due);
    return ok;
}

typedef struct end_walk {
    input_end_block *v;
    size_t n, cap;
    bool nomem;
} end_walk;

static int end_visit(void *ctx, const strategy_block *b)
{
    end_walk *w = ctx;
    if (b->state == BLOCK_UNMAPPED)
        return 0;
    if (!SIM_GROW(w->v, w->n + 1, w->cap)) {
        w->nomem = true;
        return 1;
    }
    w->v[w->n++] = (input_end_block){.segment = b->region,
                                     .offset = b->addr - b->region_addr,
                                     .size = b->size_bytes,
                                     .state = b->state == BLOCK_USED      ? INPUT_BLOCK_ALLOCATED
                                              : b->state == BLOCK_PENDING ? INPUT_BLOCK_PENDING_FREE
                                                                          : INPUT_BLOCK_INACTIVE};
    return 0;
}

static int end_block_cmp(const void *a, const void *b)
{
    const input_end_block *x = a, *y = b;
    if (x->segment != y->segment)
        return x->segment < y->segment ? -1 : 1;
    return x->offset < y->offset ? -1 : (x->offset > y->offset);
}

/* Both lists sorted by (segment, offset): a block matches when the other side has
 * one at the same place of the same size and state. */
static bool end_state_compare(against_end_state *es, const strategy *s, const strategy_ops *ops,
                              const input_recorded *rec)
{
    end_walk w = {0};
    ops->walk(s, end_visit, &w);
    if (w.nomem) {
        free(w.v);
        return false;
    }
    if (w.n)
        qsort(w.v, w.n, sizeof *w.v, end_block_cmp);
    es->recorded_blocks = rec->n_end_blocks;
    es->predicted_blocks = w.n;
    size_t i = 0, j = 0;
    while (i < rec->n_end_blocks || j < w.n) {
        const input_end_block *r = i < rec->n_end_blocks ? &rec->end_blocks[i] : NULL;
        const input_end_block *p = j < w.n ? &w.v[j] : NULL;
        int c = r == NULL ? 1 : p == NULL ? -1 : end_block_cmp(r, p);
        bool same = c == 0 && r->size == p->size && r->state == p->state;
        if (same) {
            es->matched++;
        } else if (!es->has_difference) {
            es->has_difference = true;
            es->has_rec = c <= 0;
            es->has_pred = c >= 0;
            if (es->has_rec)
                es->rec = *r;
            if (es->has_pred)
                es->pred = *p;
        }
        i += c <= 0;
        j += c >= 0;
    }
    free(w.v);
    return true;
}

sim_status against_compare(trace_input *in, const engine_config *cfg, const against_options *opt, against_result *out,
                           sim_error *err)
{
    memset(out, 0, sizeof *out);
    const input_recorded *rec = input_get_recorded(in);
    if (rec == NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "the input holds no numbers from the real allocator");
    /* which timeline row each event lands on: the engine interleaves the deferred
     * frees (those with ready_t > t) before any event at or after their ready_t */
    uint64_t n = input_event_count(in), n_def = 0;
    uint64_t *deferred = malloc((n ? n : 1) * sizeof *deferred);
    uint64_t *row_of = malloc((n ? n : 1) * sizeof *row_of);
    sim_run *run = NULL;
    placed pd = {0};
    sim_status st = SIM_OK;
    if (deferred == NULL || row_of == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    /* a strategy that can start from the recorded state does: the allocations the
     * state holds are then not events */
    const sim_seed *seed = input_seed(in);
    bool seeded = cfg->ops->seed != NULL && seed != NULL && !(opt && opt->from_empty);
    uint64_t first = seeded ? input_seed_events(in) : 0;
    for (uint64_t k = first; k < n; k++) {
        const sim_event *ev = input_event_at(in, k);
        if (ev->op == SIM_OP_FREE && ev->ready_t > ev->t)
            deferred[n_def++] = ev->ready_t;
    }
    qsort(deferred, n_def, sizeof *deferred, u64_cmp);
    uint64_t row = 0, dp = 0;
    for (uint64_t k = 0; k < first; k++)
        row_of[k] = UINT64_MAX;
    for (uint64_t k = first; k < n; k++) {
        const sim_event *ev = input_event_at(in, k);
        while (dp < n_def && deferred[dp] <= ev->t) {
            dp++;
            row++;
        }
        row_of[k] = row++;
    }
    engine_config c = *cfg;
    c.timeline_rows = n + n_def + 1;
    sim_event_source src = seeded ? input_source_seeded(in) : input_source(in);
    /* placements compare when the strategy can say where it put a block, and its
     * segments are numbered as the recording's: from the recorded start state, or
     * from an empty one */
    against_placement *pl = &out->placement;
    pl->on = rec->placement_segment != NULL && cfg->ops->locate != NULL && (seeded || seed == NULL);
    pl->has_pools = rec->placement_pool != NULL;
    if (pl->on) {
        pd = (placed){.ops = cfg->ops, .seg = malloc((n ? n : 1) * sizeof *pd.seg),
                      .off = calloc(n ? n : 1, sizeof *pd.off), .pool = calloc(n ? n : 1, sizeof *pd.pool),
                      .n = n};
        if (pd.seg == NULL || pd.off == NULL || pd.pool == NULL) {
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto done;
        }
        for (uint64_t k = 0; k < n; k++)
            pd.seg[k] = UINT32_MAX;
        c.observers[0] = (engine_watch){on_tick, &pd}; /* instead of the caller's */
        c.n_observers = 1;
    }
    if ((st = engine_run(&c, &src, 1, &run, err)) != SIM_OK)
        goto done;
    against_column *ca = &out->allocated, *cr = &out->reserved;
    *ca = (against_column){.on = rec->has_allocated || rec->has_peak_allocated, .what = "allocated",
                           .source = rec->allocated_source ? rec->allocated_source : "the profile's peakBytesInUse",
                           .offset = rec->allocated_offset_known ? rec->allocated_offset : 0,
                           .live_before = rec->live_before_bytes,
                           .by_event_sizes = rec->allocated_counts_event_sizes};
    *cr = (against_column){.on = rec->has_reserved || rec->has_peak_reserved, .what = "reserved",
                           .source = rec->reserved_source,
                           .start_unknown = rec->reserved_start_unknown && rec->has_reserved,
                           .rec_start = rec->reserved_start};
    ca->has_pred_peak = cr->has_pred_peak = true;
    bool by_size = ca->by_event_sizes;
    ca->pred_peak = (by_size ? run->total.peak_requested_bytes : run->total.peak_allocated_bytes) + ca->offset;
    cr->pred_peak = run->total.peak_reserved_bytes;
    ca->has_rec_peak = rec->has_peak_allocated;
    ca->rec_peak = rec->peak_allocated;
    cr->has_rec_peak = rec->has_peak_reserved;
    cr->rec_peak = rec->peak_reserved;
    if (rec->has_allocated)
        compare(ca, &run->tl, row_of, n, rec->has_point, rec->allocated, by_size ? AS_REQUESTED : AS_ALLOCATED);
    if (rec->has_reserved)
        compare(cr, &run->tl, row_of, n, rec->has_point, rec->reserved, AS_RESERVED);
    if (pl->on)
        placement_compare(pl, &pd, in, rec, first);
    /* snapshots: allocated over time in the trace's own sizes */
    if (rec->has_allocated_end && !rec->has_allocated && n > 0) {
        uint64_t *curve = malloc(n * sizeof *curve);
        uint8_t *has = calloc(n, 1);
        uint64_t peak = 0;
        bool ok = curve != NULL && has != NULL && trace_requested(in, n, curve, &peak);
        if (ok) {
            for (uint64_t k = first; k < n; k++)
                has[k] = 1;
            against_column *cq = &out->requested;
            *cq = (against_column){.on = true,
                                   .what = "allocated over time",
                                   .source = "the trace's alloc and free sizes: requested bytes, a deferred free's "
                                             "until it completed",
                                   .has_pred_peak = true,
                                   .pred_peak = run->total.peak_requested_bytes,
                                   .has_rec_peak = true,
                                   .rec_peak = peak};
            compare(cq, &run->tl, row_of, n, has, curve, AS_REQUESTED);
        }
        free(curve);
        free(has);
        if (!ok && curve != NULL && has != NULL)
            out->requested.on = false; /* an id the trace frees without allocating: not imported so */
        else if (!ok) {
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto done;
        }
    }
    against_end_state *es = &out->end_state;
    /* a start state without segments (a recording from empty) numbers segments as
     * any strategy does from empty: in order of creation */
    es->on = rec->end_blocks != NULL && cfg->ops->walk != NULL && (seeded || seed == NULL || seed->n_segs == 0) &&
             run->n_procs == 1;
    if (es->on && !end_state_compare(es, run->procs[0].s, cfg->ops, rec)) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    if (seeded) {
        out->seeded = true;
        out->start_segments = seed->n_segs;
        out->start_live_blocks = sim_seed_used_count(seed);
        out->planned_segments = seed->n_planned;
        out->start_reserved = sim_seed_reserved(seed);
        out->start_allocated = sim_seed_allocated(seed);
        out->start_events = first;
        for (uint32_t k = 0; k < seed->n_segs; k++)
            if (seed->segs[k].pool_id != 0) {
                out->start_pool_segments++;
                out->start_pool_reserved += seed->segs[k].size_bytes;
            }
    }
    out->settings_recorded = input_records_settings(in);
    out->has_allocated_end = rec->has_allocated_end;
    out->allocated_end_pred = run->total.final_allocated_bytes;
    out->allocated_end_rec = rec->allocated_end;
    out->recorded_oom_events = rec->oom_events;
    if (rec->ooms)
        out->first_recorded_oom = input_event_at(in, rec->oom_events[0])->name;
    out->has_predicted_oom = run->total.first_oom.happened;
    out->predicted_oom_event = run->total.first_oom.event;
    out->predicted_oom_size = run->total.first_oom.size;
    out->format = input_get_format(in);
    out->events = n;
    out->strategy = cfg->ops->name;
    out->strategy_takes_recorded = cfg->ops->recorded_conf_key != NULL;
    for (uint32_t i = 0; i < cfg->n_opts && out->strategy_takes_recorded; i++)
        if (strcmp(cfg->opts[i].key, cfg->ops->recorded_conf_key) == 0)
            out->alloc_conf = cfg->opts[i].value;
    out->alloc_conf_from = "defaults";
    if (opt && opt->alloc_conf_option)
        out->alloc_conf_from = "option";
    else if (out->alloc_conf)
        out->alloc_conf_from = "recording";
    else if (out->settings_recorded)
        out->alloc_conf_from = "recording (PyTorch defaults)";
    out->capacity_bytes = cfg->device.capacity_bytes;
    out->completed = run->total.completed;
    out->recorded_ooms = rec->ooms;
    out->predicted_ooms = run->total.ooms;
done:
    sim_run_free(run);
    free(deferred);
    free(row_of);
    free(pd.seg);
    free(pd.off);
    free(pd.pool);
    return st;
}
