/* torch_conf.h — PYTORCH_CUDA_ALLOC_CONF for the `torch` strategy: parses the real
 * `key:value,key:value` syntax into the effective settings of the native caching
 * allocator and rejects what PyTorch rejects, with PyTorch's meaning in the message.
 * It knows nothing of devices or blocks. Also the torch strategy's option table. */

/* The table: alloc_conf (parsed here), memory_fraction (a separate option),
 * torch_version (the release whose rules apply: torch_version.h), platform (CUDA
 * or ROCm, torch_version.h) and torch_fixes (open pull requests applied on top,
 * torch_version.h). */
#ifndef GPUSIM_TORCH_CONF_H
#define GPUSIM_TORCH_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/status.h"
#include "sim/strategy.h"
#include "torch_version.h"

/* The torch strategy's options, described once (strategy_option, sim/strategy.h):
 * the keys torch's create() reads and its options() writes back. The declared size
 * makes a table that disagrees with the count a compile error. */
#define TORCH_CONF_N_OPTIONS 5
extern const strategy_option torch_conf_options[TORCH_CONF_N_OPTIONS];

/* roundup_power2_divisions has one entry per power-of-two interval from 1 MiB
 * (2^20) to 64 GiB (2^36) (c10/core/AllocatorConfig.cpp, kRoundUpPowerOfTwoIntervals). */
#define TORCH_CONF_ROUNDUP_INTERVALS 16u
#define TORCH_CONF_NO_MAX_SPLIT UINT64_MAX /* max_split_size unset: unlimited */

typedef struct torch_conf {
    uint64_t max_split_size_bytes;            /* TORCH_CONF_NO_MAX_SPLIT or MiB·2^20 */
    uint64_t max_non_split_rounding_bytes;    /* default = large_segment_size */
    uint64_t large_segment_size_bytes;        /* default 20 MiB (kLargeBuffer) */
    double garbage_collection_threshold;      /* 0 = off, else in (0, 1) */
    uint32_t roundup_power2_divisions[TORCH_CONF_ROUNDUP_INTERVALS]; /* 0 = off */
    bool expandable_segments;
    double per_process_memory_fraction;       /* < 0: not given (key of 2.10 on) */
    /* Keys PyTorch accepts that change nothing the simulator models. */
    bool release_lock_on_cudamalloc;
    bool throw_on_cudamalloc_oom; /* with a memory fraction: reject before the driver (2.12 on) */
    bool backend_async;       /* backend:cudaMallocAsync: the `async` strategy's, not torch's */
    char ignored[192]; /* comma-separated names of the accepted-but-ignored keys given */
} torch_conf;

/* The defaults PyTorch uses when PYTORCH_CUDA_ALLOC_CONF is unset. */
void torch_conf_defaults(torch_conf *c);

/* Parse text (NULL or "" = defaults) into *c. SIM_EUSAGE with a message naming the
 * key and what PyTorch expects on any key or value PyTorch rejects.
 * backend:cudaMallocAsync sets backend_async: the `torch` strategy refuses it (it is
 * the native backend) and `async` reads it as PyTorch's wiring of CUDA's pool.
 * *c is left with the defaults on error. */
sim_status torch_conf_parse(const char *text, torch_conf *c, sim_error *err);
/* The same as release r parses it: the keys that release knows, its limits and
 * its roundup list rule (torch_version.h). torch_conf_parse is this for main. */
sim_status torch_conf_parse_for(const char *text, const torch_rules *r, torch_conf *c, sim_error *err);

/* The divisions PyTorch uses for a (rounded ≥ 512) size: the entry of interval
 * floor(log2 size) − 20, clamped to [0, 15]. */
uint32_t torch_conf_divisions(const torch_conf *c, uint64_t size);

/* "[1:0,2:0,4:8,...]" (MiB interval starts) into buf; returns buf. */
char *torch_conf_format_divisions(const torch_conf *c, char *buf, uint64_t cap);

#endif
