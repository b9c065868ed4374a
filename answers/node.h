/* node.h — a machine with several GPUs, as a layer above the one-device engine: one
 * engine run per device, over the processes (jobs) that see it. A job is a process
 * with its own visible devices (CUDA_VISIBLE_DEVICES) and one trace per rank, rank r
 * running on its r-th visible device (data parallel: DDP or MirroredStrategy
 * replicas, each device its own allocator). All jobs run one strategy. */

/* What a framework does at start on a visible device where the job never allocates
 * (node_takes_at_start):
 *  - TensorFlow with allow_growth off and JAX with preallocation (the `greedy`
 *    strategy, either --bfc-preset) create every visible device and take their whole
 *    limit there: modelled as a start on that device, one 1-byte allocation and its
 *    free, which makes BFC take its region (strategies/bfc.h) and the process pay its
 *    context;
 *  - every other strategy (growth, torch, async, raw, ideal) takes nothing, not even a
 *    context, on a device it never uses.
 * Jobs start together; at equal times, the earlier job's events go first (engine.h),
 * so a later job finds the devices an earlier one took. */
#ifndef GPUSIM_NODE_H
#define GPUSIM_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"

#define NODE_MAX_DEVICES 16u
#define NODE_MAX_JOBS 8u

typedef struct node_spec {
    uint32_t n;
    device_info dev[NODE_MAX_DEVICES]; /* physical order: device i is GPU i */
} node_spec;

/* "8xA100-40GB", or a list of catalog names with optional counts
 * ("A100-40GB,A100-40GB", "4xA100-40GB,2xT4"); a size instead of a name is a card of
 * that capacity outside the catalog ("8x12GB", compute capability unknown). Each device's context per process
 * is ctx's context_bytes when that was given (ctx->context_default NULL); else the published default
 * (sim/gpu_context.h) of ctx's CUDA major for a catalog card plus ctx's NCCL buffers (nccl_bytes), 0 B for a
 * card outside it. SIM_EUSAGE with a message on an unknown name or more than
 * NODE_MAX_DEVICES devices. */
sim_status node_parse(const char *text, const device_info *ctx, node_spec *out, sim_error *err);

/* CUDA_VISIBLE_DEVICES: "0,3" (distinct indices below n_devices, in the order CUDA
 * numbers them for the process); NULL or "" = all devices. */
sim_status node_parse_visible(const char *text, uint32_t n_devices, uint32_t visible[NODE_MAX_DEVICES],
                              uint32_t *n_visible, sim_error *err);

typedef struct node_job {
    char name[64];
    uint32_t visible[NODE_MAX_DEVICES];
    uint32_t n_visible;
    const sim_event_source *ranks; /* rank r on visible[r]; n_ranks ≤ n_visible; borrowed */
    uint32_t n_ranks;
} node_job;

/* Whether the strategy takes memory at start on every visible device (its trait
 * takes_region_at_start, sim/strategy.h). */
bool node_takes_at_start(const strategy_ops *ops);

/* What one job holds on one device. */
typedef struct node_share {
    uint32_t job;
    int32_t rank;            /* -1: no trace here, only the framework's start */
    uint32_t process;        /* index into the device's run->procs */
    uint64_t peak_device_bytes; /* its reserved at the peak + its context */
    uint64_t final_device_bytes; /* what it holds at the end (0 once an OOM ended it) */
    bool oom;
} node_share;

typedef struct node_device_result {
    device_info info;
    sim_run *run;            /* NULL when no job touched the device */
    uint32_t n_shares;
    node_share shares[NODE_MAX_JOBS];
    uint64_t peak_used_bytes;  /* the device at its peak: every process and context */
    uint64_t final_used_bytes;
} node_device_result;

typedef struct node_result {
    uint32_t n;
    node_device_result dev[NODE_MAX_DEVICES];
} node_result;

/* Replay the jobs on the node, one engine per device (base gives the strategy, its
 * options and --on-oom; its device is replaced by each node device). On success *out
 * holds the runs (node_result_release). Errors: engine_run's, and SIM_EUSAGE when a
 * job has more ranks than visible devices or a device outside the node. */
sim_status node_run(const engine_config *base, const node_spec *node, const node_job *jobs, uint32_t n_jobs,
                    node_result *out, sim_error *err);
void node_result_release(node_result *r);

/* Whether the jobs fit the node, in a few numbers (plan --node, sweep's node jobs).
 * Headroom is plan's: capacity − peak on the device (every process and context). */
typedef struct node_verdict {
    bool fits;                  /* every process on every GPU completed without an OOM */
    uint32_t used;              /* GPUs a job touched (a rank or the framework's start) */
    int32_t failing_gpu;        /* the first GPU, by index, where a process ran out of memory; else -1 */
    uint32_t failing_share;     /* its share there (dev[failing_gpu].shares[...]) */
    sim_oom_cause cause;        /* of that process's first OOM */
    uint32_t peak_gpu;          /* the GPU with the highest peak (the first of equals) */
    uint64_t peak_used_bytes;
    uint32_t least_gpu;         /* the GPU with the least headroom among those used (GPU 0 when none) */
    uint64_t least_headroom_bytes;
} node_verdict;

/* The verdict of a node_run's result. */
node_verdict node_result_verdict(const node_result *r);
/* capacity − peak on the device of one GPU (0 when above). */
uint64_t node_device_headroom(const node_device_result *d);

#endif
