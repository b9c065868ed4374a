/* gpusim compare TRACE... : the same trace(s) under several strategies on one device,
 * parsed once into memory and replayed in parallel threads, printed in a fixed
 * order (reports/compare.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answers/batch.h"
#include "answers/capture.h"
#include "answers/graphs.h"
#include "cli.h"
#include "commands.h"
#include "common.h"
#include "reports/compare.h"
#include "reports/html.h"
#include "reports/progress.h"
#include "reports/result.h"
#include "sim/buf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/trace.h"

/* ---------------------------------------------------------------- shared: traces */

typedef struct traces_open_ctx {
    const batch_traces *t;
    const strategy_ops *ops;
    evbuf_cursor cur[BATCH_MAX_TRACES];
} traces_open_ctx;

static sim_status traces_open(void *ctx, sim_event_source *srcs, sim_error *err)
{
    (void)err;
    traces_open_ctx *o = ctx;
    batch_sources(o->t, o->ops, o->cur, srcs);
    return SIM_OK;
}

static void traces_close(void *ctx)
{
    (void)ctx;
}

/* The positional traces, in memory, through the two passes of an HTML report
 * (answers/capture.h). */
static sim_status traces_capture(const batch_traces *t, const engine_config *cfg, capture **out, sim_error *err)
{
    traces_open_ctx *o = calloc(1, sizeof *o);
    if (o == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    o->t = t;
    o->ops = cfg->ops;
    capture_sources cs = {t->n, traces_open, traces_close, o};
    sim_status st = capture_run(cfg, &cs, HTML_PLOT_WIDTH, out, err);
    free(o);
    return st;
}

/* ---------------------------------------------------------------- compare */

static const cli_opt COMPARE_OPTS[] = {
    CLI_OPT("strategies",
            "S,S,...: strategies to compare (default: greedy, growth, limit with --limit, torch, raw, ideal, "
            "then any other this build has)"),
    CLI_REPLAY_OPTS,
    CLI_FORMAT_OPT,
    CLI_OUTPUT_OPT,
    CLI_OPT("report", "FILE.html: a self-contained HTML report with every strategy side by side"),
    CLI_X_OPT,
    CLI_JOBS_OPT,
    CLI_ON_OOM_OPT,
    CLI_FROM_EMPTY_OPT,
    {NULL, false, NULL},
};

typedef struct compare_row {
    const strategy_ops *ops;
    sim_run *run;        /* borrowed from cap when there is one */
    capture *cap;
    sim_status st;
    sim_error err;
    graphs_answer *graphs; /* a trace with captures under a model with pools, else NULL */
} compare_row;

typedef struct compare_job {
    const batch_traces *t;
    engine_config base;
    compare_row *rows;
    bool report;
    progress *prog;
    _Atomic uint64_t done[CLI_MAX_STRATEGIES];
    uint32_t n_rows;
} compare_job;

typedef struct row_progress {
    compare_job *j;
    size_t row;
} row_progress;

static void on_progress(void *ctx, uint64_t events)
{
    row_progress *rp = ctx;
    compare_job *j = rp->j;
    atomic_store(&j->done[rp->row], events);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < j->n_rows; i++)
        sum += atomic_load(&j->done[i]);
    progress_update(j->prog, sum);
}

static void compare_task(void *ctx, size_t i)
{
    compare_job *j = ctx;
    compare_row *row = &j->rows[i];
    engine_config cfg = j->base;
    cfg.ops = row->ops;
    row_progress rp = {j, i};
    cfg.progress = on_progress;
    cfg.progress_ctx = &rp;
    sim_error_clear(&row->err);
    if (j->report) {
        row->st = traces_capture(j->t, &cfg, &row->cap, &row->err);
        row->run = row->cap ? row->cap->run : NULL;
    } else {
        row->st = batch_replay(j->t, &cfg, &row->run, &row->err);
    }
    /* one trace with captures under a model with pools: each pool, and the what-if */
    if (row->st == SIM_OK && j->t->n == 1 && row->ops->pools != NULL && row->run->n_sources == 1 &&
        row->run->sources[0].pool_events > 0) {
        row->graphs = calloc(1, sizeof *row->graphs);
        row->st = row->graphs == NULL ? sim_error_set(&row->err, SIM_ENOMEM, NULL, 0, 0, "out of memory")
                                      : graphs_answer_compute(&cfg, j->t->b[0], row->graphs, &row->err);
    }
}

static void compare_help(void)
{
    printf("usage: gpusim compare TRACE... [options]\n\n"
           "Replays the trace(s) under several allocator models on one device (parsed once, replayed\n"
           "from memory in parallel) and prints their peaks, fragmentation and OOMs side by side.\n\n");
    cli_print_options(stdout, COMPARE_OPTS);
    printf("\nexit status: 0 ran, 2 usage or I/O error, 3 invalid trace\n");
}

static const cli_command COMPARE = {
    "compare", COMPARE_OPTS, compare_help,
    CLI_USES_FORMAT | CLI_USES_ON_OOM | CLI_USES_STRATEGIES | CLI_USES_JOBS | CLI_USES_TRACES | CLI_USES_DEVICE |
        CLI_USES_KV,
    NULL,
};

int cli_compare_io(cli_io *io, int argc, char **argv)
{
    cli_session s;
    sim_status st = cli_session_open_io(&s, &COMPARE, io, argc, argv);
    bool x_time = false;
    if (st == SIM_OK)
        st = cli_report_x(&s.a, &x_time, &s.err);
    /* one GPU holds one rank's allocator: the ranks of a job are not processes of one card */
    if (st == SIM_OK && s.ranks)
        st = sim_error_set(&s.err, SIM_EUSAGE, NULL, 0, 0,
                           "the %u %s are the ranks of one job, one GPU each, not processes sharing one GPU: "
                           "compare one rank at a time, or plan them on nodes (gpusim plan TRACE... --strategies=...)",
                           s.t.n, cli_session_ranks_what(&s, false));
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    const uint32_t n = s.n_ops;
    const batch_traces *t = &s.t;
    compare_row rows[CLI_MAX_STRATEGIES];
    memset(rows, 0, sizeof rows);
    for (uint32_t i = 0; i < n; i++)
        rows[i].ops = s.ops[i];
    const char *report = cli_get(&s.a, "report");
    progress prog;
    progress_init(&prog, stderr, "compare", t->events * n, false);
    compare_job *job = calloc(1, sizeof *job);
    if (job == NULL)
        return cli_session_end(&s, sim_error_set(&s.err, SIM_ENOMEM, NULL, 0, 0, "out of memory"));
    job->t = t;
    job->base = (engine_config){
        .device = s.dev.info,
        .opts = s.kv,
        .n_opts = s.n_kv,
        .on_oom_skip = s.skip_oom,
    };
    job->rows = rows;
    job->report = report != NULL;
    job->prog = &prog;
    job->n_rows = n;
    batch_parallel(cli_jobs_for(s.jobs, n), n, compare_task, job);
    progress_finish(&prog);
    free(job);

    /* the first failure in row order, so the message does not depend on --jobs; a bad
     * option names the strategy it was given to */
    for (uint32_t i = 0; i < n && st == SIM_OK; i++) {
        if ((st = rows[i].st) == SIM_EUSAGE)
            sim_error_set(&s.err, st, NULL, 0, 0, "%s: %s", rows[i].ops->name, rows[i].err.msg);
        else if (st != SIM_OK)
            s.err = rows[i].err;
    }
    if (st == SIM_OK && report) {
        const capture *caps[CLI_MAX_STRATEGIES];
        for (uint32_t i = 0; i < n; i++)
            caps[i] = rows[i].cap;
        sim_buf html;
        sim_buf_init(&html);
        report_html_opts ro = {NULL, x_time, NULL, 0};
        report_html_with(caps, n, &ro, &html);
        st = sim_buf_write_file(&html, report, &s.err);
        sim_buf_release(&html);
    }
    if (st == SIM_OK) {
        const sim_run *runs[CLI_MAX_STRATEGIES];
        const graphs_answer *graphs[CLI_MAX_STRATEGIES];
        for (uint32_t i = 0; i < n; i++) {
            runs[i] = rows[i].run;
            graphs[i] = rows[i].graphs;
        }
        sim_buf out;
        sim_buf_init(&out);
        if (s.json)
            report_compare_json_graphs(runs, graphs, n, &out);
        else
            report_compare_text_graphs(runs, graphs, n, &out);
        st = cli_session_write(&s, &out);
        sim_buf_release(&out);
    }
    for (uint32_t i = 0; i < n; i++) {
        free(rows[i].graphs);
        if (rows[i].cap)
            capture_free(rows[i].cap);
        else
            sim_run_free(rows[i].run);
    }
    return cli_session_end(&s, st);
}
