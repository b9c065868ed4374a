#include "trainer.h"

#include <stdio.h>
#include <string.h>

static const trainer_traits TRAINERS[] = {
    {"eager", "plain PyTorch eager: the generator's own rules (traces/synth/README.md)", false, false, false, false,
     false, false, false, false, 0, "traces/synth/transformer.c and graph.c"},
    {"megatron",
     "Megatron-LM with Transformer Engine as usually launched: --bf16 mixed precision with fp32 main gradients in "
     "one persistent buffer, the distributed optimizer, fused attention and optimizer, sequence parallelism with "
     "tensor parallelism, a fused SwiGLU, the vocabulary padded to a multiple of 128 x tp",
     true, true, true, true, true, true, true, false, 128,
     "fp32 main gradients: --accumulate-allreduce-grads-in-fp32 and megatron/core/distributed/"
     "param_and_grad_buffer.py (one contiguous buffer per dtype, made when DDP wraps the model; TE's weight-gradient "
     "GEMMs accumulate into main_grad); distributed optimizer: --use-distributed-optimizer, megatron/core/optimizer/"
     "distrib_optimizer.py (fp32 master weights and both Adam moments sharded over the data-parallel ranks, "
     "Rajbhandari et al. 2020 stage 1); fused attention: TE's DotProductAttention (no S x S tensors, the softmax "
     "statistics saved); sequence parallelism: --sequence-parallel (Korthikanti et al. 2022, section 4.2.2); the "
     "1F1B schedule: megatron/core/pipeline_parallel/schedules.py (Narayanan et al. 2021); fused SwiGLU: "
     "megatron/core/fusions/fused_bias_swiglu.py (its autograd function keeps only the fc1 output and recomputes "
     "the activation in backward; on with --swiglu unless --no-bias-swiglu-fusion); vocabulary padding: "
     "megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding (a multiple of "
     "--make-vocab-size-divisible-by, default 128, times the tensor-parallel size)"},
    {"hf",
     "Hugging Face Trainer with transformers 5 and PEFT as usually launched: the checkpoint's dtype for "
     "weights and optimizer states, SDPA attention, the fused AdamW, the loss over the logits upcast to fp32; "
     "LoRA/QLoRA with --lora, per-decoder-layer checkpointing with --recompute=layer",
     false, true, true, false, false, false, false, true, 0,
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
