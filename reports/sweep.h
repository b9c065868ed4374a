/* sweep.h — renders a sweep's summary: per group (device × strategy × option set)
 * how many traces fit, the allocator's effective limit, the worst headroom and its
 * trace, the largest fragmentation, and the out-of-memory errors with their causes;
 * as a text table or JSON. A group's device may be a node (several GPUs). The
 * sweep (sweep/results.h) fills the digest from its results file. Deterministic. */
#ifndef GPUSIM_REPORTS_SWEEP_H
#define GPUSIM_REPORTS_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/buf.h"

typedef enum report_sweep_cause {
    REPORT_SWEEP_NO_OOM = 0,
    REPORT_SWEEP_CAPACITY = 1,
    REPORT_SWEEP_FRAGMENTATION = 2,
    REPORT_SWEEP_OTHER_PROCESSES = 3
} report_sweep_cause;

/* What the summary needs of one job. */
typedef struct report_sweep_job {
    bool present;          /* its result is in the file */
    bool fit;              /* completed without an OOM */
    uint8_t cause;         /* report_sweep_cause of its first OOM */
    uint64_t headroom;     /* capacity − peak on the device, contexts included (0 when above), as plan's */
    double frag_max;
    uint64_t limit;        /* the allocator's effective limit (a node: the least over its GPUs used); 0: unknown */
    const char *error;     /* the message of an invalid trace, or NULL */
} report_sweep_job;

/* One group: the jobs of every trace with the same device, strategy and options. */
typedef struct report_sweep_group {
    const char *device;              /* or the node */
    uint64_t capacity_bytes;         /* a node: of all its GPUs */
    const char *strategy;
    const char *options;
    uint32_t gpus;                   /* a node's GPUs; 0: a device */
} report_sweep_group;

typedef struct report_sweep {
    const char *spec_path;
    uint64_t jobs;                   /* in the spec */
    uint64_t done;                   /* with a result */
    uint32_t n_devices, n_strategies, n_optsets; /* the spec's axes (groups may be fewer than their product) */
    uint32_t n_traces;
    const char *const *traces;       /* display names */
    uint32_t n_groups;
    const report_sweep_group *groups;
    const report_sweep_job *job;     /* job[trace * n_groups + group] */
} report_sweep;

void report_sweep_text(const report_sweep *r, sim_buf *out);
void report_sweep_json(const report_sweep *r, sim_buf *out);

#endif
