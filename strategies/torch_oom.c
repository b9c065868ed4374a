/* The `torch` strategy's out-of-memory report: the figures of strategy_oom and
 * PyTorch's OutOfMemoryError text, by release (docs/allocators.md §2.7, §2.15). */
#include <stdio.h>

#include "sim/units.h"

#include "torch_freeset.h"
#include "torch_segments.h"
#include "torch_types.h"

void torch_fill_oom(strategy *s, uint64_t size, uint64_t alloc_size, strategy_oom *oom)
{
    uint64_t allocated = (uint64_t)stat_of(s->st.allocated_bytes, ST_ALL).current;
    uint64_t reserved = reserved_now(s);
    uint64_t dev_free = device_free_bytes(s->dev);
    uint64_t limit = s->capacity_bytes > s->context_bytes ? s->capacity_bytes - s->context_bytes : 0;
    if (s->set_fraction)
        limit = u64_min(limit, s->allowed_bytes);
    *oom = (strategy_oom){
        .size_bytes = size,
        .free_bytes = torch_free_bytes(s),
        .largest_free_bytes = torch_largest_free(s),
        .reserved_bytes = reserved,
        .device_free_bytes = dev_free,
        .usable_bytes = limit, /* design.md §3: min(capacity − context, fraction cap) */
    };
    /* "allocated in private pools" is what PyTorch's message sums over the free sets of
     * every private pool (2.6 lines 1283-1304): cached, not handed out, yet counted as
     * allocated and taken off the unallocated figure */
    uint64_t in_pools = 0;
    for (uint32_t i = 1; i < s->n_pairs; i++)
        in_pools += torch_fs_bytes(&s->pairs[i]->fs[POOL_SMALL]) + torch_fs_bytes(&s->pairs[i]->fs[POOL_LARGE]);
    char a[32], c[32], f[32], u[32], al[32], r[32], pp[32], allowed[64] = "", pools[96] = "";
    if (in_pools > 0)
        snprintf(pools, sizeof pools, "with %s allocated in private pools (e.g., CUDA Graphs), ",
                 units_format_c10(in_pools, pp, sizeof pp));
    if (s->set_fraction && s->rules.oom_names_allowed)
        snprintf(allowed, sizeof allowed, "%s allowed; ", units_format_c10(s->allowed_bytes, a, sizeof a));
    /* PyTorch's OutOfMemoryError text (c10/cuda/CUDACachingAllocator.cpp, malloc). It
     * names the segment size (alloc_size), not the rounded request; "this process has"
     * is what NVML reports for the process, its reserved memory and its context. NVML's
     * lines for the other processes on the device ("Process N has ...") need their
     * PIDs, which a trace does not have. The advice by release (§2.15): 2.1-2.9
     * PYTORCH_CUDA_ALLOC_CONF, as 2.6; 2.10 PYTORCH_ALLOC_CONF; 2.11 on
     * PYTORCH_CUDA_ALLOC_CONF and the docs.pytorch.org section; 2.14 on none when
     * expandable segments are on. */
    const torch_rules *rl = &s->rules;
    char advice[320] = "";
    if (!(rl->oom_advice_only_without_expandable && s->conf.expandable_segments)) {
        bool cuda_name = rl->oom_links_cuda_alloc_conf_section || !rl->oom_advises_pytorch_alloc_conf;
        snprintf(advice, sizeof advice,
                 " If reserved but unallocated memory is large try setting %s=expandable_segments:True to avoid "
                 "fragmentation.  See documentation for Memory Management  (%s)",
                 rl->oom_advises_hip_alloc_conf ? "PYTORCH_HIP_ALLOC_CONF"
                 : cuda_name                    ? "PYTORCH_CUDA_ALLOC_CONF"
                                                : "PYTORCH_ALLOC_CONF",
                 rl->oom_links_cuda_alloc_conf_section
                     ? "https://docs.pytorch.org/docs/stable/notes/"
                       "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf"
                     : "https://pytorch.org/docs/stable/notes/cuda.html#environment-variables");
    }
    /* a ROCm build: "HIP", and no NVML line (§2.15, platforms) */
    char process[96] = "";
    if (!rl->oom_hip)
        snprintf(process, sizeof process, "Including non-PyTorch memory, this process has %s memory in use. ",
                 units_format_c10(reserved + s->context_bytes, u, sizeof u));
    snprintf(oom->detail, sizeof oom->detail,
             "%s out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which %s is free. "
             "%s%sOf the allocated memory %s is allocated by PyTorch, %sand %s is reserved by PyTorch but "
             "unallocated.%s",
             rl->oom_hip ? "HIP" : "CUDA", units_format_c10(alloc_size, a, sizeof a),
             units_format_c10(s->capacity_bytes, c, sizeof c), units_format_c10(dev_free, f, sizeof f), process,
             allowed, units_format_c10(allocated + in_pools, al, sizeof al), pools,
             units_format_c10(reserved - allocated - in_pools, r, sizeof r), advice);
}
