/* synth_llm.h — the large-language-model options of `gpusim synth transformer`
 * (grouped-query attention, experts, precision, recomputation, LoRA/QLoRA, ZeRO/FSDP,
 * tensor and pipeline parallelism), the meta keys they add, the per-rank traces
 * written to a directory, and the closed forms printed beside the trace's peak. */
#ifndef GPUSIM_CLI_SYNTH_LLM_H
#define GPUSIM_CLI_SYNTH_LLM_H

#include <stdbool.h>

#include "cli.h"
#include "sim/buf.h"
#include "sim/jsonw.h"
#include "traces/synth/transformer.h"
#include "traces/trace.h"

/* clang-format off */
#define SYNTH_LLM_OPTS                                                                                        \
    CLI_OPT("trainer", "eager|megatron|hf|torchtitan|litgpt|torchtitan-2024.12: the training program's defaults (traces/synth/README.md; default eager)"), \
    CLI_OPT("kv-heads", "N: key/value heads, grouped-query attention (default: --heads)"),                    \
    CLI_OPT("head-dim", "N: width of one head (default hidden/heads)"),                                       \
    CLI_OPT("experts", "N: mixture of experts per layer (default 0: a dense MLP)"),                           \
    CLI_OPT("experts-active", "N: experts routed per token (default 2 with --experts)"),                      \
    CLI_OPT("attention", "eager|flash: scores and probabilities materialised, or fused (default: preset's)"), \
    CLI_OPT("precision", "pure|mixed: every tensor in --dtype, or fp32 master weights and states"),           \
    CLI_FLAG("fp8", "fp8 copies of the saved inputs of linear layers (Transformer Engine)"),                  \
    CLI_OPT("recompute", "none|layer|selective|op: activation checkpointing (layer = --checkpointing; op: torchtitan's per-op policy)"), \
    CLI_OPT("recompute-every", "N: with --recompute=layer, checkpoint every N-th block only (torchtitan's selective_ac_option=N)"), \
    CLI_OPT("reduce-dtype", "fp32|bf16: --trainer=torchtitan's reduce-scatter element (default fp32)"), \
    CLI_FLAG("fused-optimizer", "a fused optimizer update, no foreach temporaries (mixed: always)"),          \
    CLI_OPT("lora", "RANK: LoRA adapters of this rank; the base weights are frozen"),                         \
    CLI_OPT("lora-targets", "LIST: q,k,v,o,gate,up,down or attn, mlp, all (default q,v)"),                    \
    CLI_FLAG("qlora", "QLoRA: 4-bit NF4 base weights with double-quantized constants (with --lora)"),         \
    CLI_OPT("zero", "0|1|2|3: ZeRO stage over the data-parallel ranks"),                                      \
    CLI_OPT("fsdp", "full|hybrid: FSDP (ZeRO-3); hybrid shards within --shard-group ranks"),                  \
    CLI_OPT("shard-group", "N: ranks one hybrid FSDP shard spans (default 8)"),                               \
    CLI_OPT("ranks", "N: ranks in the job, data parallel = N/(tp·pp); -o names a directory"),                 \
    CLI_OPT("tp", "N: tensor-parallel degree (default 1)"),                                                   \
    CLI_FLAG("sp", "sequence parallelism with --tp: hidden-sized activations split along the sequence"),      \
    CLI_OPT("pp", "N: pipeline stages, 1F1B (default 1)"),                                                    \
    CLI_OPT("micro-batches", "N: micro-batches per step (default: --pp)"),                                    \
    CLI_OPT("rank", "N: write only this rank's trace to -o FILE"),                                            \
    CLI_OPT("nccl-channels", "N: NCCL channels per communicator for its buffers outside the allocator (default 24)"),                                            \
    CLI_OPT("lifetimes", "eager|graph: PyTorch's, or tf.function's (states at load, each gradient applied at its last use)")
/* clang-format on */

/* Read the options above into c (after the kind's own); SIM_EUSAGE with a message. */
sim_status synth_llm_parse(const cli_args *a, transformer_config *c, sim_error *err);
/* The meta members of the options above, written into the open meta object; nothing
 * for a configuration the older flags could express, so that their traces stay
 * byte-identical. */
void synth_llm_meta(const transformer_config *c, jsonw *meta);
/* Append " rank R/N" to h's name when the job has more than one rank. */
/* The bytes NCCL's buffers take outside the allocator on c's rank (traces/synth/nccl.h); 0
 * for a one-rank job. */
uint64_t synth_llm_nccl_bytes(const transformer_config *c);
void synth_llm_rank_name(const transformer_config *c, trace_header *h);
/* True when -o names a directory of per-rank traces (several ranks, no --rank). */
bool synth_llm_per_rank(const cli_args *a, const transformer_config *c);
/* Write DIR/rank-NNNNN.jsonl for every rank and DIR/job.json listing them; h is
 * the header (its name gets " rank N/R"), meta_head the meta object without its
 * closing brace. Prints a line per rank and rank 0's closed forms unless quiet.
 * Returns the exit status. */
int synth_llm_write_ranks(const char *dir, const trace_header *h, const char *meta_head, uint64_t start,
                          const char *proc, transformer_config *c, bool quiet);
/* The closed forms beside the trace's peak (transformer_explain). */
void synth_llm_print_explain(const transformer_config *c, const synth_stats *s);

#endif
