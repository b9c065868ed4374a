/* Capacity planning: the grid of replays, the bisection and the monotonicity probes. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One replay; end_early: end it at the first OOM (only `fits` is then meaningful). */
static plan_cell run_cell(const plan_question *q, const strategy_ops *ops, const device_info *dev, bool end_early)
{
    plan_cell c;
    memset(&c, 0, sizeof c);
    sim_error_clear(&c.err);
    engine_config cfg = q->base;
    cfg.ops = ops;
    cfg.device = *dev;
    cfg.end_at_first_oom = end_early;
    sim_run *run = NULL;
    c.st = batch_replay(q->t, &cfg, &run, &c.err);
    c.replayed = true;
    if (q->on_replay)
        q->on_replay(q->on_replay_ctx);
    if (c.st == SIM_OK) {
        const sim_metrics *m = &run->total;
        c.fits = m->completed && m->ooms == 0;
        c.peak_device = m->peak_device_bytes;
        c.peak_reserved = m->peak_reserved_bytes;
        c.ooms = m->ooms;
        c.cause = m->first_oom.cause;
        c.blind = c.fits && sim_run_capacity_blind(run);
    }
    sim_run_free(run);
    return c;
}

plan_cell plan_run(const plan_question *q, const strategy_ops *ops, const device_info *dev)
{
    return run_cell(q, ops, dev, false);
}

/* A strategy option that cannot hold on a small card (e.g. a limit above the
 * capacity) is a "does not run", not an error of the command. */
static bool cell_fatal(const plan_cell *c)
{
    return c->st != SIM_OK && c->st != SIM_EUSAGE;
}

/* What one search knows, so that no capacity is replayed twice. A replay is
 * deterministic, so a capacity tried before has the same answer: the confirming run
 * at the minimum is the bisection's last run that fit, and the run a step below is
 * its last that failed. Once one replay ran the whole trace without an OOM or an
 * error (every event of every process checked), a later replay can end at its first
 * OOM: whether the trace fits is then known, and nothing after it could raise an
 * error the complete run did not. A run that is the same on every capacity at or
 * above its peak on the device (plan_cell.blind) answers those capacities without
 * a replay. */
#define PLAN_MEMO 96
typedef struct plan_memo {
    uint64_t cap[PLAN_MEMO];
    bool fits[PLAN_MEMO];
    uint32_t n;
    bool checked;             /* a complete replay without OOM or error was seen */
    uint64_t fit_cap;         /* the capacity of the last replay that fit (0: none) ... */
    plan_cell fit_cell;       /* ... and its cell, complete */
} plan_memo;

/* The capacity-blind run m saw answers capacities at or above its peak. */
static bool blind_answers(const plan_min *m, uint64_t capacity)
{
    return m->has_blind && capacity >= m->blind.peak_device;
}

static bool fits_at(const plan_question *q, const strategy_ops *ops, uint64_t capacity, plan_min *m,
                    plan_memo *memo, plan_cell *out)
{
    m->runs++;
    if (out && memo->fit_cap == capacity && capacity) {
        *out = memo->fit_cell;
        return true;
    }
    if (blind_answers(m, capacity)) {
        if (out) {
            *out = m->blind;
            out->replayed = false;
        }
        return true;
    }
    if (out == NULL)
        for (uint32_t k = 0; k < memo->n; k++)
            if (memo->cap[k] == capacity)
                return memo->fits[k];
    device_info d = q->model;
    d.capacity_bytes = capacity;
    plan_cell c = run_cell(q, ops, &d, memo->checked && out == NULL);
    m->replays++;
    if (cell_fatal(&c) && m->st == SIM_OK) {
        m->st = c.st;
        m->err = c.err;
    }
    bool fits = c.st == SIM_OK && c.fits;
    if (c.st == SIM_OK && memo->n < PLAN_MEMO) {
        memo->cap[memo->n] = capacity;
        memo->fits[memo->n++] = fits;
    }
    if (fits) {
        memo->checked = true; /* a run that fits never ends early: it was complete */
        memo->fit_cap = capacity;
        memo->fit_cell = c;
        if (c.blind && !m->has_blind) {
            m->has_blind = true;
            m->blind = c;
        }
    }
    if (out)
        *out = c;
    return fits;
}

/* The capacities above the minimum that the monotonicity probes try: the catalog's
 * and evenly spaced ones up to top (the first doubling of the model card that ran). */
static uint32_t probe_candidates(uint64_t min, uint64_t top, uint64_t *cands)
{
    uint32_t nc = 0;
    for (size_t g = 0; g < gpus_count() && nc < PLAN_MAX_PROBES / 2; g++) {
        uint64_t c = units_round_down(gpus_get(g)->capacity_bytes, PLAN_STEP);
        if (c > min && c <= top)
            cands[nc++] = c;
    }
    for (uint32_t k = 1; k <= 8 && nc < PLAN_MAX_PROBES; k++) {
        uint64_t c = min + units_round_down((top - min) / 9 * k, PLAN_STEP);
        if (c > min)
            cands[nc++] = c;
    }
    return nc;
}

/* The model card rounded to a step, where the doubling starts. */
static uint64_t search_start(const plan_question *q)
{
    return units_round_up(q->model.capacity_bytes ? q->model.capacity_bytes : GiB, PLAN_STEP);
}

/* A strategy that fits by its peak (strategy_ops.fits_by_peak): one complete replay
 * on the largest card the doubling would try gives the peak on the device, the
 * minimum is that peak rounded up to a step, and two replays confirm it (it runs
 * there, and fails a step below: both short, the second ends at its OOM). Above it
 * the run fits by the same rule, so the probes need no replay. false when the
 * confirmation disagrees (the peak was a process's context charged at its start,
 * with no allocation at that height): the bisection answers then, from what the
 * memo already knows. */
static bool min_from_peak(const plan_question *q, const strategy_ops *ops, plan_min *m, plan_memo *memo)
{
    uint64_t ceiling = search_start(q);
    while (ceiling < PLAN_CEILING)
        ceiling *= 2;
    plan_cell big;
    if (!fits_at(q, ops, ceiling, m, memo, &big))
        return true; /* an error, or it does not run even there: as the doubling would end */
    uint64_t k = units_round_up(big.peak_device, PLAN_STEP) / PLAN_STEP;
    if (k == 0)
        k = 1;
    plan_cell at;
    if (!fits_at(q, ops, k * PLAN_STEP, m, memo, &at) || m->st != SIM_OK)
        return m->st != SIM_OK;
    if (k > 1 && fits_at(q, ops, (k - 1) * PLAN_STEP, m, memo, NULL))
        return false;
    if (m->st != SIM_OK)
        return true;
    m->found = true;
    m->capacity = k * PLAN_STEP;
    m->at_min = at;
    m->below_fails = true;
    uint64_t top = search_start(q);
    while (top < m->capacity)
        top *= 2;
    uint64_t cands[PLAN_MAX_PROBES];
    uint32_t nc = probe_candidates(m->capacity, top, cands);
    for (uint32_t c = 0; c < nc; c++) {
        m->runs++; /* answered by the rule, as a replay there would */
        m->probes[m->n_probes++] = (plan_probe){cands[c], true};
    }
    return true;
}

void plan_find_min(const plan_question *q, const strategy_ops *ops, plan_min *m)
{
    memset(m, 0, sizeof *m);
    m->monotonic = true;
    sim_error_clear(&m->err);
    plan_memo *memo = calloc(1, sizeof *memo);
    if (memo == NULL) {
        m->st = sim_error_set(&m->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        return;
    }
    if (ops->fits_by_peak && min_from_peak(q, ops, m, memo))
        goto done;
    /* an upper bound that runs: the model card, doubled until it fits */
    uint64_t hi = search_start(q);
    while (!fits_at(q, ops, hi, m, memo, NULL)) {
        if (m->st != SIM_OK || hi >= PLAN_CEILING)
            goto done;
        hi *= 2;
    }
    uint64_t top = hi;
    /* bisection in steps: lo fails (0 is no card), hi runs (from a capacity-blind run,
     * its peak rounded up to a step does) */
    uint64_t lo_k = 0, hi_k = hi / PLAN_STEP;
    if (m->has_blind) {
        uint64_t k = units_round_up(m->blind.peak_device, PLAN_STEP) / PLAN_STEP;
        if (k >= 1 && k < hi_k)
            hi_k = k;
    }
    while (hi_k - lo_k > 1) {
        uint64_t mid = lo_k + (hi_k - lo_k) / 2;
        if (fits_at(q, ops, mid * PLAN_STEP, m, memo, NULL))
            hi_k = mid;
        else
            lo_k = mid;
        if (m->st != SIM_OK)
            goto done;
    }
    m->found = true;
    m->capacity = hi_k * PLAN_STEP;
    /* confirm: a run at the minimum, and one a step less */
    bool ok = fits_at(q, ops, m->capacity, m, memo, &m->at_min);
    m->below_fails = hi_k == 1 || !fits_at(q, ops, m->capacity - PLAN_STEP, m, memo, NULL);
    if (!ok)
        m->monotonic = false; /* cannot happen for a deterministic replay; said if it does */
    /* monotonic? probe the catalog's capacities and evenly spaced ones above the minimum */
    uint64_t cands[PLAN_MAX_PROBES];
    uint32_t nc = probe_candidates(m->capacity, top, cands);
    for (uint32_t k = 0; k < nc; k++) {
        bool f = fits_at(q, ops, cands[k], m, memo, NULL);
        if (m->st != SIM_OK)
            goto done;
        m->probes[m->n_probes++] = (plan_probe){cands[k], f};
        if (!f && m->monotonic) {
            m->monotonic = false;
            m->counter_capacity = cands[k];
        }
    }
    if (!m->below_fails)
        m->monotonic = false;
done:
    free(memo);
}

device_info plan_gpu_device(const plan_question *q, uint32_t g)
{
    device_info d = q->model;
    d.name = q->gpus[g]->name;
    d.capacity_bytes = q->gpus[g]->capacity_bytes;
    d.cc_major = q->gpus[g]->cc_major;
    d.cc_minor = q->gpus[g]->cc_minor;
    return d;
}

typedef struct plan_work {
    const plan_question *q;
    plan_answer *a;
    /* the order the tasks run in: a search is its strategy's index, a cell n_ops + its
     * index in the grid */
    const uint32_t *task;
} plan_work;

/* A cell on a card at least as large as the peak on the device of a run its
 * strategy's search made, when that run is the same on every such card: the
 * minimum's confirming run of a strategy that fits by its peak (the replay does not
 * depend on the capacity while it fits, and it fits there), or a capacity-blind run
 * (plan_cell.blind). The card differs from the search's only in its name, capacity
 * and compute capability, which neither kind of run reads. */
static bool cell_from_min(const plan_question *q, const plan_min *m, const strategy_ops *ops, const device_info *d,
                          plan_cell *out)
{
    if (m->st != SIM_OK || d->context_bytes != q->model.context_bytes)
        return false;
    if (ops->fits_by_peak && m->found && m->at_min.fits && m->at_min.st == SIM_OK &&
        d->capacity_bytes >= m->at_min.peak_device)
        *out = m->at_min;
    else if (blind_answers(m, d->capacity_bytes))
        *out = m->blind;
    else
        return false;
    out->replayed = false;
    return true;
}

static void plan_task(void *ctx, size_t k)
{
    const plan_work *w = ctx;
    const plan_question *q = w->q;
    size_t i = w->task[k];
    if (i < q->n_ops) {
        plan_find_min(q, q->ops[i], &w->a->mins[i]);
    } else {
        i -= q->n_ops;
        const strategy_ops *ops = q->ops[i % q->n_ops];
        device_info d = plan_gpu_device(q, (uint32_t)(i / q->n_ops));
        if (!cell_from_min(q, &w->a->mins[i % q->n_ops], ops, &d, &w->a->cells[i]))
            w->a->cells[i] = plan_run(q, ops, &d);
    }
}

sim_status plan_answer_compute(const plan_question *q, unsigned jobs, plan_answer *out, sim_error *err)
{
    size_t grid = (size_t)q->n_gpus * q->n_ops;
    out->cells = calloc(grid ? grid : 1, sizeof(plan_cell));
    out->mins = calloc(q->n_ops ? q->n_ops : 1, sizeof(plan_min));
    if (out->cells == NULL || out->mins == NULL) {
        plan_answer_release(out);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    uint32_t *task = malloc((grid + q->n_ops) * sizeof *task);
    if (task == NULL) {
        plan_answer_release(out);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    /* first the searches: those of the strategies that fit by their peak (three
     * replays each) before the others (many replays each), so that the threads finish
     * together; then the grid's cells, one replay each, or none on a card a search's
     * run answers (cell_from_min) */
    size_t n_first = 0, n = 0;
    for (uint32_t k = 0; k < q->n_ops; k++)
        if (q->ops[k]->fits_by_peak)
            task[n++] = k;
    for (uint32_t k = 0; k < q->n_ops; k++)
        if (!q->ops[k]->fits_by_peak)
            task[n++] = k;
    n_first = n;
    for (size_t c = 0; c < grid; c++)
        task[n++] = (uint32_t)(q->n_ops + c);
    plan_work w = {q, out, task};
    batch_parallel(jobs, n_first, plan_task, &w);
    w.task = task + n_first;
    batch_parallel(jobs, n - n_first, plan_task, &w);
    free(task);
    /* a broken trace fails every run alike: report the first, in a fixed order */
    const sim_error *first = NULL;
    for (size_t i = 0; i < grid && first == NULL; i++)
        if (cell_fatal(&out->cells[i]))
            first = &out->cells[i].err;
    for (uint32_t k = 0; k < q->n_ops && first == NULL; k++)
        if (out->mins[k].st != SIM_OK)
            first = &out->mins[k].err;
    if (first) {
        *err = *first;
        plan_answer_release(out);
        return err->status != SIM_OK ? err->status : SIM_EINTERNAL;
    }
    return SIM_OK;
}

void plan_answer_release(plan_answer *a)
{
    free(a->cells);
    free(a->mins);
    a->cells = NULL;
    a->mins = NULL;
}

/* ---------------------------------------------------------------- on nodes */

typedef struct node_work {
    plan_node_cell *cells;
    const plan_node_question *q;
} node_work;

/* Job k of cell c on node: its visible GPUs and its ranks' sources (cursors in cur). */
static sim_status node_job_of(const plan_node_question *q, const strategy_ops *ops, const node_spec *node, uint32_t k,
                              node_job *j, evbuf_cursor *cur, sim_event_source *ranks, sim_error *err)
{
    const batch_traces *t = k == 0 ? q->t : q->more[k - 1].t;
    snprintf(j->name, sizeof j->name, "job %u", k + 1);
    sim_status st = node_parse_visible(k == 0 ? q->visible : q->more[k - 1].visible, node->n, j->visible,
                                       &j->n_visible, err);
    uint32_t n = k == 0 && q->replicas ? q->replicas : t->n;
    if (st == SIM_OK && n > j->n_visible)
        st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s: %u ranks but %u visible GPUs", j->name, n, j->n_visible);
    if (st != SIM_OK)
        return st;
    /* one job, one rank per GPU: each starts from its recorded state, as a replay of it alone */
    bool alone = q->n_more == 0 && q->replicas == 0;
    for (uint32_t r = 0; r < n; r++)
        ranks[r] =
            alone ? batch_source_alone(t, r, ops, &cur[r]) : evbuf_source(t->b[k == 0 && q->replicas ? 0 : r], &cur[r]);
    j->ranks = ranks;
    j->n_ranks = n;
    return SIM_OK;
}

/* Cell i: node i / n_ops under strategy i % n_ops. */
static void node_task(void *ctx, size_t i)
{
    const node_work *w = ctx;
    plan_node_cell *c = &w->cells[i];
    const plan_node_question *q = w->q;
    const node_spec *node = &q->nodes[i / q->n_ops];
    sim_error_clear(&c->err);
    evbuf_cursor cur[NODE_MAX_JOBS][NODE_MAX_DEVICES];
    sim_event_source ranks[NODE_MAX_JOBS][NODE_MAX_DEVICES];
    c->n_jobs = 1 + (q->n_more < NODE_MAX_JOBS ? q->n_more : NODE_MAX_JOBS - 1);
    c->st = SIM_OK;
    for (uint32_t k = 0; k < c->n_jobs && c->st == SIM_OK; k++)
        c->st = node_job_of(q, q->ops[i % q->n_ops], node, k, &c->jobs[k], cur[k], ranks[k], &c->err);
    if (c->st == SIM_OK) {
        engine_config cfg = q->base;
        cfg.ops = q->ops[i % q->n_ops];
        if (cfg.memo == NULL)
            cfg.memo = q->t->memo; /* planned plans each rank's trace once */
        c->st = node_run(&cfg, node, c->jobs, c->n_jobs, &c->r, &c->err);
        if (c->st == SIM_OK)
            c->v = node_result_verdict(&c->r);
    }
    for (uint32_t k = 0; k < c->n_jobs; k++)
        c->jobs[k].ranks = NULL;
    if (q->on_replay)
        q->on_replay(q->on_replay_ctx);
}

sim_status plan_nodes_compute(const plan_node_question *q, unsigned jobs, plan_node_cell **out, sim_error *err)
{
    size_t grid = (size_t)q->n_nodes * q->n_ops;
    *out = NULL;
    plan_node_cell *cells = calloc(grid ? grid : 1, sizeof *cells);
    if (cells == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    node_work w = {cells, q};
    batch_parallel(jobs, grid, node_task, &w);
    for (size_t i = 0; i < grid; i++) {
        if (cells[i].st != SIM_OK && cells[i].st != SIM_EUSAGE) {
            *err = cells[i].err;
            sim_status st = err->status != SIM_OK ? err->status : SIM_EINTERNAL;
            plan_nodes_release(cells, grid);
            return st;
        }
    }
    *out = cells;
    return SIM_OK;
}

void plan_nodes_release(plan_node_cell *cells, size_t n)
{
    if (cells == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        node_result_release(&cells[i].r);
    free(cells);
}
