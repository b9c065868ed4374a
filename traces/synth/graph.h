/* graph.h — the tensor-level training step the model generators (transformer, cnn)
 * share: a model is a parameter list plus a chain of segments (embeddings or stem, one
 * per layer or block, head), each a list of tensors in allocation order marked
 * saved-for-backward or temporary. */

/* This module turns that description into events: weights, forward, backward (gradients
 * appear while saved tensors die in reverse), optimizer states, zero_grad, activation
 * checkpointing (per segment or selective), inference passes, mixed precision with fp32
 * master weights, frozen parameters (LoRA), ZeRO-1/2/3 sharding over data-parallel
 * ranks, and micro-batches in a 1F1B pipeline schedule. The rules are in graph.c. */
#ifndef GPUSIM_SYNTH_GRAPH_H
#define GPUSIM_SYNTH_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "synth.h"

typedef struct graph_param {
    char name[48];       /* truncated to 47 characters, as the bundled traces were written */
    uint64_t numel;
    uint32_t elem_bytes;   /* buffers only: 0 = the model's element size (8 for int64 counters) */
    uint64_t rows;         /* a matrix's first dimension (Adafactor's row factor); 0 = a vector */
    bool frozen;           /* no gradient, no optimizer state (a LoRA base weight) */
    uint64_t stored_bytes; /* 0: numel · e; else the weight's own size (QLoRA: packed 4-bit) */
    uint64_t qconst_bytes; /* QLoRA quantization constants, allocated next to the weight; 0: none */
    uint8_t te_wgrad;      /* rule 19: its cached dummy weight gradient (1..GRAPH_TE_WGRAD_MAX - 1); 0: none */
} graph_param;

/* One tensor of a segment. */
typedef struct graph_entry {
    const char *name;   /* static string */
    uint64_t bytes;
    bool keep;          /* saved for backward; else freed once the next tensor exists */
    bool grad;          /* backward allocates a gradient of the same size */
    bool recompute;     /* selective checkpointing: dropped in forward, recomputed in backward */
    uint64_t gbytes;    /* size of its gradient; 0 = bytes (an fp8 copy has a bf16 gradient) */
    uint64_t bwd_tmp;   /* a temporary backward needs at this tensor (QLoRA's dequantized weight) */
    const char *bwd_tmp_name; /* its tag (static); NULL: "dequant_bwd" */
    bool save;                /* op-level selective checkpointing keeps it through forward (rule 18) */
    uint32_t p0, pn;    /* params whose gradients appear when backward reaches it */
    uint32_t until;     /* temporary: freed once entry `until` exists (0: the next one) */
    uint64_t id;        /* live allocation, 0 if none */
} graph_entry;

#define GRAPH_SEG_MAX 48

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

/* rule 19: at most this many cached dummy weight gradients (index 0 unused); the last
 * index is a placeholder made and freed at each backward instead (Megatron's own linears) */
#define GRAPH_TE_WGRAD_MAX 8
#define GRAPH_WGRAD_TRANSIENT (GRAPH_TE_WGRAD_MAX - 1)

/* rule 17 with fsdp_streams: FSDP2's side streams in the trace */
enum { GRAPH_STREAM_ALL_GATHER = 1, GRAPH_STREAM_REDUCE_SCATTER = 2 };

typedef struct graph_model {
    const graph_param *params;   /* borrowed */
    uint32_t n_params;
    const graph_param *buffers;  /* persistent non-parameter tensors (BatchNorm running stats) */
    uint32_t n_buffers;
    uint32_t n_segments;         /* ≥ 1 (≥ 2 with an embedding and a head) */
    graph_build_fn build;
    const void *ctx;
    uint64_t elem_bytes;         /* e: bytes per element of weights (and, by default, grads and states) */
    synth_optimizer optimizer;
    uint64_t steps;
    bool inference, checkpointing, keep_live;
    uint64_t seed;
    /* Everything below is optional: zero is the plain single-device step above. */
    uint64_t grad_bytes;         /* bytes per gradient element; 0 = elem_bytes */
    uint64_t state_bytes;        /* bytes per optimizer-state element; 0 = elem_bytes */
    bool master;                 /* fp32 master copy of each trainable parameter; states at load */
    bool fused;                  /* fused optimizer (no foreach temporaries) */
    bool selective;              /* entries marked recompute are dropped and recomputed */
    uint32_t zero;               /* ZeRO stage 0..3 over dp ranks (3 = FSDP full shard) */
    uint64_t dp;                 /* ranks the states are sharded over; 0 = 1 */
    uint64_t micro_batches;      /* per step; 0 = 1 */
    uint32_t pp, stage;          /* pipeline stages (0 = 1) and this rank's stage */
    bool no_embed, no_head;      /* segment 0 / n-1 is a layer (a pipeline stage's cut) */
    uint64_t p2p_bytes;          /* activation sent between pipeline stages */
    bool apply_at_last_use;      /* graph lifetimes (tf.function): graph.c rule 15 */
    bool grad_buffer;            /* one persistent gradient buffer from the load (graph.c rule 16) */
    /* FSDP2, fully_shard per segment (graph.c rule 17; with zero 3) */
    bool fsdp2;
    uint64_t shard_bytes;       /* bytes per element of the sharded parameters; 0 = elem_bytes */
    uint64_t reduce_bytes;      /* bytes per element of the reduce-scatter (reduce_dtype); 0 = grad bytes */
    uint64_t grad_shard_bytes;  /* bytes per element of a sharded gradient; 0 = grad bytes */
    bool reshard_after_forward; /* free a segment's unsharded parameters after its forward (not the head's) */
    bool fsdp_root;             /* segment 0 and the head are one unit, the root (rule 17) */
    bool fsdp_streams;          /* all-gather and reduce outputs on FSDP's side streams (rule 17) */
    /* checkpointing variants (graph.c rule 18; with checkpointing) */
    uint32_t ckpt_every; /* only every N-th middle segment is checkpointed; 0 or 1: all */
    bool ckpt_save;      /* entries marked save stay through forward, the rest is recomputed */
    /* rule 19 (with grad_buffer): bytes of each cached dummy weight gradient, by te_wgrad index */
    uint64_t te_wgrad_bytes[GRAPH_TE_WGRAD_MAX];
} graph_model;

/* Write the whole workload: weights, steps, release. */
sim_status graph_generate(const graph_model *m, synth_out *o, sim_error *err);

/* Elements of a parameter's shard on one of dp ranks: ceil(numel / dp). */
uint64_t graph_shard_numel(uint64_t numel, uint64_t dp);

#endif
