/* gpusim plan TRACE... : capacity planning. For every GPU of the catalog (or
 * --gpus) and every strategy: does the trace run without OOM, with what peak on
 * the device and what headroom. For every strategy: the smallest capacity it runs
 * on, found by bisection to 1 MiB on a card like the trace's (same compute
 * capability and context), confirmed by a run at that capacity and one at 1 MiB
 * less; and whether the answer is monotonic — fragmentation can make a larger card
 * fail where a smaller one ran, so capacities above the minimum are probed too. */
#include <stdlib.h>
#include <string.h>

#include "against.h"
#include "cli.h"
#include "sim/buf.h"
#include "sim/gpus.h"
#include "sim/units.h"

#define PLAN_MAX_GPUS 64
#define PLAN_MAX_PROBES 40
#define PLAN_CEILING (16 * TiB) /* no answer above this */

static const cli_opt PLAN_OPTS[] = {
    {"strategies", true, "S,S,...: strategies to plan for (default: as compare)"},
    {"gpus", true, "all|NAME,NAME,...: the GPUs of the table (default all of the catalog)"},
    CLI_DEVICE_OPTS,
    CLI_STRATEGY_OPTS,
    CLI_INPUT_OPTS,
    {"format", true, "text|json: output for people or machines (default text)"},
    {"output", true, "FILE: write the result there instead of stdout"},
    {"jobs", true, "N: replays run in parallel (default: the CPUs, at most 8); output does not depend on it"},
    {NULL, false, NULL},
};

typedef struct plan_cell {
    sim_status st;
    bool fits;
    uint64_t peak_device, peak_reserved, ooms;
    sim_oom_cause cause;
    sim_error err;
} plan_cell;

typedef struct plan_probe {
    uint64_t capacity;
    bool fits;
} plan_probe;

typedef struct plan_min {
    sim_status st;            /* SIM_ETRACE etc. stop the command */
    sim_error err;
    bool found;               /* false: does not run even on PLAN_CEILING */
    uint64_t capacity;        /* the minimum, a multiple of 1 MiB */
    plan_cell at_min;         /* the confirming run */
    bool below_fails;         /* the run at capacity − 1 MiB failed (or capacity is 1 MiB) */
    uint32_t runs;
    plan_probe probes[PLAN_MAX_PROBES]; /* capacities above the minimum */
    uint32_t n_probes;
    bool monotonic;
    uint64_t counter_capacity; /* a capacity above the minimum that fails (not monotonic) */
} plan_min;

typedef struct plan_job {
    const batch_traces *t;
    engine_config base;       /* device and ops set per task */
    device_info model;        /* the card the minimum is searched on (capacity varies) */
    const strategy_ops **ops;
    uint32_t n_ops;
    const gpu_model **gpus;
    uint32_t n_gpus;
    plan_cell *cells;         /* n_gpus × n_ops */
    plan_min *mins;           /* n_ops */
} plan_job;

static const char *a_path(const batch_traces *t, uint32_t i)
{
    evbuf_cursor c;
    return evbuf_source(t->b[i], &c).path;
}

static plan_cell run_one(const plan_job *j, const strategy_ops *ops, const device_info *dev)
{
    plan_cell c;
    memset(&c, 0, sizeof c);
    sim_error_clear(&c.err);
    engine_config cfg = j->base;
    cfg.ops = ops;
    cfg.device = *dev;
    sim_run *run = NULL;
    c.st = batch_replay(j->t, &cfg, &run, &c.err);
    if (c.st == SIM_OK) {
        const sim_metrics *m = &run->total;
        c.fits = m->completed && m->ooms == 0;
        c.peak_device = m->peak_device_bytes;
        c.peak_reserved = m->peak_reserved_bytes;
        c.ooms = m->ooms;
        c.cause = m->first_oom.info.cause;
    }
    sim_run_free(run);
    return c;
}

/* A strategy option that cannot hold on a small card (e.g. a limit above the
 * capacity) is a "does not run", not an error of the command. */
static bool cell_fatal(const plan_cell *c)
{
    return c->st != SIM_OK && c->st != SIM_EUSAGE;
}

static bool fits_at(plan_job *j, const strategy_ops *ops, uint64_t capacity, plan_min *m, plan_cell *out)
{
    device_info d = j->model;
    d.capacity_bytes = capacity;
    plan_cell c = run_one(j, ops, &d);
    m->runs++;
    if (cell_fatal(&c) && m->st == SIM_OK) {
        m->st = c.st;
        m->err = c.err;
    }
    if (out)
        *out = c;
    return c.st == SIM_OK && c.fits;
}

static void find_min(plan_job *j, size_t s)
{
    const strategy_ops *ops = j->ops[s];
    plan_min *m = &j->mins[s];
    m->monotonic = true;
    sim_error_clear(&m->err);
    /* an upper bound that runs: the model card, doubled until it fits */
    uint64_t hi = units_round_up(j->model.capacity_bytes ? j->model.capacity_bytes : GiB, MiB);
    while (!fits_at(j, ops, hi, m, NULL)) {
        if (m->st != SIM_OK || hi >= PLAN_CEILING)
            return;
        hi *= 2;
    }
    uint64_t top = hi;
    /* bisection in MiB: lo fails (0 MiB is no card), hi runs */
    uint64_t lo_k = 0, hi_k = hi / MiB;
    while (hi_k - lo_k > 1) {
        uint64_t mid = lo_k + (hi_k - lo_k) / 2;
        if (fits_at(j, ops, mid * MiB, m, NULL))
            hi_k = mid;
        else
            lo_k = mid;
        if (m->st != SIM_OK)
            return;
    }
    m->found = true;
    m->capacity = hi_k * MiB;
    /* confirm: a run at the minimum, and one at 1 MiB less */
    bool ok = fits_at(j, ops, m->capacity, m, &m->at_min);
    m->below_fails = hi_k == 1 || !fits_at(j, ops, m->capacity - MiB, m, NULL);
    if (!ok)
        m->monotonic = false; /* cannot happen for a deterministic replay; said if it does */
    /* monotonic? probe the catalog's capacities and evenly spaced ones above the minimum */
    uint64_t cands[PLAN_MAX_PROBES];
    uint32_t nc = 0;
    for (size_t g = 0; g < gpus_count() && nc < PLAN_MAX_PROBES / 2; g++) {
        uint64_t c = units_round_down(gpus_get(g)->capacity_bytes, MiB);
        if (c > m->capacity && c <= top)
            cands[nc++] = c;
    }
    for (uint32_t k = 1; k <= 8 && nc < PLAN_MAX_PROBES; k++) {
        uint64_t c = m->capacity + units_round_down((top - m->capacity) / 9 * k, MiB);
        if (c > m->capacity)
            cands[nc++] = c;
    }
    for (uint32_t k = 0; k < nc; k++) {
        bool f = fits_at(j, ops, cands[k], m, NULL);
        if (m->st != SIM_OK)
            return;
        m->probes[m->n_probes++] = (plan_probe){cands[k], f};
        if (!f && m->monotonic) {
            m->monotonic = false;
            m->counter_capacity = cands[k];
        }
    }
    if (!m->below_fails)
        m->monotonic = false;
}

static void plan_task(void *ctx, size_t i)
{
    plan_job *j = ctx;
    size_t grid = (size_t)j->n_gpus * j->n_ops;
    if (i < grid) {
        const gpu_model *g = j->gpus[i / j->n_ops];
        device_info d = j->model;
        d.name = g->name;
        d.capacity_bytes = g->capacity_bytes;
        d.cc_major = g->cc_major;
        d.cc_minor = g->cc_minor;
        j->cells[i] = run_one(j, j->ops[i % j->n_ops], &d);
    } else {
        find_min(j, i - grid);
    }
}

/* ---------------------------------------------------------------- output */

static void text_cell(sim_buf *b, const plan_cell *c)
{
    char s[32], h[32];
    if (c->st != SIM_OK) {
        sim_buf_printf(b, " %-22s", "does not run");
    } else if (c->fits) {
        snprintf(h, sizeof h, "%s", units_format_size(c->peak_device, s, sizeof s));
        sim_buf_printf(b, " %-22s", h);
    } else {
        snprintf(h, sizeof h, "OOM (%s)", sim_oom_cause_name(c->cause));
        sim_buf_printf(b, " %-22s", h);
    }
}

static void plan_text(const plan_job *j, sim_buf *b)
{
    char s[32], t2[32];
    sim_buf_printf(b, "gpusim %s: plan\n", GPUSIM_VERSION);
    for (uint32_t i = 0; i < j->t->n; i++)
        sim_buf_printf(b, "  trace   %s: %llu events\n", a_path(j->t, i), (unsigned long long)evbuf_count(j->t->b[i]));
    sim_buf_printf(b, "  context %s per process\n\n", units_format_size(j->model.context_bytes, s, sizeof s));
    sim_buf_puts(b, "Peak on the device (reserved + context) where it runs, else why not:\n\n");
    sim_buf_printf(b, "  %-12s %10s", "GPU", "capacity");
    for (uint32_t k = 0; k < j->n_ops; k++)
        sim_buf_printf(b, " %-22s", j->ops[k]->name);
    sim_buf_puts(b, "\n");
    for (uint32_t g = 0; g < j->n_gpus; g++) {
        sim_buf_printf(b, "  %-12s %10s", j->gpus[g]->name, units_format_size(j->gpus[g]->capacity_bytes, s, sizeof s));
        for (uint32_t k = 0; k < j->n_ops; k++)
            text_cell(b, &j->cells[g * j->n_ops + k]);
        sim_buf_puts(b, "\n");
    }
    sim_buf_puts(b, "\nHeadroom (capacity - peak on the device) where it runs:\n\n");
    for (uint32_t g = 0; g < j->n_gpus; g++) {
        sim_buf_printf(b, "  %-12s %10s", j->gpus[g]->name, "");
        for (uint32_t k = 0; k < j->n_ops; k++) {
            const plan_cell *c = &j->cells[g * j->n_ops + k];
            if (c->st == SIM_OK && c->fits)
                sim_buf_printf(b, " %-22s",
                               units_format_size(j->gpus[g]->capacity_bytes - c->peak_device, s, sizeof s));
            else
                sim_buf_printf(b, " %-22s", "-");
        }
        sim_buf_puts(b, "\n");
    }
    sim_buf_printf(b, "\nSmallest capacity each strategy runs on (bisection to 1 MiB on a card of compute "
                      "capability %u.%u):\n\n",
                   j->model.cc_major, j->model.cc_minor);
    for (uint32_t k = 0; k < j->n_ops; k++) {
        const plan_min *m = &j->mins[k];
        sim_buf_printf(b, "  %-10s ", j->ops[k]->name);
        if (!m->found) {
            sim_buf_printf(b, "does not run even on %s\n", units_format_size(PLAN_CEILING, s, sizeof s));
            continue;
        }
        sim_buf_printf(b, "%12s (%llu MiB), peak on the device %s; %s at %llu MiB; %u runs", units_format_size(m->capacity, s, sizeof s),
                       (unsigned long long)(m->capacity / MiB),
                       units_format_size(m->at_min.peak_device, t2, sizeof t2),
                       m->capacity == MiB ? "nothing below" : m->below_fails ? "fails" : "RUNS",
                       (unsigned long long)(m->capacity / MiB - 1), m->runs);
        if (m->monotonic)
            sim_buf_puts(b, ", monotonic\n");
        else if (m->counter_capacity)
            sim_buf_printf(b, "\n             NOT MONOTONIC: fails on %llu MiB although it runs on %llu MiB "
                              "(fragmentation)\n",
                           (unsigned long long)(m->counter_capacity / MiB), (unsigned long long)(m->capacity / MiB));
        else
            sim_buf_puts(b, "\n             NOT MONOTONIC: runs on 1 MiB less than the bisection's answer\n");
    }
}

/* Table cells are padded: drop the spaces before each newline. */
static void rstrip_lines(sim_buf *b)
{
    size_t k = 0;
    for (size_t i = 0; i < b->len; i++) {
        if (b->data[i] == '\n')
            while (k > 0 && b->data[k - 1] == ' ')
                k--;
        b->data[k++] = b->data[i];
    }
    b->len = k;
    if (b->data)
        b->data[k] = '\0';
}

static void plan_json(const plan_job *j, sim_buf *b)
{
    sim_buf_puts(b, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"traces\": [");
    for (uint32_t i = 0; i < j->t->n; i++) {
        sim_buf_puts(b, i ? ", " : "");
        sim_buf_puts(b, "{\"path\": ");
        sim_buf_json_str(b, a_path(j->t, i));
        sim_buf_printf(b, ", \"events\": %llu}", (unsigned long long)evbuf_count(j->t->b[i]));
    }
    sim_buf_printf(b, "],\n  \"context_bytes\": %llu,\n  \"strategies\": [", (unsigned long long)j->model.context_bytes);
    for (uint32_t k = 0; k < j->n_ops; k++) {
        sim_buf_puts(b, k ? ", " : "");
        sim_buf_json_str(b, j->ops[k]->name);
    }
    sim_buf_puts(b, "],\n  \"gpus\": [");
    for (uint32_t g = 0; g < j->n_gpus; g++) {
        sim_buf_puts(b, g ? ",\n    {\"name\": " : "\n    {\"name\": ");
        sim_buf_json_str(b, j->gpus[g]->name);
        sim_buf_printf(b, ", \"capacity_bytes\": %llu, \"runs\": [", (unsigned long long)j->gpus[g]->capacity_bytes);
        for (uint32_t k = 0; k < j->n_ops; k++) {
            const plan_cell *c = &j->cells[g * j->n_ops + k];
            sim_buf_puts(b, k ? ",\n      {\"strategy\": " : "\n      {\"strategy\": ");
            sim_buf_json_str(b, j->ops[k]->name);
            if (c->st != SIM_OK) {
                sim_buf_puts(b, ", \"fits\": false, \"error\": ");
                sim_buf_json_str(b, c->err.msg);
                sim_buf_puts(b, "}");
                continue;
            }
            sim_buf_printf(b, ", \"fits\": %s, \"peak_device_bytes\": %llu, \"peak_reserved_bytes\": %llu, ",
                           c->fits ? "true" : "false", (unsigned long long)c->peak_device,
                           (unsigned long long)c->peak_reserved);
            if (c->fits)
                sim_buf_printf(b, "\"headroom_bytes\": %llu, \"ooms\": 0, \"oom_cause\": null}",
                               (unsigned long long)(j->gpus[g]->capacity_bytes - c->peak_device));
            else
                sim_buf_printf(b, "\"headroom_bytes\": null, \"ooms\": %llu, \"oom_cause\": \"%s\"}",
                               (unsigned long long)c->ooms, sim_oom_cause_name(c->cause));
        }
        sim_buf_puts(b, "]}");
    }
    sim_buf_printf(b, "\n  ],\n  \"minimum_capacity\": {\"compute_capability\": \"%u.%u\", \"step_bytes\": %llu, "
                      "\"rows\": [",
                   j->model.cc_major, j->model.cc_minor, (unsigned long long)MiB);
    for (uint32_t k = 0; k < j->n_ops; k++) {
        const plan_min *m = &j->mins[k];
        sim_buf_puts(b, k ? ",\n    {\"strategy\": " : "\n    {\"strategy\": ");
        sim_buf_json_str(b, j->ops[k]->name);
        if (!m->found) {
            sim_buf_printf(b, ", \"capacity_bytes\": null, \"ceiling_bytes\": %llu}", (unsigned long long)PLAN_CEILING);
            continue;
        }
        sim_buf_printf(b,
                       ", \"capacity_bytes\": %llu, \"confirmed\": %s, \"fails_below\": %s, "
                       "\"peak_device_bytes\": %llu, \"runs\": %u, \"monotonic\": %s, \"counterexample_bytes\": ",
                       (unsigned long long)m->capacity, m->at_min.fits ? "true" : "false",
                       m->below_fails ? "true" : "false", (unsigned long long)m->at_min.peak_device, m->runs,
                       m->monotonic ? "true" : "false");
        if (m->counter_capacity)
            sim_buf_printf(b, "%llu", (unsigned long long)m->counter_capacity);
        else
            sim_buf_puts(b, "null");
        sim_buf_puts(b, ", \"probes\": [");
        for (uint32_t p = 0; p < m->n_probes; p++)
            sim_buf_printf(b, "%s{\"capacity_bytes\": %llu, \"fits\": %s}", p ? ", " : "",
                           (unsigned long long)m->probes[p].capacity, m->probes[p].fits ? "true" : "false");
        sim_buf_puts(b, "]}");
    }
    sim_buf_puts(b, "\n  ]}\n}\n");
}

static void plan_help(void)
{
    printf("usage: gpusim plan TRACE... [options]\n\n"
           "Capacity planning: for each GPU of the catalog and each allocator model, whether the\n"
           "trace runs without running out of memory, its peak on the device and the headroom left;\n"
           "and for each model the smallest capacity it runs on (bisection to 1 MiB, confirmed by\n"
           "runs at that capacity and 1 MiB less, with a warning when more memory can fail).\n\n");
    cli_print_options(stdout, PLAN_OPTS);
    printf("\nexit status: 0 ran, 2 usage or I/O error, 3 invalid trace\n");
}

static int pick_gpus(const cli_args *a, const gpu_model **out, uint32_t *n)
{
    *n = 0;
    const char *v = cli_get(a, "gpus");
    if (v == NULL || strcmp(v, "all") == 0) {
        for (size_t i = 0; i < gpus_count() && *n < PLAN_MAX_GPUS; i++)
            out[(*n)++] = gpus_get(i);
        return 0;
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const gpu_model *g = gpus_find(tok);
        if (g == NULL)
            return cli_usage_error("plan", "--gpus: unknown GPU '%s' (see 'gpusim gpus')", tok);
        if (*n == PLAN_MAX_GPUS)
            return cli_usage_error("plan", "--gpus: at most %d GPUs", PLAN_MAX_GPUS);
        out[(*n)++] = g;
    }
    if (*n == 0)
        return cli_usage_error("plan", "--gpus: no GPU named");
    return 0;
}

int cmd_plan(int argc, char **argv)
{
    cli_args a;
    bool help;
    if (cli_parse("plan", PLAN_OPTS, argc, argv, &a, &help) != SIM_OK)
        return 2;
    if (help) {
        plan_help();
        return 0;
    }
    bool json = false;
    int frc = cli_format_json(&a, &json);
    if (frc)
        return frc;
    const strategy_ops *ops[CLI_MAX_STRATEGIES];
    uint32_t n_ops = 0;
    int rc = cli_pick_strategies("plan", &a, ops, &n_ops);
    if (rc)
        return rc;
    const gpu_model *gpus[PLAN_MAX_GPUS];
    uint32_t n_gpus = 0;
    if ((rc = pick_gpus(&a, gpus, &n_gpus)) != 0)
        return rc;
    size_t tasks = (size_t)n_gpus * n_ops + n_ops;
    unsigned jobs = 1;
    if ((rc = cli_jobs("plan", &a, tasks, &jobs)) != 0)
        return rc;
    if (a.n_positional == 0)
        return cli_usage_error("plan", "no trace given (usage: gpusim plan TRACE... [options])");
    batch_traces t;
    if ((rc = cli_traces_load("plan", &a, &t)) != 0)
        return rc;
    sim_error err;
    sim_error_clear(&err);
    cli_device dev;
    if (cli_resolve_device(&a, t.dev_name, t.dev_capacity, &dev, &err) != SIM_OK) {
        batch_traces_release(&t);
        return cli_usage_error("plan", "%s", err.msg);
    }
    sim_kv kv[CLI_MAX_KV];
    plan_job j = {
        .t = &t,
        .base = {.opts = kv, .n_opts = cli_strategy_kv(&a, kv, CLI_MAX_KV)},
        .model = dev.info,
        .ops = ops,
        .n_ops = n_ops,
        .gpus = gpus,
        .n_gpus = n_gpus,
        .cells = calloc((size_t)n_gpus * n_ops, sizeof(plan_cell)),
        .mins = calloc(n_ops, sizeof(plan_min)),
    };
    if (j.cells == NULL || j.mins == NULL) {
        free(j.cells);
        free(j.mins);
        batch_traces_release(&t);
        fprintf(stderr, "gpusim: out of memory\n");
        return 2;
    }
    batch_parallel(jobs, tasks, plan_task, &j);
    rc = 0;
    /* a broken trace fails every run alike: report the first, in a fixed order */
    for (size_t i = 0; i < (size_t)n_gpus * n_ops && rc == 0; i++)
        if (cell_fatal(&j.cells[i]))
            rc = cli_fail(&j.cells[i].err);
    for (uint32_t k = 0; k < n_ops && rc == 0; k++)
        if (j.mins[k].st != SIM_OK)
            rc = cli_fail(&j.mins[k].err);
    if (rc == 0) {
        sim_buf out;
        sim_buf_init(&out);
        if (json)
            plan_json(&j, &out);
        else {
            plan_text(&j, &out);
            rstrip_lines(&out);
        }
        const char *outpath = cli_get(&a, "output");
        if (sim_buf_write_file(&out, outpath ? outpath : "-", &err) != SIM_OK)
            rc = cli_fail(&err);
        sim_buf_release(&out);
    }
    free(j.cells);
    free(j.mins);
    batch_traces_release(&t);
    return rc;
}
