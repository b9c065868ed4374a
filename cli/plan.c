/* gpusim plan TRACE... : capacity planning (answers/plan.h) over the GPUs of the
 * catalog (or --gpus) and the strategies, on a card like the trace's; the tables are
 * reports/plan.h. */
#include <stdlib.h>
#include <string.h>

#include "answers/plan.h"
#include "cli.h"
#include "common.h"
#include "reports/plan.h"
#include "sim/buf.h"
#include "sim/gpus.h"

#define PLAN_MAX_GPUS 64

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
    plan_question q = {
        .t = &t,
        .base = {.opts = kv, .n_opts = cli_strategy_kv(&a, kv, CLI_MAX_KV)},
        .model = dev.info,
        .ops = ops,
        .n_ops = n_ops,
        .gpus = gpus,
        .n_gpus = n_gpus,
    };
    plan_answer ans;
    if (plan_answer_compute(&q, jobs, &ans, &err) != SIM_OK) {
        batch_traces_release(&t);
        return cli_fail(&err);
    }
    sim_buf out;
    sim_buf_init(&out);
    if (json)
        report_plan_json(&q, &ans, &out);
    else
        report_plan_text(&q, &ans, &out);
    const char *outpath = cli_get(&a, "output");
    if (sim_buf_write_file(&out, outpath ? outpath : "-", &err) != SIM_OK)
        rc = cli_fail(&err);
    sim_buf_release(&out);
    plan_answer_release(&ans);
    batch_traces_release(&t);
    return rc;
}
