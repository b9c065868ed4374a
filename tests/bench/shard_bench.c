/* shard_bench — `gpusim sweep --shard` and `gpusim sweep merge`: a sweep run as 4
 * shard processes at once (one worker each, as 4 tasks of a job array on one machine)
 * and merged, against one process with 4 worker threads, in shards/s and jobs/s, with a
 * check that the merge wrote the one process's bytes; then the merge's own time on
 * about 100,000 job results (4 shards of 100 small traces x 1,040 combinations).
 * Prints figures, no thresholds; exit 1 when a run fails or the bytes differ.
 * Usage: shard_bench --gpusim=PATH [--traces=N] [--steps=N] [--merge-traces=N] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"

#define SHARDS 4

typedef struct shard_cfg {
    const char *gpusim;
    unsigned traces, steps, merge_traces;
} shard_cfg;

/* n training-like traces in dir/jobs: weights, then per step activations allocated
 * forward and freed backward; sizes from the seed. Returns the events written. */
static uint64_t write_traces(const char *dir, unsigned n, unsigned steps, uint64_t seed)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/jobs", dir);
    mkdir(p, 0755);
    uint64_t events = 0, x = seed;
    for (unsigned i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/jobs/job_%04u.jsonl", dir, i);
        FILE *f = fopen(p, "w");
        if (f == NULL) {
            perror(p);
            exit(2);
        }
        uint64_t layers = 4 + bench_rng(&x) % 20, id = 0;
        fprintf(f, "{\"format\":\"gpusim-trace\",\"version\":1,\"name\":\"job_%04u\"}\n", i);
        for (uint64_t l = 0; l < layers; l++, events++)
            fprintf(f, "{\"op\":\"alloc\",\"id\":%" PRIu64 ",\"size\":%" PRIu64 "}\n", ++id,
                    (1 + bench_rng(&x) % 64) << 20);
        for (unsigned s = 0; s < steps; s++) {
            uint64_t base = id;
            for (uint64_t l = 0; l < layers; l++, events++)
                fprintf(f, "{\"op\":\"alloc\",\"id\":%" PRIu64 ",\"size\":%" PRIu64 "}\n", ++id,
                        (1 + bench_rng(&x) % 96) << 18);
            for (uint64_t l = layers; l >= 1; l--, events++)
                fprintf(f, "{\"op\":\"free\",\"id\":%" PRIu64 "}\n", base + l);
        }
        fclose(f);
    }
    return events;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) == EOF) {
        perror(path);
        exit(2);
    }
    fclose(f);
}

/* Run cmd through the shell; its wall time, or -1 when it failed. */
static double timed(const char *cmd)
{
    double t0 = bench_now();
    int rc = system(cmd);
    double dt = bench_now() - t0;
    if (rc != 0) {
        fprintf(stderr, "shard_bench: failed (status %d): %s\n", rc, cmd);
        return -1.0;
    }
    return dt;
}

static unsigned long long lines_of(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long n = 0;
    int ch;
    while (f && (ch = fgetc(f)) != EOF)
        n += ch == '\n';
    if (f)
        fclose(f);
    return n;
}

/* All shards of dir/spec.json at once, each with one worker, into dir/s.shard-*. */
static double run_shards(const shard_cfg *c, const char *dir)
{
    char cmd[8192];
    int at = snprintf(cmd, sizeof cmd, "(");
    for (int i = 0; i < SHARDS; i++)
        at += snprintf(
            cmd + at, sizeof cmd - (size_t)at,
            "'%s' sweep '%s/spec.json' --shard=%d/%d --jobs=1 --output='%s/s.jsonl' >/dev/null 2>>'%s/shards.err' & ",
            c->gpusim, dir, i, SHARDS, dir, dir);
    snprintf(cmd + at, sizeof cmd - (size_t)at, "wait) && test \"$(grep -c 'jobs run' '%s/shards.err')\" -eq %d", dir,
             SHARDS);
    return timed(cmd);
}

static double run_merge(const shard_cfg *c, const char *dir, double *own_s)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' sweep merge '%s/m.jsonl' '%s/s.shard-*-of-%d.jsonl' >/dev/null 2>'%s/merge.err'",
             c->gpusim, dir, dir, SHARDS, dir);
    double wall = timed(cmd);
    *own_s = -1.0;
    snprintf(cmd, sizeof cmd, "%s/merge.err", dir);
    FILE *f = fopen(cmd, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        const char *in = strstr(line, "jobs, in ");
        if (in)
            *own_s = strtod(in + 9, NULL);
    }
    if (f)
        fclose(f);
    return wall;
}

int main(int argc, char **argv)
{
    shard_cfg c = {NULL, 16, 600, 100};
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--gpusim=", 9) == 0)
            c.gpusim = argv[i] + 9;
        else if (strncmp(argv[i], "--traces=", 9) == 0)
            c.traces = (unsigned)strtoul(argv[i] + 9, NULL, 10);
        else if (strncmp(argv[i], "--steps=", 8) == 0)
            c.steps = (unsigned)strtoul(argv[i] + 8, NULL, 10);
        else if (strncmp(argv[i], "--merge-traces=", 15) == 0)
            c.merge_traces = (unsigned)strtoul(argv[i] + 15, NULL, 10);
        else
            c.gpusim = NULL, c.traces = 0;
    }
    if (c.gpusim == NULL || c.traces == 0 || c.merge_traces == 0) {
        fprintf(stderr, "usage: shard_bench --gpusim=PATH [--traces=N] [--steps=N] [--merge-traces=N]\n");
        return 2;
    }
    char dir[] = "/tmp/gpusim_shard_bench_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    int status = 0;
    char p[1024], cmd[4096];

    /* ---- 4 shards at once against one process with 4 threads */
    uint64_t events = write_traces(dir, c.traces, c.steps, 7);
    snprintf(p, sizeof p, "%s/spec.json", dir);
    write_file(p, "{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\", \"L4\", \"RTX4090\"],\n"
                  " \"strategies\": [\"ideal\", \"greedy\", \"growth\", \"torch\"],\n"
                  " \"options\": [{\"name\": \"default\"}, {\"mem-fraction\": 0.8, \"strategies\": [\"greedy\", "
                  "\"growth\"]}]}\n");
    const unsigned long long jobs = (unsigned long long)c.traces * 3 * 6;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("shard_bench: %u traces (%" PRIu64 " events) x 18 combinations = %llu jobs; %d shards on %ld core(s)\n",
           c.traces, events, jobs, SHARDS, cores);
    snprintf(cmd, sizeof cmd, "'%s' sweep '%s/spec.json' --jobs=%d --output='%s/one.jsonl' >/dev/null 2>/dev/null",
             c.gpusim, dir, SHARDS, dir);
    double one = timed(cmd);
    double shards = run_shards(&c, dir);
    double merge_own = 0, merge = shards >= 0 ? run_merge(&c, dir, &merge_own) : -1.0;
    char ref[1100], got[1100];
    snprintf(ref, sizeof ref, "%s/one.jsonl", dir);
    snprintf(got, sizeof got, "%s/m.jsonl", dir);
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", ref, got);
    if (one < 0 || shards < 0 || merge < 0 || system(cmd) != 0) {
        fprintf(stderr, "shard_bench: the merged shards are not the one process's bytes (or a run failed)\n");
        status = 1;
    } else {
        printf("%-30s %10s %10s %12s\n", "sweep (wall time)", "time (s)", "shards/s", "jobs/s");
        printf("%-30s %10.3f %10s %12.1f\n", "1 process, 4 threads", one, "-", (double)jobs / one);
        printf("%-30s %10.3f %10.2f %12.1f\n", "4 shard processes at once", shards, SHARDS / shards,
               (double)jobs / shards);
        printf("%-30s %10.3f %10.2f %12.1f\n", "4 shards, then the merge", shards + merge, SHARDS / (shards + merge),
               (double)jobs / (shards + merge));
    }

    /* ---- the merge on ~100,000 job results: small traces x 1,040 combinations */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/jobs' '%s'/*.jsonl '%s'/*.err", dir, dir, dir);
    if (system(cmd) != 0)
        status = 1;
    write_traces(dir, c.merge_traces, 2, 11);
    char spec[2048];
    int at = snprintf(spec, sizeof spec, "{\"traces\": [\"jobs\"], \"devices\": [");
    for (int g = 1; g <= 10; g++)
        at += snprintf(spec + at, sizeof spec - (size_t)at, "%s\"%dGiB\"", g > 1 ? ", " : "", g);
    at += snprintf(spec + at, sizeof spec - (size_t)at,
                   "],\n \"strategies\": [\"ideal\", \"raw\", \"greedy\", \"growth\"],\n"
                   " \"options\": [{\"name\": \"default\"}, {\"mem-fraction\": [");
    for (int k = 0; k < 50; k++)
        at += snprintf(spec + at, sizeof spec - (size_t)at, "%s0.%02d", k ? ", " : "", 50 + k);
    snprintf(spec + at, sizeof spec - (size_t)at, "], \"strategies\": [\"greedy\", \"growth\"]}]}\n");
    snprintf(p, sizeof p, "%s/spec.json", dir);
    write_file(p, spec);
    const unsigned long long many = (unsigned long long)c.merge_traces * 10 * (4 + 2 * 50);
    double made = run_shards(&c, dir);
    double own = 0, wall = made >= 0 ? run_merge(&c, dir, &own) : -1.0;
    if (made < 0 || wall < 0 || lines_of(got) != many) {
        fprintf(stderr, "shard_bench: the 100,000-job merge failed or wrote %llu lines, not %llu\n", lines_of(got),
                many);
        status = 1;
    } else {
        struct stat sb;
        double mib = stat(got, &sb) == 0 ? (double)sb.st_size / (1 << 20) : 0.0;
        printf("merge of %llu job results (%.0f MiB from %d shards, made in %.1f s): %.3f s (%.0f results/s), "
               "%.3f s wall\n",
               many, mib, SHARDS, made, own, own > 0 ? (double)many / own : 0.0, wall);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "shard_bench: could not remove %s\n", dir);
    return status;
}
