/* gpusim plan TRACE... : capacity planning (answers/plan.h) over the GPUs of the
 * catalog (or --gpus) and the strategies, on a card like the trace's; the tables are
 * reports/plan.h. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "answers/plan.h"
#include "cli.h"
#include "common.h"
#include "reports/plan.h"
#include "reports/progress.h"
#include "sim/buf.h"
#include "sim/gpus.h"
#include "sim/units.h"

#define PLAN_MAX_GPUS 64

static const cli_opt PLAN_OPTS[] = {
    CLI_OPT("strategies", "S,S,...: strategies to plan for (default: as compare)"),
    CLI_OPT("gpus", "all|NAME,NAME,...: the GPUs of the table (default all of the catalog)"),
    CLI_REPLAY_OPTS,
    CLI_FORMAT_OPT,
    CLI_OUTPUT_OPT,
    CLI_JOBS_OPT,
    {NULL, false, NULL},
};

static void plan_help(void)
{
    printf("usage: gpusim plan TRACE... [options]\n\n"
           "Capacity planning: for each GPU of the catalog and each allocator model, whether the\n"
           "trace runs without running out of memory, its peak on the device and the headroom left;\n"
           "and for each model the smallest capacity it runs on (bisection to 1 MiB, confirmed by\n"
           "runs at that capacity and 1 MiB less, with a warning when more memory can fail).\n"
           "--capacity=SIZE (repeatable) adds a row for a card of that size (\"does it fit in 24 GB?\").\n\n");
    cli_print_options(stdout, PLAN_OPTS);
    printf("\nexit status: 0 ran, 2 usage or I/O error, 3 invalid trace\n");
}

static sim_status pick_gpus(const cli_args *a, const gpu_model **out, uint32_t *n, sim_error *err)
{
    *n = 0;
    const char *v = cli_get(a, "gpus");
    if (v == NULL || strcmp(v, "all") == 0) {
        for (size_t i = 0; i < gpus_count() && *n < PLAN_MAX_GPUS; i++)
            out[(*n)++] = gpus_get(i);
        return SIM_OK;
    }
    cli_list items;
    for (char *tok = cli_list_first(&items, v); tok; tok = cli_list_next(&items)) {
        const gpu_model *g = gpus_find(tok);
        if (g == NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--gpus: unknown GPU '%s' (see 'gpusim gpus')", tok);
        if (*n == PLAN_MAX_GPUS)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--gpus: at most %d GPUs", PLAN_MAX_GPUS);
        out[(*n)++] = g;
    }
    if (*n == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--gpus: no GPU named");
    return SIM_OK;
}

/* Every --capacity=SIZE (repeatable) as a hypothetical card after the catalog's rows:
 * named as given ("24GB"), with the compute capability of the card of the session. */
static sim_status add_capacities(const cli_session *s, gpu_model *extra, const gpu_model **out, uint32_t *n,
                                 sim_error *err)
{
    const cli_args *a = &s->a;
    for (int i = 0; i < a->n_opts; i++) {
        if (strcmp(a->names[i], "capacity") != 0)
            continue;
        uint64_t bytes = 0;
        if (units_parse_size(a->values[i], &bytes, err) != SIM_OK || bytes == 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", bytes == 0 ? "a card needs a positive size" : err->msg);
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--capacity: %s", msg);
        }
        if (*n == PLAN_MAX_GPUS)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--gpus and --capacity: at most %d cards",
                                 PLAN_MAX_GPUS);
        extra[*n] = (gpu_model){.name = a->values[i], .aliases = "", .capacity_bytes = bytes,
                                .cc_major = s->dev.info.cc_major, .cc_minor = s->dev.info.cc_minor,
                                .source = "--capacity"};
        out[*n] = &extra[*n];
        (*n)++;
    }
    return SIM_OK;
}

/* The progress line: replays done × the events of one replay. */
typedef struct plan_progress {
    progress line;
    _Atomic uint64_t replays;
    uint64_t events_per_replay;
} plan_progress;

static void on_replay(void *ctx)
{
    plan_progress *p = ctx;
    uint64_t n = atomic_fetch_add(&p->replays, 1) + 1;
    progress_update(&p->line, n * p->events_per_replay);
}

static const cli_command PLAN = {
    "plan", PLAN_OPTS, plan_help,
    CLI_USES_FORMAT | CLI_USES_STRATEGIES | CLI_USES_JOBS | CLI_USES_TRACES | CLI_USES_DEVICE | CLI_USES_KV, NULL,
};

int cmd_plan(int argc, char **argv)
{
    return cli_plan_io(NULL, argc, argv);
}

int cli_plan_io(cli_io *io, int argc, char **argv)
{
    cli_session s;
    const gpu_model *gpus[PLAN_MAX_GPUS];
    gpu_model extra[PLAN_MAX_GPUS];
    uint32_t n_gpus = 0;
    sim_status st = cli_session_parse_io(&s, &PLAN, io, argc, argv);
    if (st == SIM_OK)
        st = cli_session_prepare(&s, CLI_USES_FORMAT | CLI_USES_STRATEGIES);
    if (st == SIM_OK)
        st = pick_gpus(&s.a, gpus, &n_gpus, &s.err);
    if (st == SIM_OK)
        st = cli_session_prepare(&s, PLAN.uses & ~(unsigned)(CLI_USES_FORMAT | CLI_USES_STRATEGIES));
    if (st == SIM_OK)
        st = add_capacities(&s, extra, gpus, &n_gpus, &s.err);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    plan_question q = {
        .t = &s.t,
        .base = {.opts = s.kv, .n_opts = s.n_kv},
        .model = s.dev.info,
        .ops = s.ops,
        .n_ops = s.n_ops,
        .gpus = gpus,
        .n_gpus = n_gpus,
    };
    plan_answer ans;
    size_t tasks = (size_t)n_gpus * s.n_ops + s.n_ops;
    /* a minimum takes about 30 replays (a bisection to 1 MiB and the probes above it):
     * the total is an estimate */
    plan_progress pp = {.events_per_replay = 0};
    atomic_init(&pp.replays, 0);
    for (uint32_t i = 0; i < s.t.n; i++)
        pp.events_per_replay += evbuf_count(s.t.b[i]);
    progress_init(&pp.line, stderr, "plan", ((uint64_t)n_gpus * s.n_ops + 30u * s.n_ops) * pp.events_per_replay,
                  true);
    q.on_replay = on_replay;
    q.on_replay_ctx = &pp;
    st = plan_answer_compute(&q, cli_jobs_for(s.jobs, tasks), &ans, &s.err);
    progress_finish(&pp.line);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    sim_buf out;
    sim_buf_init(&out);
    if (s.json)
        report_plan_json(&q, &ans, &out);
    else
        report_plan_text(&q, &ans, &out);
    st = cli_session_write(&s, &out);
    sim_buf_release(&out);
    plan_answer_release(&ans);
    return cli_session_end(&s, st);
}
