/* gpusim replay TRACE... : one replay of one or more traces under one strategy. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "against.h"
#include "answers/capture.h"
#include "answers/whatif.h"
#include "common.h"
#include "cli.h"
#include "reports/html.h"
#include "reports/progress.h"
#include "reports/result.h"
#include "sim/buf.h"
#include "sim/engine.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/input.h"

static const cli_opt REPLAY_OPTS[] = {
    {"strategy", true, "S: the allocator model (gpusim strategies); default " GPUSIM_DEFAULT_STRATEGY},
    CLI_DEVICE_OPTS,
    CLI_STRATEGY_OPTS,
    {"format", true, "text|json: output for people or machines (default text)"},
    {"output", true, "FILE: write the result there instead of stdout"},
    {"report", true, "FILE.html: a self-contained HTML report (timeline, fragmentation, memory map at the peak)"},
    {"timeline", true, "FILE.csv: the memory curve (t, event, requested, allocated, reserved, fragmentation)"},
    {"timeline-rows", true, "N: at most N timeline rows, merged keeping maxima (default 2000)"},
    {"on-oom", true, "stop|skip: an OOM ends the process (default), or the allocation is dropped"},
    {"fail-on-oom", false, "exit with status 1 when an out-of-memory happens"},
    {"paranoid", false, "run the allocator's full invariant checker after every event"},
    CLI_INPUT_OPTS,
    {"against-recorded", false, "compare with the real allocator's recorded numbers (one recording; default "
                                "strategy: torch for PyTorch, greedy for TensorFlow)"},
    {"from-empty", false, "a snapshot recorded mid-run starts from an empty allocator, its live blocks allocated "
                          "first, instead of from its rebuilt state"},
    {NULL, false, NULL},
};

static void replay_help(void)
{
    printf("usage: gpusim replay TRACE... [options]\n\n"
           "Replays one or more traces (several traces = several processes sharing one GPU)\n"
           "through an allocator model and reports peak memory, fragmentation and OOMs.\n\n");
    cli_print_options(stdout, REPLAY_OPTS);
    printf("\nexit status: 0 ran, 1 --fail-on-oom and an OOM happened, 2 usage or I/O error, 3 invalid trace\n");
}

/* The source of reader i of n: one recording made mid-run starts from its rebuilt
 * state where the strategy can take it (traces/IMPORT.md), in every pass. */
static sim_event_source source_for(trace_input *in, int n, const strategy_ops *ops, bool from_empty)
{
    if (n == 1 && !from_empty && ops->seed != NULL && input_seed(in) != NULL)
        return input_source_seeded(in);
    return input_source(in);
}

/* --report replays twice more (capture.h): each pass reads the traces afresh. */
typedef struct reopen_ctx {
    const cli_io *io;
    trace_input **readers;
    const char **paths;
    const char *from;
    const input_options *iopt;
    int n, opens;
    const strategy_ops *ops;
    bool from_empty;
} reopen_ctx;

static sim_status reopen(void *ctx, sim_event_source *srcs, sim_error *err)
{
    reopen_ctx *r = ctx;
    for (int i = 0; i < r->n; i++) {
        if (r->opens > 0) {
            input_close(r->readers[i]);
            r->readers[i] = NULL;
            sim_status st = cli_input_open(r->io, r->paths[i], r->from, r->iopt, &r->readers[i], err);
            if (st != SIM_OK)
                return st;
        }
        srcs[i] = source_for(r->readers[i], r->n, r->ops, r->from_empty);
    }
    r->opens++;
    return SIM_OK;
}

static void reopen_close(void *ctx)
{
    (void)ctx;
}

static void on_progress(void *ctx, uint64_t events)
{
    progress_update(ctx, events);
}

/* PyTorch's own OOM message suggests expandable_segments:True; answer whether it
 * would have helped by replaying the same traces that way (answers/whatif.h). */
static sim_status replay_whatif(const cli_session *s, const engine_config *cfg, whatif *w, sim_error *err)
{
    const cli_args *a = &s->a;
    trace_input *readers[CLI_MAX_ARGS] = {0};
    sim_event_source sources[CLI_MAX_ARGS];
    input_options iopt;
    sim_status st = cli_input_options(a, &iopt, err);
    int n = a->n_positional;
    for (int i = 0; i < n && st == SIM_OK; i++) {
        st = cli_input_open(s->io, a->positional[i], cli_get(a, "from"), &iopt, &readers[i], err);
        if (st == SIM_OK)
            sources[i] = source_for(readers[i], n, cfg->ops, cli_has(a, "from-empty"));
    }
    if (st == SIM_OK)
        st = whatif_expandable(cfg, sources, (uint32_t)n, w, err);
    for (int i = 0; i < n; i++)
        input_close(readers[i]);
    return st;
}

static const cli_command REPLAY = {
    "replay", REPLAY_OPTS, replay_help,
    CLI_USES_STRATEGY | CLI_USES_FORMAT | CLI_USES_ON_OOM | CLI_USES_INPUTS | CLI_USES_DEVICE | CLI_USES_KV,
    GPUSIM_DEFAULT_STRATEGY,
};

static sim_status replay(cli_session *s, int *verdict)
{
    cli_args *a = &s->a;
    sim_error *err = &s->err;
    sim_status st = cli_session_prepare(s, CLI_USES_STRATEGY);
    if (st == SIM_OK)
        st = cli_session_prepare(s, CLI_USES_FORMAT | CLI_USES_ON_OOM);
    if (st != SIM_OK)
        return st;
    uint64_t rows = 2000;
    const char *v = cli_get(a, "timeline-rows");
    if (v && (units_parse_u64(v, &rows, err) != SIM_OK || rows == 0))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--timeline-rows: expected a positive integer, not '%s'", v);
    if ((st = cli_session_prepare(s, CLI_USES_INPUTS | CLI_USES_DEVICE | CLI_USES_KV)) != SIM_OK)
        return st;
    const strategy_ops *ops = s->ops[0];
    trace_input **readers = s->in;
    const int n = a->n_positional;
    const bool from_empty = cli_has(a, "from-empty");
    sim_event_source sources[CLI_MAX_ARGS];
    for (int i = 0; i < n; i++)
        sources[i] = source_for(readers[i], n, ops, from_empty);
    if (!cli_has(a, "alloc-conf") && strcmp(ops->name, "torch") == 0 && input_records_settings(readers[0]))
        cli_session_note(s, "torch uses the recording's allocator_settings: %s (--alloc-conf overrides them)",
                         input_alloc_conf(readers[0]) ? input_alloc_conf(readers[0]) : "PyTorch's defaults");
    const sim_kv *kv = s->kv;
    sim_run *run = NULL;
    capture *cap = NULL;
    whatif wi = {0};
    engine_config cfg = {
        .device = s->dev.info,
        .ops = ops,
        .opts = kv,
        .n_opts = s->n_kv,
        .on_oom_skip = s->skip_oom,
        .paranoid = cli_has(a, "paranoid"),
        .timeline_rows = cli_has(a, "timeline") ? rows : 0,
    };
    uint64_t estimate = 0;
    for (int i = 0; i < n; i++)
        estimate += progress_estimate_events(a->positional[i]);
    progress prog;
    progress_init(&prog, stderr, "replay", estimate, true);
    cfg.progress = on_progress;
    cfg.progress_ctx = &prog;
    const char *report = cli_get(a, "report");
    if (report) {
        reopen_ctx rc_ctx = {s->io, readers, a->positional, cli_get(a, "from"), &s->iopt, n, 0, ops, from_empty};
        capture_sources cs = {(uint32_t)n, reopen, reopen_close, &rc_ctx};
        st = capture_run(&cfg, &cs, HTML_PLOT_WIDTH, &cap, err);
        run = cap ? cap->run : NULL;
    } else {
        st = engine_run(&cfg, sources, (uint32_t)n, &run, err);
    }
    progress_finish(&prog);
    if (st == SIM_OK && whatif_expandable_applies(&cfg, run))
        st = replay_whatif(s, &cfg, &wi, err);
    const char *tl = cli_get(a, "timeline");
    if (st == SIM_OK && tl) {
        sim_buf csv;
        sim_buf_init(&csv);
        report_timeline_csv(run, &csv);
        st = sim_buf_write_file(&csv, tl, err);
        sim_buf_release(&csv);
    }
    if (st == SIM_OK && report) {
        const capture *caps[1] = {cap};
        sim_buf html;
        sim_buf_init(&html);
        report_html(caps, 1, &html);
        st = sim_buf_write_file(&html, report, err);
        sim_buf_release(&html);
    }
    if (st == SIM_OK) {
        sim_buf out;
        sim_buf_init(&out);
        if (s->json)
            report_json_whatif(run, &wi, &out);
        else
            report_text_whatif(run, &wi, &out);
        st = cli_session_write(s, &out);
        sim_buf_release(&out);
    }
    if (st == SIM_OK)
        *verdict = (cli_has(a, "fail-on-oom") && run->total.ooms > 0) ? 1 : 0;
    if (cap)
        capture_free(cap);
    else
        sim_run_free(run);
    return st;
}

int cmd_replay(int argc, char **argv)
{
    return cli_replay_io(NULL, argc, argv);
}

int cli_replay_io(cli_io *io, int argc, char **argv)
{
    cli_session s;
    sim_status st = cli_session_parse_io(&s, &REPLAY, io, argc, argv);
    if (st == SIM_OK)
        st = cli_session_need_traces(&s);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    if (cli_has(&s.a, "against-recorded"))
        return against_run(&s);
    int verdict = 0;
    if ((st = replay(&s, &verdict)) != SIM_OK)
        return cli_session_end(&s, st);
    cli_session_close(&s);
    return verdict;
}
