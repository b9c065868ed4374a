/* serving_startup.h — the start-up of a vLLM-style inference server for `synth
 * serving --gpu-memory-utilization / --cuda-graphs`: the profiling forward pass whose
 * peak sets the activation estimate, the KV cache sized by vLLM's rule from
 * gpu_memory_utilization, the decode CUDA graphs captured into one shared private
 * pool or one pool each, largest first as vLLM does; then the decode steps the
 * server replays through those graphs. Every rule, with its upstream source, is in
 * serving_startup.c and traces/synth/README.md. */
#ifndef GPUSIM_SYNTH_SERVING_STARTUP_H
#define GPUSIM_SYNTH_SERVING_STARTUP_H

#include <stdbool.h>
#include <stdint.h>

#include "synth.h"

struct serving_config;
struct serving_report;

#define SERVING_MAX_GRAPHS 256u

typedef enum serving_graph_pool { SERVING_POOL_SHARED = 0, SERVING_POOL_SEPARATE = 1 } serving_graph_pool;
typedef enum serving_capture_order {
    SERVING_ORDER_DESCENDING = 0, /* vLLM's: the largest batch first */
    SERVING_ORDER_ASCENDING = 1,
    SERVING_ORDER_RECORDED = 2 /* as --cuda-graphs lists them */
} serving_capture_order;

/* "1,2,4,...,512" or "8,16,24,...,256" or "1,2,8": batch sizes, each 1 to 65536, no
 * repeats. "..." continues the three sizes before it (a constant ratio or a
 * constant step) up to the size after it. false with msg set when malformed. */
/* What vLLM's KV rule subtracts for the CUDA graphs: nothing (the release line of
 * vllm-project/vllm 35d5cda), or the estimate its later releases profile (PR #30515:
 * two graphs captured before the KV cache is sized, extrapolated to all of them). */
typedef enum serving_graph_memory { SERVING_GRAPHS_UNCOUNTED = 0, SERVING_GRAPHS_PROFILED = 1 } serving_graph_memory;
bool serving_graph_memory_parse(const char *text, serving_graph_memory *out);
const char *serving_graph_memory_name(serving_graph_memory m);

bool serving_graph_sizes_parse(const char *text, uint64_t *sizes, uint32_t *n, char *msg, size_t msg_len);
bool serving_graph_pool_parse(const char *text, serving_graph_pool *out);
bool serving_capture_order_parse(const char *text, serving_capture_order *out);
const char *serving_graph_pool_name(serving_graph_pool p);
const char *serving_capture_order_name(serving_capture_order o);

/* One captured decode graph. */
typedef struct serving_graph {
    uint64_t batch;  /* the batch size it was captured for */
    uint64_t pool;   /* the private pool it was captured into */
    uint64_t output; /* the id of its output, live while the graph lives */
} serving_graph;

/* What the start-up left for the serving loop. */
typedef struct serving_startup_state {
    serving_graph graphs[SERVING_MAX_GRAPHS]; /* in capture order */
    uint32_t n_graphs;
    uint64_t *kv_ids; /* one KV tensor per layer */
    uint64_t n_kv;
} serving_startup_state;

/* The forward pass of `tokens` tokens, layer by layer on `stream` (design in
 * serving_startup.c); its temporaries are freed as the pass goes. keep: the output
 * (tokens × hidden) stays live and its id is returned, else it is freed and 0 is
 * returned. scores: the prefill's attention scores (heads × tokens²) without flash
 * attention. *peak, when not NULL, gets the most bytes the pass held at once above
 * what was live before it, each allocation rounded up as PyTorch's allocated_bytes
 * counts it (512 B). */
uint64_t serving_forward(synth_out *o, const struct serving_config *c, uint64_t tokens, uint32_t stream, bool keep,
                         bool scores, const char *prefix, uint64_t *peak);

/* What the start-up's KV rule subtracts, computed without writing a trace: the
 * weights and the profiling pass's peak, as PyTorch's allocated_bytes counts them
 * (each allocation rounded up to 512 B); KV blocks = (requested − weights −
 * activations) / (block_size × KV bytes per token). For the header's meta, so that
 * `plan` can size the KV cache for another gpu_memory_utilization. */
void serving_startup_estimate(const struct serving_config *c, uint64_t *weights, uint64_t *activations);

/* --graph-memory=profiled: the start-up's allocations up to the end of its profiling
 * captures (the weights, the profiling pass, the minimal KV cache, the two largest
 * graphs' warm-ups and captures), pushed into b as the trace will hold them, and where
 * vLLM measures: the free memory before capture k's warm-ups (after event before[k])
 * and after its pool_end (event after[k]), k < *n (at most 2). The caller replays b
 * under the allocator model and sets c->graph_estimate_bytes =
 * serving_graph_estimate(samples, *n, c->n_graphs). */
sim_status serving_startup_profile_prefix(const struct serving_config *c, evbuf *b, uint64_t before[2],
                                          uint64_t after[2], uint32_t *n, sim_error *err);
/* vLLM's extrapolation (GPUModelRunner.profile_cudagraph_memory): the first sample, plus
 * (graphs − 1) × the second (at least 1 MiB); 0 without a sample. */
uint64_t serving_graph_estimate(const uint64_t *samples, uint32_t n_samples, uint32_t graphs);

/* After the weights (weight_bytes of them, as allocated_bytes counts them): profile,
 * size and allocate the KV cache (report->blocks etc.), capture the graphs. SIM_EUSAGE
 * when gpu_memory_utilization leaves no room for one request's KV blocks. */
sim_status serving_startup(const struct serving_config *c, synth_out *o, synth_rng *rng, uint64_t weight_bytes,
                           serving_startup_state *st, struct serving_report *report, sim_error *err);
/* The smallest captured graph for a decode batch of b (vLLM pads the batch up to
 * it), NULL when b is larger than every graph (the step runs eagerly). */
const serving_graph *serving_startup_graph_for(const serving_startup_state *st, uint64_t b);
/* At the end: the graphs destroyed (their outputs freed, their pools released), the
 * KV cache freed. Frees st's memory either way (free_memory = false: only that). */
void serving_startup_end(serving_startup_state *st, synth_out *o, bool free_memory);

#endif
