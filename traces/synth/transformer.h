/* transformer.h — synthetic trace of transformer training steps (or inference passes)
 * built from the model's shape: every parameter, gradient, optimizer state, saved
 * activation and temporary as its own allocation, in the order PyTorch eager allocates
 * them. */

/* The memory model is written out in transformer.c and traces/synth/README.md. Three
 * families: BERT (post-LN encoder, learned positions, pooler, tied MLM projection),
 * GPT-2 (pre-LN decoder, tied LM head), LLaMA (RMSNorm, SwiGLU, rotary, no biases,
 * untied LM head). */
#ifndef GPUSIM_SYNTH_TRANSFORMER_H
#define GPUSIM_SYNTH_TRANSFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/buf.h"
#include "sim/status.h"
#include "graph.h"
#include "synth.h"

typedef enum transformer_arch { TRANSFORMER_BERT = 0, TRANSFORMER_GPT2 = 1, TRANSFORMER_LLAMA = 2 } transformer_arch;

typedef enum transformer_precision {
    TRANSFORMER_PURE = 0,  /* every tensor in dtype (weights, grads, states, activations) */
    TRANSFORMER_MIXED = 1  /* dtype weights, grads, activations; fp32 master weights and states */
} transformer_precision;

/* LoRA target projections (bit set). */
enum { LORA_Q = 1, LORA_K = 2, LORA_V = 4, LORA_O = 8, LORA_GATE = 16, LORA_UP = 32, LORA_DOWN = 64 };

typedef struct transformer_config {
    transformer_arch arch;
    uint64_t layers, hidden, heads, ffn; /* ffn = MLP inner width (per expert) */
    uint64_t vocab, max_pos, type_vocab; /* max_pos: learned position table (not LLaMA) */
    uint64_t seq, batch;
    synth_dtype dtype;                   /* every tensor: weights, grads, states, activations */
    synth_optimizer optimizer;
    uint64_t steps;                      /* training steps, or forward passes for inference */
    bool checkpointing;                  /* keep only layer outputs, recompute in backward */
    bool inference;                      /* forward only, no grads, no optimizer */
    bool keep_live;                      /* leave weights and optimizer states allocated at the end */
    uint64_t seed;                       /* jitter of the op durations (sizes never depend on it) */
    /* The llama family's variants (all zero: the original LLaMA layer). */
    uint64_t kv_heads;                   /* 0 = heads; fewer: grouped-query attention */
    uint64_t head_dim;                   /* 0 = hidden / heads (Qwen3 sets 128) */
    uint64_t experts, experts_active;    /* mixture of experts: 0 = a dense MLP */
    bool tied;                           /* lm_head shares embed_tokens (small Qwen models) */
    bool qkv_bias;                       /* Qwen2: biases on q, k and v */
    bool qk_norm;                        /* Qwen3: RMSNorm of q and k over head_dim */
    bool flash;                          /* fused attention: no A·S² tensors, logsumexp saved */
    /* Precision and memory savings (all zero: today's pure-dtype step). */
    transformer_precision precision;
    bool fp8;                            /* fp8 copies of the linear layers' saved inputs */
    bool selective;                      /* recompute the attention core (A·S² tensors) in backward */
    bool fused;                          /* fused optimizer: no foreach temporaries */
    uint64_t lora_rank;                  /* LoRA adapters of this rank; 0 = full fine-tuning */
    uint32_t lora_targets;               /* LORA_* bits (default q and v) */
    bool qlora;                          /* base weights NF4 with double-quantized constants */
    /* Parallelism: ranks = dp · tp · pp; this trace is rank `rank`. */
    uint32_t zero;                       /* 0..3; FSDP full shard is 3 */
    uint64_t dp, tp, pp;                 /* 0 = 1 */
    bool sp;                             /* sequence parallelism with tp (Korthikanti et al. 2022) */
    uint64_t shard;                      /* ranks the ZeRO states are sharded over (FSDP hybrid); 0 = dp */
    uint64_t micro_batches;              /* per step (gradient accumulation, pipeline); 0 = 1 */
    uint64_t rank;                       /* tp fastest, then dp, then pp stage (Megatron's order) */
    /* --lifetimes=graph: tf.function's lifetimes (graph.c rule 15): states at load, each
     * gradient applied by a fused update and freed at its last use in backward */
    bool graph_lifetimes;
    /* Megatron-LM's fp32 main gradients: one persistent buffer of 4 bytes per trainable
     * parameter from the load, accumulated into in place (graph.c rule 16) */
    bool main_grads;
    /* a fused SwiGLU that saves only its input (gate and up) and recomputes silu(gate) in
     * backward (Megatron-LM's bias_swiglu_impl) */
    bool fused_swiglu;
    /* the loss upcasts the logits to fp32 first (HF's ForCausalLMLoss): with a 2-byte dtype
     * the head holds the logits, an fp32 copy and an fp32 log-softmax */
    bool loss_fp32;
    /* the log-softmax's backward holds the gradient of its input (the logits' fp32 copy) beside
     * the gradient of its output and the saved output (--trainer=torchtitan) */
    bool loss_bwd_input;
    /* torchtitan's FSDP2 (graph.c rule 17, with zero 3): fully_shard per segment, fp32
     * parameter shards, compute in dtype, the reduce-scatter in reduce_bytes per element
     * (4: fp32, torchtitan's default reduce_dtype), the unsharded layers freed after
     * forward unless pipelined (torchtitan's "default" reshard policy) */
    bool fsdp2;
    uint32_t reduce_bytes;
    /* with fsdp2, torchtitan of December 2024 (9dec370): the embeddings, norm and output are
     * the root's unit, gathered before the embeddings and kept to the end of backward; the
     * last block is not resharded after forward (graph.c rule 17, fsdp_root) */
    bool fsdp_root;
    /* with fsdp2: the all-gather buffers on FSDP's all-gather copy-in stream (1) and each unit's
     * reduce-scatter output, whose views are the gradient shards, on its reduce-scatter stream (2),
     * so the caching allocator keeps them in pools of their own (graph.c rule 17) */
    bool fsdp_streams;
    /* with main_grads, Megatron-LM's TE layers: one cached dummy weight gradient per fused
     * weight shape (q/k/v, o, gate/up, down), allocated in the first backward and kept
     * (graph.c rule 19) */
    bool te_dummy_wgrad;
    /* torchtitan's op-level selective checkpointing (graph.c rule 18): with checkpointing,
     * a block keeps its input and the outputs of sdpa and of every other matmul (the
     * 1st, 3rd, 5th, 7th: q, v, gate, down) and recomputes the rest */
    bool sac_op;
    /* with checkpointing: only every N-th block (torchtitan's selective_ac_option=N); 0: all */
    uint32_t ckpt_every;
    /* LitGPT's head: lm_head_chunk > 0 computes the logits in chunks of that many positions
     * kept in a list through backward, the loss chunked too (finetune/lora.py, adapter.py);
     * ce_chunked alone keeps whole logits and chunks the loss (finetune/full.py) */
    uint32_t lm_head_chunk;
    bool ce_chunked;
    /* LitGPT's LoRA dropout (lora_dropout 0.05 in finetune/lora.py): each adapter's input
     * goes through a dropout whose mask and output are saved, one for the fused qkv
     * projection and one per other adapted linear */
    bool lora_dropout;
    const char *trainer; /* --trainer's name (static), NULL for eager */
    /* NCCL channels per communicator for the buffers outside the allocator a rank of a
     * multi-rank job holds (nccl.h; 0: none recorded) */
    uint32_t nccl_channels;
} transformer_config;

/* gpt2-small shapes, fp32, Adam, one training step. */
void transformer_defaults(transformer_config *c);
/* Overwrite c's shape with a preset (transformer_presets.c, each with its source):
 * bert-base, bert-large, gpt2-small, gpt2-medium, llama-7b, llama2-7b, llama2-13b,
 * llama2-70b, llama3-8b, llama3-70b, mistral-7b, mixtral-8x7b, qwen2-0.5b,
 * qwen2-1.5b, qwen2-7b, qwen2-72b, qwen3-0.6b, qwen3-8b, qwen3-32b. false if the
 * name is unknown. */
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

/* One rank's share of the shape (tensor-parallel widths, pipeline stage). */
typedef struct transformer_dims {
    uint64_t tp, pp, dp, shard;            /* degrees (≥ 1) */
    uint64_t tp_rank, dp_rank, stage;      /* this rank's coordinates */
    uint64_t h, hd;                        /* hidden, head_dim */
    uint64_t A, G, qd, kd, I, V;           /* per rank: heads, KV heads, q and k/v widths, MLP width, vocabulary */
    uint64_t E, k;                         /* experts (0 dense) and routed per token (1 dense) */
    uint64_t sq;                           /* the sequence's split of hidden-sized activations (tp with sp, else 1) */
    uint64_t l0, nl;                       /* first layer of the stage, layers on it */
    bool embed, head;                      /* the stage holds the embeddings / the head */
} transformer_dims;
void transformer_dims_of(const transformer_config *c, transformer_dims *d);

/* A LoRA target list "q,v", "all", "attn" or "mlp" into LORA_* bits; false if unknown. */
bool transformer_lora_parse(const char *text, uint32_t *out);
/* Ranks of the job: dp · tp · pp (each 0 counted as 1). */
uint64_t transformer_ranks(const transformer_config *c);
/* True when c uses anything the BERT/GPT-2/LLaMA generator of the first release could
 * not express (grouped-query attention, experts, mixed precision, LoRA, sharding, ...):
 * such traces record it in their meta; the others stay byte-identical. */
bool transformer_beyond_classic(const transformer_config *c);

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

/* The closed form of one rank's peak, by phase (transformer_estimate.c): during
 * forward/backward (weights, states if they exist then, the saved activations of
 * the micro-batches in flight, the head's log-softmax and its gradient, gathered
 * ZeRO-3 units) and in the optimizer step (weights, gradients, states, the
 * optimizer's temporaries). The trace's peak is the larger of the two. */
typedef struct transformer_phase {
    uint64_t weights, grads, optimizer, activations, temporaries, gathered;
    uint64_t total;
} transformer_phase;
typedef struct transformer_rank_estimate {
    uint64_t params;            /* the whole model (closed form, every rank together) */
    uint64_t trainable;         /* parameters with gradients (LoRA: the adapters) */
    uint64_t local_params;      /* on this rank after tensor and pipeline splits */
    transformer_phase fwd_bwd, optimizer;
    uint64_t peak;              /* max of the two totals */
    bool peak_in_optimizer;
} transformer_rank_estimate;
void transformer_estimate_rank(const transformer_config *c, transformer_rank_estimate *out);

/* graph.c rule 19: the bytes of Transformer Engine's cached dummy weight gradients on this
 * rank (one per fused weight shape of a layer; 0 unless te_dummy_wgrad with main_grads) */
uint64_t transformer_te_dummy_bytes(const transformer_config *c);
/* The closed forms beside a trace's peak s (what the CLI prints): this rank's
 * closed form by phase, the trace's bytes by category at its peak, and the usual
 * sum against them term by term with the reason for each difference. */
void transformer_explain(const transformer_config *c, const synth_stats *s, sim_buf *b);
/* Ψ model-state bytes per device of the ZeRO paper (Rajbhandari et al. 2020, §5):
 * (2 + 2 + k)Ψ at stage 0, 2Ψ + 2Ψ + kΨ/d at 1, 2Ψ + (2 + k)Ψ/d at 2, (2 + 2 + k)Ψ/d at 3. */
uint64_t transformer_zero_model_states(uint64_t psi, uint64_t k, uint64_t d, uint32_t stage);

/* Write the workload's events to o. */
sim_status transformer_generate(const transformer_config *c, synth_out *o, sim_error *err);

/* The parameter tensors, in state_dict order (used by the serving generator to
 * load a model). Returns a heap array of *n entries (free()), or NULL. */
graph_param *transformer_params(const transformer_config *c, uint32_t *n);

#endif
