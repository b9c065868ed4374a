/* plan.h — capacity planning (`gpusim plan`): for every GPU asked about and every
 * strategy, does the workload run without OOM, with what peak on the device; and for
 * every strategy the smallest capacity it runs on, found by bisection to PLAN_STEP on
 * a card like the model (same compute capability and context). On nodes (plan
 * --node), each node under each strategy. The tables are reports/plan.h. */

/* The smallest capacity is confirmed by a run at that capacity and one a step less,
 * and whether the answer is monotonic: fragmentation can make a larger card fail where
 * a smaller one ran, so capacities above the minimum are probed too. On nodes, the
 * traces are the ranks of one job, every GPU under the framework's start-up
 * (answers/node.h). */
#ifndef GPUSIM_ANSWERS_PLAN_H
#define GPUSIM_ANSWERS_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "answers/batch.h"
#include "answers/node.h"
#include "sim/engine.h"
#include "sim/gpus.h"
#include "sim/status.h"
#include "sim/units.h"

#define PLAN_MAX_PROBES 40
#define PLAN_CEILING (16 * TiB) /* no answer above this */
#define PLAN_STEP MiB           /* the bisection's resolution */

/* One replay: the workload on one device under one strategy. */
typedef struct plan_cell {
    sim_status st;            /* SIM_EUSAGE: a strategy option cannot hold there (e.g. a limit above the capacity) */
    bool fits;                /* completed without an OOM */
    uint64_t peak_device, peak_reserved, ooms;
    sim_oom_cause cause;      /* of the first OOM */
    sim_error err;            /* when st != SIM_OK */
    bool replayed;            /* false: answered without a replay (fits_by_peak, or a capacity-blind run) */
    /* a complete run that fits and is the same on every capacity >= peak_device
     * (sim_run_capacity_blind) */
    bool blind;
} plan_cell;

typedef struct plan_probe {
    uint64_t capacity;
    bool fits;
} plan_probe;

/* The smallest capacity of one strategy. */
typedef struct plan_min {
    sim_status st;            /* SIM_ETRACE etc.: the search stopped on an error (err) */
    sim_error err;
    bool found;               /* false: does not run even on PLAN_CEILING */
    uint64_t capacity;        /* the minimum, a multiple of PLAN_STEP */
    plan_cell at_min;         /* the confirming run */
    bool below_fails;         /* the run a step below failed (or capacity is one step) */
    uint32_t runs;            /* capacities the search tried (as if each were a replay) */
    uint32_t replays;         /* replays it ran: a capacity tried before is not replayed again */
    plan_probe probes[PLAN_MAX_PROBES]; /* capacities above the minimum */
    uint32_t n_probes;
    bool monotonic;
    uint64_t counter_capacity; /* a capacity above the minimum that fails (not monotonic), else 0 */
    bool has_blind;           /* the search saw a capacity-blind run (plan_cell.blind): ... */
    plan_cell blind;          /* ... which answers every capacity at or above its peak on the device */
} plan_min;

/* What is asked. Everything is borrowed. */
typedef struct plan_question {
    const batch_traces *t;    /* the workload: its traces as processes on one device */
    engine_config base;       /* strategy options, --on-oom, ...; device and ops are set per replay */
    device_info model;        /* the card the minimum is searched on (its capacity is where the search starts) */
    const strategy_ops *const *ops;
    uint32_t n_ops;
    const gpu_model *const *gpus;
    uint32_t n_gpus;
    /* optional: called after every replay, from any thread (a progress line) */
    void (*on_replay)(void *ctx);
    void *on_replay_ctx;
} plan_question;

/* The answer: cells[g * n_ops + s] for GPU g under strategy s, mins[s]. */
typedef struct plan_answer {
    plan_cell *cells;
    plan_min *mins;
} plan_answer;

/* Answer q on `jobs` threads (batch_parallel; the answer does not depend on jobs).
 * An error that breaks every replay alike (an invalid trace) is returned with err
 * set, the first one in a fixed order (the grid by GPU then strategy, then the
 * minima); SIM_ENOMEM. On error out holds nothing; else plan_answer_release frees. */
sim_status plan_answer_compute(const plan_question *q, unsigned jobs, plan_answer *out, sim_error *err);
void plan_answer_release(plan_answer *a);

/* The pieces, usable alone: one replay of q's workload under ops on dev ... */
plan_cell plan_run(const plan_question *q, const strategy_ops *ops, const device_info *dev);
/* ... and the minimum search for ops on cards like q->model. */
void plan_find_min(const plan_question *q, const strategy_ops *ops, plan_min *out);
/* The device of GPU g of the grid: q->model with that GPU's name, capacity and compute capability. */
device_info plan_gpu_device(const plan_question *q, uint32_t g);

/* ---------------------------------------------------------------- on nodes */

/* One more job (process) on the node, after the first: its visible GPUs and ranks. */
typedef struct plan_node_job {
    const char *visible;        /* its CUDA_VISIBLE_DEVICES (NULL: every GPU) */
    const batch_traces *t;      /* its ranks, rank r on its r-th visible GPU */
} plan_node_job;

/* Which node fits the jobs: the traces are the first job's ranks, rank r on its r-th
 * visible GPU; the others start with it (answers/node.h: at equal times the earlier
 * job goes first). */
typedef struct plan_node_question {
    const batch_traces *t;
    engine_config base;         /* strategy options, --on-oom; device and ops are set per run */
    const node_spec *nodes;
    const char *const *node_names; /* as given (--node=8xA100-40GB) */
    uint32_t n_nodes;
    const char *visible;        /* the job's CUDA_VISIBLE_DEVICES; NULL: every GPU of the node */
    uint32_t replicas;          /* 0: one rank per trace; N: the one trace on the first N visible GPUs */
    const plan_node_job *more;  /* the other jobs (--job), at most NODE_MAX_JOBS - 1 */
    uint32_t n_more;
    const strategy_ops *const *ops;
    uint32_t n_ops;
    void (*on_replay)(void *ctx); /* optional: after every node run, from any thread */
    void *on_replay_ctx;
} plan_node_question;

/* One node under one strategy. */
typedef struct plan_node_cell {
    sim_status st;              /* SIM_EUSAGE: does not run there (--visible beyond the node, more ranks than
                                 * visible GPUs, a strategy option that cannot hold on a GPU) */
    sim_error err;
    node_job jobs[NODE_MAX_JOBS]; /* the jobs as run (their ranks pointers are cleared) */
    uint32_t n_jobs;
    node_result r;              /* per GPU */
    node_verdict v;
} plan_node_cell;

/* cells[n * n_ops + s] for node n under strategy s, on `jobs` threads (the answer does
 * not depend on jobs). Errors as plan_answer_compute's (the first in grid order); on
 * error *out is NULL. plan_nodes_release frees. */
sim_status plan_nodes_compute(const plan_node_question *q, unsigned jobs, plan_node_cell **out, sim_error *err);
void plan_nodes_release(plan_node_cell *cells, size_t n);

#endif
