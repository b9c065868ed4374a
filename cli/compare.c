/* gpusim compare TRACE... : the same trace(s) under several strategies on one device,
 * parsed once into memory and replayed in parallel threads, printed in a fixed
 * order. Also home of what compare, plan and check share (cli.h): loading traces
 * into memory, choosing strategies, and running tasks on a few threads. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "against.h"
#include "answers/batch.h"
#include "answers/capture.h"
#include "cli.h"
#include "reports/html.h"
#include "reports/progress.h"
#include "reports/result.h"
#include "sim/buf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/trace.h"

/* ---------------------------------------------------------------- shared: traces */

static void opened_warn(void *ctx, const trace_input *in)
{
    (void)ctx;
    cli_input_warnings(in);
}

int cli_traces_load(const char *cmd, const cli_args *a, batch_traces *t)
{
    memset(t, 0, sizeof *t);
    if (a->n_positional == 0)
        return cli_usage_error(cmd, "no trace given (usage: gpusim %s TRACE... [options])", cmd);
    if (a->n_positional > BATCH_MAX_TRACES)
        return cli_usage_error(cmd, "at most %d traces", BATCH_MAX_TRACES);
    sim_error err;
    sim_error_clear(&err);
    input_options iopt;
    if (cli_input_options(a, &iopt, &err) != SIM_OK)
        return cli_usage_error(cmd, "%s", err.msg);
    if (batch_traces_load(t, a->positional, (uint32_t)a->n_positional, cli_get(a, "from"), &iopt, opened_warn,
                          NULL, &err) != SIM_OK)
        return err.status == SIM_EUSAGE ? cli_usage_error(cmd, "%s", err.msg) : cli_fail(&err);
    return 0;
}

typedef struct traces_open_ctx {
    const batch_traces *t;
    evbuf_cursor cur[BATCH_MAX_TRACES];
} traces_open_ctx;

static sim_status traces_open(void *ctx, sim_event_source *srcs, sim_error *err)
{
    (void)err;
    traces_open_ctx *o = ctx;
    for (uint32_t i = 0; i < o->t->n; i++)
        srcs[i] = evbuf_source(o->t->b[i], &o->cur[i]);
    return SIM_OK;
}

static void traces_close(void *ctx)
{
    (void)ctx;
}

sim_status cli_traces_capture(const batch_traces *t, const engine_config *cfg, capture **out, sim_error *err)
{
    traces_open_ctx *o = calloc(1, sizeof *o);
    if (o == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    o->t = t;
    capture_sources cs = {t->n, traces_open, traces_close, o};
    sim_status st = capture_run(cfg, &cs, HTML_PLOT_WIDTH, out, err);
    free(o);
    return st;
}

/* ---------------------------------------------------------------- shared: strategies */

static void list_names(char *names, size_t cap)
{
    names[0] = '\0';
    for (size_t i = 0; i < registry_count(); i++) {
        strncat(names, i ? ", " : "", cap - strlen(names) - 1);
        strncat(names, registry_get(i)->name, cap - strlen(names) - 1);
    }
}

int cli_pick_strategies(const char *cmd, const cli_args *a, const strategy_ops **out, uint32_t *n)
{
    *n = 0;
    const char *list = cli_get(a, "strategies");
    if (list == NULL) {
        /* the usual order first, then whatever else the registry has */
        static const char *const ORDER[] = {"greedy", "growth", "limit", "torch", "raw", "ideal"};
        bool limit = cli_has(a, "limit");
        for (size_t i = 0; i < sizeof ORDER / sizeof ORDER[0]; i++) {
            const strategy_ops *ops = registry_find(ORDER[i]);
            if (ops && (limit || strcmp(ORDER[i], "limit") != 0) && *n < CLI_MAX_STRATEGIES)
                out[(*n)++] = ops;
        }
        for (size_t i = 0; i < registry_count() && *n < CLI_MAX_STRATEGIES; i++) {
            const strategy_ops *ops = registry_get(i);
            bool seen = false;
            for (size_t k = 0; k < sizeof ORDER / sizeof ORDER[0]; k++)
                seen = seen || strcmp(ops->name, ORDER[k]) == 0;
            if (!seen)
                out[(*n)++] = ops;
        }
        return 0;
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const strategy_ops *ops = registry_find(tok);
        if (ops == NULL) {
            char names[512];
            list_names(names, sizeof names);
            return cli_usage_error(cmd, "--strategies: unknown strategy '%s' (expected some of: %s)", tok, names);
        }
        for (uint32_t i = 0; i < *n; i++)
            if (out[i] == ops)
                return cli_usage_error(cmd, "--strategies: '%s' is listed twice", tok);
        if (*n == CLI_MAX_STRATEGIES)
            return cli_usage_error(cmd, "--strategies: at most %d strategies", CLI_MAX_STRATEGIES);
        out[(*n)++] = ops;
    }
    if (*n == 0)
        return cli_usage_error(cmd, "--strategies: no strategy named");
    return 0;
}

/* ---------------------------------------------------------------- shared: threads */

int cli_jobs(const char *cmd, const cli_args *a, size_t tasks, unsigned *jobs)
{
    const char *v = cli_get(a, "jobs");
    uint64_t n = 0;
    if (v) {
        sim_error err;
        if (units_parse_u64(v, &n, &err) != SIM_OK || n == 0 || n > 256)
            return cli_usage_error(cmd, "--jobs: expected an integer from 1 to 256, not '%s'", v);
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (uint64_t)cpus : 1;
        if (n > 8)
            n = 8;
    }
    if (n > tasks)
        n = tasks ? tasks : 1;
    *jobs = (unsigned)n;
    return 0;
}

/* ---------------------------------------------------------------- compare */

static const cli_opt COMPARE_OPTS[] = {
    {"strategies", true,
     "S,S,...: strategies to compare (default: greedy, growth, limit with --limit, torch, raw, ideal, "
     "then any other this build has)"},
    CLI_DEVICE_OPTS,
    CLI_STRATEGY_OPTS,
    CLI_INPUT_OPTS,
    {"format", true, "text|json: output for people or machines (default text)"},
    {"output", true, "FILE: write the result there instead of stdout"},
    {"report", true, "FILE.html: a self-contained HTML report with every strategy side by side"},
    {"jobs", true, "N: replays run in parallel (default: the CPUs, at most 8); output does not depend on it"},
    {"on-oom", true, "stop|skip: an OOM ends the process (default), or the allocation is dropped"},
    {NULL, false, NULL},
};

typedef struct compare_row {
    const strategy_ops *ops;
    sim_run *run;        /* borrowed from cap when there is one */
    capture *cap;
    sim_status st;
    sim_error err;
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
        row->st = cli_traces_capture(j->t, &cfg, &row->cap, &row->err);
        row->run = row->cap ? row->cap->run : NULL;
    } else {
        row->st = batch_replay(j->t, &cfg, &row->run, &row->err);
    }
}

typedef struct opt_sink {
    sim_buf *b;
    bool first;
} opt_sink;

static void os_u64(void *ctx, const char *k, uint64_t v)
{
    opt_sink *o = ctx;
    sim_buf_puts(o->b, o->first ? "" : ", ");
    o->first = false;
    sim_buf_json_str(o->b, k);
    sim_buf_printf(o->b, ": %llu", (unsigned long long)v);
}

static void os_real(void *ctx, const char *k, double v)
{
    opt_sink *o = ctx;
    sim_buf_puts(o->b, o->first ? "" : ", ");
    o->first = false;
    sim_buf_json_str(o->b, k);
    sim_buf_puts(o->b, ": ");
    sim_buf_json_real(o->b, v);
}

static void os_text(void *ctx, const char *k, const char *v)
{
    opt_sink *o = ctx;
    sim_buf_puts(o->b, o->first ? "" : ", ");
    o->first = false;
    sim_buf_json_str(o->b, k);
    sim_buf_puts(o->b, ": ");
    sim_buf_json_str(o->b, v);
}

void cli_json_options(const sim_run *run, sim_buf *b)
{
    sim_buf_puts(b, "{");
    if (run->n_procs > 0) {
        opt_sink o = {b, true};
        strategy_stat_sink sink = {os_u64, os_real, os_text, &o};
        run->ops->options(run->procs[0].s, &sink);
    }
    sim_buf_puts(b, "}");
}

static void json_trace(const batch_traces *t, const sim_run *run, sim_buf *b)
{
    for (uint32_t i = 0; i < run->n_sources && i < t->n; i++) {
        const sim_run_source *s = &run->sources[i];
        sim_buf_puts(b, i ? ", " : "");
        sim_buf_puts(b, "{\"path\": ");
        sim_buf_json_str(b, s->path);
        sim_buf_puts(b, ", \"name\": ");
        sim_buf_json_str(b, s->name);
        sim_buf_printf(b, ", \"events\": %llu, \"allocs\": %llu, \"frees\": %llu}", (unsigned long long)s->events,
                       (unsigned long long)s->allocs, (unsigned long long)s->frees);
    }
}

static void compare_json(const batch_traces *t, const compare_row *rows, uint32_t n, sim_buf *b)
{
    const sim_run *r0 = rows[0].run;
    device_info d = device_get_info(r0->dev);
    sim_buf_puts(b, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"trace\": ");
    if (t->n > 1)
        sim_buf_puts(b, "[");
    json_trace(t, r0, b);
    if (t->n > 1)
        sim_buf_puts(b, "]");
    sim_buf_puts(b, ",\n  \"device\": {\"name\": ");
    sim_buf_json_str(b, d.name);
    sim_buf_printf(b, ", \"capacity_bytes\": %llu, \"context_bytes\": %llu},\n  \"rows\": [",
                   (unsigned long long)d.capacity_bytes, (unsigned long long)d.context_bytes);
    for (uint32_t i = 0; i < n; i++) {
        const sim_run *run = rows[i].run;
        sim_buf_puts(b, i ? ",\n    {\"strategy\": " : "\n    {\"strategy\": ");
        sim_buf_json_str(b, run->ops->name);
        sim_buf_puts(b, ",\n     \"options\": ");
        cli_json_options(run, b);
        sim_buf_printf(b, ",\n     \"limit_bytes\": %llu,\n     \"result\": ", (unsigned long long)report_limit_bytes(run));
        report_json_result(run, UINT32_MAX, 5, b);
        sim_buf_puts(b, "}");
    }
    sim_buf_puts(b, "\n  ]\n}\n");
}

static void cell_size(sim_buf *b, uint64_t v)
{
    char s[32];
    sim_buf_printf(b, " %15s", units_format_size(v, s, sizeof s));
}

static void compare_text(const batch_traces *t, const compare_row *rows, uint32_t n, sim_buf *b)
{
    const sim_run *r0 = rows[0].run;
    device_info d = device_get_info(r0->dev);
    char cap[32], ctx[32];
    sim_buf_printf(b, "gpusim %s: compare %u strategies\n", GPUSIM_VERSION, n);
    for (uint32_t i = 0; i < r0->n_sources && i < t->n; i++) {
        const sim_run_source *s = &r0->sources[i];
        sim_buf_printf(b, "  trace   %s%s%s%s: %llu events (%llu allocs, %llu frees)\n", s->path, s->name[0] ? " (" : "",
                       s->name, s->name[0] ? ")" : "", (unsigned long long)s->events, (unsigned long long)s->allocs,
                       (unsigned long long)s->frees);
    }
    sim_buf_printf(b, "  device  %s: capacity %s, context %s per process\n\n", d.name,
                   units_format_size(d.capacity_bytes, cap, sizeof cap),
                   units_format_size(d.context_bytes, ctx, sizeof ctx));
    sim_buf_printf(b, "  %-10s %15s %15s %15s %15s %9s %9s  %s\n", "strategy", "peak requested", "peak allocated",
                   "peak reserved", "peak device", "frag@peak", "frag max", "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const sim_metrics *m = &rows[i].run->total;
        sim_buf_printf(b, "  %-10s", rows[i].run->ops->name);
        cell_size(b, m->peak_requested_bytes);
        cell_size(b, m->peak_allocated_bytes);
        cell_size(b, m->peak_reserved_bytes);
        cell_size(b, m->peak_device_bytes);
        sim_buf_printf(b, " %9.4f %9.4f  ", m->fragmentation_at_peak, m->fragmentation_max);
        if (m->first_oom.happened)
            sim_buf_printf(b, "event %llu (%s)\n", (unsigned long long)m->first_oom.event,
                           sim_oom_cause_name(m->first_oom.info.cause));
        else
            sim_buf_puts(b, "no\n");
    }
    sim_buf_puts(b, "  (device = reserved + context; frag = 1 - largest free block / free bytes inside reserved memory)\n");
    for (uint32_t i = 0; i < n; i++) {
        const sim_metrics *m = &rows[i].run->total;
        if (!m->first_oom.happened)
            continue;
        sim_buf_printf(b, "\n  %s: ", rows[i].run->ops->name);
        report_oom_sentence(rows[i].run, &m->first_oom, b);
        sim_buf_puts(b, "\n");
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

int cmd_compare(int argc, char **argv)
{
    cli_args a;
    bool help;
    if (cli_parse("compare", COMPARE_OPTS, argc, argv, &a, &help) != SIM_OK)
        return 2;
    if (help) {
        compare_help();
        return 0;
    }
    bool json = false;
    int frc = cli_format_json(&a, &json);
    if (frc)
        return frc;
    bool skip_oom = false;
    int orc = cli_on_oom_skip(&a, &skip_oom);
    if (orc)
        return orc;
    const strategy_ops *ops[CLI_MAX_STRATEGIES];
    uint32_t n = 0;
    int rc = cli_pick_strategies("compare", &a, ops, &n);
    if (rc)
        return rc;
    unsigned jobs = 1;
    if ((rc = cli_jobs("compare", &a, n, &jobs)) != 0)
        return rc;
    if (a.n_positional == 0)
        return cli_usage_error("compare", "no trace given (usage: gpusim compare TRACE... [options])");
    batch_traces t;
    if ((rc = cli_traces_load("compare", &a, &t)) != 0)
        return rc;
    sim_error err;
    sim_error_clear(&err);
    cli_device dev;
    if (cli_resolve_device(&a, t.dev_name, t.dev_capacity, &dev, &err) != SIM_OK) {
        batch_traces_release(&t);
        return cli_usage_error("compare", "%s", err.msg);
    }
    sim_kv kv[CLI_MAX_KV];
    compare_row rows[CLI_MAX_STRATEGIES];
    memset(rows, 0, sizeof rows);
    for (uint32_t i = 0; i < n; i++)
        rows[i].ops = ops[i];
    const char *report = cli_get(&a, "report");
    progress prog;
    progress_init(&prog, stderr, "compare", t.events * n, false);
    compare_job *job = calloc(1, sizeof *job);
    if (job == NULL) {
        batch_traces_release(&t);
        fprintf(stderr, "gpusim: out of memory\n");
        return 2;
    }
    job->t = &t;
    job->base = (engine_config){
        .device = dev.info,
        .opts = kv,
        .n_opts = cli_strategy_kv(&a, kv, CLI_MAX_KV),
        .on_oom_skip = skip_oom,
    };
    job->rows = rows;
    job->report = report != NULL;
    job->prog = &prog;
    job->n_rows = n;
    batch_parallel(jobs, n, compare_task, job);
    progress_finish(&prog);
    free(job);

    rc = 0;
    /* the first failure in row order, so the message does not depend on --jobs */
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if (rows[i].st == SIM_OK)
            continue;
        if (rows[i].st == SIM_EUSAGE)
            rc = cli_usage_error("compare", "%s: %s", rows[i].ops->name, rows[i].err.msg);
        else
            rc = cli_fail(&rows[i].err);
    }
    sim_buf out;
    sim_buf_init(&out);
    if (rc == 0 && report) {
        const capture *caps[CLI_MAX_STRATEGIES];
        for (uint32_t i = 0; i < n; i++)
            caps[i] = rows[i].cap;
        sim_buf html;
        sim_buf_init(&html);
        report_html(caps, n, &html);
        if (sim_buf_write_file(&html, report, &err) != SIM_OK)
            rc = cli_fail(&err);
        sim_buf_release(&html);
    }
    if (rc == 0) {
        if (json)
            compare_json(&t, rows, n, &out);
        else
            compare_text(&t, rows, n, &out);
        const char *outpath = cli_get(&a, "output");
        if (sim_buf_write_file(&out, outpath ? outpath : "-", &err) != SIM_OK)
            rc = cli_fail(&err);
    }
    sim_buf_release(&out);
    for (uint32_t i = 0; i < n; i++) {
        if (rows[i].cap)
            capture_free(rows[i].cap);
        else
            sim_run_free(rows[i].run);
    }
    batch_traces_release(&t);
    return rc;
}
