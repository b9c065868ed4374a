/* gpusim replay TRACE... : one replay of one or more traces under one strategy. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "against.h"
#include "answers/capture.h"
#include "answers/graphs.h"
#include "answers/moment.h"
#include "answers/node.h"
#include "answers/whatif.h"
#include "cli.h"
#include "commands.h"
#include "common.h"
#include "reports/html.h"
#include "reports/node.h"
#include "reports/progress.h"
#include "reports/result.h"
#include "reports/snapshot_export.h"
#include "reports/summary.h"
#include "sim/buf.h"
#include "sim/engine.h"
#include "sim/evbuf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/input.h"

static const cli_opt REPLAY_OPTS[] = {
    CLI_OPT("strategy", "S: the allocator model (gpusim strategies); default " GPUSIM_DEFAULT_STRATEGY),
    CLI_DEVICE_OPTS,
    CLI_STRATEGY_OPTS,
    CLI_FORMAT_OPT,
    CLI_OUTPUT_OPT,
    CLI_OPT("report", "FILE.html: a self-contained HTML report (timeline, fragmentation, memory map at the OOM and at the peak)"),
    CLI_X_OPT,
    CLI_OPT("timeline", "FILE.csv: the memory curve (t, event, requested, allocated, reserved, fragmentation)"),
    CLI_OPT("export-snapshot", "FILE.pickle: what the simulated allocator did, as a PyTorch memory snapshot "
                               "(pytorch.org/memory_viz opens it; every strategy but ideal, one process)"),
    CLI_OPT("window", "T0:T1: with --export-snapshot, only the entries from T0 to T1 of the replay's time, and the "
                      "state at T1 as its segments (microseconds as in time_us, or 2.5s, 300ms, 40us, 100ns; "
                      "T0: or :T1 leaves an end open)"),
    CLI_OPT("export-min-size", "SIZE: with --export-snapshot, entries only for allocations of at least SIZE (a "
                               "decimated view of a long replay; the segments still hold every block)"),
    CLI_OPT("timeline-rows", "N: at most N timeline rows, merged keeping maxima (default 2000)"),
    CLI_ON_OOM_OPT,
    CLI_FLAG("fail-on-oom", "exit with status 1 when an out-of-memory happens"),
    CLI_FLAG("paranoid", "run the allocator's full invariant checker after every event"),
    CLI_OPT_OPTIONAL("summary",
                     "end|peak|oom: print the framework's own view of the allocator at the end (default), "
                     "where reserved memory first peaked, or at the first OOM, instead of the result: "
                     "torch.cuda.memory_summary() (torch, async), TF get_memory_info and XLA memory_stats() (BFC); "
                     "--format=json: the memory_stats() dict"),
    CLI_OPT("node", "GPUS: a machine with several GPUs (8xA100-40GB, or A100-40GB,T4): the traces are the ranks "
                    "of one job, rank r on its r-th visible GPU, one allocator per GPU"),
    CLI_OPT("visible", "0,3: the job's CUDA_VISIBLE_DEVICES on --node (default all)"),
    CLI_OPT("replicas", "N: on --node, the one trace replicated on the first N visible GPUs (DDP, MirroredStrategy)"),
    CLI_OPT("job", "VISIBLE:TRACE[+TRACE...]: on --node, one more job (process) with its own visible GPUs and "
                   "ranks, after the first; repeatable"),
    CLI_INPUT_OPTS,
    CLI_FLAG("against-recorded", "compare with the real allocator's recorded numbers (one recording; default "
                                 "strategy: torch for PyTorch, greedy for TensorFlow, planned for XLA)"),
    CLI_FROM_EMPTY_OPT,
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

/* Units of --window's times: a plain number is microseconds (a snapshot's time_us). */
static const struct {
    const char *suffix;
    uint64_t ns;
} TIME_UNITS[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"", 1000}};

/* A time of --window into nanoseconds: digits, maybe a fraction (nine digits of
 * it are read, enough for any unit), maybe a unit. False on anything else or
 * beyond 2^64 - 1 ns. */
static bool parse_time_ns(const char *text, uint64_t *out)
{
    uint64_t whole = 0, frac = 0, scale = 1;
    const char *p = text;
    bool digits = false;
    for (; *p >= '0' && *p <= '9'; p++, digits = true) {
        if (whole > (UINT64_MAX - 9) / 10)
            return false;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
            if (scale < 1000000000) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                scale *= 10;
            }
    if (!digits)
        return false;
    for (size_t i = 0; i < sizeof TIME_UNITS / sizeof TIME_UNITS[0]; i++) {
        if (strcmp(p, TIME_UNITS[i].suffix) != 0)
            continue;
        uint64_t unit = TIME_UNITS[i].ns, part = frac * unit / scale; /* < 10^9 * 10^9 */
        if (whole > (UINT64_MAX - part) / unit)
            return false;
        *out = whole * unit + part;
        return true;
    }
    return false;
}

/* --window=T0:T1 (either end may be empty) and --export-min-size into cfg; both need
 * --export-snapshot. */
static sim_status export_options(const cli_args *a, snapshot_export_config *cfg, sim_error *err)
{
    cfg->from_ns = 0;
    cfg->to_ns = UINT64_MAX;
    cfg->min_size = 0;
    const char *w = cli_get(a, "window"), *m = cli_get(a, "export-min-size");
    if ((w || m) && !cli_has(a, "export-snapshot"))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--%s shapes the snapshot --export-snapshot writes; give --export-snapshot=FILE.pickle "
                             "too",
                             w ? "window" : "export-min-size");
    if (w) {
        const char *colon = strchr(w, ':');
        char from[64] = "";
        if (colon == NULL || (size_t)(colon - w) >= sizeof from)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--window: expected T0:T1, not '%s'", w);
        memcpy(from, w, (size_t)(colon - w));
        const char *bad = NULL;
        if (from[0] && !parse_time_ns(from, &cfg->from_ns))
            bad = from;
        else if (colon[1] && !parse_time_ns(colon + 1, &cfg->to_ns))
            bad = colon + 1;
        if (bad != NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--window: '%s' is not a time (microseconds, or a number with ns, us, ms or s)", bad);
        if (cfg->from_ns > cfg->to_ns)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--window: %s ends before it starts", w);
    }
    if (m && units_parse_size(m, &cfg->min_size, err) != SIM_OK)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--export-min-size: %s", err->msg);
    return SIM_OK;
}

/* The source of a reader: a recording made mid-run, alone on its device (one trace,
 * or one rank per GPU), starts from its rebuilt state where the strategy can take it
 * (traces/IMPORT.md), in every pass. */
static sim_event_source source_for(trace_input *in, bool alone, const strategy_ops *ops, bool from_empty)
{
    if (alone && !from_empty && ops->seed != NULL && input_seed(in) != NULL)
        return input_source_seeded(in);
    return input_source(in);
}

/* --report replays twice more (capture.h): each pass reads the traces afresh. */
typedef struct reopen_ctx {
    trace_input **readers;
    const cli_session *s;      /* cli_input_open: where each trace is read from */
    const char **paths;        /* the names given */
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
            sim_status st = cli_input_open(r->s, i, r->from, r->iopt, &r->readers[i], err);
            if (st != SIM_OK)
                return st;
        }
        srcs[i] = source_for(r->readers[i], r->n == 1, r->ops, r->from_empty);
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
 * would have helped by replaying the same traces that way (answers/whatif.h); with
 * bfc >= 0, BFC question bfc instead (for the report). */
static sim_status replay_whatif(const cli_session *s, const engine_config *cfg, const sim_run *run, int bfc, whatif *w,
                                sim_error *err)
{
    const cli_args *a = &s->a;
    trace_input *readers[CLI_MAX_ARGS] = {0};
    sim_event_source sources[CLI_MAX_ARGS];
    input_options iopt;
    sim_status st = cli_input_options(a, &iopt, err);
    int n = a->n_positional;
    for (int i = 0; i < n && st == SIM_OK; i++) {
        st = cli_input_open(s, i, cli_get(a, "from"), &iopt, &readers[i], err);
        if (st == SIM_OK)
            sources[i] = source_for(readers[i], n == 1, cfg->ops, cli_has(a, "from-empty"));
    }
    if (st == SIM_OK)
        st = bfc < 0 ? whatif_expandable(cfg, sources, (uint32_t)n, w, err)
                     : whatif_bfc(cfg, run, (uint32_t)bfc, sources, (uint32_t)n, w, err);
    for (int i = 0; i < n; i++)
        input_close(readers[i]);
    return st;
}

/* A trace with CUDA graph captures under a model with private pools: each pool at
 * the end of capture and the what-if over pool sharing and capture order, from
 * replays of the trace held in memory (answers/graphs.h). */
static sim_status replay_graphs(const cli_session *s, const engine_config *cfg, graphs_answer *g, sim_error *err)
{
    const cli_args *a = &s->a;
    trace_input *in = NULL;
    input_options iopt;
    sim_status st = cli_input_options(a, &iopt, err);
    if (st == SIM_OK)
        st = cli_input_open(s, 0, cli_get(a, "from"), &iopt, &in, err);
    evbuf *b = NULL;
    if (st == SIM_OK) {
        /* from empty: a recorded start state's blocks are allocations at the start (the
         * rewrite moves events, and a state is not one) */
        sim_event_source src = input_source(in);
        b = evbuf_new(src.path, src.name);
        st = b == NULL ? sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory") : evbuf_fill(b, &src, err);
    }
    if (st == SIM_OK)
        st = graphs_answer_compute(cfg, b, g, err);
    evbuf_free(b);
    input_close(in);
    return st;
}

/* ---------------------------------------------------------------- --node */

typedef struct node_inputs {
    trace_input *extra[CLI_MAX_ARGS]; /* readers opened here (replicas, --job traces) */
    int n_extra;
    sim_event_source srcs[NODE_MAX_JOBS][NODE_MAX_DEVICES];
    node_job jobs[NODE_MAX_JOBS];
    uint32_t n_jobs;
} node_inputs;

static sim_status open_extra(cli_session *s, node_inputs *ni, const char *path, sim_event_source *src)
{
    if (ni->n_extra == CLI_MAX_ARGS)
        return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "too many traces");
    trace_input **in = &ni->extra[ni->n_extra];
    sim_status st = input_open(path, cli_get(&s->a, "from"), &s->iopt, in, &s->err);
    if (st != SIM_OK)
        return st;
    ni->n_extra++;
    *src = input_source(*in);
    return SIM_OK;
}

/* The jobs of the command line: the positional traces (or --replicas copies of one)
 * on --visible, then each --job=VISIBLE:TRACE+TRACE. */
static sim_status node_jobs(cli_session *s, const node_spec *node, node_inputs *ni)
{
    cli_args *a = &s->a;
    sim_error *err = &s->err;
    node_job *j = &ni->jobs[0];
    snprintf(j->name, sizeof j->name, "job 1");
    sim_status st = node_parse_visible(cli_get(a, "visible"), node->n, j->visible, &j->n_visible, err);
    if (st != SIM_OK)
        return st;
    const char *rv = cli_get(a, "replicas");
    uint64_t replicas = 0;
    if (rv && (units_parse_u64(rv, &replicas, err) != SIM_OK || replicas == 0 || replicas > j->n_visible ||
               a->n_positional != 1))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--replicas=%s: expected 1 to %u (the visible GPUs) copies of one trace", rv, j->n_visible);
    if (replicas == 0 && (uint32_t)a->n_positional > j->n_visible)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--node: %d traces (ranks) but %u visible GPUs",
                             a->n_positional, j->n_visible);
    uint32_t n = replicas ? (uint32_t)replicas : (uint32_t)a->n_positional;
    /* each rank alone on its GPU starts from its recorded state, as one replay does */
    bool alone = replicas == 0 && !cli_has(a, "job");
    for (uint32_t r = 0; r < n && st == SIM_OK; r++) {
        if (r < (uint32_t)a->n_positional)
            ni->srcs[0][r] = source_for(s->in[r], alone, s->ops[0], cli_has(a, "from-empty"));
        else
            st = open_extra(s, ni, a->positional[0], &ni->srcs[0][r]);
    }
    j->ranks = ni->srcs[0];
    j->n_ranks = n;
    ni->n_jobs = 1;
    for (int i = 0; i < a->n_opts && st == SIM_OK; i++) {
        if (strcmp(a->names[i], "job") != 0)
            continue;
        if (ni->n_jobs == NODE_MAX_JOBS)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--job: at most %u jobs", NODE_MAX_JOBS);
        const char *colon = strchr(a->values[i], ':');
        if (colon == NULL || colon[1] == '\0')
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--job=%s: expected VISIBLE:TRACE[+TRACE...]",
                                 a->values[i]);
        node_job *k = &ni->jobs[ni->n_jobs];
        snprintf(k->name, sizeof k->name, "job %u", ni->n_jobs + 1);
        char vis[256], paths[4096];
        snprintf(vis, sizeof vis, "%.*s", (int)(colon - a->values[i]), a->values[i]);
        snprintf(paths, sizeof paths, "%s", colon + 1);
        if ((st = node_parse_visible(vis, node->n, k->visible, &k->n_visible, err)) != SIM_OK)
            return st;
        char *save = NULL;
        for (char *p = strtok_r(paths, "+", &save); p && st == SIM_OK; p = strtok_r(NULL, "+", &save)) {
            if (k->n_ranks == k->n_visible)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--job=%s: more traces than visible GPUs",
                                     a->values[i]);
            st = open_extra(s, ni, p, &ni->srcs[ni->n_jobs][k->n_ranks]);
            k->n_ranks++;
        }
        k->ranks = ni->srcs[ni->n_jobs];
        ni->n_jobs++;
    }
    return st;
}

static sim_status replay_node(cli_session *s, const node_spec *spec, int *verdict)
{
    cli_args *a = &s->a;
    node_spec node = *spec;
    sim_status st = SIM_OK;
    node_inputs *ni = calloc(1, sizeof *ni);
    if (ni == NULL)
        return sim_error_set(&s->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    st = node_jobs(s, &node, ni);
    engine_config cfg = {
        .ops = s->ops[0],
        .opts = s->kv,
        .n_opts = s->n_kv,
        .on_oom_skip = s->skip_oom,
        .paranoid = cli_has(a, "paranoid"),
    };
    node_result res = {0};
    if (st == SIM_OK)
        st = node_run(&cfg, &node, ni->jobs, ni->n_jobs, &res, &s->err);
    if (st == SIM_OK) {
        sim_buf out;
        sim_buf_init(&out);
        if (s->json)
            report_node_json(&res, ni->jobs, ni->n_jobs, s->ops[0]->name, &out);
        else
            report_node_text(&res, ni->jobs, ni->n_jobs, s->ops[0]->name, &out);
        const char *outpath = cli_get(a, "output");
        st = sim_buf_write_file(&out, outpath ? outpath : "-", &s->err);
        sim_buf_release(&out);
        bool oom = false;
        for (uint32_t d = 0; d < res.n; d++)
            for (uint32_t k = 0; k < res.dev[d].n_shares; k++)
                oom = oom || res.dev[d].shares[k].oom;
        *verdict = cli_has(a, "fail-on-oom") && oom ? 1 : 0;
    }
    node_result_release(&res);
    for (int i = 0; i < ni->n_extra; i++)
        input_close(ni->extra[i]);
    free(ni);
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
    bool x_time = false;
    if ((st = cli_report_x(a, &x_time, err)) != SIM_OK)
        return st;
    snapshot_export_config xc = {0};
    if ((st = export_options(a, &xc, err)) != SIM_OK)
        return st;
    /* --report and the what-if read the traces again: a pipe is spooled first */
    if ((st = cli_spool_pipes(s)) != SIM_OK)
        return st;
    const char *sv = cli_get(a, "summary");
    moment mom;
    moment_init(&mom, MOMENT_END);
    if (sv != NULL && sv[0] != '\0' && !moment_kind_parse(sv, &mom.kind))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--summary: expected end, peak or oom, not '%s'", sv);
    if ((st = cli_session_prepare(s, CLI_USES_INPUTS | CLI_USES_DEVICE | CLI_USES_KV)) != SIM_OK)
        return st;
    bool ranks = !cli_has(a, "node") && s->ranks;
    if (cli_has(a, "node") || ranks) {
        const char *what = cli_session_ranks_what(s, false);
        if (sv != NULL || cli_has(a, "report") || cli_has(a, "timeline") || cli_has(a, "export-snapshot"))
            return ranks ? sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                         "several %s: --summary, --report, --timeline and --export-snapshot describe "
                                         "one GPU; the %s are the ranks of one job, one GPU each; replay one rank at a "
                                         "time",
                                         what, what)
                         : sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                         "--node: --summary, --report, --timeline and --export-snapshot describe one "
                                         "GPU; replay without --node");
        node_spec node = {0};
        if (ranks) {
            if ((uint32_t)a->n_positional > NODE_MAX_DEVICES)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%d %s: at most %u ranks (GPUs) on a node",
                                     a->n_positional, what, NODE_MAX_DEVICES);
            node.n = (uint32_t)a->n_positional;
            for (uint32_t i = 0; i < node.n; i++)
                node.dev[i] = s->dev.info;
            char files[1024] = "";
            for (int i = 0; i < a->n_positional; i++) {
                const char *slash = strrchr(a->positional[i], '/');
                size_t used = strlen(files);
                snprintf(files + used, sizeof files - used, "%s%d %s", i ? ", " : "", i,
                         slash ? slash + 1 : a->positional[i]);
            }
            cli_session_note(s,
                             "%d %s are the ranks of one job: replayed as one node of %d x %s, "
                             "rank r on GPU r (%s; --node=GPUS picks the GPUs)",
                             a->n_positional, cli_session_ranks_what(s, true), a->n_positional, s->dev.name, files);
        } else if ((st = node_parse(cli_get(a, "node"), &s->dev.info, &node, err)) != SIM_OK) {
            return st;
        }
        return replay_node(s, &node, verdict);
    }
    if (cli_has(a, "visible") || cli_has(a, "replicas") || cli_has(a, "job"))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--visible, --replicas and --job need --node");
    const strategy_ops *ops = s->ops[0];
    trace_input **readers = s->in;
    const int n = a->n_positional;
    const bool from_empty = cli_has(a, "from-empty");
    sim_event_source sources[CLI_MAX_ARGS];
    for (int i = 0; i < n; i++)
        sources[i] = source_for(readers[i], n == 1, ops, from_empty);
    const strategy_option *rec = registry_recorded_conf(ops);
    if (rec != NULL && !cli_has(a, rec->cli) && input_records_settings(readers[0]))
        cli_session_note(s, "%s uses the recording's allocator_settings: %s (--%s overrides them)", ops->name,
                         input_alloc_conf(readers[0]) ? input_alloc_conf(readers[0]) : "PyTorch's defaults", rec->cli);
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
    if (sv != NULL && (st = engine_config_observe(&cfg, moment_observe, &mom, err)) != SIM_OK)
        return st;
    const char *xs = cli_get(a, "export-snapshot");
    snapshot_export *xp = NULL;
    const uint32_t n_observers = cfg.n_observers; /* the export's is gone after the run */
    if (xs) {
        if (n > 1)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--export-snapshot: %d traces are %d processes, and a PyTorch snapshot holds one "
                                 "program's allocator; export one trace at a time", n, n);
        xc.path = xs;
        xc.ops = ops;
        xc.seed = sources[0].seed;
        if ((st = snapshot_export_open(&xc, &xp, err)) != SIM_OK)
            return st;
        if ((st = engine_config_observe(&cfg, snapshot_export_observe, xp, err)) != SIM_OK) {
            snapshot_export_discard(xp);
            return st;
        }
    }
    const char *report = cli_get(a, "report");
    if (report) {
        reopen_ctx rc_ctx = {readers, s, a->positional, cli_get(a, "from"), &s->iopt, n, 0, ops, from_empty};
        capture_sources cs = {(uint32_t)n, reopen, reopen_close, &rc_ctx};
        st = capture_run(&cfg, &cs, HTML_PLOT_WIDTH, &cap, err);
        run = cap ? cap->run : NULL;
    } else {
        st = engine_run(&cfg, sources, (uint32_t)n, &run, err);
    }
    progress_finish(&prog);
    if (xp != NULL && st == SIM_OK)
        st = snapshot_export_finish(xp, run, err);
    else
        snapshot_export_discard(xp);
    cfg.n_observers = n_observers;
    if (st == SIM_OK && whatif_expandable_applies(&cfg, run))
        st = replay_whatif(s, &cfg, run, -1, &wi, err);
    graphs_answer *ga = NULL;
    if (st == SIM_OK && n == 1 && sv == NULL && ops->pools != NULL && run->n_sources == 1 &&
        run->sources[0].pool_events > 0) {
        ga = calloc(1, sizeof *ga);
        st = ga == NULL ? sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory") : replay_graphs(s, &cfg, ga, err);
    }
    whatif alts[WHATIF_BFC_MAX] = {{0}};
    uint32_t n_alts = st == SIM_OK && report ? whatif_bfc_count(&cfg, run) : 0;
    for (uint32_t i = 0; i < n_alts && st == SIM_OK; i++)
        st = replay_whatif(s, &cfg, run, (int)i, &alts[i], err);
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
        report_html_opts ro = {&wi, x_time, alts, n_alts};
        report_html_with(caps, 1, &ro, &html);
        st = sim_buf_write_file(&html, report, err);
        sim_buf_release(&html);
    }
    if (st == SIM_OK && sv != NULL)
        st = moment_finish(&mom, run, err);
    if (st == SIM_OK && sv != NULL && !mom.found) {
        if (run->n_procs == 0)
            cli_session_note(s, "--summary=%s: the trace has no event and no recorded state: nothing to summarise",
                             moment_kind_name(mom.kind));
        else
            cli_session_note(s, "--summary=%s: no out-of-memory happened; the summary is at the end of the replay",
                             moment_kind_name(mom.kind));
        mom.kind = MOMENT_END;
        st = moment_finish(&mom, run, err);
    }
    if (st == SIM_OK) {
        sim_buf out;
        sim_buf_init(&out);
        if (sv != NULL && s->json)
            report_summary_json(&mom, &out);
        else if (sv != NULL)
            report_summary_text(&mom, 0, &out);
        else if (s->json)
            report_json_answers(run, &wi, ga, &out);
        else
            report_text_answers(run, &wi, ga, &out);
        st = cli_session_write(s, &out);
        sim_buf_release(&out);
    }
    if (st == SIM_OK)
        *verdict = (cli_has(a, "fail-on-oom") && run->total.ooms > 0) ? 1 : 0;
    moment_release(&mom);
    free(ga);
    if (cap)
        capture_free(cap);
    else
        sim_run_free(run);
    return st;
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
