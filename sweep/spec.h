/* spec.h — a sweep specification (docs/sweep.md): the traces (files, globs,
 * directories), devices (catalog names or capacities), strategies and option sets of a
 * `gpusim sweep`, read from JSON and checked before any work starts, and the jobs of
 * their cross product, numbered in coordinate order (trace, device, strategy, option
 * set). */

/* The spec's "node" entries (machines with several GPUs) follow its devices in the
 * device dimension. It runs nothing: see run.h. */
#ifndef GPUSIM_SWEEP_SPEC_H
#define GPUSIM_SWEEP_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "answers/node.h"
#include "sim/device.h"
#include "sim/status.h"
#include "sim/strategy.h"

#define SWEEP_MAX_KV 16

typedef struct sweep_trace {
    char *path;     /* as opened (the spec's directory joined in) */
    char *display;  /* as written in results: relative to the spec's directory */
} sweep_trace;

/* One entry of the device dimension: a GPU, or a node ("node" in the spec: the trace as
 * rank 0 of a job that sees every GPU of the node, answers/node.h). */
typedef struct sweep_device {
    char name[64];
    device_info info;   /* info.name points to name: use sweep_spec_device_info(); a node: its GPU 0 */
    bool node;
    node_spec gpus;     /* a node's GPUs */
} sweep_device;

typedef struct sweep_optset {
    char name[128];
    uint32_t n_kv;
    sim_kv kv[SWEEP_MAX_KV];        /* keys with '_' as strategies read them */
    char *values[SWEEP_MAX_KV];     /* owned storage behind kv[].value */
    bool *applies;                  /* per strategy index; NULL = every strategy */
} sweep_optset;

/* One combination of device, strategy and option set: the jobs of one trace. */
typedef struct sweep_combo {
    uint32_t device, strategy, optset;
} sweep_combo;

typedef struct sweep_job {
    uint32_t trace;
    sweep_combo c;
} sweep_job;

typedef struct sweep_spec {
    char *path;                     /* the spec file */
    uint64_t hash;                  /* FNV-1a of its bytes: ranks check they read the same spec */
    uint32_t n_traces;              /* sorted by display path, no duplicates */
    sweep_trace *traces;
    uint32_t n_devices;
    sweep_device *devices;
    uint32_t n_strategies;
    const strategy_ops **strategies;
    uint32_t n_optsets;
    sweep_optset *optsets;
    uint32_t n_combos;              /* jobs per trace */
    sweep_combo *combos;            /* device-major, then strategy, then option set */
    uint32_t *combo_at;             /* [(d * n_strategies + s) * n_optsets + o] → combo, or UINT32_MAX */
    bool on_oom_skip;
    char *output;                   /* "output" of the spec joined to its directory, or NULL */
} sweep_spec;

typedef enum sweep_load_flags {
    SWEEP_LOAD_CHECK_TRACES = 1,    /* open every trace and read its header (exit 3 when invalid) */
    SWEEP_LOAD_CHECK_OPTIONS = 2    /* create every (device, strategy, options) once (exit 2 when bad) */
} sweep_load_flags;

/* Read and check the spec at path. Errors: SIM_EIO (unreadable spec, missing
 * trace), SIM_EUSAGE (malformed JSON, unknown key, strategy, GPU, bad option
 * value), SIM_ETRACE (a trace whose header is invalid), each with a message that
 * names the spec or the trace. Free with sweep_spec_free. */
sim_status sweep_spec_load(const char *path, unsigned flags, sweep_spec **out, sim_error *err);
void sweep_spec_free(sweep_spec *s);

static inline uint64_t sweep_spec_jobs(const sweep_spec *s)
{
    return (uint64_t)s->n_traces * s->n_combos;
}
/* Coordinates of job i < sweep_spec_jobs(s). Jobs are numbered trace-major. */
sweep_job sweep_spec_job(const sweep_spec *s, uint64_t i);
/* The job with these coordinate names, or UINT64_MAX; node: dev_name names a node. */
uint64_t sweep_spec_find(const sweep_spec *s, const char *trace, const char *dev_name, bool node,
                         const char *strategy_name, const char *options);
/* The device of index d, ready for engine_config (name valid while s lives). */
device_info sweep_spec_device_info(const sweep_spec *s, uint32_t d);

#endif
