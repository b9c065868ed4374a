/* gpusim validate-report MEASURED.json... : for each measurement written by
 * validate/ (replay_cuda, torch_replay.py, jax_replay.py), runs the matching
 * prediction — the same trace, the strategy and options the measurement names,
 * the measured device's total memory and measured context — and prints predicted
 * against measured, metric by metric, with the difference in bytes and percent.
 * Format of the measured JSON: validate/README.md. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "common.h"
#include "reports/measured.h"
#include "sim/buf.h"
#include "sim/engine.h"
#include "strategies/registry.h"
#include "traces/json.h"
#include "traces/trace.h"

/* a measurement is a few KiB; this only keeps a wrong file from filling memory */
#define VR_MAX_BYTES ((uint64_t)1 << 30)

static const cli_opt VR_OPTS[] = {
    CLI_FORMAT_OPT,
    CLI_OPT("traces", "DIR: look for each measurement's trace in DIR (by file name) first"),
    CLI_FLAG("all-stats", "text: list every compared allocator statistic, not only those that differ"),
    CLI_OPT("output", "FILE: write the report there instead of stdout"),
    {NULL, false, NULL},
};

static void note(measured_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(measured_report *r, const char *fmt, ...)
{
    if (r->n_notes == MEASURED_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->n_notes++], sizeof r->notes[0], fmt, ap);
    va_end(ap);
}

static measured_row *add_row(measured_report *r, const char *metric, const char *unit, bool is_stat)
{
    if (r->n_rows == MEASURED_MAX_ROWS)
        return NULL;
    measured_row *row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    snprintf(row->metric, sizeof row->metric, "%s", metric);
    row->unit = unit;
    row->is_stat = is_stat;
    return row;
}

static bool get_u64(const json_value *obj, const char *key, uint64_t *out)
{
    const json_value *v = obj ? json_get(obj, key) : NULL;
    return v && v->type == JSON_NUMBER && json_to_u64(v, UINT64_MAX, out) == JSON_INT_OK;
}

static const char *get_str(const json_value *obj, const char *key)
{
    const json_value *v = obj ? json_get(obj, key) : NULL;
    return v && v->type == JSON_STRING ? v->u.str : NULL;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* out = a + b + c; false (and no match) when it does not fit. */
static bool join3(char *out, size_t cap, const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    if (la + lb + lc + 1 > cap)
        return false;
    memcpy(out, a, la);
    memcpy(out + la, b, lb);
    memcpy(out + la + lb, c, lc + 1);
    return true;
}

/* The trace a measurement names: --traces=DIR/basename, the path as written,
 * then beside the measurement (its folder, its folder's traces/, ../traces/). */
static bool resolve_trace(const char *measured_file, const char *path, const char *dir, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (dir && join3(out, cap, dir, "/", base) && exists(out))
        return true;
    if (join3(out, cap, path, "", "") && exists(out))
        return true;
    char mdir[1024];
    if (!join3(mdir, sizeof mdir, measured_file, "", ""))
        return false;
    char *slash = strrchr(mdir, '/');
    if (slash)
        *slash = '\0';
    else
        memcpy(mdir, ".", 2);
    static const char *const SUB[] = {"/", "/traces/", "/../traces/"};
    for (size_t i = 0; i < 3; i++)
        if (join3(out, cap, mdir, SUB[i], base) && exists(out))
            return true;
    return false;
}

/* One measured file → one report. Returns an exit code (0 fine). */
static int one(const char *file, const char *traces_dir, measured_report *r, json_parser *jp)
{
    memset(r, 0, sizeof *r);
    snprintf(r->file, sizeof r->file, "%s", file);
    char *text;
    size_t len;
    sim_error rerr;
    sim_error_clear(&rerr);
    if (sim_read_file(file, VR_MAX_BYTES, &text, &len, &rerr) != SIM_OK) {
        fprintf(stderr, "gpusim validate-report: %s: cannot read the file\n", file);
        return 2;
    }
    char errbuf[256];
    const json_value *doc = json_parse(jp, text, len, 0, errbuf, sizeof errbuf);
    int rc = 2;
    sim_run *run = NULL;
    trace_reader *tr = NULL;
    if (doc == NULL || doc->type != JSON_OBJECT) {
        fprintf(stderr, "gpusim validate-report: %s: %s\n", file, doc ? "not a JSON object" : errbuf);
        goto done;
    }
    const char *fmt = get_str(doc, "format");
    uint64_t ver = 0;
    if (fmt == NULL || strcmp(fmt, MEASURED_FORMAT) != 0 || !get_u64(doc, "version", &ver) || ver != MEASURED_VERSION) {
        fprintf(stderr, "gpusim validate-report: %s: not a gpusim measurement (\"format\": \"gpusim-measured\", "
                        "\"version\": 1)\n", file);
        goto done;
    }
    const json_value *jt = json_get(doc, "trace"), *jd = json_get(doc, "device"), *jm = json_get(doc, "measured"),
                     *jpred = json_get(doc, "predict");
    const char *tpath = get_str(jt, "path");
    const char *alloc = get_str(doc, "allocator");
    if (tpath == NULL || alloc == NULL || jm == NULL || jm->type != JSON_OBJECT ||
        !get_u64(jd, "total_bytes", &r->total) || !get_u64(jd, "context_bytes", &r->context)) {
        fprintf(stderr, "gpusim validate-report: %s: needs allocator, trace.path, device.total_bytes, "
                        "device.context_bytes and a measured object\n", file);
        goto done;
    }
    const json_value *jf = json_get(doc, "fixture");
    r->fixture = jf && jf->type == JSON_TRUE;
    snprintf(r->allocator, sizeof r->allocator, "%s", alloc);
    snprintf(r->device, sizeof r->device, "%s", get_str(jd, "name") ? get_str(jd, "name") : "?");
    if (!resolve_trace(file, tpath, traces_dir, r->trace_path, sizeof r->trace_path)) {
        fprintf(stderr, "gpusim validate-report: %s: trace '%s' not found (try --traces=DIR)\n", file, tpath);
        goto done;
    }
    const char *want_fnv = get_str(jt, "fnv1a64");
    uint64_t fnv = 0;
    if (want_fnv && measured_trace_fnv1a64(r->trace_path, &fnv)) {
        char have[32];
        snprintf(have, sizeof have, "%016" PRIx64, fnv);
        if (strcmp(have, want_fnv) != 0) {
            fprintf(stderr, "gpusim validate-report: %s: %s is not the trace that was measured "
                            "(fnv1a64 %s, measured %s)\n", file, r->trace_path, have, want_fnv);
            goto done;
        }
    }
    const char *backend = get_str(doc, "backend");
    if (backend && strcmp(backend, "mock") == 0)
        note(r, "MOCK: %s was written by the host-memory stand-in (--backend=mock), not by a GPU", file);
    if (r->fixture)
        note(r, "FIXTURE: the measured numbers in %s are a test fixture, not a measurement", file);
    const json_value *jn = json_get(doc, "notes");
    if (jn && jn->type == JSON_ARRAY)
        for (uint32_t i = 0; i < jn->len; i++)
            if (jn->u.items[i].type == JSON_STRING)
                note(r, "%s", jn->u.items[i].u.str);

    /* the prediction */
    const char *sname = get_str(jpred, "strategy");
    const strategy_ops *ops = sname ? registry_find(sname) : NULL;
    snprintf(r->strategy, sizeof r->strategy, "%s", sname ? sname : "-");
    sim_kv kv[CLI_MAX_KV];
    uint32_t n_kv = 0;
    const json_value *jo = jpred ? json_get(jpred, "options") : NULL;
    if (jo && jo->type == JSON_OBJECT)
        for (uint32_t i = 0; i < jo->len && n_kv < CLI_MAX_KV; i++)
            if (jo->u.members[i].value.type == JSON_STRING) {
                kv[n_kv++] = (sim_kv){jo->u.members[i].key, jo->u.members[i].value.u.str};
                size_t ol = strlen(r->options);
                snprintf(r->options + ol, sizeof r->options - ol, "%s%s=%s", ol ? ", " : "", kv[n_kv - 1].key,
                         kv[n_kv - 1].value);
            }
    sim_error err;
    sim_error_clear(&err);
    const sim_metrics *pm = NULL;
    if (ops == NULL) {
        note(r, "gpusim has no model '%s' in this build: measured values only", sname ? sname : "(none named)");
    } else {
        if (trace_open(r->trace_path, &tr, &err) != SIM_OK) {
            rc = cli_fail(&err);
            goto done;
        }
        snprintf(r->trace_name, sizeof r->trace_name, "%s", trace_get_header(tr)->name);
        engine_config cfg = {
            .device = {.name = r->device, .capacity_bytes = r->total, .context_bytes = r->context},
            .ops = ops,
            .opts = kv,
            .n_opts = n_kv,
        };
        sim_event_source src = trace_source(tr);
        sim_status st = engine_run(&cfg, &src, 1, &run, &err);
        if (st != SIM_OK) {
            rc = st == SIM_EUSAGE ? cli_usage_error("validate-report", "%s: %s", file, err.msg) : cli_fail(&err);
            goto done;
        }
        pm = &run->total;
        r->has_model = true;
    }
    if (r->trace_name[0] == '\0')
        snprintf(r->trace_name, sizeof r->trace_name, "%s", get_str(jt, "name") ? get_str(jt, "name") : tpath);

    /* the rows: every metric the measurement has */
    static const char *const METRICS[] = {"peak_allocated_bytes", "peak_reserved_bytes", "peak_device_bytes",
                                          "final_reserved_bytes", "num_device_allocs", "num_device_frees"};
    for (size_t i = 0; i < sizeof METRICS / sizeof METRICS[0]; i++) {
        uint64_t mv;
        if (!get_u64(jm, METRICS[i], &mv))
            continue;
        bool bytes = strstr(METRICS[i], "bytes") != NULL;
        measured_row *row = add_row(r, METRICS[i], bytes ? "B" : "", false);
        if (row == NULL)
            break;
        row->has_meas = true;
        row->meas = mv;
        if (pm) {
            row->has_pred = true;
            row->pred = i == 0   ? pm->peak_allocated_bytes
                        : i == 1 ? pm->peak_reserved_bytes
                        : i == 2 ? pm->peak_device_bytes
                        : i == 3 ? pm->final_reserved_bytes
                        : i == 4 ? pm->num_device_allocs
                                 : pm->num_device_frees;
        }
    }
    const json_value *jc = json_get(jm, "completed");
    r->completed_meas = jc && jc->type == JSON_TRUE;
    r->completed_pred = pm ? pm->completed : false;
    const json_value *joom = json_get(jm, "first_oom");
    const json_value *jmodel = json_get(jm, "model_first_oom");
    if (jmodel && jmodel->type == JSON_OBJECT) {
        /* mirror: the model stopped the replay; what did the real device have free then? */
        uint64_t mf, rf;
        if (get_u64(jmodel, "model_device_free_bytes", &mf) && get_u64(jmodel, "real_device_free_bytes", &rf)) {
            measured_row *row = add_row(r, "device_free_at_model_oom", "B", false);
            if (row) {
                row->has_pred = row->has_meas = true;
                row->pred = mf;
                row->meas = rf;
            }
        }
    } else if (joom) {
        measured_row *row = add_row(r, "first_oom_event", "event", false);
        if (row) {
            row->has_meas = joom->type == JSON_OBJECT && get_u64(joom, "event", &row->meas);
            if (pm && pm->first_oom.happened) {
                row->has_pred = true;
                row->pred = pm->first_oom.event;
            }
            if (!pm)
                row->unit = "event?"; /* no prediction at all: not "no OOM predicted" */
        }
    }
    const json_value *js = json_get(doc, "stats");
    if (js && js->type == JSON_OBJECT && pm)
        for (uint32_t i = 0; i < js->len; i++) {
            uint64_t mv, pv;
            const json_member *mm = &js->u.members[i];
            if (mm->value.type != JSON_NUMBER || json_to_u64(&mm->value, UINT64_MAX, &mv) != JSON_INT_OK)
                continue;
            strategy_stat_value sv;
            if (!strategy_stat_find(ops, run->procs[0].s, mm->key, &sv) || sv.kind != STRATEGY_STAT_U64)
                continue;
            pv = sv.u64;
            char name[96];
            snprintf(name, sizeof name, "stats.%s", mm->key);
            measured_row *row = add_row(r, name, strstr(mm->key, "bytes") || strstr(mm->key, "size") ? "B" : "", true);
            if (row == NULL)
                break;
            row->has_pred = row->has_meas = true;
            row->pred = pv;
            row->meas = mv;
        }
    rc = 0;
done:
    sim_run_free(run);
    trace_close(tr);
    free(text);
    return rc;
}

static void vr_help(void)
{
    printf("usage: gpusim validate-report MEASURED.json... [options]\n\n"
           "For each measurement written by validate/ (replay_cuda, torch_replay.py,\n"
           "jax_replay.py), runs the matching prediction (same trace, the strategy and\n"
           "options the measurement names, the measured device's total memory and context)\n"
           "and prints predicted vs measured per metric, with the difference in bytes and %%.\n\n");
    cli_print_options(stdout, VR_OPTS);
    printf("\nexit status: 0 reported, 2 usage or I/O error or a file that is not a measurement, "
           "3 invalid trace\n");
}

static const cli_command VALIDATE_REPORT = {"validate-report", VR_OPTS, vr_help, CLI_USES_FORMAT, NULL};

int cmd_validate_report(int argc, char **argv)
{
    cli_session s;
    sim_status st = cli_session_parse(&s, &VALIDATE_REPORT, argc, argv);
    if (st == SIM_OK && s.a.n_positional == 0)
        st = sim_error_set(&s.err, SIM_EUSAGE, NULL, 0, 0,
                           "no measurement given (usage: gpusim validate-report MEASURED.json...)");
    if (st == SIM_OK)
        st = cli_session_prepare(&s, VALIDATE_REPORT.uses);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    const cli_args *a = &s.a;
    const bool json = s.json;
    measured_report *reps = calloc((size_t)a->n_positional, sizeof *reps);
    json_parser *jp = json_parser_new();
    if (reps == NULL || jp == NULL) {
        free(reps);
        json_parser_free(jp);
        fprintf(stderr, "gpusim validate-report: out of memory\n");
        return 2;
    }
    int rc = 0;
    for (int i = 0; i < a->n_positional && rc == 0; i++)
        rc = one(a->positional[i], cli_get(a, "traces"), &reps[i], jp);
    if (rc == 0) {
        sim_buf out;
        sim_buf_init(&out);
        if (json)
            report_measured_json(reps, a->n_positional, &out);
        else
            report_measured_text(reps, a->n_positional, cli_has(a, "all-stats"), &out);
        sim_error err;
        sim_error_clear(&err);
        const char *op = cli_get(a, "output");
        if (sim_buf_write_file(&out, op ? op : "-", &err) != SIM_OK)
            rc = cli_fail(&err);
        sim_buf_release(&out);
    }
    json_parser_free(jp);
    free(reps);
    return rc;
}
