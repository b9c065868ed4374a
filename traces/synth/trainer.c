#include "trainer.h"

#include <stdio.h>
#include <string.h>

static const trainer_traits TRAINERS[] = {
    {"eager", "plain PyTorch eager: the generator's own rules (traces/synth/README.md)", false, false, false, false,
     false, false, false, 0, "traces/synth/transformer.c and graph.c"},
    {"megatron",
     "Megatron-LM with Transformer Engine as usually launched: --bf16 mixed precision with fp32 main gradients in "
     "one persistent buffer, the distributed optimizer, fused attention and optimizer, sequence parallelism with "
     "tensor parallelism, a fused SwiGLU, the vocabulary padded to a multiple of 128 x tp",
     true, true, true, true, true, true, true, 128,
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
