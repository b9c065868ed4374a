/* kvfit.h — "the largest gpu_memory_utilization that survives capture on card X"
 * (`plan --gpu-memory-utilization`): a serving trace written by `synth serving` with
 * the vLLM start-up records in its header meta (vllm_startup) what vLLM's KV rule
 * subtracts; for a fraction F and a card of capacity C the KV cache is
 * floor((F × C − weights − activations) / block_bytes) blocks, split over kv_tensors
 * tensors (traces/synth/serving_startup.c). The trace is rewritten with those KV
 * allocations (tags "kv:") and cut at the end of the start-up (before the generator's
 * "serving" mark; without one, after the last capture's pool_end), and replayed; F is
 * bisected in thousandths. */
#ifndef GPUSIM_ANSWERS_KVFIT_H
#define GPUSIM_ANSWERS_KVFIT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/evbuf.h"
#include "sim/status.h"

typedef struct kvfit_rule {
    double recorded; /* the trace's own gpu_memory_utilization */
    uint64_t weights_bytes, activation_bytes, block_bytes, kv_tensors, min_blocks;
    uint64_t graph_estimate_bytes; /* --graph-memory=profiled: the graphs' estimate the rule subtracts too */
} kvfit_rule;

/* The rule from a header's meta JSON. SIM_ETRACE naming path when the meta has no
 * vllm_startup (the trace was not written by synth serving's start-up) or a key is
 * missing. */
sim_status kvfit_rule_read(const char *meta_json, const char *path, kvfit_rule *r, sim_error *err);

/* synth serving --graph-memory=profiled measures what vLLM's profiling captures take
 * (traces/synth/serving_startup.h serving_startup_profile_prefix) by replaying the
 * start-up's prefix under ops on a card of capacity bytes: samples[k] = what the
 * process holds after event after[k] less what it held after event before[k] (vLLM's
 * drop in free memory), 0 where it held less (the clamp of vLLM PR #44745). */
sim_status kvfit_graph_samples(const evbuf *prefix, const strategy_ops *ops, uint64_t capacity, const uint64_t *before,
                               const uint64_t *after, uint32_t n, uint64_t *samples, sim_error *err);

/* KV blocks at F (in thousandths) on a card of capacity bytes; 0 when none fit. */
uint64_t kvfit_blocks(const kvfit_rule *r, uint32_t milli, uint64_t capacity);

/* One card's answer. */
typedef struct kvfit_answer {
    sim_status st; /* of the search (the first replay error) */
    sim_error err;
    bool found;                             /* some F survives capture */
    uint32_t milli;                         /* the largest F that does, in thousandths */
    uint64_t kv_bytes;                      /* the KV cache there */
    uint64_t end_of_startup_reserved_bytes; /* what the process holds at the end of the start-up there */
    bool fails_above; /* F + 0.001 ran out of memory (else it leaves too few KV blocks, or is 1) */
    uint32_t fail_milli;
    sim_oom_record fail_oom; /* the first OOM at fail_milli */
    uint32_t replays;
} kvfit_answer;

/* Search on cfg's device (its capacity is C) under cfg's strategy. */
void kvfit_search(const engine_config *cfg, const evbuf *in, const kvfit_rule *r, kvfit_answer *out);

#endif
