#include "gpu_context.h"

#include <stdio.h>

#define MIB_ ((uint64_t)1 << 20)

/* Published figures of a PyTorch process's footprint outside the caching allocator
 * with lazy module loading (CUDA >= 11.7; PyTorch sets CUDA_MODULE_LOADING=LAZY
 * itself since 1.13, pytorch/pytorch PR 86509). cuBLAS workspaces are not in
 * these figures: PyTorch allocates them through the caching allocator since
 * pytorch/pytorch PR 85447, so the replayed trace already holds them. Rows are
 * ordered by CUDA major; a generation nobody measured borrows its CUDA major's row. The
 * CUDA 11 row names no card: its generation range is empty. */
static const gpu_context CONTEXTS[] = {
    {11, 1, 0, 287047680ull - 20 * MIB_, "unnamed GPU, PyTorch 1.13 with CUDA 11.7",
     "pytorch/pytorch PR 86509: cudaMemGetInfo total - free = 287,047,680 B after one 6.4 MB tensor, "
     "minus that tensor's 20 MiB caching-allocator segment"},
    {12, 8, 8, 256 * MIB_, "RTX 3090 (cc 8.6), PyTorch 2.7.1+cu128",
     "invoke-ai/InvokeAI issue 9413: nvidia-smi shows a flat 256 MiB for a process that only created its "
     "CUDA context"},
    {13, 8, 8, 426 * MIB_, "RTX 6000 Ada (cc 8.9), PyTorch 2.10.0+cu130",
     "unslothai/unsloth-zoo PR 1053: nvidia-smi shows 426 MiB after torch.cuda.mem_get_info(), "
     "0 B allocated and reserved"},
};

size_t gpu_context_count(void)
{
    return sizeof CONTEXTS / sizeof CONTEXTS[0];
}

const gpu_context *gpu_context_get(size_t i)
{
    return i < gpu_context_count() ? &CONTEXTS[i] : NULL;
}

const gpu_context *gpu_context_find(unsigned cc_major, unsigned cuda_major)
{
    const gpu_context *any = NULL;
    for (size_t i = 0; i < gpu_context_count(); i++) {
        const gpu_context *c = &CONTEXTS[i];
        if (c->cuda_major != cuda_major)
            continue;
        if (gpu_context_measured_for(c, cc_major))
            return c;
        if (any == NULL)
            any = c;
    }
    return any;
}

int gpu_context_measured_for(const gpu_context *c, unsigned cc_major)
{
    return c && cc_major >= c->cc_major_min && cc_major <= c->cc_major_max;
}

uint64_t gpu_context_spread(void)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < gpu_context_count(); i++) {
        lo = CONTEXTS[i].bytes < lo ? CONTEXTS[i].bytes : lo;
        hi = CONTEXTS[i].bytes > hi ? CONTEXTS[i].bytes : hi;
    }
    return hi > lo ? hi - lo : 0;
}

const char *gpu_context_describe(const gpu_context *c, unsigned cc_major, char *buf, size_t cap)
{
    if (gpu_context_measured_for(c, cc_major))
        snprintf(buf, cap, "CUDA %u default, measured on %s", c->cuda_major, c->measured_on);
    else if (cc_major == 0)
        snprintf(buf, cap, "CUDA %u default, measured on %s [estimate: the card's generation is unknown]",
                 c->cuda_major, c->measured_on);
    else
        snprintf(buf, cap, "CUDA %u default, measured on %s [estimate for cc %u.x]", c->cuda_major, c->measured_on,
                 cc_major);
    return buf;
}
