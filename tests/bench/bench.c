/* gpusim_bench — replay speed and memory figures (./scripts/bench). Prints figures,
 * asserts nothing: timing thresholds never go into tests.
 *
 * Workloads, generated here from a seed (no dependency on `gpusim synth`):
 *   churn     allocation sizes log-uniform from 512 B to 64 MiB, a live set held
 *             near 2000 allocations, random frees, 10% of frees deferred;
 *   training  a transformer-training-like step repeated: weights allocated once,
 *             per iteration activations in layer order with the same sizes every
 *             iteration, short-lived temporaries, gradients, frees in LIFO order,
 *             an optimizer step, a mark per iteration;
 *   serving   an inference server: requests arrive and finish at random, each
 *             holds a KV cache that grows in pages (allocate larger, free the old
 *             one), per-step workspaces on a second stream freed with ready_t.
 * Each is written once as JSONL and as gtrace (N events; 1M by default, 10M with
 * --full). For every strategy: events/s replaying the trace held in memory (best
 * of --reps), its time relative to `ideal` (the cost of the allocator model
 * itself), and end-to-end events/s and peak RSS of `gpusim replay` on the JSONL
 * and on the gtrace (a child process, so its RSS is its own, streaming). Also the
 * floor: parsing the same JSONL with cJSON and doing nothing else, and the ratio
 * of each JSONL replay to it; and gpusim's own reader alone (no engine), with each
 * end-to-end replay relative to it.
 * Then, through the gpusim binary (--gpusim): `plan` over the catalog x 6 strategies
 * and `compare` of 6 strategies (wall and CPU seconds, --jobs=2), streaming replay
 * RSS of every strategy at two trace sizes and the slope per million events, and the
 * snapshot pickles given with --pickle (parse MB/s, and `gpusim replay` end to end).
 * --json prints the same as one JSON document. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#include "sim/engine.h"
#include "sim/evbuf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/import_pickle.h"
#include "traces/trace.h"
#include "bench_util.h"

#define BENCH_CAPACITY "80GiB"
#define BENCH_LIMIT "60GiB"

static double unit(uint64_t *s)
{
    return (double)(bench_rng(s) >> 11) / 9007199254740992.0;
}

/* ---------------------------------------------------------------- output */

typedef struct sink {
    trace_writer *w[2];
    uint64_t n, max;
    uint64_t t;
} sink;

static void emit(sink *k, sim_event ev)
{
    if (k->n >= k->max)
        return;
    ev.t = k->t;
    if (ev.ready_t < ev.t)
        ev.ready_t = ev.t;
    k->n++;
    ev.index = k->n;
    ev.line = k->n + 1; /* as a JSONL file has it: the header is line 1 */
    sim_error err;
    for (int i = 0; i < 2; i++)
        if (k->w[i] && trace_writer_event(k->w[i], &ev, &err) != SIM_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(2);
        }
}

static void emit_alloc(sink *k, uint64_t id, uint64_t size, uint32_t stream, const char *tag)
{
    emit(k, (sim_event){.op = SIM_OP_ALLOC, .id = id, .size = size, .stream = stream, .tag = tag});
}

static void emit_free(sink *k, uint64_t id, uint64_t ready_delay)
{
    emit(k, (sim_event){.op = SIM_OP_FREE, .id = id, .ready_t = ready_delay ? k->t + ready_delay : 0});
}

/* ---------------------------------------------------------------- workloads */

static void gen_churn(sink *k, uint64_t seed)
{
    uint64_t *live = malloc(4096 * sizeof *live);
    uint64_t n_live = 0, next_id = 1, s = seed;
    while (k->n < k->max) {
        k->t += 1 + bench_rng(&s) % 100;
        bool do_free = n_live > 0 && (n_live >= 4000 || (bench_rng(&s) % 1000) < (n_live > 2000 ? 550u : 450u));
        if (k->n + n_live >= k->max && n_live > 0)
            do_free = true; /* end with everything freed */
        if (do_free) {
            uint64_t j = bench_rng(&s) % n_live, id = live[j];
            live[j] = live[--n_live];
            emit_free(k, id, bench_rng(&s) % 10 == 0 ? 1 + bench_rng(&s) % 500 : 0);
        } else {
            double lg = log(512.0) + (log(64.0 * 1048576.0) - log(512.0)) * unit(&s);
            live[n_live++] = next_id;
            emit_alloc(k, next_id++, (uint64_t)exp(lg), 0, NULL);
        }
    }
    free(live);
}

/* One training step after another: sizes repeat exactly from iteration to iteration. */
static void gen_training(sink *k, uint64_t seed)
{
    enum { LAYERS = 48 };
    uint64_t s = seed, next_id = 1;
    uint64_t act[LAYERS], tmp[LAYERS], grad[LAYERS];
    const uint64_t batch = 8, seq = 2048, hidden = 4096;
    for (int l = 0; l < LAYERS; l++) {
        act[l] = batch * seq * hidden * 2 * (1 + (uint64_t)(l % 4));    /* bf16 activations */
        tmp[l] = batch * seq * hidden * 4 + (uint64_t)l * 4096;           /* attention scratch */
        grad[l] = hidden * hidden * 2 * (l % 3 == 0 ? 4u : 1u);           /* weight gradients */
    }
    uint64_t weights[LAYERS];
    for (int l = 0; l < LAYERS && k->n < k->max; l++) {
        weights[l] = next_id++;
        k->t += 10;
        emit_alloc(k, weights[l], grad[l] * 2 + 512, 0, "weight");
    }
    char mark[32];
    for (uint64_t it = 0; k->n < k->max; it++) {
        snprintf(mark, sizeof mark, "iteration %llu", (unsigned long long)it);
        emit(k, (sim_event){.op = SIM_OP_MARK, .name = mark});
        uint64_t ids[LAYERS];
        for (int l = 0; l < LAYERS; l++) { /* forward */
            k->t += 50 + bench_rng(&s) % 20;
            ids[l] = next_id++;
            emit_alloc(k, ids[l], act[l], 0, "activation");
            for (int r = 0; r < 3; r++) {
                uint64_t tid = next_id++;
                emit_alloc(k, tid, tmp[l] >> r, 0, "temp");
                k->t += 5;
                emit_free(k, tid, 0);
            }
        }
        for (int l = LAYERS - 1; l >= 0; l--) { /* backward: LIFO */
            k->t += 80 + bench_rng(&s) % 20;
            uint64_t g = next_id++;
            emit_alloc(k, g, grad[l], 0, "grad");
            uint64_t tid = next_id++;
            emit_alloc(k, tid, tmp[l], 0, "temp");
            emit_free(k, tid, 0);
            emit_free(k, ids[l], 0);
            emit_free(k, g, 0);
        }
        uint64_t opt = next_id++; /* optimizer step */
        emit_alloc(k, opt, hidden * hidden * 8, 0, "optimizer");
        k->t += 30;
        emit_free(k, opt, 0);
        if (it % 16 == 15)
            emit(k, (sim_event){.op = SIM_OP_EMPTY_CACHE});
    }
}

/* Requests with growing KV caches, frees on a side stream completing later. */
static void gen_serving(sink *k, uint64_t seed)
{
    enum { SLOTS = 64 };
    const uint64_t page = 2u << 20, per_token = 160u << 10;
    uint64_t s = seed, next_id = 1;
    struct req {
        uint64_t id, tokens, target, bytes;
        bool live;
    } rq[SLOTS] = {{0}};
    while (k->n < k->max) {
        k->t += 200 + bench_rng(&s) % 800;
        uint32_t j = (uint32_t)(bench_rng(&s) % SLOTS);
        struct req *r = &rq[j];
        if (!r->live) { /* a new request: prompt */
            r->tokens = 16 + bench_rng(&s) % 2048;
            r->target = r->tokens + 1 + bench_rng(&s) % 1024;
            r->bytes = units_round_up(r->tokens * per_token, page);
            r->id = next_id++;
            r->live = true;
            emit_alloc(k, r->id, r->bytes, 0, "kv");
        } else if (r->tokens >= r->target) { /* finished */
            emit_free(k, r->id, 0);
            r->live = false;
        } else { /* a decode step: workspace, and the cache grows by pages */
            uint64_t ws = next_id++;
            emit_alloc(k, ws, 4096 + (bench_rng(&s) % 64) * 65536, 1, "workspace");
            r->tokens += 1 + bench_rng(&s) % 32;
            uint64_t need = units_round_up(r->tokens * per_token, page);
            if (need > r->bytes) {
                uint64_t nid = next_id++;
                emit_alloc(k, nid, need, 0, "kv");
                emit_free(k, r->id, 0);
                r->id = nid;
                r->bytes = need;
            }
            k->t += 20;
            emit_free(k, ws, 100 + bench_rng(&s) % 400); /* stream-ordered: completes later */
        }
    }
}

typedef struct workload {
    const char *name;
    void (*gen)(sink *k, uint64_t seed);
} workload;

static const workload WORKLOADS[] = {
    {"churn", gen_churn},
    {"training", gen_training},
    {"serving", gen_serving},
};

/* ---------------------------------------------------------------- measurements */

static engine_config config_for(const strategy_ops *ops, sim_kv *kv)
{
    uint32_t n = 0;
    if (strcmp(ops->name, "limit") == 0)
        kv[n++] = (sim_kv){"limit", BENCH_LIMIT};
    engine_config cfg = {
        .device = {.name = "bench-80GiB", .capacity_bytes = 80ull << 30, .cc_major = 9},
        .ops = ops,
        .opts = kv,
        .n_opts = n,
        .on_oom_skip = true,
    };
    return cfg;
}

static double replay_mem(const strategy_ops *ops, const evbuf *b, uint64_t *events, uint64_t *ooms)
{
    sim_kv kv[2];
    engine_config cfg = config_for(ops, kv);
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(b, &cur);
    sim_run *run = NULL;
    sim_error err;
    double t0 = bench_now();
    if (engine_run(&cfg, &src, 1, &run, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s: %s\n", ops->name, err.msg);
        exit(2);
    }
    double dt = bench_now() - t0;
    *events = run->events;
    *ooms = run->total.ooms;
    sim_run_free(run);
    return dt;
}

/* The same replay in this process, through the trace reader (no gpusim binary given). */
static double replay_file(const strategy_ops *ops, const char *path)
{
    sim_kv kv[2];
    engine_config cfg = config_for(ops, kv);
    sim_error err;
    double t0 = bench_now();
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
    double dt = bench_now() - t0;
    sim_run_free(run);
    trace_close(r);
    return dt;
}

/* A gpusim command as a grandchild: wall time, and its peak RSS in KiB.
 * The children are started by a small spawner process forked at the start:
 * Linux carries the peak RSS of the address space a process execs from into its
 * ru_maxrss, so spawning straight from this (by then large) process would report
 * this process's peak instead of gpusim's. */
#define SPAWN_MAX_ARGS 16
typedef struct spawn_req {
    char argv[SPAWN_MAX_ARGS][160]; /* argv[0] is the gpusim binary; "" ends the list */
} spawn_req;

typedef struct spawn_res {
    double secs, cpu_s;
    long rss_kib;
    int ok;
} spawn_res;

typedef struct spawner {
    int req, res; /* pipes to and from the spawner; -1 when none */
} spawner;

static spawn_res run_child(spawn_req *q)
{
    char *args[SPAWN_MAX_ARGS + 1];
    int n = 0;
    while (n < SPAWN_MAX_ARGS && q->argv[n][0])
        args[n] = q->argv[n], n++;
    args[n] = NULL;
    spawn_res r = {0, 0, -1, 0};
    double t0 = bench_now();
    pid_t pid;
    posix_spawn_file_actions_t fa; /* the command's own output goes nowhere */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&pid, args[0], &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return r;
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return r;
    r.secs = bench_now() - t0;
    r.cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
              (double)ru.ru_stime.tv_usec * 1e-6;
    r.rss_kib = ru.ru_maxrss;
    r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return r;
}

static spawner spawner_start(void)
{
    int a[2], b[2];
    spawner sp = {-1, -1};
    if (pipe(a) != 0 || pipe(b) != 0)
        return sp;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return sp;
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        spawn_req q;
        while (read(a[0], &q, sizeof q) == (ssize_t)sizeof q) {
            spawn_res r = run_child(&q);
            if (write(b[1], &r, sizeof r) != (ssize_t)sizeof r)
                break;
        }
        _exit(0);
    }
    close(a[0]);
    close(b[1]);
    sp.req = a[1];
    sp.res = b[0];
    return sp;
}

static void spawner_stop(spawner *sp)
{
    if (sp->req < 0)
        return;
    close(sp->req);
    close(sp->res);
    wait(NULL);
}

/* Run `gpusim ARGS...` (a NULL-terminated list) through the spawner; exits on failure. */
static spawn_res spawn_gpusim(const spawner *sp, const char *gpusim, const char *const *args)
{
    spawn_req q;
    memset(&q, 0, sizeof q);
    snprintf(q.argv[0], sizeof q.argv[0], "%s", gpusim);
    int n = 1;
    for (; args[n - 1] && n < SPAWN_MAX_ARGS; n++)
        snprintf(q.argv[n], sizeof q.argv[n], "%s", args[n - 1]);
    spawn_res r = {0, 0, -1, 0};
    if (write(sp->req, &q, sizeof q) != (ssize_t)sizeof q || read(sp->res, &r, sizeof r) != (ssize_t)sizeof r ||
        !r.ok) {
        fprintf(stderr, "bench: gpusim");
        for (int i = 1; i < n; i++)
            fprintf(stderr, " %s", q.argv[i]);
        fprintf(stderr, " failed (its output went to /dev/null: run it by hand to see why)\n");
        exit(2);
    }
    return r;
}

/* `gpusim replay path --strategy=S`: wall time and peak RSS. */
static double replay_child(const spawner *sp, const char *gpusim, const char *sname, const char *path,
                           long *rss_kib)
{
    char sarg[80];
    snprintf(sarg, sizeof sarg, "--strategy=%s", sname);
    const char *args[] = {"replay", path, sarg, "--capacity=" BENCH_CAPACITY, "--compute-capability=9.0",
                          "--on-oom=skip", "--format=json", "--output=/dev/null",
                          strcmp(sname, "limit") == 0 ? "--limit=" BENCH_LIMIT : NULL, NULL};
    spawn_res r = spawn_gpusim(sp, gpusim, args);
    *rss_kib = r.rss_kib;
    return r.secs;
}

static double cjson_floor(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    double t0 = bench_now();
    uint64_t parsed = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        cJSON *j = cJSON_ParseWithLength(line, (size_t)n);
        if (j)
            parsed++;
        cJSON_Delete(j);
    }
    double dt = bench_now() - t0;
    free(line);
    fclose(f);
    if (parsed == 0)
        fprintf(stderr, "bench: cJSON parsed nothing\n");
    return dt;
}

/* The trace reader alone (trace.h, streaming, no engine): seconds to read every event. */
static double reader_floor(const char *path)
{
    sim_error err;
    trace_reader *r;
    double t0 = bench_now();
    if (trace_open(path, &r, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    sim_event_source src = trace_source(r);
    sim_event ev;
    sim_status st;
    uint64_t n = 0;
    while ((st = src.next(src.ctx, &ev, &err)) == SIM_OK)
        n++;
    if (st != SIM_END || n == 0) {
        fprintf(stderr, "bench: reading %s: %s\n", path, err.msg);
        exit(2);
    }
    trace_close(r);
    return bench_now() - t0;
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* A strategy that plans offline from the whole trace (strategy_ops.plan, e.g.
 * `planned`) holds every event's lifetime: it is not an event-at-a-time model, and
 * its planners have their own bench (gpusim_plan_bench). The per-event tables and
 * the streaming figures leave it out, and say so. */
static bool per_event(const strategy_ops *ops)
{
    return ops->plan == NULL;
}

static void print_offline_note(void)
{
    for (size_t i = 0; i < registry_count(); i++)
        if (!per_event(registry_get(i)))
            printf("(%s: left out, it plans offline from the whole trace; see gpusim_plan_bench)\n",
                   registry_get(i)->name);
}

typedef struct options {
    uint64_t seed;
    const char *gpusim;
    const char *only;     /* one workload, or NULL */
    bool json, mem_only;
    int reps;
    spawner sp;
} options;

/* The end of a table: its JSON closed with close, or the offline strategies' note. */
static void end_table(const options *o, const char *close)
{
    if (o->json)
        fputs(close, stdout);
    else
        print_offline_note();
}

typedef struct strat_fig {
    double mem_s, jsonl_s, gtrace_s;
    uint64_t events, ooms;
    long jsonl_rss, gtrace_rss;
} strat_fig;

static bool first_json = true;

static void run_workload(const workload *wl, uint64_t n, const options *o)
{
    char jpath[] = "/tmp/gpusim-bench-XXXXXX";
    int fd = mkstemp(jpath);
    if (fd < 0) {
        perror("bench: mkstemp");
        exit(2);
    }
    close(fd);
    unlink(jpath);
    char jsonl[64], gtrace[64];
    snprintf(jsonl, sizeof jsonl, "%s.jsonl", jpath);
    snprintf(gtrace, sizeof gtrace, "%s.gtrace", jpath);
    trace_header h = {0};
    snprintf(h.name, sizeof h.name, "%s", wl->name);
    sink k = {.max = n};
    sim_error err;
    if (trace_writer_open(jsonl, TRACE_JSONL, &h, &k.w[0], &err) != SIM_OK ||
        trace_writer_open(gtrace, TRACE_GTRACE, &h, &k.w[1], &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    double g0 = bench_now();
    wl->gen(&k, o->seed);
    if (trace_writer_close(k.w[0], true, &err) != SIM_OK || trace_writer_close(k.w[1], true, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    double gen_s = bench_now() - g0;
    size_t ns = registry_count();
    strat_fig *f = calloc(ns, sizeof *f);
    /* end-to-end first, while this process is still small */
    double floor_s = o->mem_only ? 0 : cjson_floor(jsonl);
    double jreader_s = o->mem_only ? 0 : reader_floor(jsonl), greader_s = o->mem_only ? 0 : reader_floor(gtrace);
    for (size_t i = 0; i < ns && !o->mem_only; i++) {
        const strategy_ops *ops = registry_get(i);
        if (!per_event(ops))
            continue;
        f[i].jsonl_rss = f[i].gtrace_rss = -1;
        if (o->gpusim) {
            f[i].jsonl_s = replay_child(&o->sp, o->gpusim, ops->name, jsonl, &f[i].jsonl_rss);
            f[i].gtrace_s = 1e30; /* best of --reps: the ratio to ideal is what the table compares */
            for (int rep = 0; rep < o->reps; rep++) {
                double t = replay_child(&o->sp, o->gpusim, ops->name, gtrace, &f[i].gtrace_rss);
                if (t < f[i].gtrace_s)
                    f[i].gtrace_s = t;
            }
        } else {
            f[i].jsonl_s = replay_file(ops, jsonl);
            f[i].gtrace_s = replay_file(ops, gtrace);
        }
    }
    /* then the trace held in memory */
    evbuf *b = evbuf_new(gtrace, wl->name);
    trace_reader *r;
    if (b == NULL || trace_open(gtrace, &r, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    sim_event_source fsrc = trace_source(r);
    if (evbuf_fill(b, &fsrc, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    trace_close(r);
    double ideal_s = 0;
    for (size_t i = 0; i < ns; i++) {
        const strategy_ops *ops = registry_get(i);
        if (!per_event(ops))
            continue;
        f[i].mem_s = 1e30;
        for (int rep = 0; rep < o->reps; rep++) {
            double t = replay_mem(ops, b, &f[i].events, &f[i].ooms);
            if (t < f[i].mem_s)
                f[i].mem_s = t;
        }
        if (strcmp(ops->name, "ideal") == 0)
            ideal_s = f[i].mem_s;
    }
    evbuf_free(b);
    long jbytes = file_size(jsonl), gbytes = file_size(gtrace);
    if (o->json) {
        printf("%s\n  {\"workload\": \"%s\", \"events\": %llu, \"seed\": %llu, \"jsonl_bytes\": %ld, "
               "\"gtrace_bytes\": %ld, \"generate_s\": %.3f, \"cjson_floor_s\": %.4f, "
               "\"cjson_floor_lines_per_s\": %.0f, \"jsonl_reader_events_per_s\": %.0f, "
               "\"gtrace_reader_events_per_s\": %.0f, \"strategies\": [",
               first_json ? "" : ",", wl->name, (unsigned long long)n, (unsigned long long)o->seed, jbytes,
               gbytes, gen_s, floor_s, floor_s > 0 ? (double)(n + 1) / floor_s : 0.0,
               jreader_s > 0 ? (double)n / jreader_s : 0.0, greader_s > 0 ? (double)n / greader_s : 0.0);
        first_json = false;
    } else {
        printf("\n== %s: %llu events, seed %llu; JSONL %.1f MiB, gtrace %.1f MiB (%.1f bytes/event) ==\n",
               wl->name, (unsigned long long)n, (unsigned long long)o->seed, (double)jbytes / 1048576.0,
               (double)gbytes / 1048576.0, (double)gbytes / (double)(n ? n : 1));
        if (!o->mem_only)
            printf("cJSON parse-only floor: %.0f lines/s (%.3f s); gpusim's reader alone: JSONL %.0f ev/s, "
                   "gtrace %.0f ev/s\n",
                   (double)(n + 1) / floor_s, floor_s, (double)n / jreader_s, (double)n / greader_s);
        printf("%-8s %12s %8s %12s %8s %8s %9s %12s %8s %8s %9s %6s\n", "strategy", "memory ev/s", "vs ideal",
               "JSONL ev/s", "/cJSON", "/reader", "JSONL RSS", "gtrace ev/s", "/reader", "/ideal", "gt. RSS", "OOMs");
    }
    double ideal_gt = 0; /* ideal's end-to-end gtrace time: the engine alone, reading included */
    for (size_t i = 0; i < ns; i++)
        if (strcmp(registry_get(i)->name, "ideal") == 0)
            ideal_gt = f[i].gtrace_s;
    unsigned n_out = 0; /* strategies printed so far (JSON commas) */
    for (size_t i = 0; i < ns; i++) {
        const strategy_ops *ops = registry_get(i);
        if (!per_event(ops))
            continue;
        double gt_ratio = ideal_gt > 0 ? f[i].gtrace_s / ideal_gt : 0;
        double mem = (double)f[i].events / f[i].mem_s;
        double je = o->mem_only ? 0 : (double)n / f[i].jsonl_s, ge = o->mem_only ? 0 : (double)n / f[i].gtrace_s;
        double ratio = ideal_s > 0 ? f[i].mem_s / ideal_s : 1.0;
        double vs_floor = floor_s > 0 ? f[i].jsonl_s / floor_s : 0;
        double vs_jr = jreader_s > 0 ? f[i].jsonl_s / jreader_s : 0, vs_gr = greader_s > 0 ? f[i].gtrace_s / greader_s : 0;
        if (o->json)
            printf("%s\n    {\"name\": \"%s\", \"in_memory_events_per_s\": %.0f, \"time_vs_ideal\": %.3f, "
                   "\"jsonl_events_per_s\": %.0f, \"jsonl_vs_cjson_floor\": %.3f, \"jsonl_vs_reader\": %.3f, "
                   "\"jsonl_peak_rss_kib\": %ld, \"gtrace_events_per_s\": %.0f, \"gtrace_vs_reader\": %.3f, "
                   "\"gtrace_vs_ideal\": %.3f, \"gtrace_peak_rss_kib\": %ld, \"ooms\": %llu}",
                   n_out++ ? "," : "", ops->name, mem, ratio, je, vs_floor, vs_jr, f[i].jsonl_rss, ge, vs_gr,
                   gt_ratio, f[i].gtrace_rss, (unsigned long long)f[i].ooms);
        else
            printf("%-8s %12.0f %7.2fx %12.0f %7.2fx %7.2fx %8.1fM %12.0f %7.2fx %7.2fx %8.1fM %6llu\n", ops->name,
                   mem, ratio, je, vs_floor, vs_jr, (double)f[i].jsonl_rss / 1024.0, ge, vs_gr, gt_ratio,
                   (double)f[i].gtrace_rss / 1024.0, (unsigned long long)f[i].ooms);
    }
    end_table(o, "]}");
    fflush(stdout);
    free(f);
    unlink(jsonl);
    unlink(gtrace);
}

/* ---------------------------------------------------------------- answers, streaming, pickles */

/* Write the churn workload of n events as a gtrace only (for the large sizes). */
static void write_churn_gtrace(const char *path, uint64_t n, uint64_t seed)
{
    trace_header h = {0};
    snprintf(h.name, sizeof h.name, "churn");
    sink k = {.max = n};
    sim_error err;
    if (trace_writer_open(path, TRACE_GTRACE, &h, &k.w[1], &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
    gen_churn(&k, seed);
    if (trace_writer_close(k.w[1], true, &err) != SIM_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(2);
    }
}

static void tmp_path(char *out, size_t cap, const char *tag, uint64_t n)
{
    snprintf(out, cap, "/tmp/gpusim-bench-%ld-%s-%llu.gtrace", (long)getpid(), tag, (unsigned long long)n);
}

/* `gpusim plan` over the whole catalog x all strategies, and `gpusim compare` of six
 * strategies, as a user runs them (--jobs=2): wall and CPU seconds. */
static void bench_answers(const options *o, uint64_t n_plan, uint64_t n_compare)
{
    char pp[128], cp[128];
    tmp_path(pp, sizeof pp, "plan", n_plan);
    tmp_path(cp, sizeof cp, "compare", n_compare);
    write_churn_gtrace(pp, n_plan, o->seed);
    if (n_compare != n_plan)
        write_churn_gtrace(cp, n_compare, o->seed);
    const char *plan_args[] = {"plan", pp, "--strategies=greedy,growth,limit,torch,raw,ideal", "--gpus=all",
                               "--limit=" BENCH_LIMIT, "--jobs=2", "--output=/dev/null", NULL};
    spawn_res pr = spawn_gpusim(&o->sp, o->gpusim, plan_args);
    const char *cmp_args[] = {"compare", n_compare != n_plan ? cp : pp,
                              "--strategies=greedy,growth,limit,torch,raw,ideal", "--capacity=" BENCH_CAPACITY,
                              "--compute-capability=9.0", "--limit=" BENCH_LIMIT, "--on-oom=skip", "--jobs=2",
                              "--output=/dev/null", NULL};
    spawn_res cr = spawn_gpusim(&o->sp, o->gpusim, cmp_args);
    unlink(pp);
    if (n_compare != n_plan)
        unlink(cp);
    if (o->json)
        printf("%s\n  {\"answers\": {\"plan_events\": %llu, \"plan_wall_s\": %.3f, \"plan_cpu_s\": %.3f, "
               "\"compare_events\": %llu, \"compare_wall_s\": %.3f, \"compare_cpu_s\": %.3f}}",
               first_json ? "" : ",", (unsigned long long)n_plan, pr.secs, pr.cpu_s, (unsigned long long)n_compare,
               cr.secs, cr.cpu_s);
    else
        printf("\n== answers (churn, --jobs=2; targets: plan < 10 s, compare of 6 on 10M < 5 s) ==\n"
               "plan, catalog x 6 strategies, %llu events: %.2f s wall, %.2f s CPU (%.2f s on 2 free cores)\n"
               "compare, 6 strategies, %llu events: %.2f s wall, %.2f s CPU (%.2f s on 2 free cores)\n",
               (unsigned long long)n_plan, pr.secs, pr.cpu_s, pr.cpu_s / 2, (unsigned long long)n_compare, cr.secs,
               cr.cpu_s, cr.cpu_s / 2);
    first_json = false;
    fflush(stdout);
}

/* Streaming replay (`gpusim replay` of a gtrace): peak RSS of every strategy at two
 * sizes, and the slope between them (what grows with the trace's length). */
static void bench_stream(const options *o, uint64_t n_small, uint64_t n_big)
{
    char sp_[128], bp[128];
    tmp_path(sp_, sizeof sp_, "stream", n_small);
    tmp_path(bp, sizeof bp, "stream", n_big);
    double g0 = bench_now();
    write_churn_gtrace(sp_, n_small, o->seed);
    write_churn_gtrace(bp, n_big, o->seed);
    double gen_s = bench_now() - g0;
    if (o->json)
        printf("%s\n  {\"stream\": {\"small_events\": %llu, \"big_events\": %llu, \"strategies\": [",
               first_json ? "" : ",", (unsigned long long)n_small, (unsigned long long)n_big);
    else
        printf("\n== streaming replay RSS (churn gtrace, `gpusim replay`; target < 64 MiB at 100M events; "
               "generated in %.1f s) ==\n%-8s %10s %10s %12s %14s %12s\n",
               gen_s, "strategy", "RSS small", "RSS big", "KiB/M ev", "big ev/s", "events");
    first_json = false;
    size_t ns = registry_count();
    unsigned n_out = 0; /* strategies printed so far (JSON commas) */
    for (size_t i = 0; i < ns; i++) {
        const strategy_ops *ops = registry_get(i);
        if (!per_event(ops))
            continue;
        long rs = 0, rb = 0;
        replay_child(&o->sp, o->gpusim, ops->name, sp_, &rs);
        double tb = replay_child(&o->sp, o->gpusim, ops->name, bp, &rb);
        double slope = (double)(rb - rs) / ((double)(n_big - n_small) / 1e6);
        if (o->json)
            printf("%s\n    {\"name\": \"%s\", \"small_rss_kib\": %ld, \"big_rss_kib\": %ld, "
                   "\"rss_kib_per_million_events\": %.2f, \"big_events_per_s\": %.0f}",
                   n_out++ ? "," : "", ops->name, rs, rb, slope, (double)n_big / tb);
        else
            printf("%-8s %9.1fM %9.1fM %12.2f %14.0f %llu/%llu\n", ops->name, (double)rs / 1024.0,
                   (double)rb / 1024.0, slope, (double)n_big / tb, (unsigned long long)n_small,
                   (unsigned long long)n_big);
        fflush(stdout);
    }
    end_table(o, "]}}");
    unlink(sp_);
    unlink(bp);
}

/* The pickle reader (traces/import_pickle.h) alone on each file, best of --reps: MB/s;
 * and `gpusim replay` of it end to end (the snapshot importer included): MB/s of
 * wall and of CPU time (user + system; the wall time of a loaded machine says
 * little), and its peak RSS, also per byte of the file. */
static void bench_pickles(const options *o, const char *const *paths, int n)
{
    if (!o->json)
        printf("\n== PyTorch snapshot pickles (targets: read >= 100 MB/s; a 1 GB snapshot replays in < 8 GiB) "
               "==\n%-44s %9s %11s %12s %12s %10s %8s\n", "file", "MB", "parse MB/s", "replay MB/s",
               "MB/CPU s", "peak RSS", "x file");
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(paths[i], "rb");
        long sz = file_size(paths[i]);
        unsigned char *data = sz > 0 ? malloc((size_t)sz) : NULL;
        if (f == NULL || data == NULL || fread(data, 1, (size_t)sz, f) != (size_t)sz) {
            fprintf(stderr, "bench: cannot read %s\n", paths[i]);
            exit(2);
        }
        fclose(f);
        double best = 1e30;
        for (int rep = 0; rep < o->reps; rep++) {
            pickle_doc *doc = NULL;
            const json_value *root = NULL;
            sim_error err;
            double t0 = bench_now();
            if (pickle_parse(paths[i], data, (size_t)sz, NULL, &doc, &root, &err) != SIM_OK) {
                fprintf(stderr, "bench: %s\n", err.msg);
                exit(2);
            }
            pickle_free(doc);
            double dt = bench_now() - t0;
            if (dt < best)
                best = dt;
        }
        free(data);
        spawn_res e2e = {0};
        if (o->gpusim) {
            const char *args[] = {"replay", paths[i], "--strategy=ideal", "--format=json", "--output=/dev/null", NULL};
            e2e = spawn_gpusim(&o->sp, o->gpusim, args);
        }
        double mb = (double)sz / 1e6, rss_mb = (double)e2e.rss_kib * 1024.0 / 1e6;
        double wall = e2e.secs > 0 ? mb / e2e.secs : 0.0, cpu = e2e.cpu_s > 0 ? mb / e2e.cpu_s : 0.0;
        if (o->json)
            printf("%s\n  {\"pickle\": \"%s\", \"bytes\": %ld, \"parse_mb_per_s\": %.1f, \"replay_mb_per_s\": %.1f, "
                   "\"replay_mb_per_cpu_s\": %.1f, \"replay_peak_rss_kib\": %ld}",
                   first_json ? "" : ",", paths[i], sz, mb / best, wall, cpu, e2e.rss_kib);
        else
            printf("%-44s %9.2f %11.1f %12.1f %12.1f %7.0f MB %7.2fx\n", paths[i], mb, mb / best, wall, cpu, rss_mb,
                   mb > 0 ? rss_mb / mb : 0.0);
        first_json = false;
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    options o = {.seed = 42, .reps = 3};
    uint64_t n = 0, stream_n = 0;
    bool full = false;
    const char *pickles[8];
    int n_pickles = 0;
    const char *sections = "workloads,answers,stream,pickles";
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--events=", 9) == 0)
            n = strtoull(argv[i] + 9, NULL, 10);
        else if (strncmp(argv[i], "--seed=", 7) == 0)
            o.seed = strtoull(argv[i] + 7, NULL, 10);
        else if (strncmp(argv[i], "--gpusim=", 9) == 0)
            o.gpusim = argv[i] + 9;
        else if (strncmp(argv[i], "--workload=", 11) == 0)
            o.only = argv[i] + 11;
        else if (strncmp(argv[i], "--reps=", 7) == 0)
            o.reps = atoi(argv[i] + 7) > 0 ? atoi(argv[i] + 7) : 1;
        else if (strncmp(argv[i], "--pickle=", 9) == 0 && n_pickles < 8)
            pickles[n_pickles++] = argv[i] + 9;
        else if (strncmp(argv[i], "--stream-events=", 16) == 0)
            stream_n = strtoull(argv[i] + 16, NULL, 10);
        else if (strncmp(argv[i], "--sections=", 11) == 0)
            sections = argv[i] + 11;
        else if (strcmp(argv[i], "--json") == 0)
            o.json = true;
        else if (strcmp(argv[i], "--full") == 0)
            full = true;
        else if (strcmp(argv[i], "--memory-only") == 0)
            o.mem_only = true; /* for profiling the replay alone */
        else {
            fprintf(stderr, "usage: gpusim_bench [--events=N | --full] [--workload=churn|training|serving] "
                            "[--seed=N] [--reps=N] [--gpusim=PATH] [--json] [--memory-only] [--pickle=PATH]... "
                            "[--stream-events=N] [--sections=workloads,answers,stream,pickles]\n");
            return 2;
        }
    }
    o.sp = (spawner){-1, -1};
    if (o.gpusim && !o.mem_only)
        o.sp = spawner_start();
    if (o.gpusim && !o.mem_only && o.sp.req < 0) {
        perror("bench: cannot start the spawner");
        return 2;
    }
    uint64_t sizes[2] = {n ? n : 1000000, 10000000};
    int n_sizes = (!n && full) ? 2 : 1;
    if (o.json)
        printf("{\"bench\": \"gpusim\", \"targets\": {\"in_memory_events_per_s\": 20000000, "
               "\"time_vs_ideal\": 1.5, \"jsonl_events_per_s\": 10000000, \"jsonl_vs_reader\": 1.10, "
               "\"gtrace_events_per_s\": 20000000, \"plan_wall_s\": 10, \"compare_10m_wall_s\": 5, "
               "\"stream_100m_peak_rss_kib\": 65536, \"pickle_mb_per_s\": 100}, \"runs\": [");
    else
        printf("gpusim bench: per strategy, events/s with the trace in memory (best of %d) and its time\n"
               "relative to ideal; end to end (`gpusim replay`, streaming) from JSONL and from gtrace,\n"
               "with peak RSS; JSONL time relative to parsing the same file with cJSON alone.\n"
               "Targets (issue 20): >= 20M ev/s in memory and <= 1.5x ideal; JSONL ideal >= 10M ev/s and <= 1.10x\n"
               "the reader alone; gtrace >= 20M ev/s; plan < 10 s; compare of 6 on 10M < 5 s; streaming\n"
               "100M events < 64 MiB RSS; snapshot pickles read >= 100 MB/s.\n",
               o.reps);
    if (strstr(sections, "workloads"))
        for (int si = 0; si < n_sizes; si++)
            for (size_t w = 0; w < sizeof WORKLOADS / sizeof WORKLOADS[0]; w++) {
                if (o.only && strcmp(o.only, WORKLOADS[w].name) != 0)
                    continue;
                options oo = o;
                if (sizes[si] >= 5000000 && oo.reps > 1)
                    oo.reps = 1; /* 10M events: one run each keeps --full to minutes */
                run_workload(&WORKLOADS[w], sizes[si], &oo);
            }
    /* the rest runs gpusim itself */
    if (o.gpusim && !o.mem_only) {
        if (strstr(sections, "answers"))
            bench_answers(&o, 1000000, full ? 10000000 : 1000000);
        if (strstr(sections, "stream")) {
            uint64_t big = stream_n ? stream_n : full ? 100000000 : 4000000;
            uint64_t small = big >= 10000000 ? 10000000 : 1000000;
            bench_stream(&o, small < big ? small : big / 4 + 1, big);
        }
    }
    if (strstr(sections, "pickles"))
        bench_pickles(&o, pickles, n_pickles); /* end to end only with --gpusim */
    if (o.json)
        printf("\n]}\n");
    spawner_stop(&o.sp);
    return 0;
}
