/* transformer.h — synthetic trace of transformer training steps (or inference
 * passes) built from the model's shape: every parameter, gradient, optimizer
 * state, saved activation and temporary as its own allocation, in the order
 * PyTorch eager allocates them. The memory model is written out in transformer.c
 * and traces/synth/README.md. Three families: BERT (post-LN encoder, learned
 * positions, pooler, tied MLM projection), GPT-2 (pre-LN decoder, tied LM head),
 * LLaMA (RMSNorm, SwiGLU, rotary, no biases, untied LM head). */
#ifndef GPUSIM_SYNTH_TRANSFORMER_H
#define GPUSIM_SYNTH_TRANSFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/status.h"
#include "graph.h"
#include "synth.h"

typedef enum transformer_arch { TRANSFORMER_BERT = 0, TRANSFORMER_GPT2 = 1, TRANSFORMER_LLAMA = 2 } transformer_arch;

typedef struct transformer_config {
    transformer_arch arch;
    uint64_t layers, hidden, heads, ffn; /* ffn = MLP inner width */
    uint64_t vocab, max_pos, type_vocab; /* max_pos: learned position table (not LLaMA) */
    uint64_t seq, batch;
    synth_dtype dtype;                   /* every tensor: weights, grads, states, activations */
    synth_optimizer optimizer;
    uint64_t steps;                      /* training steps, or forward passes for inference */
    bool checkpointing;                  /* keep only layer outputs, recompute in backward */
    bool inference;                      /* forward only, no grads, no optimizer */
    bool keep_live;                      /* leave weights and optimizer states allocated at the end */
    uint64_t seed;                       /* jitter of the op durations (sizes never depend on it) */
} transformer_config;

/* gpt2-small shapes, fp32, Adam, one training step. */
void transformer_defaults(transformer_config *c);
/* Overwrite c's shape with a preset: bert-base, bert-large, gpt2-small,
 * gpt2-medium, llama-7b. false if the name is unknown. */
bool transformer_preset(const char *name, transformer_config *c);
/* The list of preset names, comma-separated, for messages. */
const char *transformer_preset_names(void);
bool transformer_arch_parse(const char *text, transformer_arch *out);
const char *transformer_arch_name(transformer_arch a);
/* The MLP width a family uses by default for a hidden size (4h, or LLaMA's
 * 256·ceil(8h/3/256)). */
uint64_t transformer_default_ffn(transformer_arch a, uint64_t hidden);
/* SIM_EUSAGE with a message if the shape is inconsistent. */
sim_status transformer_validate(const transformer_config *c, sim_error *err);

/* The usual closed-form estimate (what capacity calculators add up). */
typedef struct transformer_estimate {
    uint64_t params;            /* closed-form parameter count */
    uint64_t weight_bytes;      /* params · e */
    uint64_t grad_bytes;        /* params · e (training) */
    uint64_t optimizer_bytes;   /* params · e · states per parameter (training) */
    uint64_t activation_bytes;  /* L · [sbh(8e+2) + 2e·sbI + a·s²·b(2e+1)] (training, no checkpointing) */
    uint64_t total_bytes;       /* the sum */
} transformer_estimate;
void transformer_estimate_closed_form(const transformer_config *c, transformer_estimate *out);

/* Write the workload's events to o. */
sim_status transformer_generate(const transformer_config *c, synth_out *o, sim_error *err);

/* The parameter tensors, in state_dict order (used by the serving generator to
 * load a model). Returns a heap array of *n entries (free()), or NULL. */
graph_param *transformer_params(const transformer_config *c, uint32_t *n);

#endif
