/* The PyTorch releases the `torch` strategy models, and the rules that changed
 * between them (docs/allocators.md §2.15 cites each change: the pull request and
 * the first release that has it). Release 2.6 is checked against PyTorch's own
 * code by validate/upstream; the others follow the cited changes. */
#include "torch_version.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static torch_rules rules_for(unsigned minor)
{
    return (torch_rules){
        .minor = minor,
        /* pytorch/pytorch#165304 (merged 2025-10-19, after 2.9.0): '>' starts one
         * entry after the last key */
        .roundup_gt_after_last = minor >= 10,
        /* pytorch/pytorch#126830 (May 2024): one division rounds to 512 B */
        .single_division_rounds_512 = minor >= 4,
        /* expandable segments: first released in 2.1 */
        .key_expandable_segments = minor >= 1,
        /* pytorch/pytorch#136174 (September 2024): max_non_split_rounding_mb */
        .key_max_non_split_rounding_mb = minor >= 6,
        /* wheels: the 2.7.1 allocator refuses both ("Unrecognized CachingAllocator
         * option"); the key lists of the headers (CUDAAllocatorConfig.h) have
         * graph_capture_record_stream_reuse from 2.9.1, pinned_reserve_segment_size_mb
         * from 2.10.0 (gpusim had both from 2.7, a guess from 2.6 and main) */
        .key_graph_capture_record_stream_reuse = minor >= 9,
        .key_pinned_reserve_segment_size_mb = minor >= 10,
        /* pytorch/pytorch#161035 (August-September 2025) */
        .key_per_process_memory_fraction = minor >= 10,
        /* pytorch/pytorch#172056 (January 2026) */
        .key_large_segment_size_mb = minor >= 11,
        /* pytorch/pytorch#179473 (April 2026, reland of #177356): throw_on_cudamalloc_oom;
         * pinned_free_catch_all beside it: both in the 2.12.1 wheel's key list, not 2.11.0's */
        .key_throw_on_oom_and_pinned_catch_all = minor >= 12,
        /* pinned (host) memory keys: in the 2.13.0 headers (AllocatorConfig.h) and
         * libraries, not 2.12.1's */
        .key_pinned_max_round_and_cached = minor >= 13,
        /* c10/core/AllocatorConfig (pytorch/pytorch#150312, 2025) checks >= the
         * minimum; 2.6's CUDAAllocatorConfig::parseMaxSplitSize checks > */
        .mb_minimum_inclusive = minor >= 9,
        /* PYTORCH_ALLOC_CONF is read from 2.9 on (c10/core/AllocatorConfig), but
         * the OOM advice names it in 2.10 only: the 2.9.1 wheel still says
         * PYTORCH_CUDA_ALLOC_CONF, 2.10.0's PYTORCH_ALLOC_CONF */
        .oom_advises_pytorch_alloc_conf = minor >= 10,
        /* The shipped wheels (validate/upstream/torch/check-releases.sh) place the
         * next three: the first release whose wheel has it, the one before not.
         * pytorch/pytorch#172327 (January 2026): in 2.11.0, not 2.10.0 */
        .oom_links_cuda_alloc_conf_section = minor >= 11,
        /* pytorch/pytorch#191105 (July 2026, issue #173049): in 2.14.1, not 2.13.0 */
        .oom_advice_only_without_expandable = minor >= 14,
        /* in 2.10.0, not 2.9.1; the release of pytorch/pytorch#161035, which made
         * the fraction an allocator setting (per_process_memory_fraction) */
        .fraction_one_is_no_limit = minor >= 10,
        /* wheels: 2.4.1's message has no "X allowed; " (11 runs differed in it), 2.5.1's
         * and 2.6.0's have it; issue pytorch/pytorch#111363 asked for it */
        .oom_names_allowed = minor >= 5,
        /* wheels: per_process_memory_fraction:0.8 on a 4 GiB card caps at 3435973837 B
         * in 2.13.0 and 2.14.1, 3435973836 in 2.12.1 (0.7: 3006477107 in all) */
        .fraction_key_rounds = minor >= 13,
        /* pytorch/pytorch#178362 (March 2026) ordered every pool's free blocks by a
         * counter taken in the Block constructor; pytorch/pytorch#182929 (May 2026)
         * kept that for NCCL's private pools only, and #183591 replaced it by the
         * segment's creation order. Wheels: 2.12.0 and 2.12.1 have it, 2.11.0 and
         * 2.13.0 not */
        .tie_by_creation = minor == 12,
        /* pytorch/pytorch#175374 (merged May 2026, issue #175015): markCaptureBegin in
         * the 2.13.0 and 2.14.1 headers, not 2.12.1's; the 2.14.1 wheel agrees on the
         * upstream differential's pool traces with it (validate/upstream/torch) */
        .capture_context_by_stream = minor >= 13,
        /* setUseOnOOM in the 2.8.0 headers, not 2.7.1's; setNoSplit in 2.10.0's, not
         * 2.9.1's. Both agree with the 2.14.1 wheel on the pool traces that set them */
        .pool_use_on_oom = minor >= 8,
        /* wheels: 2.8.0 to 2.10.0 disagree on a use_on_oom trace (p011) with the fallback
         * first and agree with it last (one more retry and synchronize in PyTorch);
         * 2.11.0, whose setUseOnOOM takes the flag, and later agree with it first */
        .use_on_oom_before_release = minor >= 11,
        .pool_no_split = minor >= 10,
        /* CUDA; torch_platform_parse sets the platform's rules */
        .platform = TORCH_PLATFORM_CUDA,
        .expandable_supported = true,
    };
}

/* The platforms (torch_platform order) and the rules that depend on them with the
 * release (docs/allocators.md §2.15, "Platforms"). */
static const char *const PLATFORM_NAMES[] = {"cuda", "rocm", "rocm6"};

static void platform_rules(torch_rules *r, torch_platform p)
{
    r->platform = p;
    /* CUDA: every release modelled (2.1 on). ROCm: pytorch/pytorch#177974 (March
     * 2026, reland of #173330) brought expandable segments to ROCm, in 2.12; and
     * #179930 (April 2026) gates them on ROCM_VERSION >= 70000 (the 2.12.1 wheel's
     * CUDAAllocatorConfig.h::expandable_segments returns false, with a warning, on
     * ROCm < 7.0; 2.11.0's whenever the driver API is not compiled in) */
    r->expandable_supported = p == TORCH_PLATFORM_CUDA || (p == TORCH_PLATFORM_ROCM && r->minor >= 12);
    /* hipify turns the message's "CUDA" into "HIP"; no NVML on ROCm [reported: every
     * ROCm OOM message seen lacks the line] */
    r->oom_hip = p != TORCH_PLATFORM_CUDA;
    /* [reported] ROCm messages of 2024-2025 (2.4 to 2.8) name PYTORCH_HIP_ALLOC_CONF;
     * the 2.9 test logs of ROCm/TheRock#2118 name PYTORCH_CUDA_ALLOC_CONF */
    r->oom_advises_hip_alloc_conf = p != TORCH_PLATFORM_CUDA && r->minor <= 8;
}

sim_status torch_platform_parse(const char *text, torch_rules *r, sim_error *err)
{
    torch_platform p = TORCH_PLATFORM_CUDA;
    if (text != NULL && *text != '\0') {
        size_t i = 0;
        while (i < sizeof PLATFORM_NAMES / sizeof PLATFORM_NAMES[0] && strcmp(text, PLATFORM_NAMES[i]) != 0)
            i++;
        if (i == sizeof PLATFORM_NAMES / sizeof PLATFORM_NAMES[0])
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "platform: '%s' is not a modelled platform (cuda, rocm for ROCm 7 or later, rocm6)",
                                 text);
        p = (torch_platform)i;
    }
    platform_rules(r, p);
    return SIM_OK;
}

const char *torch_platform_name(const torch_rules *r)
{
    return PLATFORM_NAMES[r->platform];
}

/* Digits at *p into *v (at most 3, no leading zero); advances *p. False when none. */
static bool take_number(const char **p, unsigned *v)
{
    unsigned n = 0, digits = 0;
    if (**p == '0' && (*p)[1] >= '0' && (*p)[1] <= '9')
        return false; /* no leading zeros */
    while (**p >= '0' && **p <= '9' && digits < 3) {
        n = n * 10u + (unsigned)(**p - '0');
        (*p)++;
        digits++;
    }
    *v = n;
    return digits > 0 && !(**p >= '0' && **p <= '9');
}

sim_status torch_version_parse(const char *text, torch_rules *out, sim_error *err)
{
    if (text == NULL || *text == '\0') {
        *out = rules_for(TORCH_VERSION_DEFAULT);
        return SIM_OK;
    }
    if (strcmp(text, "main") == 0) {
        *out = rules_for(TORCH_VERSION_MAIN);
        return SIM_OK;
    }
    /* "2.6", or a full version string as torch.__version__ prints it
     * ("2.6.0", "2.6.0+cu124", "2.6.0a0+git1eba9b3"): the minor version decides */
    const char *p = text;
    unsigned minor = 0, patch = 0;
    bool ok = strncmp(p, "2.", 2) == 0;
    if (ok) {
        p += 2;
        ok = take_number(&p, &minor) && minor >= TORCH_VERSION_OLDEST && minor <= TORCH_VERSION_NEWEST_RELEASE;
    }
    if (ok && *p == '.') {
        p++;
        ok = take_number(&p, &patch);
        if (ok && *p != '\0')
            ok = *p == '+' || *p == 'a' || *p == 'b' || *p == 'r' || *p == '.';
    } else if (ok) {
        ok = *p == '\0';
    }
    if (!ok)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "torch_version: '%s' is not a modelled PyTorch release (2.1 to 2.14, or main)", text);
    *out = rules_for(minor);
    return SIM_OK;
}

char *torch_version_format(const torch_rules *r, char *buf, size_t cap)
{
    if (r->minor == TORCH_VERSION_MAIN)
        snprintf(buf, cap, "main");
    else
        snprintf(buf, cap, "2.%u", r->minor);
    return buf;
}

/* The open pull requests the model can apply (torch_fixes): the number, the switch
 * in torch_rules, and the bug it fixes (docs/allocators.md §2.15, "Known bugs"). */
static const struct torch_fix {
    const char *pr;
    size_t field; /* offsetof the bool in torch_rules */
    const char *what;
} TORCH_FIXES[] = {
    {"191302", offsetof(torch_rules, fix_research_after_release),
     "search the pool again after the synchronize of the last rung (issue #189504)"},
    {"193400", offsetof(torch_rules, fix_expandable_ignores_max_split),
     "expandable segments reuse free blocks above max_split_size (issue #123548)"},
};
#define N_TORCH_FIXES (sizeof TORCH_FIXES / sizeof TORCH_FIXES[0])

static bool *fix_flag(torch_rules *r, size_t i)
{
    return (bool *)(void *)((char *)r + TORCH_FIXES[i].field);
}

static bool fix_on(const torch_rules *r, size_t i)
{
    return *(const bool *)(const void *)((const char *)r + TORCH_FIXES[i].field);
}

sim_status torch_fixes_parse(const char *text, torch_rules *r, sim_error *err)
{
    for (size_t i = 0; i < N_TORCH_FIXES; i++)
        *fix_flag(r, i) = false;
    if (text == NULL || *text == '\0' || strcmp(text, "none") == 0)
        return SIM_OK;
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < N_TORCH_FIXES && !(strlen(TORCH_FIXES[i].pr) == len && strncmp(p, TORCH_FIXES[i].pr, len) == 0))
            i++;
        if (i == N_TORCH_FIXES) {
            char known[512];
            size_t n = 0;
            known[0] = '\0';
            for (size_t k = 0; k < N_TORCH_FIXES && n < sizeof known; k++)
                n += (size_t)snprintf(known + n, sizeof known - n, "%s: %s; ", TORCH_FIXES[k].pr, TORCH_FIXES[k].what);
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "torch_fixes: '%.*s' is not a modelled fix (pytorch/pytorch pull requests %sor none)",
                                 (int)len, p, known);
        }
        *fix_flag(r, i) = true;
        if (p[len] == '\0')
            return SIM_OK;
        p += len + 1;
    }
}

char *torch_fixes_format(const torch_rules *r, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_TORCH_FIXES; i++) {
        if (fix_on(r, i) && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n > 0 ? "," : "", TORCH_FIXES[i].pr);
    }
    if (n == 0)
        snprintf(buf, cap, "none");
    return buf;
}
