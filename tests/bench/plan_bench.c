/* gpusim_plan_bench — speed of the offline planners behind `--strategy=planned`
 * (./scripts/bench). Prints figures, asserts nothing.
 *
 * Workloads, generated here from a seed as alloc/free sequences (no trace file):
 *   churn     sizes log-uniform from 512 B to 64 MiB, a live set held near L
 *             buffers (--live, default 100), random frees;
 *   training  200 weights allocated first and never freed, then per iteration 48
 *             layers' activations forward, each with a short-lived temporary, freed
 *             in reverse order backward with a gradient each;
 *   resident  2,000 buffers allocated first and never freed (weights, or the start
 *             blocks of a mid-run snapshot: every query meets all of them), then
 *             churn around ~100 live buffers (--resident=N for another count).
 * For every planner: buffers/s (planning alone: lifetimes from the spooled trace,
 * the plan, best of --reps, wall clock), the CPU seconds of that run (both
 * threads of `xla`, which runs its two orders side by side), the heap and the
 * no-fragmentation peak. The cost of
 * a plan grows with the number of time-overlapping buffer pairs (each placement
 * walks the placed buffers live at the same time), so the figures depend on the
 * live set as much as on the buffer count. --planner=NAME runs one planner only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strategies/plan.h"
#include "strategies/plan_tflite.h"
#include "strategies/plan_xla.h"
#include "bench_util.h"

static uint64_t log_uniform(uint64_t *s, unsigned lo_bits, unsigned hi_bits)
{
    unsigned b = lo_bits + (unsigned)(bench_rng(s) % (hi_bits - lo_bits));
    return (UINT64_C(1) << b) + bench_rng(s) % (UINT64_C(1) << b);
}

static int must(sim_status st)
{
    if (st != SIM_OK) {
        fprintf(stderr, "plan_bench: %s\n", sim_strerror(st));
        exit(1);
    }
    return 0;
}

static plan_trace *churn(uint64_t n, uint32_t live_target, uint64_t seed)
{
    plan_trace *t = plan_trace_new();
    uint32_t *live = malloc((size_t)live_target * 2 * sizeof *live), n_live = 0;
    uint64_t s = seed | 1;
    for (uint64_t made = 0; made < n;) {
        bool alloc = n_live < live_target / 2 || (n_live < 2 * live_target && bench_rng(&s) % 2 == 0);
        if (alloc) {
            uint32_t id;
            must(plan_trace_alloc(t, log_uniform(&s, 9, 26), &id));
            live[n_live++] = id;
            made++;
        } else {
            uint32_t k = (uint32_t)(bench_rng(&s) % n_live);
            must(plan_trace_release(t, live[k]));
            live[k] = live[--n_live];
        }
    }
    free(live);
    return t;
}

static plan_trace *resident(uint64_t n, uint32_t n_resident, uint32_t live_target, uint64_t seed)
{
    plan_trace *t = plan_trace_new();
    uint64_t s = seed | 1;
    uint32_t id;
    for (uint32_t i = 0; i < n_resident && plan_trace_buffers(t) < n; i++)
        must(plan_trace_alloc(t, log_uniform(&s, 12, 26), &id));
    uint32_t *live = malloc((size_t)live_target * 2 * sizeof *live), n_live = 0;
    while (plan_trace_buffers(t) < n) {
        bool alloc = n_live < live_target / 2 || (n_live < 2 * live_target && bench_rng(&s) % 2 == 0);
        if (alloc) {
            must(plan_trace_alloc(t, log_uniform(&s, 9, 26), &id));
            live[n_live++] = id;
        } else {
            uint32_t k = (uint32_t)(bench_rng(&s) % n_live);
            must(plan_trace_release(t, live[k]));
            live[k] = live[--n_live];
        }
    }
    free(live);
    return t;
}

static plan_trace *training(uint64_t n, uint64_t seed)
{
    enum { WEIGHTS = 200, LAYERS = 48 };
    plan_trace *t = plan_trace_new();
    uint64_t s = seed | 1, act_size[LAYERS];
    uint32_t act[LAYERS], id;
    for (int i = 0; i < WEIGHTS && plan_trace_buffers(t) < n; i++)
        must(plan_trace_alloc(t, log_uniform(&s, 16, 26), &id));
    for (int l = 0; l < LAYERS; l++)
        act_size[l] = log_uniform(&s, 18, 27);
    while (plan_trace_buffers(t) + 4 * LAYERS <= n) {
        for (int l = 0; l < LAYERS; l++) {
            uint32_t tmp;
            must(plan_trace_alloc(t, act_size[l], &act[l]));
            must(plan_trace_alloc(t, act_size[l] / 2, &tmp));
            must(plan_trace_release(t, tmp));
        }
        for (int l = LAYERS - 1; l >= 0; l--) {
            uint32_t grad, tmp;
            must(plan_trace_alloc(t, act_size[l], &grad));
            must(plan_trace_alloc(t, act_size[l] / 4, &tmp));
            must(plan_trace_release(t, tmp));
            must(plan_trace_release(t, act[l]));
            must(plan_trace_release(t, grad));
        }
    }
    return t;
}

typedef struct planner {
    const char *name;
    plan_clock clock;
    int kind; /* 0 xla, 1 tflite, 2 tflite-gpu */
    plan_xla_order order;
} planner;

static const planner PLANNERS[] = {
    {"xla", PLAN_CLOCK_XLA, 0, PLAN_XLA_BEST},
    {"xla-spatial", PLAN_CLOCK_XLA, 0, PLAN_XLA_SPATIAL},
    {"xla-temporal", PLAN_CLOCK_XLA, 0, PLAN_XLA_TEMPORAL},
    {"tflite", PLAN_CLOCK_TFLITE, 1, PLAN_XLA_BEST},
    {"tflite-gpu", PLAN_CLOCK_TFLITE, 2, PLAN_XLA_BEST},
};

static void bench(const char *name, plan_trace *t, int reps, const char *only_planner)
{
    uint32_t n = plan_trace_buffers(t);
    plan_buffer *b = malloc((size_t)n * sizeof *b);
    uint64_t *off = malloc((size_t)n * sizeof *off);
    uint64_t peak = plan_trace_peak(t);
    printf("\n== plan %s: %u buffers, %llu events, no-fragmentation peak %.1f MiB ==\n", name, n,
           (unsigned long long)plan_trace_events(t), (double)peak / 1048576.0);
    printf("%-13s %12s %9s %9s %12s %10s\n", "planner", "buffers/s", "seconds", "cpu s", "heap MiB", "heap/peak");
    for (size_t p = 0; p < sizeof PLANNERS / sizeof PLANNERS[0]; p++) {
        const planner *pl = &PLANNERS[p];
        if (only_planner != NULL && strcmp(only_planner, pl->name) != 0)
            continue;
        double best = 1e30, best_cpu = 0;
        plan_result r = {0};
        for (int rep = 0; rep < reps; rep++) {
            double t0 = bench_now(), c0 = bench_cpu_now();
            plan_lifetimes(t, pl->clock, b);
            if (pl->kind == 0) {
                plan_xla_config cfg = {.order = pl->order, .alignment = PLAN_XLA_ALIGNMENT};
                must(plan_xla(b, n, &cfg, off, &r));
            } else if (pl->kind == 1) {
                must(plan_tflite(b, n, PLAN_TFLITE_ALIGNMENT, off, &r));
            } else {
                must(plan_tflite_gpu(b, n, PLAN_TFLITE_GPU_ALIGNMENT, off, &r));
            }
            double dt = bench_now() - t0;
            if (dt < best) {
                best = dt;
                best_cpu = bench_cpu_now() - c0;
            }
        }
        printf("%-13s %12.0f %9.3f %9.3f %12.1f %10.3f\n", pl->name, (double)n / best, best, best_cpu,
               (double)r.heap_size / 1048576.0, peak ? (double)r.heap_size / (double)peak : 0.0);
        fflush(stdout);
    }
    free(b);
    free(off);
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000, seed = 1;
    uint32_t live = 100, n_resident = 2000;
    int reps = 1;
    const char *only = NULL, *only_planner = NULL;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--buffers=", 10) == 0)
            n = strtoull(argv[i] + 10, NULL, 10);
        else if (strncmp(argv[i], "--live=", 7) == 0)
            live = (uint32_t)strtoul(argv[i] + 7, NULL, 10);
        else if (strncmp(argv[i], "--resident=", 11) == 0)
            n_resident = (uint32_t)strtoul(argv[i] + 11, NULL, 10);
        else if (strncmp(argv[i], "--seed=", 7) == 0)
            seed = strtoull(argv[i] + 7, NULL, 10);
        else if (strncmp(argv[i], "--reps=", 7) == 0)
            reps = atoi(argv[i] + 7);
        else if (strncmp(argv[i], "--workload=", 11) == 0)
            only = argv[i] + 11;
        else if (strncmp(argv[i], "--planner=", 10) == 0)
            only_planner = argv[i] + 10;
        else {
            fprintf(stderr, "usage: gpusim_plan_bench [--buffers=N] [--live=L] [--resident=N] [--seed=N] [--reps=N] "
                            "[--workload=churn|training|resident] [--planner=NAME]\n");
            return 2;
        }
    }
    if (live < 2 || reps < 1 || n < 1) {
        fprintf(stderr, "plan_bench: --live >= 2, --reps >= 1, --buffers >= 1\n");
        return 2;
    }
    if (only == NULL || strcmp(only, "churn") == 0) {
        plan_trace *t = churn(n, live, seed);
        char name[64];
        snprintf(name, sizeof name, "churn (live ~%u)", live);
        bench(name, t, reps, only_planner);
        plan_trace_free(t);
    }
    if (only == NULL || strcmp(only, "training") == 0) {
        plan_trace *t = training(n, seed);
        bench("training", t, reps, only_planner);
        plan_trace_free(t);
    }
    if (only == NULL || strcmp(only, "resident") == 0) {
        /* every query meets the resident buffers: fewer buffers keep it to seconds */
        plan_trace *t = resident(n / 10 > n_resident ? n / 10 : n, n_resident, live, seed);
        char name[64];
        snprintf(name, sizeof name, "resident (%u never freed, live ~%u)", n_resident, live);
        bench(name, t, reps, only_planner);
        plan_trace_free(t);
    }
    return 0;
}
