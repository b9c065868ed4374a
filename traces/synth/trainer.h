/* trainer.h — the training programs `synth transformer --trainer` follows: for each,
 * the defaults it gives the transformer generator's options (what its usual launch
 * does to memory) and the sources of each rule. One table; the rules themselves are
 * the generator's (transformer.c, graph.c). Thread-safe: the table is constant. */
#ifndef GPUSIM_SYNTH_TRAINER_H
#define GPUSIM_SYNTH_TRAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum transformer_trainer {
    TRAINER_EAGER = 0, /* plain PyTorch eager: the generator's own rules, nothing set */
    TRAINER_MEGATRON = 1,
    TRAINER_HF = 2, /* Hugging Face Trainer / PEFT */
    TRAINER_TORCHTITAN = 3,
    TRAINER_LITGPT = 4,
    TRAINER_TORCHTITAN_2412 = 5 /* torchtitan of December 2024 (9dec370) */
} transformer_trainer;

typedef struct trainer_traits {
    const char *name;
    const char *summary; /* one line for --help and the README */
    /* defaults it sets (an explicit option wins) */
    bool mixed;                 /* --precision=mixed: dtype weights, fp32 master weights and states */
    bool flash;                 /* --attention=flash: fused attention */
    bool fused_optimizer;       /* --fused-optimizer */
    bool main_grads;            /* a persistent fp32 gradient buffer (graph.c rule 16) */
    bool distributed_optimizer; /* --zero=1 over the data-parallel ranks */
    bool sp_with_tp;            /* --sp whenever --tp > 1 */
    bool fused_swiglu;          /* SwiGLU saves gate and up only, silu(gate) recomputed */
    bool loss_fp32;             /* the loss over the logits upcast to fp32 first (HF's ForCausalLMLoss) */
    unsigned vocab_divisible;   /* the vocabulary padded to a multiple of this times --tp; 0: as given */
    const char *sources;        /* where each rule comes from */
    /* set by torchtitan and LitGPT only (designated in their entries) */
    bool bf16;              /* --dtype defaults to bf16 */
    bool fsdp2;             /* FSDP2 fully_shard per block, fp32 shards (graph.c rule 17) */
    const char *recompute;  /* --recompute's default; NULL: none */
    uint32_t lm_head_chunk; /* with --lora: the head in chunks of this many positions */
    bool ce_chunked;        /* the loss in chunks, the logits held through backward */
    bool loss_bwd_input;    /* the log-softmax's backward: its input's gradient beside its output's */
    bool lora_dropout;      /* with --lora: a dropout on each adapter's input (fused qkv: one) */
    bool fsdp_root;         /* with fsdp2: embeddings + norm + output the root's unit, the last block kept */
    bool fsdp_streams;      /* with fsdp2: all-gather and reduce-scatter outputs on FSDP's own streams */
    bool te_dummy_wgrad;    /* with main_grads: TE's cached dummy weight gradients (graph.c rule 19) */
} trainer_traits;

size_t trainer_count(void);
const trainer_traits *trainer_get(size_t i);
/* By name; NULL if unknown. */
const trainer_traits *trainer_find(const char *name);
/* The names joined by '|' ("eager|megatron|hf") into buf (cap bytes); returns buf. */
const char *trainer_names(char *buf, size_t cap);

#endif
