/* serving.h — synthetic trace of an inference server: requests arrive as a
 * Poisson process, are batched continuously up to a maximum batch, and each holds
 * a KV-cache buffer sized by its length until it completes. Long-running and
 * dynamic, this is the workload that fragments a caching allocator until it runs
 * out of memory. The memory model is in serving.c and traces/synth/README.md. */
#ifndef GPUSIM_SYNTH_SERVING_H
#define GPUSIM_SYNTH_SERVING_H

#include <stdbool.h>
#include <stdint.h>

#include "serving_startup.h"
#include "synth.h"
#include "transformer.h"

typedef enum serving_kv { SERVING_KV_PREALLOC = 0, SERVING_KV_GROW = 1, SERVING_KV_PAGED = 2 } serving_kv;

typedef struct serving_config {
    transformer_config model;     /* shapes and dtype of the served model */
    double rate;                  /* mean arrivals per second (Poisson) */
    uint64_t requests;            /* run until this many requests completed */
    uint64_t max_batch;           /* requests decoded together at most */
    double prompt_median, prompt_sigma;  /* lognormal prompt length (tokens) */
    double output_median, output_sigma;  /* lognormal output length (tokens) */
    uint64_t max_len;             /* prompt + output are capped to this */
    serving_kv kv;                /* preallocate prompt+output, or grow in chunks */
    uint64_t kv_chunk;            /* tokens per growth step (grow) */
    uint64_t *lengths;            /* empirical pairs (prompt, output), owned; NULL = lognormal */
    uint64_t n_lengths;           /* number of pairs */
    bool keep_live;               /* leave the weights allocated at the end */
    uint64_t seed;
    /* paged: a vLLM-style pool of fixed-size blocks (serving_paged.c) */
    uint64_t block_size;          /* tokens per KV block (vLLM's default 16) */
    double gpu_util;              /* fraction of capacity for weights + activations + pool (0.9) */
    uint64_t capacity;            /* the device's bytes (from the trace header); required for paged */
    uint64_t prefix;              /* tokens of a prompt prefix every request shares (0: none) */
    /* the vLLM start-up (serving_startup.c): profiling pass, KV sized from gpu_util
     * by vLLM's rule, decode CUDA graphs; implies paged */
    bool startup;
    uint64_t graph_sizes[SERVING_MAX_GRAPHS]; /* decode batch sizes to capture, as given */
    uint32_t n_graphs;                        /* 0: none (vLLM's enforce_eager) */
    serving_graph_pool graph_pool;
    serving_capture_order capture_order;
    uint64_t max_num_batched_tokens; /* the profiling pass's tokens; 0: max_len */
    uint64_t graph_warmups;          /* eager runs of each size before its capture (vLLM V1: 1) */
    serving_graph_memory graph_memory; /* whether the KV rule subtracts the graphs' estimate */
    bool graph_outputs_kept;           /* the graphs' outputs stay live (else freed in the capture, as
                                        * vLLM's weak references let them) */
    uint64_t graph_estimate_bytes;   /* profiled: that estimate, measured by the caller on the events of
                                      * serving_startup_profile_prefix (the allocator is above this layer) */
} serving_config;

/* What a paged run did (zero for the other modes). */
typedef struct serving_report {
    uint64_t pool_bytes, blocks, block_bytes, reserve_bytes;
    uint64_t peak_blocks_used, peak_active, preemptions, shared_blocks;
    /* the start-up's KV sizing (vLLM's rule, serving_startup.c): requested =
     * gpu_util × capacity; pool_bytes = blocks × block_bytes ≤ requested − weights −
     * activation_bytes */
    uint64_t requested_bytes, weight_bytes, activation_bytes, graph_estimate_bytes;
    uint64_t graphs, graph_output_bytes, graph_replays, eager_decodes;
} serving_report;

/* gpt2-medium in fp16, 2 requests/s, 1000 requests, batches up to 16, prompts
 * lognormal(median 256, σ 1.0), outputs lognormal(median 128, σ 0.8), max 1024. */
void serving_defaults(serving_config *c);
void serving_config_release(serving_config *c);
/* Read an empirical length distribution: one request per line, "PROMPT OUTPUT"
 * or "PROMPT" (then the output length is drawn from the lognormal); blank lines
 * and lines starting with '#' are skipped. SIM_EIO / SIM_EUSAGE with file:line. */
sim_status serving_load_lengths(serving_config *c, const char *path, sim_error *err);
sim_status serving_validate(const serving_config *c, sim_error *err);
/* KV-cache bytes for one token: 2 (K and V) · layers · KV heads · head_dim · e
 * (= 2·L·H·e without grouped-query attention). */
uint64_t serving_kv_bytes_per_token(const serving_config *c);
sim_status serving_generate(const serving_config *c, synth_out *o, sim_error *err);
/* The same, filling report (not NULL). */
sim_status serving_generate_report(const serving_config *c, synth_out *o, serving_report *report, sim_error *err);

#endif
