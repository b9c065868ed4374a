/* gpusim sweep SPEC.json : the cross product of traces, devices, strategies and
 * option sets, on local threads or over MPI ranks (docs/sweep.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "common.h"
#include "sim/buf.h"
#include "sim/clock.h"
#include "sim/units.h"
#include <glob.h>

#include "sweep/merge.h"
#include "sweep/mpi.h"
#include "sweep/run.h"
#include "sweep/shard.h"
#include "sweep/spec.h"
#include "sweep/sqlite.h"

static const cli_opt SWEEP_OPTS[] = {
    CLI_OPT("output", "FILE.jsonl: one line per job (default: the spec's \"output\"); FILE.sqlite (.sqlite3, .db): "
                      "also an SQLite table of them, the JSONL beside it as FILE.jsonl"),
    CLI_OPT("jobs", "N: worker threads (default: the number of cores; under MPI: rank 0's, default 1)"),
    CLI_FLAG("resume", "keep the jobs already in the output and run only the others"),
    CLI_FLAG("force", "start over when the output already holds results"),
    CLI_OPT("format", "text|json: the summary on stdout (default text)"),
    CLI_OPT("summary", "FILE.json: also write the summary there"),
    CLI_OPT("mpi", "auto|on|off: spread the jobs over MPI ranks (auto: when started by mpirun or srun)"),
    CLI_OPT("heartbeat", "SECONDS: under MPI, a rank silent this long during a job is dead (default 60)"),
    CLI_FLAG("progress", "show jobs done on stderr (default: when stderr is a terminal)"),
    CLI_OPT("shard", "I/N|auto/N|auto: run only shard I of N (from 0) of the jobs, into OUTPUT.shard-I-of-N.jsonl; "
                     "auto: I from a job array's environment (SLURM_ARRAY_TASK_ID, HQ_TASK_ID, "
                     "JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX), N too under Slurm"),
    {NULL, false, NULL},
};

static const cli_opt MERGE_OPTS[] = {
    CLI_OPT("spec", "SPEC.json: the spec the shards ran, where the path in their header does not reach it"),
    CLI_FLAG("partial", "merge the shards given and the jobs they hold so far; missing ones are not run"),
    CLI_OPT("format", "text|json: the summary on stdout (default text)"),
    CLI_OPT("summary", "FILE.json: also write the summary there"),
    {NULL, false, NULL},
};

static void sweep_help(void)
{
    printf("usage: gpusim sweep SPEC.json [options]\n"
           "       mpirun -n N gpusim sweep SPEC.json [options]\n"
           "       gpusim sweep SPEC.json --shard=I/N [options]   (then: gpusim sweep merge OUT SHARD_RESULTS...)\n\n"
           "Replays every trace of the spec on every device, under every strategy and option\n"
           "set; writes one JSON line per job (sorted by job at the end, the same bytes however\n"
           "it ran) and prints, for each device, strategy and option set, the share of traces\n"
           "that fit, the allocator's effective limit, the worst headroom and the traces that run\n"
           "out of memory. The spec's \"node\" (\"8xA100-40GB\", or a list) adds machines with\n"
           "several GPUs: each trace as rank 0 of a job that sees every GPU of the node, with every\n"
           "GPU's figures in its line. --shard runs one shard of a job array; `gpusim sweep merge\n"
           "--help` tells how the shards' results become one run's. See docs/sweep.md.\n\n");
    cli_print_options(stdout, SWEEP_OPTS);
    printf("\nexit status: 0 ran, 2 usage or I/O error (or jobs lost with an MPI rank: --resume), "
           "3 a trace is invalid\n");
}

static void merge_help(void)
{
    printf("usage: gpusim sweep merge OUT.jsonl|OUT.sqlite SHARD_RESULTS... [options]\n\n"
           "Merges the results files of a sweep's shards (gpusim sweep SPEC --shard=I/N) into\n"
           "OUT and prints the summary: the same bytes as one run of the spec. Every shard must\n"
           "be of the same spec (its hash is in each file's first line) and given once; without\n"
           "--partial every shard must be there and finished. A quoted glob\n"
           "('out.shard-*-of-64.jsonl') is expanded here. OUT is replaced (temporary file and\n"
           "rename), so a merge may be run again as shards finish. See docs/sweep.md.\n\n");
    cli_print_options(stdout, MERGE_OPTS);
    printf("\nexit status: 0 merged, 2 usage or I/O error (shards of another spec, a shard missing,\n"
           "given twice or unfinished), 3 a job's trace is invalid (as one run)\n");
}

typedef struct sweep_cli {
    const char *spec_path;
    const char *output;
    bool json;              /* --format=json */
    const char *summary;
    uint32_t jobs;          /* 0: default */
    bool resume, force, progress;
    int mpi;                /* -1 auto, 0 off, 1 on */
    double heartbeat_s;
    const char *shard;      /* --shard's value, or NULL */
} sweep_cli;

static const cli_command SWEEP = {"sweep", SWEEP_OPTS, sweep_help, 0, NULL};
static const cli_command MERGE = {"sweep merge", MERGE_OPTS, merge_help, 0, NULL};

static sim_status sweep_options(const cli_args *a, bool from_program, sweep_cli *c, sim_error *err)
{
    memset(c, 0, sizeof *c);
    if (a->n_positional != 1)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s (usage: gpusim sweep SPEC.json [options])",
                             a->n_positional ? "give one spec" : "no spec given");
    c->spec_path = a->positional[0];
    c->output = cli_get(a, "output");
    c->summary = cli_get(a, "summary");
    c->resume = cli_has(a, "resume");
    c->force = cli_has(a, "force");
    c->progress = cli_has(a, "progress") || (!from_program && isatty(2));
    c->shard = cli_get(a, "shard");
    sim_status st = cli_format_json(a, &c->json, err);
    if (st != SIM_OK)
        return st;
    if (c->resume && c->force)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--resume and --force contradict each other");
    const char *v = cli_get(a, "jobs");
    uint64_t n = 0;
    if (v && (units_parse_u64(v, &n, err) != SIM_OK || n == 0 || n > 4096))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--jobs: expected a number of workers from 1 to 4096, not '%s'", v);
    c->jobs = (uint32_t)n;
    v = cli_get(a, "mpi");
    c->mpi = from_program ? 0 : -1;
    if (v) {
        if (strcmp(v, "on") == 0 && !from_program)
            c->mpi = 1;
        else if (strcmp(v, "on") == 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--mpi=on: a program's sweep runs on threads");
        else if (strcmp(v, "off") == 0)
            c->mpi = 0;
        else if (strcmp(v, "auto") != 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--mpi: expected auto, on or off, not '%s'", v);
    }
    c->heartbeat_s = 60.0;
    v = cli_get(a, "heartbeat");
    if (v && units_parse_real(v, 0.05, 1e6, &c->heartbeat_s, err) != SIM_OK)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--heartbeat: expected seconds from 0.05, not '%s'", v);
    return SIM_OK;
}

static uint32_t default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 4096 ? (uint32_t)n : 1;
}

/* How the command ends with err: printed (from the shell, as cli_fail does), or kept
 * in io for the program that ran it. */
static int fail(cli_io *io, const sim_error *err)
{
    if (io == NULL)
        return cli_fail(err);
    io->err = *err;
    return sim_status_exit_code(err->status);
}

static int usage(cli_io *io, const char *msg)
{
    if (io == NULL)
        return cli_usage_error("sweep", "%s", msg);
    sim_error_set(&io->err, SIM_EUSAGE, NULL, 0, 0, "%s", msg);
    return 2;
}

/* A spec or usage problem on rank 0 (already printed): send the other ranks home. */
static int fail_early(sweep_mpi *m, double heartbeat_s, int code)
{
    sweep_mpi_dismiss(m, heartbeat_s);
    sweep_mpi_finalize(m);
    return code;
}

/* The summary: on stdout and --summary from the shell, the JSON into io->out for a program. */
static int show_summary(cli_io *io, bool as_json, const char *summary_path, const sim_buf *text, const sim_buf *json,
                        int rc)
{
    sim_error err;
    sim_error_clear(&err);
    if (io) {
        sim_buf_put(io->out, json->data ? json->data : "", json->len);
    } else if (sim_buf_write_file(as_json ? json : text, "-", &err) != SIM_OK) {
        return fail(io, &err);
    }
    if (summary_path && sim_buf_write_file(json, summary_path, &err) != SIM_OK)
        return fail(io, &err);
    return rc;
}

/* --shard: the shard's results file in place of the output, and the jobs it runs. */
typedef struct shard_run {
    bool on;
    sweep_shard sh;
    const char *from;          /* the environment variable of the index, or "" */
    sweep_partition *part;
    sim_buf header;
    char output[1024];
    uint64_t first, end;
} shard_run;

static sim_status shard_prepare(shard_run *r, const sweep_spec *spec, const char *output, sim_error *err)
{
    sim_status st = sweep_partition_new(spec, r->sh.count, &r->part, err);
    if (st != SIM_OK)
        return st;
    if (!sweep_shard_path(output, r->sh, r->output, sizeof r->output))
        return sim_error_set(err, SIM_EUSAGE, output, 0, 0, "the path is too long");
    sweep_partition_range(r->part, r->sh.index, &r->first, &r->end);
    sweep_shard_header(spec, r->part, r->sh.index, &r->header);
    return r->header.oom ? sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory") : SIM_OK;
}

static void shard_release(shard_run *r)
{
    sweep_partition_free(r->part);
    sim_buf_release(&r->header);
}

static int run_sweep(cli_io *io, int argc, char **argv)
{
    cli_session ses;
    sweep_cli c;
    sim_status pst = cli_session_parse_io(&ses, &SWEEP, io, argc, argv);
    if (pst == SIM_OK)
        pst = sweep_options(&ses.a, io != NULL, &c, &ses.err);
    shard_run sr;
    memset(&sr, 0, sizeof sr);
    sim_buf_init(&sr.header);
    if (pst == SIM_OK && c.shard) {
        sr.on = true;
        pst = sweep_shard_parse(c.shard, &sr.sh, &sr.from, &ses.err);
    }
    if (pst != SIM_OK)
        return cli_session_end(&ses, pst);
    int rc = 0;
    sweep_mpi m = {0, 1, false};
    sim_error err;
    sim_error_clear(&err);
    bool want_mpi = c.mpi == 1 || (c.mpi == -1 && sweep_mpi_launched());
    if (want_mpi && !sweep_mpi_available()) {
        if (c.mpi == 1)
            return cli_usage_error("sweep", "--mpi=on: this gpusim was built without MPI (cmake -DGPUSIM_MPI=ON)");
        fprintf(stderr, "gpusim sweep: started by an MPI launcher, but built without MPI: every rank would run "
                        "the whole sweep; stopping (rebuild with -DGPUSIM_MPI=ON, or run without mpirun)\n");
        return 2;
    }
    if (want_mpi && sweep_mpi_init(&m, &err) != SIM_OK)
        return cli_fail(&err);

    sweep_spec *spec = NULL;
    unsigned flags = m.rank == 0 ? SWEEP_LOAD_CHECK_TRACES | SWEEP_LOAD_CHECK_OPTIONS : 0;
    sim_status st = sweep_spec_load(c.spec_path, flags, &spec, &err);
    if (m.rank != 0) {
        sweep_mpi_work(&m, st == SIM_OK ? spec : NULL, &err, c.heartbeat_s);
        sweep_spec_free(spec);
        sweep_mpi_finalize(&m);
        return 0;
    }
    if (st != SIM_OK)
        return fail_early(&m, c.heartbeat_s, fail(io, &err));
    const char *output = c.output ? c.output : spec->output;
    if (output == NULL) {
        sweep_spec_free(spec);
        return fail_early(&m, c.heartbeat_s,
                          usage(io, "no output file: give --output=FILE.jsonl or \"output\" in the spec"));
    }
    if (sr.on) {
        if (shard_prepare(&sr, spec, output, &err) != SIM_OK) {
            shard_release(&sr);
            sweep_spec_free(spec);
            return fail_early(&m, c.heartbeat_s, fail(io, &err));
        }
        output = sr.output;
    }
    /* FILE.sqlite: the JSONL journal is FILE.jsonl, the database written from it at the end */
    const char *db = sweep_sqlite_is_db(output) ? output : NULL;
    char journal[1024];
    if (db) {
        sim_status dst = sweep_sqlite_journal(db, journal, sizeof journal)
                             ? sweep_sqlite_prepare(db, journal, c.resume, c.force, &err)
                             : sim_error_set(&err, SIM_EUSAGE, NULL, 0, 0, "--output: the path is too long");
        if (dst != SIM_OK) {
            shard_release(&sr);
            sweep_spec_free(spec);
            return fail_early(&m, c.heartbeat_s, io ? fail(io, &err) : cli_exit("sweep", dst, &err));
        }
        output = journal;
    }
    sweep_results *res = NULL;
    sweep_results_scope scope = {sr.first, sr.end, sr.header.data, sr.header.len};
    if (sweep_results_open_scope(spec, output, sr.on ? &scope : NULL, c.resume, c.force, &res, &err) != SIM_OK) {
        shard_release(&sr);
        sweep_spec_free(spec);
        return fail_early(&m, c.heartbeat_s, fail(io, &err));
    }
    if (sr.on && io == NULL)
        fprintf(stderr,
                "gpusim sweep: shard %u/%u%s%s%s: %llu of %llu jobs, from job %llu (the cuts split %u trace(s) "
                "between shards)\n",
                sr.sh.index, sr.sh.count, sr.from[0] ? " (from " : "", sr.from, sr.from[0] ? ")" : "",
                (unsigned long long)(sr.end - sr.first), (unsigned long long)sweep_spec_jobs(spec),
                (unsigned long long)sr.first, sweep_partition_split_traces(sr.part));

    double t0 = sim_clock_s();
    int job_code = 0;
    uint64_t lost = 0;
    sweep_mpi_report rep = {0, 0, 0};
    if (m.active && m.size > 1) {
        st = sweep_mpi_coordinate(&m, spec, res, c.jobs ? c.jobs : 1, c.heartbeat_s, c.progress, &rep, &err);
        job_code = rep.exit_code;
        lost = rep.lost;
    } else {
        st = sweep_run_local(spec, res, c.jobs ? c.jobs : default_jobs(), c.progress, &job_code, &err);
    }
    double dt = sim_clock_s() - t0;
    uint64_t ran = 0, events = 0;
    sweep_results_throughput(res, &ran, &events);

    sim_buf text, json;
    sim_buf_init(&text);
    sim_buf_init(&json);
    int final_code = 0;
    if (st == SIM_OK)
        st = sweep_results_finish(res, &text, &json, &final_code, &err);
    if (st == SIM_OK && db)
        st = sweep_sqlite_write(output, db, &err);
    if (st == SIM_OK) {
        rc = final_code > job_code ? final_code : job_code;
        if (lost)
            rc = 2;
        rc = show_summary(io, c.json, c.summary, &text, &json, rc);
        if (io == NULL)
            fprintf(stderr,
                    "gpusim sweep: %llu jobs run in %.3f s (%.1f jobs/s, %.3g events/s) with %s; results in %s\n",
                    (unsigned long long)ran, dt, dt > 0 ? (double)ran / dt : 0.0, dt > 0 ? (double)events / dt : 0.0,
                    m.active && m.size > 1 ? "MPI" : "threads", db ? db : output);
        if (lost)
            fprintf(stderr, "gpusim sweep: %llu job(s) lost with a dead rank; run again with --resume to finish\n",
                    (unsigned long long)lost);
    } else {
        rc = fail(io, &err);
    }
    sim_buf_release(&text);
    sim_buf_release(&json);
    sweep_results_close(res);
    shard_release(&sr);
    sweep_spec_free(spec);
    /* MPI_Finalize waits for every rank, a dead one too: with the results written,
     * end the job instead (mpirun then reports the abort; the exit status is rc). */
    if (rep.dead_ranks > 0)
        sweep_mpi_abort(&m, rc);
    sweep_mpi_finalize(&m);
    return rc;
}

/* The shards' results files given to a merge: an argument that names a file as it is, a
 * pattern that names none expanded here (sorted), beyond the command line's limits. */
typedef struct shard_list {
    char **path;
    uint32_t n, cap;
} shard_list;

static sim_status shard_list_add(shard_list *l, const char *p, sim_error *err)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 64;
        char **grown = realloc(l->path, cap * sizeof *grown);
        if (grown == NULL)
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        l->path = grown;
        l->cap = cap;
    }
    if ((l->path[l->n] = strdup(p)) == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    l->n++;
    return SIM_OK;
}

static sim_status shard_list_make(const cli_args *a, shard_list *l, sim_error *err)
{
    sim_status st = SIM_OK;
    for (int i = 1; i < a->n_positional && st == SIM_OK; i++) {
        const char *p = a->positional[i];
        if (strpbrk(p, "*?[") == NULL || access(p, F_OK) == 0) {
            st = shard_list_add(l, p, err);
            continue;
        }
        glob_t g;
        int grc = glob(p, 0, NULL, &g);
        if (grc == GLOB_NOMATCH)
            st = sim_error_set(err, SIM_EIO, p, 0, 0, "no shard results match");
        else if (grc != 0)
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        for (size_t k = 0; grc == 0 && k < g.gl_pathc && st == SIM_OK; k++)
            st = shard_list_add(l, g.gl_pathv[k], err);
        if (grc == 0)
            globfree(&g);
    }
    return st;
}

static void shard_list_free(shard_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        free(l->path[i]);
    free(l->path);
}

static int run_merge(cli_io *io, int argc, char **argv)
{
    cli_session ses;
    sim_status st = cli_session_parse_io(&ses, &MERGE, io, argc, argv);
    bool as_json = false;
    if (st == SIM_OK)
        st = cli_format_json(&ses.a, &as_json, &ses.err);
    if (st == SIM_OK && ses.a.n_positional < 2)
        st =
            sim_error_set(&ses.err, SIM_EUSAGE, NULL, 0, 0, "%s (usage: gpusim sweep merge OUT.jsonl SHARD_RESULTS...)",
                          ses.a.n_positional ? "no shard results given" : "no output given");
    if (st != SIM_OK)
        return cli_session_end(&ses, st);
    shard_list shards = {NULL, 0, 0};
    st = shard_list_make(&ses.a, &shards, &ses.err);
    sim_buf text, json;
    sim_buf_init(&text);
    sim_buf_init(&json);
    sweep_merge_report rep;
    memset(&rep, 0, sizeof rep);
    sweep_merge_opts opts = {cli_get(&ses.a, "spec"), cli_has(&ses.a, "partial")};
    double t0 = sim_clock_s();
    if (st == SIM_OK)
        st = sweep_merge(ses.a.positional[0], (const char *const *)shards.path, shards.n, &opts, &text, &json, &rep,
                         &ses.err);
    double dt = sim_clock_s() - t0;
    shard_list_free(&shards);
    int rc;
    if (st != SIM_OK) {
        rc = io ? fail(io, &ses.err) : cli_fail(&ses.err);
        cli_session_close(&ses);
    } else {
        rc = show_summary(io, as_json, cli_get(&ses.a, "summary"), &text, &json, rep.exit_code);
        if (io == NULL)
            fprintf(stderr,
                    "gpusim sweep merge: %u of %u shards (%u unfinished), %llu of %llu jobs, in %.3f s; "
                    "results in %s\n",
                    rep.given, rep.shards, rep.unfinished, (unsigned long long)rep.done, (unsigned long long)rep.jobs,
                    dt, ses.a.positional[0]);
        cli_session_close(&ses);
    }
    sim_buf_release(&text);
    sim_buf_release(&json);
    return rc;
}

int cli_sweep_io(cli_io *io, int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "merge") == 0)
        return run_merge(io, argc - 1, argv + 1);
    return run_sweep(io, argc, argv);
}
