/* sweep_bench — throughput of `gpusim sweep`: jobs/s and events/s
 * with 1 and 2 local worker threads and with 2 MPI ranks (when mpirun is there
 * and gpusim was built with MPI), on a generated set of synthetic training
 * jobs x 3 GPUs x 3 strategies x 2 option sets. Prints figures, no thresholds;
 * checks that the three runs wrote the same bytes. The time is the sweep's own
 * (replays, results, final sort), read from its last stderr line; the wall time
 * with process and MPI start-up is printed next to it.
 * Usage: sweep_bench --gpusim=PATH [--traces=N] [--steps=N] [--seed=N] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bench_util.h"

typedef struct bench_cfg {
    const char *gpusim;
    unsigned traces, steps;
    uint64_t seed;
} bench_cfg;

static uint64_t next_rand(uint64_t *x)
{
    /* splitmix64: deterministic, the same jobs for the same seed */
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t between(uint64_t *x, uint64_t lo, uint64_t hi)
{
    return lo + next_rand(x) % (hi - lo + 1);
}

/* One training job: weights kept, per step activations forward, freed backward.
 * Returns the number of events written. */
static uint64_t write_job(const char *path, unsigned idx, const bench_cfg *c)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    uint64_t x = c->seed * 1000003u + idx;
    uint64_t scale = 1ull << between(&x, 0, 5), layers = between(&x, 8, 24), id = 0, t = 0, n = 0;
    fprintf(f, "{\"format\":\"gpusim-trace\",\"version\":1,\"name\":\"bench_%03u\"}\n", idx);
    for (uint64_t l = 0; l < layers; l++, n++)
        fprintf(f, "{\"op\":\"alloc\",\"id\":%" PRIu64 ",\"size\":%" PRIu64 ",\"t\":%" PRIu64 "}\n", ++id,
                between(&x, 1 << 20, 8 << 20) * scale, t++);
    for (unsigned s = 0; s < c->steps; s++) {
        uint64_t base = id;
        for (uint64_t l = 0; l < layers; l++, n++)
            fprintf(f, "{\"op\":\"alloc\",\"id\":%" PRIu64 ",\"size\":%" PRIu64 ",\"t\":%" PRIu64 "}\n", ++id,
                    between(&x, 1 << 18, 12 << 20) * scale / 2 + between(&x, 0, 4096), t++);
        for (uint64_t l = layers; l >= 1; l--, n++)
            fprintf(f, "{\"op\":\"free\",\"id\":%" PRIu64 ",\"t\":%" PRIu64 "}\n", base + l, t++);
    }
    for (uint64_t l = 1; l <= layers; l++, n++)
        fprintf(f, "{\"op\":\"free\",\"id\":%" PRIu64 ",\"t\":%" PRIu64 "}\n", l, t++);
    fclose(f);
    return n;
}

typedef struct bench_run {
    const char *label;
    double sweep_s, wall_s;
    unsigned long long jobs;
    int ok;
} bench_run;

static bench_run run_sweep(const char *label, const char *cmd, const char *errpath)
{
    bench_run r = {label, 0.0, 0.0, 0, 0};
    double t0 = bench_now();
    int rc = system(cmd);
    r.wall_s = bench_now() - t0;
    FILE *f = fopen(errpath, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        double s;
        unsigned long long n;
        if (sscanf(line, "gpusim sweep: %llu jobs run in %lf s", &n, &s) == 2) {
            r.jobs = n;
            r.sweep_s = s;
            r.ok = rc == 0;
        }
    }
    if (f)
        fclose(f);
    if (!r.ok)
        fprintf(stderr, "sweep_bench: %s failed (status %d); see %s\n", label, rc, errpath);
    return r;
}

static int same_file(const char *a, const char *b)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

int main(int argc, char **argv)
{
    bench_cfg c = {NULL, 16, 2000, 1};
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--gpusim=", 9) == 0)
            c.gpusim = argv[i] + 9;
        else if (strncmp(argv[i], "--traces=", 9) == 0)
            c.traces = (unsigned)strtoul(argv[i] + 9, NULL, 10);
        else if (strncmp(argv[i], "--steps=", 8) == 0)
            c.steps = (unsigned)strtoul(argv[i] + 8, NULL, 10);
        else if (strncmp(argv[i], "--seed=", 7) == 0)
            c.seed = strtoull(argv[i] + 7, NULL, 10);
        else {
            fprintf(stderr, "usage: sweep_bench --gpusim=PATH [--traces=N] [--steps=N] [--seed=N]\n");
            return 2;
        }
    }
    if (c.gpusim == NULL || c.traces == 0) {
        fprintf(stderr, "usage: sweep_bench --gpusim=PATH [--traces=N] [--steps=N] [--seed=N]\n");
        return 2;
    }
    char dir[] = "/tmp/gpusim_sweep_bench_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    char p[1024];
    snprintf(p, sizeof p, "%s/jobs", dir);
    mkdir(p, 0755);
    uint64_t events = 0;
    for (unsigned i = 0; i < c.traces; i++) {
        snprintf(p, sizeof p, "%s/jobs/bench_%03u.jsonl", dir, i);
        events += write_job(p, i, &c);
    }
    const unsigned combos = 3 * 3 * 2;
    snprintf(p, sizeof p, "%s/spec.json", dir);
    FILE *f = fopen(p, "w");
    if (f == NULL) {
        perror(p);
        return 2;
    }
    fprintf(f, "{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\", \"L4\", \"RTX-4090\"],\n"
               " \"strategies\": [\"ideal\", \"greedy\", \"growth\"],\n"
               " \"options\": [{\"name\": \"default\"}, {\"mem-fraction\": 0.8}]}\n");
    fclose(f);
    printf("sweep_bench: %u traces (%" PRIu64 " events) x %u combinations = %u jobs, %" PRIu64
           " events replayed per sweep\n",
           c.traces, events, combos, c.traces * combos, events * combos);

    bench_run runs[3];
    int n = 0;
    char cmd[4096], out[1024], err[1024], ref[1024];
    snprintf(ref, sizeof ref, "%s/jobs1.jsonl", dir);
    for (int w = 1; w <= 2; w++) {
        snprintf(out, sizeof out, "%s/jobs%d.jsonl", dir, w);
        snprintf(err, sizeof err, "%s/jobs%d.err", dir, w);
        snprintf(cmd, sizeof cmd, "'%s' sweep '%s/spec.json' --jobs=%d --output='%s' >/dev/null 2>'%s'", c.gpusim, dir,
                 w, out, err);
        runs[n] = run_sweep(w == 1 ? "1 local worker" : "2 local workers", cmd, err);
        if (runs[n].ok && w > 1 && !same_file(ref, out))
            fprintf(stderr, "sweep_bench: --jobs=%d wrote other bytes than --jobs=1\n", w), runs[n].ok = 0;
        n++;
    }
    snprintf(out, sizeof out, "%s/mpi2.jsonl", dir);
    snprintf(err, sizeof err, "%s/mpi2.err", dir);
    snprintf(cmd, sizeof cmd, "'%s' sweep '%s/spec.json' --mpi=on --output=/dev/null >/dev/null 2>'%s'", c.gpusim, dir,
             err);
    int have_mpi = system("command -v mpirun >/dev/null 2>&1") == 0 && system(cmd) != 0;
    FILE *probe = have_mpi ? fopen(err, "r") : NULL;
    char line[512] = "";
    if (probe) {
        while (fgets(line, sizeof line, probe))
            if (strstr(line, "built without MPI"))
                have_mpi = 0;
        fclose(probe);
    }
    if (have_mpi) {
        snprintf(cmd, sizeof cmd,
                 "mpirun --oversubscribe --allow-run-as-root -n 2 '%s' sweep '%s/spec.json' --output='%s' "
                 ">/dev/null 2>'%s'",
                 c.gpusim, dir, out, err);
        runs[n] = run_sweep("2 MPI ranks", cmd, err);
        if (runs[n].ok && !same_file(ref, out))
            fprintf(stderr, "sweep_bench: mpirun -n 2 wrote other bytes than --jobs=1\n"), runs[n].ok = 0;
        n++;
    } else {
        printf("sweep_bench: no MPI (mpirun missing or gpusim built without GPUSIM_MPI): 2 MPI ranks not measured\n");
    }
    int status = 0;
    printf("%-16s %10s %12s %14s %10s\n", "sweep", "time (s)", "jobs/s", "events/s", "wall (s)");
    for (int i = 0; i < n; i++) {
        if (!runs[i].ok) {
            printf("%-16s %10s\n", runs[i].label, "failed");
            status = 1;
            continue;
        }
        double s = runs[i].sweep_s > 0 ? runs[i].sweep_s : 1e-9;
        printf("%-16s %10.3f %12.1f %14.3e %10.3f\n", runs[i].label, runs[i].sweep_s, (double)runs[i].jobs / s,
               (double)(events * combos) / s, runs[i].wall_s);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "sweep_bench: could not remove %s\n", dir);
    return status;
}
