/* gpusim plan TRACE... : capacity planning (answers/plan.h) over the GPUs of the
 * catalog (or --gpus) and the strategies, on a card like the trace's; the tables are
 * reports/plan.h. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "answers/kvfit.h"
#include "answers/limit.h"
#include "answers/node.h"
#include "answers/plan.h"
#include "cli.h"
#include "commands.h"
#include "common.h"
#include "reports/kvfit.h"
#include "reports/plan.h"
#include "reports/progress.h"
#include "reports/result.h"
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
    CLI_FROM_EMPTY_OPT,
    CLI_OPT("node", "GPUS: instead of single cards, does the job fit this node (8xA100-40GB, or A100-40GB,T4; "
                    "repeatable): the traces are its ranks, rank r on its r-th visible GPU"),
    CLI_OPT("visible", "0,3: on --node, the job's CUDA_VISIBLE_DEVICES (default all)"),
    CLI_OPT("replicas", "N: on --node, the one trace on each of the first N visible GPUs (DDP, MirroredStrategy)"),
    CLI_OPT("job", "VISIBLE:TRACE[+TRACE...]: on --node, one more job (process) with its own visible GPUs and "
                   "ranks, after the first; repeatable"),
    CLI_FLAG("gpu-memory-utilization", "instead, the largest vLLM gpu_memory_utilization that survives CUDA graph "
                                       "capture on the card (or each of --gpus), for a trace of synth serving "
                                       "--gpu-memory-utilization"),
    {NULL, false, NULL},
};

static void plan_help(void)
{
    printf("usage: gpusim plan TRACE... [options]\n\n"
           "Capacity planning: for each GPU of the catalog and each allocator model, whether the\n"
           "trace runs without running out of memory, its peak on the device and the headroom left;\n"
           "and for each model the smallest capacity it runs on (bisection to 1 MiB, confirmed by\n"
           "runs at that capacity and 1 MiB less, with a warning when more memory can fail).\n"
           "--capacity=SIZE (repeatable) adds a row for a card of that size (\"does it fit in 24 GB?\").\n"
           "--node=GPUS (repeatable) asks instead which node fits the job: a row per node and strategy,\n"
           "every GPU under the framework's start-up (greedy takes its limit on each visible GPU, the\n"
           "others only the GPUs they use), and the GPU that runs out of memory.\n\n");
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

/* One mark and nothing else: the process exists (its allocator is created) and holds nothing. */
static sim_status one_mark(void *ctx, sim_event *ev, sim_error *err)
{
    (void)err;
    int *done = ctx;
    if (*done)
        return SIM_END;
    *done = 1;
    *ev = (sim_event){.op = SIM_OP_MARK, .index = 1, .tag = "limit"};
    return SIM_OK;
}

/* The allocator's effective limit for ops on dev, as replay's header computes it
 * (answers/limit.h) from the allocators created for the traces' processes, and where
 * it comes from into src (n bytes; src NULL: not asked); UINT64_MAX when a strategy
 * option cannot hold there. */
static uint64_t limit_on(const plan_question *q, const strategy_ops *ops, const device_info *dev, char *src_text,
                         size_t n)
{
    engine_config cfg = q->base;
    cfg.ops = ops;
    cfg.device = *dev;
    sim_event_source src[BATCH_MAX_TRACES];
    int done[BATCH_MAX_TRACES] = {0};
    for (uint32_t i = 0; i < q->t->n; i++)
        src[i] = (sim_event_source){.next = one_mark, .ctx = &done[i], .path = "(limit)", .name = NULL};
    sim_run *run = NULL;
    sim_error e;
    sim_error_clear(&e);
    uint64_t l = engine_run(&cfg, src, q->t->n, &run, &e) == SIM_OK ? limit_find(run, src_text, n) : UINT64_MAX;
    sim_run_free(run);
    return l;
}

/* The header's word for where a limit comes from, per strategy on the model card. */
#define PLAN_SOURCE_TEXT 160

/* limits[g * n_ops + s] on every GPU of the grid, then on the model card, and into
 * sources (n_ops texts, pointing into texts) where the model card's come from; NULL
 * without memory. */
static uint64_t *plan_limits(const plan_question *q, char (*texts)[PLAN_SOURCE_TEXT], const char **sources)
{
    uint64_t *l = calloc((size_t)(q->n_gpus + 1) * q->n_ops + 1, sizeof *l);
    for (uint32_t g = 0; l && g <= q->n_gpus; g++) {
        device_info d = g < q->n_gpus ? plan_gpu_device(q, g) : q->model;
        for (uint32_t k = 0; k < q->n_ops; k++) {
            bool model = g == q->n_gpus;
            l[(size_t)g * q->n_ops + k] =
                limit_on(q, q->ops[k], &d, model ? texts[k] : NULL, model ? PLAN_SOURCE_TEXT : 0);
            if (model)
                sources[k] = texts[k];
        }
    }
    return l;
}

/* Every --job=VISIBLE:TRACE[+TRACE...]: its visible GPUs (kept in vis) and its traces, read into t. */
static sim_status more_jobs(cli_session *s, char vis[][256], batch_traces *t, plan_node_job *more, uint32_t *n,
                            sim_error *err)
{
    const cli_args *a = &s->a;
    for (int i = 0; i < a->n_opts; i++) {
        if (strcmp(a->names[i], "job") != 0)
            continue;
        const char *v = a->values[i], *colon = strchr(v, ':');
        if (*n == NODE_MAX_JOBS - 1)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--job: at most %u jobs", NODE_MAX_JOBS);
        if (colon == NULL || colon[1] == '\0')
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--job=%s: expected VISIBLE:TRACE[+TRACE...]", v);
        snprintf(vis[*n], 256, "%.*s", (int)(colon - v), v);
        char paths[4096];
        snprintf(paths, sizeof paths, "%s", colon + 1);
        const char *p[NODE_MAX_DEVICES];
        uint32_t np = 0;
        char *save = NULL;
        for (char *tok = strtok_r(paths, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
            if (np == NODE_MAX_DEVICES)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--job=%s: at most %u traces", v, NODE_MAX_DEVICES);
            p[np++] = tok;
        }
        sim_status st = batch_traces_load(&t[*n], p, np, cli_get(a, "from"), &s->iopt, NULL, NULL, err);
        if (st != SIM_OK)
            return st;
        more[*n] = (plan_node_job){vis[*n][0] ? vis[*n] : NULL, &t[*n]};
        (*n)++;
    }
    return SIM_OK;
}

/* --node=GPUS (repeatable): which node fits the job (answers/plan.h plan_nodes_compute).
 * Without --node, the ranks of one job (cli_session.ranks) are planned on a node per
 * GPU of the table (gpus[0..n_gpus)), one GPU per rank. */
static sim_status plan_nodes(cli_session *s, const gpu_model *const *gpus, uint32_t n_gpus, sim_buf *out)
{
    const cli_args *a = &s->a;
    sim_error *err = &s->err;
    bool ranks = !cli_has(a, "node");
    if (cli_has(a, "capacity") || (!ranks && cli_has(a, "gpus")))
        return ranks ? sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                     "the %s are the ranks of one job, planned on nodes of a GPU per rank; "
                                     "--capacity is for single cards (--gpus picks the nodes' GPU models)",
                                     cli_session_ranks_what(s, false))
                     : sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s",
                                     "--node plans on nodes; --gpus and --capacity are for single cards (plan "
                                     "without --node)");
    node_spec nodes[PLAN_MAX_GPUS];
    const char *names[PLAN_MAX_GPUS];
    char texts[PLAN_MAX_GPUS][96];
    uint32_t n = 0;
    sim_status st = SIM_OK;
    if (ranks && s->t.n > NODE_MAX_DEVICES)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%u %s: at most %u ranks (GPUs) on a node", s->t.n,
                             cli_session_ranks_what(s, false), NODE_MAX_DEVICES);
    for (uint32_t g = 0; ranks && g < n_gpus && g < PLAN_MAX_GPUS && st == SIM_OK; g++) {
        snprintf(texts[n], sizeof texts[n], "%ux%s", s->t.n, gpus[g]->name);
        names[n] = texts[n];
        st = node_parse(texts[n], &s->dev.info, &nodes[n], err);
        n++;
    }
    if (ranks)
        cli_session_note(s,
                         "%u %s are the ranks of one job: planned on nodes of %u GPUs of each "
                         "model, rank r on GPU r (--node=GPUS asks about other nodes)",
                         s->t.n, cli_session_ranks_what(s, true), s->t.n);
    for (int i = 0; i < a->n_opts && st == SIM_OK; i++) {
        if (strcmp(a->names[i], "node") != 0)
            continue;
        if (n == PLAN_MAX_GPUS)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--node: at most %d nodes", PLAN_MAX_GPUS);
        names[n] = a->values[i];
        st = node_parse(a->values[i], &s->dev.info, &nodes[n++], err);
    }
    const char *rv = cli_get(a, "replicas");
    uint64_t replicas = 0;
    if (st == SIM_OK && rv &&
        (units_parse_u64(rv, &replicas, err) != SIM_OK || replicas == 0 || replicas > NODE_MAX_DEVICES ||
         s->t.n != 1))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--replicas=%s: expected 1 to %u copies of one trace", rv,
                             NODE_MAX_DEVICES);
    char vis[NODE_MAX_JOBS - 1][256];
    batch_traces t[NODE_MAX_JOBS - 1];
    memset(t, 0, sizeof t);
    plan_node_job more[NODE_MAX_JOBS - 1];
    uint32_t n_more = 0;
    if (st == SIM_OK)
        st = more_jobs(s, vis, t, more, &n_more, err);
    plan_node_question q = {
        .t = &s->t,
        .base = {.opts = s->kv, .n_opts = s->n_kv},
        .nodes = nodes,
        .node_names = names,
        .n_nodes = n,
        .visible = cli_get(a, "visible"),
        .replicas = (uint32_t)replicas,
        .more = more,
        .n_more = n_more,
        .ops = s->ops,
        .n_ops = s->n_ops,
    };
    plan_node_cell *cells = NULL;
    if (st == SIM_OK)
        st = plan_nodes_compute(&q, cli_jobs_for(s->jobs, (size_t)n * s->n_ops), &cells, err);
    if (st == SIM_OK && s->json)
        report_plan_nodes_json(&q, cells, out);
    else if (st == SIM_OK)
        report_plan_nodes_text(&q, cells, out);
    plan_nodes_release(cells, (size_t)n * s->n_ops);
    for (uint32_t k = 0; k < NODE_MAX_JOBS - 1; k++)
        batch_traces_release(&t[k]);
    return st;
}

/* plan --gpu-memory-utilization (answers/kvfit.h): one trace, each card (--gpus, else
 * the session's) under each strategy. */
static sim_status plan_kvfit(cli_session *s, const gpu_model *const *gpus, uint32_t n_gpus, sim_buf *out)
{
    sim_error *err = &s->err;
    if (s->t.n != 1)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--gpu-memory-utilization plans one trace, not %u", s->t.n);
    kvfit_rule r;
    sim_status st = kvfit_rule_read(s->t.meta_json, s->a.positional[0], &r, err);
    if (st != SIM_OK)
        return st;
    const bool own = !cli_has(&s->a, "gpus");
    const uint32_t cards = own ? 1 : n_gpus;
    kvfit_row *rows = calloc((size_t)cards * s->n_ops, sizeof *rows);
    if (rows == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    uint32_t n = 0;
    for (uint32_t g = 0; g < cards; g++)
        for (uint32_t k = 0; k < s->n_ops; k++) {
            device_info d = s->dev.info;
            if (!own) {
                d.name = gpus[g]->name;
                d.capacity_bytes = gpus[g]->capacity_bytes;
                d.cc_major = gpus[g]->cc_major;
                d.cc_minor = gpus[g]->cc_minor;
            }
            engine_config cfg = {.device = d,
                                 .ops = s->ops[k],
                                 .opts = s->kv,
                                 .n_opts = s->n_kv,
                                 .on_oom_skip = false,
                                 .memo = s->t.memo};
            kvfit_row *row = &rows[n++];
            row->gpu = d.name;
            row->capacity_bytes = d.capacity_bytes;
            row->context_bytes = d.context_bytes;
            row->strategy = s->ops[k]->name;
            kvfit_search(&cfg, s->t.b[0], &r, &row->a);
            if (row->a.st != SIM_OK && row->a.st != SIM_EUSAGE) {
                *err = row->a.err;
                st = row->a.st;
                break;
            }
        }
    if (st == SIM_OK) {
        if (s->json)
            report_kvfit_json(s->a.positional[0], &r, rows, n, out);
        else
            report_kvfit_text(s->a.positional[0], &r, rows, n, out);
    }
    free(rows);
    return st;
}

static const cli_command PLAN = {
    "plan", PLAN_OPTS, plan_help,
    CLI_USES_FORMAT | CLI_USES_STRATEGIES | CLI_USES_JOBS | CLI_USES_TRACES | CLI_USES_DEVICE | CLI_USES_KV, NULL,
};

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
    if (st == SIM_OK && cli_has(&s.a, "gpu-memory-utilization")) {
        if (cli_has(&s.a, "node") || cli_has(&s.a, "capacity"))
            st =
                sim_error_set(&s.err, SIM_EUSAGE, NULL, 0, 0,
                              "--gpu-memory-utilization plans single cards: --gpu or --gpus, not --node or --capacity");
        sim_buf kout;
        sim_buf_init(&kout);
        if (st == SIM_OK)
            st = plan_kvfit(&s, gpus, n_gpus, &kout);
        if (st == SIM_OK)
            st = cli_session_write(&s, &kout);
        sim_buf_release(&kout);
        return cli_session_end(&s, st);
    }
    if (st == SIM_OK && (cli_has(&s.a, "node") || s.ranks)) {
        sim_buf nout;
        sim_buf_init(&nout);
        st = plan_nodes(&s, gpus, n_gpus, &nout);
        if (st == SIM_OK)
            st = cli_session_write(&s, &nout);
        sim_buf_release(&nout);
        return cli_session_end(&s, st);
    }
    if (st == SIM_OK && (cli_has(&s.a, "visible") || cli_has(&s.a, "replicas") || cli_has(&s.a, "job")))
        st = sim_error_set(&s.err, SIM_EUSAGE, NULL, 0, 0, "--visible, --replicas and --job need --node");
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
    char (*texts)[PLAN_SOURCE_TEXT] = calloc(s.n_ops ? s.n_ops : 1, sizeof *texts);
    const char **sources = calloc(s.n_ops ? s.n_ops : 1, sizeof *sources);
    uint64_t *limits = texts && sources ? plan_limits(&q, texts, sources) : NULL;
    sim_buf out;
    sim_buf_init(&out);
    if (s.json)
        report_plan_json(&q, &ans, limits, &out);
    else
        report_plan_text(&q, &ans, limits, limits ? sources : NULL, &out);
    free(limits);
    free(sources);
    free(texts);
    st = cli_session_write(&s, &out);
    sim_buf_release(&out);
    plan_answer_release(&ans);
    return cli_session_end(&s, st);
}
