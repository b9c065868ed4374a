/* graph.h — the tensor-level training step the model generators (transformer,
 * cnn) share: a model is a parameter list plus a chain of segments (embeddings or
 * stem, one per layer or block, head), each a list of tensors in allocation order
 * marked saved-for-backward or temporary. This module turns that description into
 * events: weights, forward, backward (gradients appear while saved tensors die in
 * reverse), optimizer states on the first step, zero_grad, optional activation
 * checkpointing and inference passes. The rules are in graph.c. */
#ifndef GPUSIM_SYNTH_GRAPH_H
#define GPUSIM_SYNTH_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "synth.h"

typedef struct graph_param {
    char name[48];
    uint64_t numel;
    uint32_t elem_bytes;  /* buffers only: 0 = the model's element size (8 for int64 counters) */
} graph_param;

/* One tensor of a segment. */
typedef struct graph_entry {
    const char *name;   /* static string */
    uint64_t bytes;
    bool keep;          /* saved for backward; else freed once the next tensor exists */
    bool grad;          /* backward allocates a gradient of the same size */
    uint32_t p0, pn;    /* params whose gradients appear when backward reaches it */
    uint32_t until;     /* temporary: freed once entry `until` exists (0: the next one) */
    uint64_t id;        /* live allocation, 0 if none */
} graph_entry;

#define GRAPH_SEG_MAX 32

typedef struct graph_seg {
    graph_entry e[GRAPH_SEG_MAX];
    uint32_t n;
    char label[32];     /* tag prefix: "L3", "layer2.1", "head" */
} graph_seg;

/* Append a tensor (asserts the capacity); returns its index. */
uint32_t graph_seg_add(graph_seg *s, const char *name, uint64_t bytes, bool keep, bool grad, uint32_t p0,
                       uint32_t pn);

/* Fill segment i (0 = embeddings/stem, n-1 = head) of the model. */
typedef void (*graph_build_fn)(const void *ctx, uint32_t i, graph_seg *s);

typedef struct graph_model {
    const graph_param *params;   /* borrowed */
    uint32_t n_params;
    const graph_param *buffers;  /* persistent non-parameter tensors (BatchNorm running stats) */
    uint32_t n_buffers;
    uint32_t n_segments;         /* ≥ 2 */
    graph_build_fn build;
    const void *ctx;
    uint64_t elem_bytes;         /* e: bytes per element of weights, grads and states */
    synth_optimizer optimizer;
    uint64_t steps;
    bool inference, checkpointing, keep_live;
    uint64_t seed;
} graph_model;

/* Write the whole workload: weights, steps, release. */
sim_status graph_generate(const graph_model *m, synth_out *o, sim_error *err);

#endif
