/* gpusim tune TRACE... : which allocator settings of the framework the user runs
 * make the workload smallest, fit a card or run without an OOM (answers/tune.h),
 * ranked (reports/tune.h), with the line to paste. */
#include <stdlib.h>
#include <string.h>

#include "answers/graphs.h"
#include "answers/tune.h"
#include "cli.h"
#include "commands.h"
#include "common.h"
#include "reports/progress.h"
#include "reports/tune.h"
#include "sim/buf.h"
#include "strategies/registry.h"

static const cli_opt TUNE_OPTS[] = {
    CLI_OPT("framework", "torch|tf|jax: whose allocator settings to search (default torch)"),
    CLI_OPT("goal",
            "min-reserved|fit|no-oom: the smallest peak reserved (default); the smallest that runs on the --gpu or "
            "--capacity given; the fewest OOMs (replayed with --on-oom=skip)"),
    CLI_OPT("strategy", "NAME: the allocator the program runs now (default: torch, or greedy for tf and jax)"),
    CLI_OPT("top", "N: rows of the text table (default 10, 0 = all; the current setting is always shown)"),
    CLI_REPLAY_OPTS,
    CLI_FORMAT_OPT,
    CLI_OUTPUT_OPT,
    CLI_JOBS_OPT,
    CLI_ON_OOM_OPT,
    {NULL, false, NULL},
};

static void tune_help(void)
{
    printf("usage: gpusim tune TRACE... [options]\n\n"
           "Searches the allocator settings of one framework for the trace(s): PyTorch's expandable_segments,\n"
           "max_split_size_mb (a grid, refined around its best value), roundup_power2_divisions,\n"
           "garbage_collection_threshold with a memory fraction and backend:cudaMallocAsync (when modelled);\n"
           "TensorFlow's growth, garbage collection, the smallest memory_limit and cuda_malloc_async; JAX's\n"
           "preallocation, the smallest memory fraction and the platform allocator. The strategy options given\n"
           "are the current setting. Prints the settings ranked for the goal, the lower bounds (ideal, planned)\n"
           "and the line to paste for the best.\n\n");
    cli_print_options(stdout, TUNE_OPTS);
    printf("\nexit status: 0 ran, 2 usage or I/O error, 3 invalid trace\n");
}

static const cli_command TUNE = {
    "tune", TUNE_OPTS, tune_help,
    CLI_USES_FORMAT | CLI_USES_ON_OOM | CLI_USES_JOBS | CLI_USES_TRACES | CLI_USES_DEVICE | CLI_USES_KV,
    NULL,
};

typedef struct tune_progress {
    progress *p;
    uint64_t events;
} tune_progress;

static void on_progress(void *ctx, uint64_t runs)
{
    tune_progress *tp = ctx;
    progress_update(tp->p, runs * tp->events);
}

/* --framework, --goal, --strategy and --top: SIM_EUSAGE on a value that does not hold. */
static sim_status tune_args(cli_session *s, tune_question *q, uint32_t *top)
{
    const char *fw = cli_get(&s->a, "framework"), *goal = cli_get(&s->a, "goal"), *topv = cli_get(&s->a, "top");
    q->framework = TUNE_TORCH;
    q->goal = TUNE_GOAL_MIN_RESERVED;
    if (fw && !tune_framework_parse(fw, &q->framework))
        return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "--framework=%s: expected torch, tf or jax", fw);
    if (goal && !tune_goal_parse(goal, &q->goal))
        return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "--goal=%s: expected min-reserved, fit or no-oom", goal);
    if (q->goal == TUNE_GOAL_FIT && !cli_has(&s->a, "gpu") && !cli_has(&s->a, "capacity"))
        return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "--goal=fit needs the card: --gpu=NAME or --capacity=SIZE");
    *top = 10;
    if (topv) {
        char *end = NULL;
        unsigned long v = strtoul(topv, &end, 10);
        if (end == topv || *end || v > TUNE_MAX_CANDIDATES)
            return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "--top=%s: expected 0..%d", topv, TUNE_MAX_CANDIDATES);
        *top = (uint32_t)v;
    }
    const char *dflt = q->framework == TUNE_TORCH ? "torch" : "greedy";
    sim_status st = cli_pick_strategy(&s->a, dflt, &s->ops[0], &s->err);
    if (st != SIM_OK)
        return st;
    s->n_ops = 1;
    /* PyTorch runs its caching allocator or cudaMallocAsync; TensorFlow and JAX run BFC */
    strategy_family f = s->ops[0]->family;
    bool ok = q->framework == TUNE_TORCH ? f == STRATEGY_FAMILY_TORCH || f == STRATEGY_FAMILY_ASYNC
                                         : f == STRATEGY_FAMILY_BFC;
    if (ok)
        return SIM_OK;
    return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "--strategy=%s is not an allocator of --framework=%s",
                         s->ops[0]->name, tune_framework_name(q->framework));
}

int cli_tune_io(cli_io *io, int argc, char **argv)
{
    cli_session s;
    sim_status st = cli_session_parse_io(&s, &TUNE, io, argc, argv);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    tune_question q;
    memset(&q, 0, sizeof q);
    uint32_t top = 10;
    if ((st = tune_args(&s, &q, &top)) != SIM_OK || (st = cli_session_prepare(&s, TUNE.uses)) != SIM_OK)
        return cli_session_end(&s, st);
    /* every setting from an empty allocator: a recorded start state was shaped by the
     * recording's own setting, and would favour it */
    s.t.from_empty = true;
    q.t = &s.t;
    q.base = (engine_config){.device = s.dev.info, .on_oom_skip = s.skip_oom};
    q.current = s.ops[0];
    q.user = s.kv;
    q.n_user = s.n_kv;
    q.jobs = s.jobs;
    progress prog;
    progress_init(&prog, stderr, "tune", s.t.events * tune_estimate_runs(&q), true);
    tune_progress tp = {&prog, s.t.events};
    q.progress = on_progress;
    q.progress_ctx = &tp;
    tune_answer ans;
    st = tune_run(&q, &ans, &s.err);
    progress_finish(&prog);
    /* one trace with captures under a model with pools: the graphs' pool sharing and
     * capture order under the current setting (answers/graphs.h) */
    graphs_answer *ga = NULL;
    engine_config gc = q.base;
    gc.ops = q.current;
    gc.opts = q.user;
    gc.n_opts = q.n_user;
    if (st == SIM_OK && s.t.n == 1 && graphs_applies(&gc, s.t.b[0])) {
        ga = calloc(1, sizeof *ga);
        st = ga == NULL ? sim_error_set(&s.err, SIM_ENOMEM, NULL, 0, 0, "out of memory")
                        : graphs_answer_compute(&gc, s.t.b[0], ga, &s.err);
    }
    if (st == SIM_OK) {
        sim_buf out;
        sim_buf_init(&out);
        const char *const *paths = s.a.positional;
        if (s.json) {
            report_tune_json(&q, &ans, ga, paths, (uint32_t)s.a.n_positional, &out);
        } else {
            report_tune_text(&q, &ans, paths, (uint32_t)s.a.n_positional, top, &out);
            report_tune_graphs_text(ga, &out);
        }
        st = cli_session_write(&s, &out);
        sim_buf_release(&out);
    }
    tune_answer_release(&ans);
    free(ga);
    return cli_session_end(&s, st);
}
