/* gpusim_bench — replay speed and memory figures (./scripts/bench). Prints figures,
 * asserts nothing: timing thresholds never go into tests.
 *
 * Workload: a seeded churn trace (allocation sizes log-uniform from 512 B to
 * 64 MiB, a live set held near 2000 allocations, 10% of frees deferred), N events.
 * For every strategy: events/s replaying the trace held in memory (best of 3), the
 * ratio of its time to `ideal`'s (the cost of the allocator model itself), and
 * events/s end-to-end from a JSONL file (parse + replay). Also: the floor of
 * parsing the same JSONL with cJSON and doing nothing else, and the peak RSS of a
 * streaming `gpusim replay` of the file (a child process, so its RSS is its own). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

#include "sim/engine.h"
#include "sim/evbuf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/trace.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Write the churn trace to a JSONL file (streaming: this process stays small, so
 * the child whose RSS is measured next does not inherit a large footprint). */
static void make_churn(uint64_t n, uint64_t seed, trace_writer *w)
{
    sim_error err;
    uint64_t *live = malloc(4096 * sizeof *live);
    uint64_t n_live = 0, next_id = 1, t = 0, s = seed;
    for (uint64_t i = 0; i < n; i++) {
        t += 1 + rng(&s) % 100;
        sim_event ev = {.t = t, .ready_t = t};
        bool do_free = n_live > 0 && (n_live >= 4000 || (rng(&s) % 1000) < (n_live > 2000 ? 550u : 450u));
        if (i + n_live >= n && n_live > 0)
            do_free = true; /* end with everything freed */
        if (do_free) {
            uint64_t k = rng(&s) % n_live;
            ev.op = SIM_OP_FREE;
            ev.id = live[k];
            live[k] = live[--n_live];
            if (rng(&s) % 10 == 0)
                ev.ready_t = t + 1 + rng(&s) % 500;
        } else {
            double lg = log(512.0) + (log(64.0 * 1048576.0) - log(512.0)) * (double)(rng(&s) >> 11) / 9007199254740992.0;
            ev.op = SIM_OP_ALLOC;
            ev.id = next_id++;
            ev.size = (uint64_t)exp(lg);
            ev.stream = 0;
            live[n_live++] = ev.id;
        }
        trace_writer_event(w, &ev, &err);
    }
    free(live);
}

typedef struct strat_cfg {
    const char *name;
    sim_kv kv[2];
    uint32_t n;
} strat_cfg;

static void strategy_kv(const char *name, strat_cfg *c)
{
    c->name = name;
    c->n = 0;
    if (strcmp(name, "limit") == 0)
        c->kv[c->n++] = (sim_kv){"limit", "60GiB"};
}

static engine_config config_for(const strategy_ops *ops, strat_cfg *c)
{
    strategy_kv(ops->name, c);
    engine_config cfg = {
        .device = {.name = "bench-80GiB", .capacity_bytes = 80ull << 30, .cc_major = 9},
        .ops = ops,
        .opts = c->kv,
        .n_opts = c->n,
        .on_oom_skip = true,
    };
    return cfg;
}

static double replay_mem(const strategy_ops *ops, const evbuf *b, uint64_t *events, uint64_t *ooms)
{
    strat_cfg c;
    engine_config cfg = config_for(ops, &c);
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(b, &cur);
    sim_run *run = NULL;
    sim_error err;
    double t0 = now();
    if (engine_run(&cfg, &src, 1, &run, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s: %s\n", ops->name, err.msg);
        exit(2);
    }
    double dt = now() - t0;
    *events = run->events;
    *ooms = run->total.ooms;
    sim_run_free(run);
    return dt;
}

static double replay_file(const strategy_ops *ops, const char *path)
{
    strat_cfg c;
    engine_config cfg = config_for(ops, &c);
    sim_error err;
    double t0 = now();
    trace_reader *r;
    if (trace_open(path, &r, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    sim_event_source src = trace_source(r);
    sim_run *run = NULL;
    if (engine_run(&cfg, &src, 1, &run, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    double dt = now() - t0;
    sim_run_free(run);
    trace_close(r);
    return dt;
}

static double cjson_floor(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    double t0 = now();
    uint64_t parsed = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        cJSON *j = cJSON_ParseWithLength(line, (size_t)n);
        if (j)
            parsed++;
        cJSON_Delete(j);
    }
    double dt = now() - t0;
    free(line);
    fclose(f);
    if (parsed == 0)
        fprintf(stderr, "bench: cJSON parsed nothing\n");
    return dt;
}

/* Peak RSS (KiB) of `gpusim replay path --strategy=ideal` as a child. */
static long child_rss(const char *gpusim, const char *path, double *secs)
{
    double t0 = now();
    char *args[] = {(char *)gpusim, "replay", (char *)path, "--strategy=ideal", "--format=json",
                    "--output=/dev/null", NULL};
    fflush(stdout);
    pid_t pid;
    /* posix_spawn: the child does not inherit (and count) this process's pages */
    if (posix_spawn(&pid, gpusim, NULL, NULL, args, environ) != 0)
        return -1;
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    *secs = now() - t0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ru.ru_maxrss : -1;
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000, seed = 42;
    const char *gpusim = NULL;
    bool json = false, mem_only = false;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--events=", 9) == 0)
            n = strtoull(argv[i] + 9, NULL, 10);
        else if (strncmp(argv[i], "--seed=", 7) == 0)
            seed = strtoull(argv[i] + 7, NULL, 10);
        else if (strncmp(argv[i], "--gpusim=", 9) == 0)
            gpusim = argv[i] + 9;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--memory-only") == 0)
            mem_only = true; /* for profiling the replay alone */
        else {
            fprintf(stderr, "usage: gpusim_bench [--events=N] [--seed=N] [--gpusim=PATH] [--json] [--memory-only]\n");
            return 2;
        }
    }
    char path[] = "/tmp/gpusim-bench-XXXXXX.jsonl";
    int fd = mkstemps(path, 6);
    close(fd);
    trace_writer *w;
    sim_error err;
    trace_header h = {0};
    snprintf(h.name, sizeof h.name, "churn");
    trace_writer_open(path, TRACE_JSONL, &h, &w, &err);
    make_churn(n, seed, w);
    trace_writer_close(w, true, &err);
    long rss = -1;
    double rss_s = 0;
    if (gpusim)
        rss = child_rss(gpusim, path, &rss_s);
    /* now hold the trace in memory for the in-memory figures */
    evbuf *b = evbuf_new(path, "churn");
    trace_reader *r;
    if (trace_open(path, &r, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 2;
    }
    sim_event_source fsrc = trace_source(r);
    if (evbuf_fill(b, &fsrc, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 2;
    }
    trace_close(r);

    double floor_s = mem_only ? 1.0 : cjson_floor(path);
    if (!json)
        printf("workload: churn, %llu events, seed %llu (JSONL %s)\n\n%-8s %14s %10s %16s %10s %6s\n",
               (unsigned long long)n, (unsigned long long)seed, path, "strategy", "in-memory ev/s", "vs ideal",
               "JSONL e2e ev/s", "vs cJSON", "OOMs");
    else
        printf("{\"workload\": \"churn\", \"events\": %llu, \"seed\": %llu, \"cjson_parse_floor_s\": %.4f, "
               "\"strategies\": [",
               (unsigned long long)n, (unsigned long long)seed, floor_s);
    /* measure every strategy first, so each can be compared with ideal's time */
    size_t ns = registry_count();
    double *best = calloc(ns, sizeof *best), *file_t = calloc(ns, sizeof *file_t);
    uint64_t *events = calloc(ns, sizeof *events), *ooms = calloc(ns, sizeof *ooms);
    double ideal_t = 0;
    for (size_t i = 0; i < ns; i++) {
        const strategy_ops *ops = registry_get(i);
        best[i] = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double t = replay_mem(ops, b, &events[i], &ooms[i]);
            if (t < best[i])
                best[i] = t;
        }
        if (strcmp(ops->name, "ideal") == 0)
            ideal_t = best[i];
        file_t[i] = mem_only ? 1.0 : replay_file(ops, path);
    }
    for (size_t i = 0; i < ns; i++) {
        const strategy_ops *ops = registry_get(i);
        double evs = (double)events[i] / best[i], fevs = (double)n / file_t[i];
        double ratio = ideal_t > 0 ? best[i] / ideal_t : 1.0;
        if (json)
            printf("%s{\"name\": \"%s\", \"in_memory_events_per_s\": %.0f, \"time_vs_ideal\": %.3f, "
                   "\"jsonl_events_per_s\": %.0f, \"jsonl_vs_cjson_floor\": %.3f, \"ooms\": %llu}",
                   i ? ", " : "", ops->name, evs, ratio, fevs, file_t[i] / floor_s, (unsigned long long)ooms[i]);
        else
            printf("%-8s %14.0f %9.2fx %16.0f %9.2fx %6llu\n", ops->name, evs, ratio, fevs, file_t[i] / floor_s,
                   (unsigned long long)ooms[i]);
    }
    free(best);
    free(file_t);
    free(events);
    free(ooms);
    if (json) {
        printf("], \"streaming_replay_peak_rss_kib\": %ld}\n", rss);
    } else {
        printf("\ncJSON parse-only floor: %.0f lines/s (%.3f s)\n", (double)n / floor_s, floor_s);
        if (gpusim)
            printf("streaming `gpusim replay` of the JSONL (ideal): peak RSS %.1f MiB, %.2f s\n",
                   (double)rss / 1024.0, rss_s);
    }
    unlink(path);
    evbuf_free(b);
    return 0;
}
