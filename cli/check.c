/* gpusim check TRACE --baseline=BASE.json : a regression check for CI. Replays the
 * trace under the baseline's strategy, strategy options and device (a `replay
 * --format=json` result, or one written by --write-baseline) and compares peak
 * reserved, peak allocated, OOMs and fragmentation at the peak, one verdict line
 * per metric; exit 0 pass,
 * 1 regression, 2 bad or missing baseline (or usage), 3 invalid trace.
 * --metrics chooses which gate (default reserved,allocated,oom; the others are shown,
 * not gated). Sizes regress when they grow by more than --tolerance percent, a
 * decrease is an improvement; fragmentation (noisy: only when asked) when it grows by
 * more than --fragmentation-tolerance points; OOMs when there are more, when the run
 * no longer completes, or when the first OOM's event, cause or process changed
 * (unless --allow-oom-move). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "cli.h"
#include "reports/junit.h"
#include "reports/result.h"
#include "sim/buf.h"
#include "sim/clock.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/json.h"
#include "traces/trace.h"

#define BASELINE_MAX_BYTES (64u << 20)

static const cli_opt CHECK_OPTS[] = {
    CLI_OPT("baseline", "FILE.json: the result to compare with (replay --format=json, or --write-baseline)"),
    CLI_OPT("write-baseline", "FILE.json: replay and write the result there as the new baseline"),
    CLI_OPT("tolerance", "PCT: allowed growth, percent of a size or percentage points of fragmentation (default 0)"),
    CLI_OPT("max-reserved", "SIZE: also fail when peak reserved memory exceeds SIZE"),
    CLI_OPT("metrics", "LIST: the metrics that gate, of reserved,allocated,oom,fragmentation (default reserved,allocated,oom)"),
    CLI_OPT("fragmentation-tolerance", "POINTS: allowed growth of fragmentation at the peak, in points (default 0)"),
    CLI_FLAG("allow-oom-move", "an OOM at another event, of another cause or process, is not a regression"),
    CLI_OPT("junit", "FILE.xml: the verdicts as JUnit XML, one test case per metric"),
    CLI_OPT("strategy", "S: the allocator model (default: the baseline's, else " GPUSIM_DEFAULT_STRATEGY ")"),
    CLI_REPLAY_OPTS,
    CLI_ON_OOM_OPT,
    {NULL, false, NULL},
};

/* ---------------------------------------------------------------- the baseline */

typedef struct baseline {
    char strategy[64];
    char device[64];
    uint64_t capacity, context;
    uint64_t peak_reserved, peak_allocated, ooms;
    double frag_at_peak;
    bool completed;
    bool has_first_oom;        /* result.first_oom is an object: its event, cause and process */
    uint64_t oom_event;
    char oom_cause[32], oom_process[256];
    /* the strategy options given back to the replay, as sim_kv keys */
    char keys[CLI_MAX_KV][48];
    char values[CLI_MAX_KV][256];
    uint32_t n_opts;
    const json_value *options; /* valid while the parser lives */
} baseline;

static int bad_baseline(const char *path, const char *what)
{
    fprintf(stderr, "gpusim check: baseline %s: %s\n", path, what);
    return 2;
}

static bool get_u64(const json_value *obj, const char *key, uint64_t *out)
{
    const json_value *v = obj ? json_get(obj, key) : NULL;
    return v && json_to_u64(v, UINT64_MAX, out) == JSON_INT_OK;
}

static int read_baseline(const char *path, json_parser *jp, char **text_out, baseline *b)
{
    memset(b, 0, sizeof *b);
    char *text = NULL;
    size_t n = 0;
    sim_error rerr;
    sim_status rst = sim_read_file(path, BASELINE_MAX_BYTES, &text, &n, &rerr);
    *text_out = text;
    if (rst == SIM_ENOMEM)
        return bad_baseline(path, "out of memory");
    if (rst != SIM_OK && strncmp(rerr.msg, "larger than", 11) == 0)
        return bad_baseline(path, "larger than 64 MiB: not a result file");
    if (rst != SIM_OK)
        return bad_baseline(path, "cannot be read (write one with 'gpusim check TRACE --write-baseline=FILE')");
    char msg[256];
    const json_value *root = json_parse(jp, text, n, 0, msg, sizeof msg);
    if (root == NULL) {
        char what[320];
        snprintf(what, sizeof what, "not valid JSON (%s)", msg);
        return bad_baseline(path, what);
    }
    const json_value *strat = json_get(root, "strategy");
    const json_value *name = strat ? json_get(strat, "name") : NULL;
    const json_value *dev = json_get(root, "device");
    const json_value *res = json_get(root, "result");
    if (root->type != JSON_OBJECT || name == NULL || name->type != JSON_STRING || dev == NULL ||
        res == NULL || res->type != JSON_OBJECT)
        return bad_baseline(path, "not a gpusim result (expected \"strategy\": {\"name\"}, \"device\" and "
                                  "\"result\", as 'gpusim replay --format=json' writes)");
    snprintf(b->strategy, sizeof b->strategy, "%s", name->u.str);
    const json_value *dn = json_get(dev, "name");
    if (dn && dn->type == JSON_STRING)
        snprintf(b->device, sizeof b->device, "%s", dn->u.str);
    if (!get_u64(dev, "capacity_bytes", &b->capacity) || b->capacity == 0)
        return bad_baseline(path, "device.capacity_bytes is missing or not a positive integer");
    get_u64(dev, "context_bytes", &b->context);
    static const char *const NEED[] = {"peak_reserved_bytes", "peak_allocated_bytes", "ooms"};
    uint64_t *dst[] = {&b->peak_reserved, &b->peak_allocated, &b->ooms};
    for (size_t i = 0; i < 3; i++)
        if (!get_u64(res, NEED[i], dst[i])) {
            char what[160];
            snprintf(what, sizeof what, "result.%s is missing or not an integer", NEED[i]);
            return bad_baseline(path, what);
        }
    const json_value *fr = json_get(res, "fragmentation");
    const json_value *fp = fr ? json_get(fr, "at_peak") : NULL;
    if (fp == NULL || fp->type != JSON_NUMBER)
        return bad_baseline(path, "result.fragmentation.at_peak is missing or not a number");
    b->frag_at_peak = json_to_double(fp);
    const json_value *fo = json_get(res, "first_oom");
    if (fo && fo->type == JSON_OBJECT && get_u64(fo, "event", &b->oom_event)) {
        b->has_first_oom = true;
        const json_value *c = json_get(fo, "cause"), *pr = json_get(fo, "process");
        snprintf(b->oom_cause, sizeof b->oom_cause, "%s", c && c->type == JSON_STRING ? c->u.str : "");
        snprintf(b->oom_process, sizeof b->oom_process, "%s", pr && pr->type == JSON_STRING ? pr->u.str : "");
    }
    const json_value *comp = json_get(res, "completed");
    b->completed = comp == NULL || comp->type == JSON_TRUE;
    /* result.strategy.options holds every option of the strategy's table under its
     * own key (strategy.h, options()); the keys that are not in the table are derived
     * and informational, and "" is an option left unset */
    b->options = json_get(strat, "options");
    const strategy_ops *bops = registry_find(b->strategy);
    if (bops && b->options && b->options->type == JSON_OBJECT) {
        for (uint32_t i = 0; i < b->options->len && b->n_opts < CLI_MAX_KV; i++) {
            const json_member *m = &b->options->u.members[i];
            if (m->value.type != JSON_STRING || !m->value.u.str[0] || registry_option_of(bops, m->key) == NULL)
                continue;
            snprintf(b->keys[b->n_opts], sizeof b->keys[0], "%s", m->key);
            snprintf(b->values[b->n_opts], sizeof b->values[0], "%s", m->value.u.str);
            b->n_opts++;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- verdicts */

typedef struct verdict {
    char metric[32];     /* test case name */
    char line[320];      /* the one-line verdict */
    bool regression;
} verdict;

static void size_verdict(verdict *v, const char *metric, const char *label, uint64_t now, uint64_t base,
                         double tol_pct)
{
    char a[32], b[32];
    double change = base ? ((double)now - (double)base) / (double)base * 100.0 : (now ? 100.0 : 0.0);
    bool reg = (double)now > (double)base * (1.0 + tol_pct / 100.0) && now > base;
    snprintf(v->metric, sizeof v->metric, "%s", metric);
    snprintf(v->line, sizeof v->line, "%-18s %12s  baseline %12s  %+8.2f%%  %s", label,
             units_format_size(now, a, sizeof a), units_format_size(base, b, sizeof b), change,
             reg ? "REGRESSION" : now < base ? "ok (better)" : "ok");
    v->regression = reg;
}

static double round6(double x)
{
    /* the baseline holds 6 decimals: compare at that precision */
    return (double)(long long)(x * 1e6 + (x >= 0 ? 0.5 : -0.5)) / 1e6;
}

static void frag_verdict(verdict *v, double now, double base, double tol_points)
{
    now = round6(now);
    bool reg = now > base + tol_points / 100.0 + 1e-9;
    snprintf(v->metric, sizeof v->metric, "fragmentation_at_peak");
    snprintf(v->line, sizeof v->line, "%-18s %12.4f  baseline %12.4f  %+8.4f   %s", "fragmentation", now, base,
             now - base, reg ? "REGRESSION" : now < base ? "ok (better)" : "ok");
    v->regression = reg;
}

/* The first OOM "event N (cause)", or "no". */
static void oom_text(char *out, size_t n, uint64_t ooms, uint64_t event, const char *cause)
{
    if (ooms == 0)
        snprintf(out, n, "no");
    else if (cause[0])
        snprintf(out, n, "%llu, event %llu (%s)", (unsigned long long)ooms, (unsigned long long)event, cause);
    else
        snprintf(out, n, "%llu", (unsigned long long)ooms);
}

static void oom_verdict(verdict *v, const sim_run *run, const baseline *b, bool allow_move)
{
    const sim_metrics *m = &run->total;
    const sim_oom_record *o = &m->first_oom;
    char now[96], was[96];
    oom_text(now, sizeof now, m->ooms, o->event, o->happened ? sim_oom_cause_name(o->cause) : "");
    oom_text(was, sizeof was, b->ooms, b->oom_event, b->has_first_oom ? b->oom_cause : "");
    /* the first OOM moved: another event, cause or process than the baseline's */
    bool moved = o->happened && b->has_first_oom &&
                 (o->event != b->oom_event || strcmp(sim_oom_cause_name(o->cause), b->oom_cause) != 0 ||
                  (b->oom_process[0] && strcmp(run->procs[o->process].name, b->oom_process) != 0));
    bool worse = m->ooms > b->ooms || (b->completed && !m->completed);
    bool reg = worse || (moved && !allow_move);
    snprintf(v->metric, sizeof v->metric, "out_of_memory");
    snprintf(v->line, sizeof v->line, "%-18s %12s  baseline %12s  %9s  %s", "out of memory", now, was, "",
             reg ? (worse ? "REGRESSION" : "REGRESSION (the first OOM moved; --allow-oom-move accepts it)")
             : m->ooms < b->ooms ? "ok (better)"
             : moved             ? "ok (moved, allowed)"
                                 : "ok");
    v->regression = reg;
}

/* ---------------------------------------------------------------- command */

static void check_help(void)
{
    printf("usage: gpusim check TRACE --baseline=BASE.json [options]\n"
           "       gpusim check TRACE --write-baseline=BASE.json [--strategy=S] [device options]\n\n"
           "Replays the trace as the baseline was made (its strategy, options and device unless\n"
           "overridden) and fails when peak reserved or allocated memory grows by more than\n"
           "--tolerance percent, more OOMs happen, or the first OOM moves (another event, cause\n"
           "or process; --allow-oom-move accepts that). A decrease is an improvement. Fragmentation\n"
           "at the peak gates only with --metrics=...,fragmentation (--fragmentation-tolerance points).\n\n");
    cli_print_options(stdout, CHECK_OPTS);
    printf("\nexit status: 0 pass, 1 regression, 2 usage error or bad/missing baseline, 3 invalid trace\n");
}

/* The options of check itself, before anything is read. */
typedef struct check_args {
    const char *base_path, *write_path;
    double tol, frag_tol;
    bool has_max;
    uint64_t max_reserved;
    bool allow_oom_move;
    unsigned gates;            /* GATE_* of --metrics */
    double t0;                 /* sim_clock_s() at the start, for the JUnit times */
    long long started;         /* the wall clock then (Unix seconds), the JUnit timestamp */
} check_args;

enum { GATE_RESERVED = 1u, GATE_ALLOCATED = 2u, GATE_OOM = 4u, GATE_FRAGMENTATION = 8u };

/* --junit: the verdicts as JUnit XML. The suite and every case name the trace, the
 * strategy and the baseline (two checks of one trace stay apart in the viewers that
 * merge by name); a failure's message is its verdict on one line, its body the whole
 * check's output; the one replay's time is shared evenly by the cases, so that they
 * add up to the suite's. */
static int write_junit(cli_session *s, const check_args *c, const strategy_ops *ops, const verdict *vs, int nv,
                       const char *out_text)
{
    const cli_args *a = &s->a;
    const char *trace = a->positional[0];
    char subject[1024], title[1100], names[5][1100], msgs[5][320], stamp[32], host[256], tol[32];
    snprintf(subject, sizeof subject, "%s under %s vs %s", trace, ops->name, c->base_path);
    snprintf(title, sizeof title, "gpusim check %s", subject);
    double elapsed = sim_clock_s() - c->t0;
    junit_case cases[5];
    for (int i = 0; i < nv; i++) {
        snprintf(names[i], sizeof names[i], "%.31s: %s", vs[i].metric, subject);
        /* the verdict line with its column padding squeezed to single spaces */
        size_t k = 0;
        for (const char *p = vs[i].line; *p && k + 1 < sizeof msgs[i]; p++)
            if (!(*p == ' ' && (k == 0 || msgs[i][k - 1] == ' ')))
                msgs[i][k++] = *p;
        while (k > 0 && msgs[i][k - 1] == ' ')
            k--;
        msgs[i][k] = '\0';
        cases[i] = (junit_case){names[i], msgs[i], out_text, vs[i].regression, elapsed / nv};
    }
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    snprintf(tol, sizeof tol, "%g", c->tol);
    const junit_property props[] = {
        {"trace", trace}, {"strategy", ops->name}, {"baseline", c->base_path}, {"tolerance_pct", tol}};
    junit_suite suite = {title, "gpusim.check", "regression", props, (int)(sizeof props / sizeof props[0]),
                         elapsed, junit_timestamp(c->started, stamp, sizeof stamp), host, out_text};
    sim_buf x;
    sim_buf_init(&x);
    report_junit(&suite, cases, nv, &x);
    int rc = 0;
    if (sim_buf_write_file(&x, cli_get(a, "junit"), &s->err) != SIM_OK)
        rc = cli_fail(&s->err);
    sim_buf_release(&x);
    return rc;
}

/* The verdicts on stdout (and --junit): 0 pass, 1 regression, or the exit status of
 * a failed write. */
static int verdicts(cli_session *s, const check_args *c, const baseline *b, const strategy_ops *ops,
                    const char *dev_name, const sim_run *run)
{
    const cli_args *a = &s->a;
    const sim_metrics *m = &run->total;
    verdict vs[5], shown[4];
    int nv = 0, ns = 0;
    /* a metric that does not gate is shown below the verdicts, never counted */
    verdict *g = (c->gates & GATE_RESERVED) ? &vs[nv++] : &shown[ns++];
    size_verdict(g, "peak_reserved", "peak reserved", m->peak_reserved_bytes, b->peak_reserved, c->tol);
    g = (c->gates & GATE_ALLOCATED) ? &vs[nv++] : &shown[ns++];
    size_verdict(g, "peak_allocated", "peak allocated", m->peak_allocated_bytes, b->peak_allocated, c->tol);
    g = (c->gates & GATE_OOM) ? &vs[nv++] : &shown[ns++];
    oom_verdict(g, run, b, c->allow_oom_move);
    g = (c->gates & GATE_FRAGMENTATION) ? &vs[nv++] : &shown[ns++];
    frag_verdict(g, m->fragmentation_at_peak, b->frag_at_peak, c->frag_tol);
    if (c->has_max) {
        verdict *x = &vs[nv++];
        char s1[32], s2[32];
        x->regression = m->peak_reserved_bytes > c->max_reserved;
        snprintf(x->metric, sizeof x->metric, "max_reserved");
        snprintf(x->line, sizeof x->line, "%-18s %12s  limit    %12s  %9s  %s", "max reserved",
                 units_format_size(m->peak_reserved_bytes, s1, sizeof s1),
                 units_format_size(c->max_reserved, s2, sizeof s2), "", x->regression ? "REGRESSION" : "ok");
    }
    int failures = 0;
    char lim[320];
    sim_buf o; /* the output, for stdout and the JUnit file */
    sim_buf_init(&o);
    sim_buf_printf(&o, "gpusim check: %s under '%s' on %s, allocator limit %s, against %s (tolerance %g%%)\n",
                   a->positional[0], ops->name, dev_name, report_limit_text(run, lim, sizeof lim), c->base_path,
                   c->tol);
    if (strcmp(ops->name, b->strategy) != 0)
        sim_buf_printf(&o, "  note: the baseline was made under '%s'\n", b->strategy);
    for (int i = 0; i < nv; i++) {
        sim_buf_printf(&o, "  %s\n", vs[i].line);
        failures += vs[i].regression;
    }
    for (int i = 0; i < ns; i++) { /* shown for the record: no verdict */
        char *w = strstr(shown[i].line, "REGRESSION");
        if (w)
            *w = '\0';
        sim_buf_printf(&o, "  %s%s (not gated; --metrics)\n", shown[i].line, w ? "worse" : "");
    }
    if (failures)
        sim_buf_printf(&o, "check: FAIL (%d of %d metrics regressed)\n", failures, nv);
    else
        sim_buf_printf(&o, "check: PASS (%d metrics)\n", nv);
    const char *text = o.len > 0 ? o.data : "";
    fputs(text, stdout);
    int rc = failures ? 1 : 0;
    if (cli_get(a, "junit")) {
        int wrc = write_junit(s, c, ops, vs, nv, text);
        if (wrc != 0)
            rc = wrc;
    }
    sim_buf_release(&o);
    return rc;
}

static const cli_command CHECK = {"check", CHECK_OPTS, check_help, 0, GPUSIM_DEFAULT_STRATEGY};

static sim_status check_options(cli_session *s, check_args *c)
{
    const cli_args *a = &s->a;
    sim_error *err = &s->err;
    if (a->n_positional != 1)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "expected exactly one trace (usage: gpusim check TRACE --baseline=FILE)");
    c->base_path = cli_get(a, "baseline");
    c->write_path = cli_get(a, "write-baseline");
    if (c->base_path == NULL && c->write_path == NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "no --baseline=FILE to compare with (or --write-baseline=FILE to make one)");
    c->tol = 0;
    const char *v = cli_get(a, "tolerance");
    if (v) {
        const char *num = v;
        char tmp[64];
        size_t len = strlen(v);
        if (len > 0 && len < sizeof tmp && v[len - 1] == '%') {
            memcpy(tmp, v, len - 1);
            tmp[len - 1] = '\0';
            num = tmp;
        }
        if (units_parse_real(num, 0, 1000, &c->tol, err) != SIM_OK)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--tolerance: expected a percentage from 0 to 1000, not '%s'", v);
    }
    c->frag_tol = 0;
    if ((v = cli_get(a, "fragmentation-tolerance")) != NULL && units_parse_real(v, 0, 100, &c->frag_tol, err) != SIM_OK)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--fragmentation-tolerance: expected points from 0 to 100, not '%s'", v);
    c->allow_oom_move = cli_has(a, "allow-oom-move");
    c->gates = GATE_RESERVED | GATE_ALLOCATED | GATE_OOM;
    if ((v = cli_get(a, "metrics")) != NULL) {
        static const char *const NAMES[] = {"reserved", "allocated", "oom", "fragmentation"};
        c->gates = 0;
        for (const char *p = v; *p;) {
            size_t len = strcspn(p, ",");
            unsigned bit = 0;
            for (unsigned i = 0; i < 4; i++)
                if (strlen(NAMES[i]) == len && strncmp(p, NAMES[i], len) == 0)
                    bit = 1u << i;
            if (bit == 0)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                     "--metrics: unknown metric '%.*s' (expected reserved, allocated, oom, "
                                     "fragmentation, separated by commas)",
                                     (int)len, p);
            c->gates |= bit;
            p += len + (p[len] == ',');
        }
        if (c->gates == 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--metrics: no metric named");
    }
    c->max_reserved = 0;
    c->has_max = (v = cli_get(a, "max-reserved")) != NULL;
    if (c->has_max && units_parse_size(v, &c->max_reserved, err) != SIM_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg); /* the message is the target's source */
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--max-reserved: %s", msg);
    }
    return cli_session_prepare(s, CLI_USES_ON_OOM);
}

int cmd_check(int argc, char **argv)
{
    cli_session s;
    check_args c = {.t0 = sim_clock_s(), .started = (long long)time(NULL)};
    sim_status st = cli_session_parse(&s, &CHECK, argc, argv);
    if (st == SIM_OK)
        st = check_options(&s, &c);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    const char *base_path = c.base_path, *write_path = c.write_path;
    const cli_args *a = &s.a;
    int rc = 0;
    json_parser *jp = json_parser_new();
    char *text = NULL;
    baseline b;
    memset(&b, 0, sizeof b);
    sim_run *run = NULL;
    if (jp == NULL) {
        fprintf(stderr, "gpusim: out of memory\n");
        rc = 2;
        goto done;
    }
    if (base_path && (rc = read_baseline(base_path, jp, &text, &b)) != 0)
        goto done;

    /* strategy: --strategy, else the baseline's, else replay's default */
    const char *sname = cli_get(a, "strategy");
    if (sname == NULL)
        sname = base_path ? b.strategy : GPUSIM_DEFAULT_STRATEGY;
    const strategy_ops *ops = registry_find(sname);
    if (ops == NULL) {
        if (cli_get(a, "strategy"))
            rc = cli_usage_error("check", "--strategy: unknown strategy '%s'", sname);
        else
            rc = bad_baseline(base_path, "its strategy is not one this build knows (see 'gpusim strategies')");
        goto done;
    }
    if ((st = cli_strategy_opts_apply(a, &ops, 1, &s.err)) != SIM_OK) {
        rc = cli_exit("check", st, &s.err);
        goto done;
    }
    /* device: the command line, else the baseline's, else the trace header's */
    if ((st = cli_session_prepare(&s, CLI_USES_INPUTS)) == SIM_OK) {
        if (base_path) {
            memset(&s.hdr, 0, sizeof s.hdr);
            snprintf(s.hdr.name, sizeof s.hdr.name, "%s", b.device);
            s.hdr.capacity = b.capacity;
        }
        st = cli_session_prepare(&s, CLI_USES_DEVICE);
    }
    if (st != SIM_OK) {
        rc = cli_exit("check", st, &s.err);
        goto done;
    }
    cli_device dev = s.dev;
    if (base_path && !cli_has(a, "context")) { /* the baseline's context, not the published default */
        dev.info.context_bytes = b.context;    /* NCCL's buffers included, as the baseline replayed them */
        dev.info.context_default = NULL;
        dev.info.nccl_bytes = 0;
    }
    /* options: the baseline's, then the command line's (the last occurrence wins) */
    sim_kv all[2 * CLI_MAX_KV];
    uint32_t nall = 0;
    for (uint32_t i = 0; i < b.n_opts && base_path && strcmp(ops->name, b.strategy) == 0; i++)
        all[nall++] = (sim_kv){b.keys[i], b.values[i]};
    nall += cli_strategy_kv(a, all + nall, CLI_MAX_KV);
    engine_config cfg = {
        .device = dev.info,
        .ops = ops,
        .opts = all,
        .n_opts = nall,
        .on_oom_skip = s.skip_oom,
    };
    if ((st = engine_run(&cfg, &s.src[0], 1, &run, &s.err)) != SIM_OK) {
        rc = cli_exit("check", st, &s.err);
        goto done;
    }
    if (write_path) {
        sim_buf out;
        sim_buf_init(&out);
        report_json(run, &out);
        st = sim_buf_write_file(&out, write_path, &s.err);
        sim_buf_release(&out);
        if (st != SIM_OK) {
            rc = cli_fail(&s.err);
            goto done;
        }
        char sz[32];
        printf("check: wrote baseline %s (%s on %s: peak reserved %s)\n", write_path, ops->name, dev.name,
               units_format_size(run->total.peak_reserved_bytes, sz, sizeof sz));
        if (base_path == NULL)
            goto done;
    }
    rc = verdicts(&s, &c, &b, ops, dev.name, run);
done:
    fflush(stdout);
    sim_run_free(run);
    free(text);
    json_parser_free(jp);
    cli_session_close(&s);
    return rc;
}
