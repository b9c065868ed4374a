/* torch_version.h — the PyTorch release the `torch` strategy follows
 * (--torch-version=X.Y, option `torch_version`): every rule of the native caching
 * allocator that changed between releases 2.1 and 2.14 and main, as one set of
 * switches, each with the release it changed in (docs/allocators.md §2.15). The
 * default is the newest release checked against its shipped wheel, 2.14; main has
 * every rule of 2.14 (no later change is modelled). Also the platform (option
 * platform: CUDA, or ROCm, whose rules are modelled from source and reports, NOT
 * checked against a binary) and the open pull requests that fix known bugs (option
 * torch_fixes). Knows nothing of blocks or devices. */
#ifndef GPUSIM_TORCH_VERSION_H
#define GPUSIM_TORCH_VERSION_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/status.h"

#define TORCH_VERSION_MAIN 99u /* minor number standing for main */
#define TORCH_VERSION_OLDEST 1u /* 2.1 */
#define TORCH_VERSION_NEWEST_RELEASE 14u /* 2.14 */
#define TORCH_VERSION_DEFAULT 14u /* 2.14: no torch_version given */

/* The build the rules are of (option platform): a CUDA wheel, or a ROCm one (HIP,
 * hipified from the same source), ROCm 7 or later, or ROCm 6. The ROCm rules are
 * modelled from the source and public reports, not checked against a binary: no
 * ROCm wheel runs on validate/'s mock CUDA. */
typedef enum torch_platform { TORCH_PLATFORM_CUDA = 0, TORCH_PLATFORM_ROCM = 1, TORCH_PLATFORM_ROCM6 = 2 } torch_platform;

typedef struct torch_rules {
    unsigned minor; /* 2.minor, or TORCH_VERSION_MAIN */
    torch_platform platform;
    /* expandable_segments:True takes effect (CUDA; ROCm 7 from 2.12 on); else it is
     * ignored, as PyTorch warns "not supported on this platform" and runs without */
    bool expandable_supported;
    /* the OOM message of a ROCm build: "HIP out of memory.", and no NVML line
     * ("Including non-PyTorch memory, this process has ... in use.") */
    bool oom_hip;
    /* the OOM advice of a ROCm build up to 2.8 names PYTORCH_HIP_ALLOC_CONF */
    bool oom_advises_hip_alloc_conf;
    /* roundup_power2_divisions list: '>' fills the entries after the last key
     * (2.10 on) rather than from the last key's own entry (2.1-2.9) */
    bool roundup_gt_after_last;
    /* a division count of 1 rounds to 512 B (2.4 on); 2.1-2.3 left the size as
     * requested */
    bool single_division_rounds_512;
    /* keys that exist */
    bool key_expandable_segments;          /* 2.1 on */
    bool key_max_non_split_rounding_mb;    /* 2.6 on */
    bool key_graph_capture_record_stream_reuse; /* 2.9 on */
    bool key_pinned_reserve_segment_size_mb;    /* 2.10 on */
    bool key_per_process_memory_fraction;  /* 2.10 on */
    bool key_large_segment_size_mb;        /* 2.11 on */
    bool key_throw_on_oom_and_pinned_catch_all; /* throw_on_cudamalloc_oom, pinned_free_catch_all: 2.12 on */
    bool key_pinned_max_round_and_cached; /* pinned_max_round_threshold_mb, pinned_max_cached_size_mb: 2.13 on */
    /* max_split_size_mb and max_non_split_rounding_mb may equal 20 (2.9 on);
     * 2.1-2.8 require more than 20 */
    bool mb_minimum_inclusive;
    /* the OOM message advises PYTORCH_ALLOC_CONF=expandable_segments:True (2.10
     * on, measured on the wheels); 2.1-2.9 name PYTORCH_CUDA_ALLOC_CONF */
    bool oom_advises_pytorch_alloc_conf;
    /* the OOM advice names PYTORCH_CUDA_ALLOC_CONF again and links the notes'
     * "optimizing-memory-usage-with-pytorch-cuda-alloc-conf" section on
     * docs.pytorch.org (2.11 on; overrides oom_advises_pytorch_alloc_conf) */
    bool oom_links_cuda_alloc_conf_section;
    /* no expandable_segments advice when expandable segments are on (2.14 on):
     * the message ends after "... reserved by PyTorch but unallocated." */
    bool oom_advice_only_without_expandable;
    /* a memory fraction of exactly 1.0 is no limit (2.10 on): no "allowed" cap, no
     * garbage collection against it, no "X allowed; " in the OOM message */
    bool fraction_one_is_no_limit;
    /* the OOM message names the fraction's cap, "X allowed; " (2.5 on, measured on the
     * wheels; 2.4.1 does not) */
    bool oom_names_allowed;
    /* a fraction given as the per_process_memory_fraction key caps at f × total
     * rounded to the nearest byte (2.13 on, measured on the wheels); before, and for
     * set_per_process_memory_fraction in every release, truncated */
    bool fraction_key_rounds;
    /* free blocks of equal stream and size are ordered by a number each block takes
     * when it is constructed, oldest first, instead of by address (2.12 only: a
     * split's handed-out part is a new block, a merged free block keeps its own
     * number) */
    bool tie_by_creation;
    /* capture-only behaviour (no event polled at malloc, deferred frees parked, no
     * cache release in the out-of-memory ladder) applies where a CUDA graph capture is
     * running on the current stream (is_capture_context of pytorch/pytorch#175374: a
     * markCaptureBegin count and the stream's capture status), not wherever a pool
     * scope is open: a use_mem_pool scope is no capture, nor is an allocation on a
     * stream that is not capturing (2.13 on; 2.6-2.12: captures_underway non-empty) */
    bool capture_context_by_stream;
    /* MemPool(use_on_oom=True): when the first cudaMalloc of a default-pool request
     * fails, a free block of a use_on_oom pool is taken before any cache is released
     * (try_mempool_fallback; 2.8 on) */
    bool pool_use_on_oom;
    /* where the ladder tries it: right after the first cudaMalloc (2.11 on); after the
     * last rung, release_cached_blocks and its cudaMalloc (2.8-2.10) */
    bool use_on_oom_before_release;
    /* MemPool(no_split=True): blocks of the pool are never split (should_split;
     * 2.10 on) */
    bool pool_no_split;
    /* Open pull requests that fix known allocator bugs, off unless asked for
     * (option torch_fixes; no release has them): */
    /* pytorch/pytorch#191302 (issue #189504): after the synchronize and release of
     * the ladder's last rung, search the pool again before the last cudaMalloc, so a
     * deferred free that the synchronize completed can serve the request */
    bool fix_research_after_release;
    /* pytorch/pytorch#193400 (issue #123548): get_free_block skips the max_split_size
     * oversize rules for a block of an expandable segment */
    bool fix_expandable_ignores_max_split;
} torch_rules;

/* The rules of text ("2.1" ... "2.14", "main"; NULL or "" = 2.14) into *out.
 * SIM_EUSAGE naming the releases modelled for anything else. */
sim_status torch_version_parse(const char *text, torch_rules *out, sim_error *err);

/* "2.6" or "main" into buf; returns buf. */
char *torch_version_format(const torch_rules *r, char *buf, size_t cap);

/* The platform of text into *r ("cuda", NULL or "" for cuda; "rocm" = ROCm 7 or
 * later; "rocm6"), and the rules that depend on it with the release (call after
 * torch_version_parse). SIM_EUSAGE for anything else. */
sim_status torch_platform_parse(const char *text, torch_rules *r, sim_error *err);

/* "cuda", "rocm" or "rocm6". */
const char *torch_platform_name(const torch_rules *r);

/* The fixes of text into *r ("none", NULL or "" for none; else pull request
 * numbers separated by commas: "191302", "193400" or both). SIM_EUSAGE naming the
 * fixes modelled for anything else. */
sim_status torch_fixes_parse(const char *text, torch_rules *r, sim_error *err);

/* The fixes on, as torch_fixes_parse reads them ("none" or "191302,193400"), into
 * buf; returns buf. */
char *torch_fixes_format(const torch_rules *r, char *buf, size_t cap);

#endif
