#include "trainer.h"

#include <stdio.h>
#include <string.h>

static const trainer_traits TRAINERS[] = {
    {.name = "eager",
     .summary = "plain PyTorch eager: the generator's own rules (traces/synth/README.md)",
     .sources = "traces/synth/transformer.c and graph.c"},
    {.name = "megatron",
     .summary =
         "Megatron-LM with Transformer Engine as usually launched: --bf16 mixed precision with fp32 main gradients in "
         "one persistent buffer, the distributed optimizer, fused attention and optimizer, sequence parallelism with "
         "tensor parallelism, a fused SwiGLU, the vocabulary padded to a multiple of 128 x tp",
     .mixed = true,
     .flash = true,
     .fused_optimizer = true,
     .main_grads = true,
     .distributed_optimizer = true,
     .sp_with_tp = true,
     .fused_swiglu = true,
     .vocab_divisible = 128,
     .te_dummy_wgrad = true,
     .sources =
         "fp32 main gradients: --accumulate-allreduce-grads-in-fp32 and megatron/core/distributed/"
         "param_and_grad_buffer.py (one contiguous buffer per dtype, made when DDP wraps the model; TE's "
         "weight-gradient "
         "GEMMs accumulate into main_grad); distributed optimizer: --use-distributed-optimizer, "
         "megatron/core/optimizer/"
         "distrib_optimizer.py (fp32 master weights and both Adam moments sharded over the data-parallel ranks, "
         "Rajbhandari et al. 2020 stage 1); fused attention: TE's DotProductAttention (no S x S tensors, the softmax "
         "statistics saved); sequence parallelism: --sequence-parallel (Korthikanti et al. 2022, section 4.2.2); the "
         "1F1B schedule: megatron/core/pipeline_parallel/schedules.py (Narayanan et al. 2021); fused SwiGLU: "
         "megatron/core/fusions/fused_bias_swiglu.py (its autograd function keeps only the fc1 output and recomputes "
         "the activation in backward; on with --swiglu unless --no-bias-swiglu-fusion); vocabulary padding: "
         "megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding (a multiple of "
         "--make-vocab-size-divisible-by, default 128, times the tensor-parallel size); dummy weight gradients: "
         "with gradient-accumulation fusion the backward of TE's Linear, LayerNormLinear and LayerNormMLP hands "
         "autograd a placeholder from transformer_engine/pytorch/module/base.py get_dummy_wgrad, cached per (rows, "
         "cols, dtype) for the life of the process (TE 2.3 and later, as SimuMax's model has it: "
         "simumax/core/config.py te_dummy_wgrad_min_version, model_struct.py te_dummy_wgrad_bytes), so each rank "
         "keeps one bf16 tensor per fused weight shape of a layer (linear_qkv, linear_proj, linear_fc1, linear_fc2); "
         "the output layer is Megatron's own ColumnParallelLinear, whose backward (megatron/core/tensor_parallel/"
         "layers.py, LinearWithGradAccumulationAndAsyncCommunication) returns a fresh torch.empty of the weight's "
         "shape instead, dropped by the DDP hook at once"},
    {.name = "hf",
     .summary =
         "Hugging Face Trainer with transformers 5 and PEFT as usually launched: the checkpoint's dtype for "
         "weights and optimizer states, SDPA attention, the fused AdamW, the loss over the logits upcast to fp32; "
         "LoRA/QLoRA with --lora, per-decoder-layer checkpointing with --recompute=layer",
     .flash = true,
     .fused_optimizer = true,
     .loss_fp32 = true,
     .sources =
         "weights in the checkpoint's dtype: from_pretrained's dtype defaults to \"auto\" in transformers 5 "
         "(modeling_utils.py, the config's dtype), so --dtype=bf16 is pure bf16 with bf16 Adam states; SDPA: "
         "modeling_utils.py _check_and_adjust_attn_implementation picks \"sdpa\" when none is requested (no S x S "
         "tensors on CUDA); fused AdamW: training_args.py, the default optim is adamw_torch_fused from torch 2.8; "
         "loss upcast: loss/loss_utils.py ForCausalLMLoss calls logits.float() before cross_entropy, so a bf16 "
         "model's head holds its logits, their fp32 copy and the fp32 log-softmax at once; gradient checkpointing "
         "per decoder layer: modeling_layers.py GradientCheckpointingLayer (LlamaDecoderLayer and the others "
         "derive from it, use_reentrant=False by default in modeling_utils.py), --recompute=layer; LoRA: "
         "huggingface/peft tuners/lora (the base weights frozen, requires_grad False, so no gradient or optimizer "
         "state; only the adapters are trainable), --lora"},
    /* pytorch/torchtitan b5bcd76c (2026-08-21), read for each rule below */
    {.name = "torchtitan",
     .summary = "torchtitan as its llama3 configurations launch it: FSDP2 fully_shard on the embeddings, on every "
                "block and on norm + output, fp32 shards computing in bf16 with an fp32 reduce-scatter, the "
                "fused AdamW on the shards, SDPA, the loss over the logits upcast to fp32, op-level selective "
                "activation checkpointing (--recompute=op; layer with --recompute-every=N, or full)",
     .flash = true,
     .fused_optimizer = true,
     .loss_fp32 = true,
     .bf16 = true,
     .fsdp2 = true,
     .fsdp_streams = true,
     .recompute = "op",
     .loss_bwd_input = true,
     .sources =
         "FSDP2 units: torchtitan/distributed/fsdp.py apply_fsdp_to_decoder (fully_shard on tok_embeddings, each "
         "transformer block, [norm, lm_head] and the root; the norm/lm_head unit is not resharded after forward "
         "unless the policy is \"always\", since FSDP would gather it again at once; the blocks follow "
         "get_fsdp_reshard_after_forward_policy: \"default\" reshards unless pipeline parallelism is on; before "
         "torchtitan PR 1094 the last block was the one left unsharded); mixed precision: "
         "torchtitan/config/configs.py TrainingConfig, mixed_precision_param bfloat16 and mixed_precision_reduce "
         "float32, applied through MixedPrecisionPolicy even with one shard (models/llama3/parallelize.py calls "
         "apply_fsdp_to_decoder always); all-gather, copy-out and prefetch: torch/distributed/fsdp/_fully_shard/"
         "_fsdp_param_group.py (wait_for_unshard keeps a forward all-gather's buffer until the next one, "
         "backward prefetches the previous unit, post_backward reshards then reduces, reduce_scatter_states "
         "keeps one reduce-scatter input); optimizer: torchtitan/components/optimizer/optimizer.py, "
         "implementation \"fused\" by default; loss: torchtitan/components/loss.py cross_entropy_loss calls "
         "pred.float(), so cross_entropy's backward holds the fp32 log-softmax, its gradient and the gradient "
         "of its input at once (aten log_softmax_backward_data allocates its result); activation checkpointing: the "
         "Trainer's default is SelectiveAC "
         "(torchtitan/trainer.py), whose policy in torchtitan/distributed/activation_checkpoint.py saves "
         "the compute-intensive ops (matmuls, sdpa) except every second mm/linear, counted per block; the "
         "per-layer option (selective_ac_option=N, _apply_layer_sac before torchtitan PR 2357) wraps every N-th "
         "block with the full checkpoint wrapper; FullAC wraps every block;"
         " FSDP's streams: torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_all_gather allocates the "
         "flat all-gather output on the all-gather copy-in stream (FSDPCommContext.get_all_gather_streams: forward and "
         "the implicit backward prefetch), and foreach_reduce allocates each unit's reduce-scatter output on the "
         "reduce-scatter stream, the sharded gradients being views of it, while the reduce-scatter input is on the "
         "default stream since pytorch/pytorch PR 129721 (June 2024, which names the outputs' stream and their "
         "lifetime to the optimizer); the caching allocator pools blocks by stream, so these are memory the default "
         "stream cannot reuse"},
    /* Lightning-AI/litgpt 26857050 (2026-06-29), read for each rule below */
    {.name = "litgpt",
     .summary = "LitGPT's fine-tuning scripts (litgpt finetune full|lora) on one device: bf16-true weights, "
                "gradients and AdamW states, SDPA, the loss chunked by 128 with the logits held through "
                "backward; with --lora the head in chunks of 128 positions too (LoRA on q and v by default)",
     .flash = true,
     .bf16 = true,
     .lm_head_chunk = 128,
     .ce_chunked = true,
     .lora_dropout = true,
     .sources =
         "precision: litgpt/finetune/full.py and lora.py setup() take get_default_supported_precision("
         "training=True) (litgpt/utils.py), \"bf16-true\" on a CUDA card with bf16, Fabric's true-half precision "
         "(weights, gradients and optimizer states in bf16); optimizer: instantiate_torch_optimizer with "
         "\"AdamW\" (torch.optim.AdamW, foreach on CUDA); attention: litgpt/model.py "
         "CausalSelfAttention.scaled_dot_product_attention; chunked head: finetune/lora.py and adapter.py call "
         "model(input_ids, lm_head_chunk_size=128), litgpt/model.py GPT.forward returns a list of per-chunk "
         "logits, held by the loop until its iteration ends; chunked loss: litgpt/utils.py "
         "chunked_cross_entropy (chunk_size=128, a log-softmax per chunk); full fine-tuning: finetune/full.py "
         "calls model(input_ids) and the same chunked loss; LoRA: finetune/lora.py defaults lora_r=8 with "
         "lora_query and lora_value on, the other projections off, lora_dropout 0.05: litgpt/lora.py LoRALinear and "
         "LoRAQKVLinear pass the adapter's input through nn.Dropout before lora_A (one dropout for the fused qkv "
         "projection), so each adapted linear saves a dropout mask and output"},
    /* pytorch/torchtitan 9dec370 (2024-12-26), the version benchmarks/llama3_h100_202412_torchtitan.md ran
     * (with torch 1963fc8 of 2024-12-23); only what differs from the entry above */
    {.name = "torchtitan-2024.12",
     .summary = "torchtitan of December 2024 (9dec370, the version of its H100 benchmarks): as torchtitan, but "
                "the root unit holds the embeddings, norm and output (gathered before the embeddings, kept "
                "unsharded to the end of backward), the last block stays gathered after forward, and AdamW "
                "is foreach",
     .flash = true,
     .loss_fp32 = true,
     .bf16 = true,
     .fsdp2 = true,
     .fsdp_root = true,
     .fsdp_streams = true,
     .recompute = "op",
     .loss_bwd_input = true,
     .sources =
         "FSDP2 units: torchtitan/parallelisms/parallelize_llama.py apply_fsdp at 9dec370 (fully_shard on each "
         "transformer block with reshard_after_forward False for the last one, \"FSDP would prefetch it "
         "immediately\", then fully_shard on the whole model, so tok_embeddings, norm and output are the root's "
         "parameters); the root is never resharded after forward: torch/distributed/_composable/fsdp/"
         "_fsdp_state.py FSDPState._lazy_init of that time sets the root group's post_forward_mesh_info to None; "
         "its post-backward runs in _root_post_backward_final_callback at the end of backward (the root's "
         "forward input, the token ids, needs no gradient), so its unsharded parameters and their bf16 "
         "gradients live through the whole backward and are reduced in one reduce-scatter at the end; "
         "optimizer: torchtitan/optimizer.py build_optimizers passes fused=job_config.optimizer.fused (off "
         "unless --optimizer.fused) and foreach=not fused; loss, mixed precision and the op-level "
         "selective checkpointing policy as in the entry above (train.py loss_fn calls pred.flatten(0, 1)"
         ".float(); parallelize_llama.py _save_list and _custom_policy save every other mm, counted per block, "
         "and sdpa; config_manager.py mixed_precision_param bfloat16, mixed_precision_reduce float32; FSDP's "
         "streams as in the entry above)"},
};

size_t trainer_count(void)
{
    return sizeof TRAINERS / sizeof TRAINERS[0];
}

const trainer_traits *trainer_get(size_t i)
{
    return i < trainer_count() ? &TRAINERS[i] : NULL;
}

const trainer_traits *trainer_find(const char *name)
{
    for (size_t i = 0; i < trainer_count(); i++)
        if (strcmp(TRAINERS[i].name, name) == 0)
            return &TRAINERS[i];
    return NULL;
}

const char *trainer_names(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < trainer_count() && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "|" : "", TRAINERS[i].name);
    return buf;
}
