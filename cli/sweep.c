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
#include "sweep/mpi.h"
#include "sweep/run.h"
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
    {NULL, false, NULL},
};

static void sweep_help(void)
{
    printf("usage: gpusim sweep SPEC.json [options]\n"
           "       mpirun -n N gpusim sweep SPEC.json [options]\n\n"
           "Replays every trace of the spec on every device, under every strategy and option\n"
           "set; writes one JSON line per job (sorted by job at the end, the same bytes however\n"
           "it ran) and prints, for each device, strategy and option set, the share of traces\n"
           "that fit, the allocator's effective limit, the worst headroom and the traces that run\n"
           "out of memory. The spec's \"node\" (\"8xA100-40GB\", or a list) adds machines with\n"
           "several GPUs: each trace as rank 0 of a job that sees every GPU of the node, with every\n"
           "GPU's figures in its line. See docs/sweep.md.\n\n");
    cli_print_options(stdout, SWEEP_OPTS);
    printf("\nexit status: 0 ran, 2 usage or I/O error (or jobs lost with an MPI rank: --resume), "
           "3 a trace is invalid\n");
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
} sweep_cli;

static const cli_command SWEEP = {"sweep", SWEEP_OPTS, sweep_help, 0, NULL};

static sim_status sweep_options(const cli_args *a, sweep_cli *c, sim_error *err)
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
    c->progress = cli_has(a, "progress") || isatty(2);
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
    c->mpi = -1;
    if (v) {
        if (strcmp(v, "on") == 0)
            c->mpi = 1;
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

/* A spec or usage problem on rank 0 (already printed): send the other ranks home. */
static int fail_early(sweep_mpi *m, double heartbeat_s, int code)
{
    sweep_mpi_dismiss(m, heartbeat_s);
    sweep_mpi_finalize(m);
    return code;
}

int cmd_sweep(int argc, char **argv)
{
    cli_session ses;
    sweep_cli c;
    sim_status pst = cli_session_parse(&ses, &SWEEP, argc, argv);
    if (pst == SIM_OK)
        pst = sweep_options(&ses.a, &c, &ses.err);
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
        return fail_early(&m, c.heartbeat_s, cli_fail(&err));
    const char *output = c.output ? c.output : spec->output;
    if (output == NULL) {
        sweep_spec_free(spec);
        return fail_early(&m, c.heartbeat_s, cli_usage_error("sweep", "no output file: give --output=FILE.jsonl or \"output\" in "
                                                       "the spec"));
    }
    /* FILE.sqlite: the JSONL journal is FILE.jsonl, the database written from it at the end */
    const char *db = sweep_sqlite_is_db(output) ? output : NULL;
    char journal[1024];
    if (db) {
        sim_status dst = sweep_sqlite_journal(db, journal, sizeof journal)
                             ? sweep_sqlite_prepare(db, journal, c.resume, c.force, &err)
                             : sim_error_set(&err, SIM_EUSAGE, NULL, 0, 0, "--output: the path is too long");
        if (dst != SIM_OK) {
            sweep_spec_free(spec);
            return fail_early(&m, c.heartbeat_s, cli_exit("sweep", dst, &err));
        }
        output = journal;
    }
    sweep_results *res = NULL;
    if (sweep_results_open(spec, output, c.resume, c.force, &res, &err) != SIM_OK) {
        sweep_spec_free(spec);
        return fail_early(&m, c.heartbeat_s, cli_fail(&err));
    }

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
        sim_buf *shown = c.json ? &json : &text;
        if (sim_buf_write_file(shown, "-", &err) != SIM_OK)
            rc = cli_fail(&err);
        else if (c.summary && sim_buf_write_file(&json, c.summary, &err) != SIM_OK)
            rc = cli_fail(&err);
        fprintf(stderr, "gpusim sweep: %llu jobs run in %.3f s (%.1f jobs/s, %.3g events/s) with %s; results in %s\n",
                (unsigned long long)ran, dt, dt > 0 ? (double)ran / dt : 0.0, dt > 0 ? (double)events / dt : 0.0,
                m.active && m.size > 1 ? "MPI" : "threads", db ? db : output);
        if (lost)
            fprintf(stderr, "gpusim sweep: %llu job(s) lost with a dead rank; run again with --resume to finish\n",
                    (unsigned long long)lost);
    } else {
        rc = cli_fail(&err);
    }
    sim_buf_release(&text);
    sim_buf_release(&json);
    sweep_results_close(res);
    sweep_spec_free(spec);
    /* MPI_Finalize waits for every rank, a dead one too: with the results written,
     * end the job instead (mpirun then reports the abort; the exit status is rc). */
    if (rep.dead_ranks > 0)
        sweep_mpi_abort(&m, rc);
    sweep_mpi_finalize(&m);
    return rc;
}
