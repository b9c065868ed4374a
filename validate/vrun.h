/* vrun.h — one measured replay: gpusim's own engine drives the events of a trace
 * (same order, deferred frees at ready_t, ids, OOM as data, stop at the first OOM:
 * design.md §3) into a strategy whose memory is real: cuda-raw, cuda-async or a
 * mirror of one of gpusim's models. After every event (or every N, always at each
 * local maximum) the harness reads cudaMemGetInfo and the allocator's counters. */

/* The strategies:
 *   cuda-raw    one cudaMalloc/cudaFree per allocation (size 0: no call);
 *   cuda-async  cudaMallocAsync/cudaFreeAsync on the default pool, release threshold
 *               UINT64_MAX; empty_cache = synchronize + cudaMemPoolTrimTo(pool, 0);
 *   mirror      one of gpusim's own models (greedy, growth, limit, torch, ...) runs
 *               unchanged; after each of its operations the harness walks the model's
 *               regions/segments and makes the real device hold the same ones: a region
 *               that disappeared is cudaFree'd first, then each new region is cudaMalloc'd
 *               with the region's exact size (expandable segments: mapped bytes, in 2 MiB
 *               cudaMallocs). Within one operation models only ever release before they
 *               take (BFC GC, PyTorch's release-and-retry), so frees-then-allocs is the
 *               real order. The model decides OOM with its own accounting (device
 *               capacity = measured total, context = measured context, as the
 *               prediction); a cudaMalloc the driver refuses although the model had
 *               room ends the replay there as an OOM with cause "driver". */
#ifndef GPUSIM_VRUN_H
#define GPUSIM_VRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/buf.h"
#include "sim/engine.h"
#include "sim/strategy.h"
#include "validate/vgpu.h"

typedef enum vrun_mode { VRUN_RAW = 0, VRUN_ASYNC = 1, VRUN_MIRROR = 2 } vrun_mode;

typedef struct vrun_sample {
    uint64_t event;       /* global event number (trace events + deferred frees) */
    uint64_t t;
    uint64_t device_used; /* total − free from cudaMemGetInfo */
    uint64_t reserved;    /* cuda-async: pool ReservedMemCurrent; else device_used − context */
    uint64_t allocated;   /* cuda-async: pool UsedMemCurrent; mirror: the model's allocated; raw: live requested */
} vrun_sample;

#define VRUN_MAX_ADDRS 256u

typedef struct vrun_addr {
    uint64_t size, ptr;
} vrun_addr;

typedef struct vrun_region {
    uint64_t base;      /* the model's region address */
    uint64_t bytes;     /* backed bytes */
    uint64_t *chunks;   /* real pointers */
    uint64_t *chunk_bytes;
    uint32_t n_chunks, cap_chunks;
} vrun_region;

typedef struct vrun {
    vgpu gpu;
    vrun_mode mode;
    const strategy_ops *inner;  /* mirror: the model */
    uint64_t total_bytes;       /* cudaMemGetInfo total */
    uint64_t context_bytes;     /* total − free before the first allocation */
    uint64_t every;             /* curve: one row every N events (≥ 1) */
    bool keep_curve;

    /* measurements */
    uint64_t events_seen;       /* sample() calls = events processed */
    uint64_t last_t;
    bool rising;                /* an allocation since the last reading */
    uint64_t peak_device_used, final_device_used;
    uint64_t peak_reserved, final_reserved;     /* as in vrun_sample.reserved */
    uint64_t peak_allocated, final_allocated;
    uint64_t live_requested;
    uint64_t num_device_allocs, num_device_frees; /* real cudaMalloc/cudaFree (or async) calls */
    uint64_t backed_bytes, peak_backed_bytes;     /* mirror: bytes the harness cudaMalloc'd */
    uint64_t driver_refusals;
    uint64_t oom_device_free;   /* cudaMemGetInfo free at the first failed allocation */
    bool have_oom_reading;
    vgpu_pool_stats pool;       /* last reading (async) */
    vrun_sample *curve;
    uint64_t n_curve, cap_curve;
    vrun_addr addrs[VRUN_MAX_ADDRS]; /* the first real allocations: size and address */
    uint32_t n_addrs;

    /* mirror state */
    bool expandable;
    vrun_region *regions;       /* sorted by base */
    uint32_t n_regions, cap_regions;
    uint64_t seen_allocs, seen_frees, seen_reserved;

    /* a CUDA error that is not an OOM stops the measurement */
    bool fatal;
    char fatal_msg[400];
} vrun;

/* The strategy table for a mode; create() finds its vrun in strategy_config.app_data
 * (engine_config.app_data: vrun_replay sets it). */
const strategy_ops *vrun_ops(vrun_mode mode);
const char *vrun_mode_name(vrun_mode mode);

/* Initialise v for a run on gpu; every ≥ 1. Reads the context now. */
bool vrun_init(vrun *v, vgpu gpu, vrun_mode mode, const strategy_ops *inner, uint64_t every, bool keep_curve,
               char *err, size_t errcap);
/* One last reading after the run (final values); frees every chunk still held. */
void vrun_finish(vrun *v);
void vrun_release(vrun *v);

/* Replay the trace at path through the mode (opts: the model's options for
 * mirror). The engine's result is returned in *run (free with sim_run_free). */
sim_status vrun_replay(vrun *v, const char *path, const sim_kv *opts, uint32_t n_opts, sim_run **run,
                       sim_error *err);

/* Small probes of the driver's behaviour (cudaMalloc granularity, packing of small
 * allocations, address order and reuse, the async pool's growth), as one JSON
 * document (format "gpusim-probes"). Everything it takes it gives back. */
void vrun_probes(vgpu gpu, sim_buf *out);

/* What the measured JSON says besides the measurements. */
typedef struct vrun_meta {
    const char *trace_path;
    const char *allocator;        /* "cuda-raw", "cuda-async", "mirror-growth", ... */
    const char *predict_strategy; /* gpusim strategy to compare with, or NULL (none) */
    const sim_kv *predict_opts;   /* its options (keys as in result.strategy.options) */
    uint32_t n_predict_opts;
    const char *backend;          /* "cuda" or "mock" */
} vrun_meta;

/* The measured JSON (reports/measured.h: format "gpusim-measured", version 1;
 * validate/README.md), with the trace's fingerprint (measured_trace_fnv1a64). */
void vrun_json(const vrun *v, const sim_run *run, const vrun_meta *meta, sim_buf *out);

#endif
