/* trainer.h — the training programs `synth transformer --trainer` follows: for each,
 * the defaults it gives the transformer generator's options (what its usual launch
 * does to memory) and the sources of each rule. One table; the rules themselves are
 * the generator's (transformer.c, graph.c). Thread-safe: the table is constant. */
#ifndef GPUSIM_SYNTH_TRAINER_H
#define GPUSIM_SYNTH_TRAINER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum transformer_trainer {
    TRAINER_EAGER = 0, /* plain PyTorch eager: the generator's own rules, nothing set */
    TRAINER_MEGATRON = 1
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
    unsigned vocab_divisible;   /* the vocabulary padded to a multiple of this times --tp; 0: as given */
    const char *sources;        /* where each rule comes from */
} trainer_traits;

size_t trainer_count(void);
const trainer_traits *trainer_get(size_t i);
/* By name; NULL if unknown. */
const trainer_traits *trainer_find(const char *name);
/* The names joined by '|' ("eager|megatron") into buf (cap bytes); returns buf. */
const char *trainer_names(char *buf, size_t cap);

#endif
