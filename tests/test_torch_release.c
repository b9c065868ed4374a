/* Check suite for the `torch` strategy's rules measured on the shipped wheels
 * (torch_version.h, docs/allocators.md §2.15, validate/upstream/torch/
 * check-releases.sh): the out-of-memory advice of 2.10, 2.11 and 2.14 and the memory
 * fraction of 1.0 from 2.10. Sizes in comments are MiB. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/torch.h"
#include "support/harness.h"
#include "support/check_main.h"

/* The message's head for 30 MiB live on a 40 MiB card and a 20 MiB request. */
#define HEAD_40                                                                                                      \
    "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 MiB of which 10.00 MiB " \
    "is free. Including non-PyTorch memory, this process has 30.00 MiB memory in use. "
#define TAIL_40                                                                                                      \
    "Of the allocated memory 30.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated."
#define ADVICE_2_11                                                                                                  \
    " If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to " \
    "avoid fragmentation.  See documentation for Memory Management  "                                               \
    "(https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"

/* 2.10's advice: PYTORCH_ALLOC_CONF, pytorch.org's #environment-variables */
#define ADVICE_2_10                                                                                                  \
    " If reserved but unallocated memory is large try setting PYTORCH_ALLOC_CONF=expandable_segments:True to "      \
    "avoid fragmentation.  See documentation for Memory Management  "                                               \
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
/* 2.1 to 2.9's: PYTORCH_CUDA_ALLOC_CONF, pytorch.org's #environment-variables (the
 * 2.9.1 wheel; 2.10.0's names PYTORCH_ALLOC_CONF) */
#define ADVICE_2_9                                                                                                   \
    " If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to " \
    "avoid fragmentation.  See documentation for Memory Management  "                                               \
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
/* With expandable segments the request maps what pages are left before failing. */
#define HEAD_EXP                                                                                                     \
    "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 MiB of which 0 bytes is " \
    "free. Including non-PyTorch memory, this process has 40.00 MiB memory in use. "
#define TAIL_EXP                                                                                                     \
    "Of the allocated memory 30.00 MiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but "           \
    "unallocated."

/* 30 MiB held on a 40 MiB card under opts; the 20 MiB request that fails. */
static strategy_oom oom_40(const char *opts)
{
    harness *h = harness_new(torch_strategy(), 40 * MiB, 0, opts);
    harness_alloc(h, 30 * MiB, 0);
    strategy_oom oom = harness_oom(h, 20 * MiB, 0);
    harness_free(h);
    return oom;
}

GPUSIM_TCASE("oom message", 0, NULL, NULL);

START_TEST(torch_2_11_oom_message_should_advise_pytorch_cuda_alloc_conf_with_the_docs_link)
{
    /* 2.11.0's wheel: PYTORCH_CUDA_ALLOC_CONF again, and the notes' section on
     * docs.pytorch.org (pytorch/pytorch#172327); 2.10.0's said PYTORCH_ALLOC_CONF
     * and linked #environment-variables on pytorch.org, 2.9.1's said
     * PYTORCH_CUDA_ALLOC_CONF with that link */
    strategy_oom oom = oom_40("torch_version=2.11");
    ck_assert_str_eq(oom.detail, HEAD_40 TAIL_40 ADVICE_2_11);
    oom = oom_40("torch_version=2.10");
    ck_assert_str_eq(oom.detail, HEAD_40 TAIL_40 ADVICE_2_10);
    oom = oom_40("torch_version=2.9");
    ck_assert_str_eq(oom.detail, HEAD_40 TAIL_40 ADVICE_2_9);
    /* the default is 2.14, whose advice (without expandable segments) is 2.11's */
    oom = oom_40(NULL);
    ck_assert_str_eq(oom.detail, HEAD_40 TAIL_40 ADVICE_2_11);
}
END_TEST

START_TEST(torch_2_14_oom_message_should_not_advise_expandable_segments_when_they_are_on)
{
    /* 2.14.1's wheel ends the message after "... unallocated." when
     * expandable_segments:True is already set (issue #173049); 2.13.0 still
     * advised setting it. 30 MiB maps 15 pages of 2 MiB; the 20 MiB request maps
     * the 5 pages left before the device is full: 40 MiB reserved, 10 unallocated */
    strategy_oom oom = oom_40("torch_version=2.14,alloc_conf=expandable_segments:True");
    ck_assert_str_eq(oom.detail, HEAD_EXP TAIL_EXP);
    oom = oom_40("torch_version=2.13,alloc_conf=expandable_segments:True");
    ck_assert_str_eq(oom.detail, HEAD_EXP TAIL_EXP ADVICE_2_11);
    oom = oom_40("torch_version=main,alloc_conf=expandable_segments:True");
    ck_assert_str_eq(oom.detail, HEAD_EXP TAIL_EXP);
}
END_TEST

GPUSIM_TCASE("memory fraction 1.0", 0, NULL, NULL);

START_TEST(torch_2_10_fraction_one_should_print_no_allowed_cap)
{
    /* 2.9.1: a fraction of 1.0 caps at (uint64)(1.0 · 40 MiB) = 40 MiB and the
     * message says "40.00 MiB allowed; "; 2.10.0 prints no cap, as with no fraction */
    strategy_oom oom = oom_40("torch_version=2.9,memory_fraction=1.0");
    ck_assert_str_eq(oom.detail, HEAD_40 "40.00 MiB allowed; " TAIL_40 ADVICE_2_9);
    oom = oom_40("torch_version=2.10,memory_fraction=1.0");
    ck_assert_str_eq(oom.detail, HEAD_40 TAIL_40 ADVICE_2_10);
    ck_assert_uint_eq(oom.usable_bytes, 40 * MiB); /* capacity − context */
    /* just under 1.0 is still a cap: (uint64)(0.9999 · 41943040) = 41938845 B */
    oom = oom_40("torch_version=2.14,memory_fraction=0.9999");
    ck_assert_uint_eq(oom.usable_bytes, 41938845);
    ck_assert_ptr_nonnull(strstr(oom.detail, "40.00 MiB allowed; "));
}
END_TEST

/* Reserved memory after 32 MiB is allocated and freed (cached) and 34 MiB is
 * asked for, under garbage_collection_threshold:0.3 and opts, on a 100 MiB card. */
static uint64_t reserved_after_gc_probe(const char *opts, uint64_t *device_frees)
{
    char all[128];
    snprintf(all, sizeof all, "alloc_conf=garbage_collection_threshold:0.3,%s", opts);
    harness *h = harness_new(torch_strategy(), 100 * MiB, 0, all);
    harness_free_block(h, harness_alloc(h, 32 * MiB, 0));
    harness_alloc(h, 34 * MiB, 0);
    uint64_t reserved = harness_sample(h).reserved_bytes;
    *device_frees = harness_stat(h, "num_device_free");
    harness_free(h);
    return reserved;
}

START_TEST(torch_2_10_fraction_one_should_not_collect_garbage)
{
    /* 34 MiB fits no cached block. 2.9: the cap is 1.0 · 100 = 100 MiB, so the
     * collection threshold is 0.3 · 100 = 30 MiB; reserved 32 > 30 → the cached 32
     * MiB segment goes back before the new one: reserved 34 MiB, one device free.
     * 2.10 on: no cap, no collection: 32 + 34 = 66 MiB reserved, no device free
     * (the wheels' gc-frac1.0 probe: 2.14.1 u000 event 44 reserved 3831496704, not
     * 2694840320; 2.9.1 collects as gpusim 2.9 does) */
    uint64_t frees = 0;
    ck_assert_uint_eq(reserved_after_gc_probe("torch_version=2.9,memory_fraction=1.0", &frees), 34 * MiB);
    ck_assert_uint_eq(frees, 1);
    ck_assert_uint_eq(reserved_after_gc_probe("torch_version=2.10,memory_fraction=1.0", &frees), 66 * MiB);
    ck_assert_uint_eq(frees, 0);
    ck_assert_uint_eq(reserved_after_gc_probe("torch_version=2.14,memory_fraction=1.0", &frees), 66 * MiB);
    ck_assert_uint_eq(frees, 0);
    /* 0.5 is a cap in 2.14 as before: threshold 0.3 · 50 = 15 MiB → collected */
    ck_assert_uint_eq(reserved_after_gc_probe("torch_version=2.14,memory_fraction=0.5", &frees), 34 * MiB);
    ck_assert_uint_eq(frees, 1);
}
END_TEST

GPUSIM_TCASE("tie order", 0, NULL, NULL);

/* Two free 40 MiB blocks, a younger piece at the lower address and an older whole
 * segment above it; a 40 MiB request takes one, then empty_cache. Returns reserved
 * memory after it. S1 = a 100 MiB segment (block B1), S2 = 40 MiB (block B2, made
 * after B1); a 40 MiB request splits B1 into a new block N (S1's low 40, made last)
 * and B1's remainder (60), which a 60 MiB request takes whole; N and B2 are freed. */
static uint64_t reserved_after_tie(const char *opts)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, opts);
    strategy_handle p = harness_alloc(h, 100 * MiB, 0); /* S1: B1 */
    strategy_handle q = harness_alloc(h, 40 * MiB, 0);  /* S2: B2 */
    harness_free_block(h, p);
    strategy_handle r = harness_alloc(h, 40 * MiB, 0); /* N = S1's low 40 MiB */
    harness_alloc(h, 60 * MiB, 0);                     /* B1, the 60 MiB remainder, whole */
    harness_free_block(h, r);
    harness_free_block(h, q);
    harness_alloc(h, 40 * MiB, 0); /* N (lower address) or B2 (older) */
    harness_check(h);
    harness_empty_cache(h);
    uint64_t reserved = harness_sample(h).reserved_bytes;
    harness_free(h);
    return reserved;
}

START_TEST(torch_2_12_should_break_ties_between_equal_free_blocks_by_creation_order)
{
    /* By address (2.11, 2.13, 2.14): N is taken, S2 is wholly free and empty_cache
     * returns it: 100 MiB reserved. 2.12 (pytorch/pytorch#178362; the 2.12.0 and
     * 2.12.1 wheels): B2 was made before N, so B2 is taken, N stays a free piece of
     * S1 that empty_cache cannot return: 140 MiB */
    ck_assert_uint_eq(reserved_after_tie("torch_version=2.11"), 100 * MiB);
    ck_assert_uint_eq(reserved_after_tie("torch_version=2.12"), 140 * MiB);
    ck_assert_uint_eq(reserved_after_tie("torch_version=2.13"), 100 * MiB);
    ck_assert_uint_eq(reserved_after_tie("torch_version=main"), 100 * MiB);
}
END_TEST

GPUSIM_TCASE("known bugs", 0, NULL, NULL);

/* pytorch/pytorch#189504 on a 1 GiB card: an 800 MiB segment split into two 400 MiB
 * blocks (224 MiB left on the device), the first freed behind an event
 * (record_stream), then 400 MiB asked for. Returns whether that request fails, and
 * in *retry_ok whether the same request right after succeeds (when it failed). */
static bool pending_free_request_fails(const char *opts, bool *retry_ok)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, opts);
    harness_free_block(h, harness_alloc(h, 800 * MiB, 0));
    strategy_handle a = harness_alloc(h, 400 * MiB, 0); /* the low half, split off */
    harness_alloc(h, 400 * MiB, 0);                     /* the high half, whole */
    harness_free_deferred(h, a);
    strategy_handle out;
    strategy_oom oom;
    bool fails = harness_try_alloc(h, 400 * MiB, 0, &out, &oom) == SIM_OOM;
    *retry_ok = false;
    if (fails)
        *retry_ok = harness_try_alloc(h, 400 * MiB, 0, &out, &oom) == SIM_OK;
    harness_check(h);
    harness_free(h);
    return fails;
}

START_TEST(torch_should_raise_oom_while_a_synchronized_pending_free_fits_unless_pr_191302_applies)
{
    /* The ladder: no free block (a's waits on its event); cudaMalloc(400) fails
     * (224 free); no oversize block to release; synchronize (a's block returns to
     * the pool) and release every unsplit cached segment (none: a's block is a split
     * piece), then only cudaMalloc again: OOM. The 2.14.1 wheel agrees
     * (validate/upstream/torch/directed/bug-189504-pending-free-oom.json), and so
     * does its "fails once, the identical retry succeeds" */
    bool retry_ok = false;
    ck_assert(pending_free_request_fails("", &retry_ok));
    ck_assert(retry_ok);
    ck_assert(pending_free_request_fails("torch_version=2.6", &retry_ok));
    /* PR #191302 searches the pool after the synchronize: a's block serves it */
    ck_assert(!pending_free_request_fails("torch_fixes=191302", &retry_ok));
    ck_assert(!pending_free_request_fails("torch_fixes=193400,191302", &retry_ok));
    /* the other fix alone changes nothing here */
    ck_assert(pending_free_request_fails("torch_fixes=193400", &retry_ok));
}
END_TEST

/* pytorch/pytorch#123548 as PR #193400 reproduces it, on a 16 GiB card under
 * max_split_size_mb:128 (with expandable segments unless plain) and opts: a 64 MiB
 * block, then cycles of A = 91 MiB, B = 45.5 MiB, 2 MiB kept alive, A and B freed.
 * Returns reserved memory after `cycles` cycles. */
static uint64_t reserved_after_cycles(const char *opts, unsigned cycles)
{
    harness *h = harness_new(torch_strategy(), 16384 * MiB, 0, opts);
    harness_alloc(h, 64 * MiB, 0);
    for (unsigned c = 0; c < cycles; c++) {
        strategy_handle a = harness_alloc(h, 91 * MiB, 0);
        strategy_handle b = harness_alloc(h, 91 * MiB / 2, 0);
        harness_alloc(h, 2 * MiB, 0);
        harness_free_block(h, a);
        harness_free_block(h, b);
    }
    harness_check(h);
    uint64_t reserved = harness_sample(h).reserved_bytes;
    harness_free(h);
    return reserved;
}

#define EXP_MSPLIT "alloc_conf=max_split_size_mb:128,expandable_segments:True"

START_TEST(torch_expandable_segments_with_max_split_should_grow_per_cycle_unless_pr_193400_applies)
{
    /* Pages of 20 MiB. Cycle 1: 64 → 80 MiB mapped, A + B = 136.5 → 140: 220 MiB.
     * Freed, A and B merge into 136.5 MiB ≥ 128: get_free_block keeps it from A and
     * B (below max_split_size), and the live 2 MiB block after it hides it from
     * find_expandable_block, so each cycle maps 136.5 + 2 MiB more, 138.4 MiB a
     * cycle on average in whole pages: 220 + 138.4 · 100 = 14060 MiB after 101
     * cycles, the figures (its cycle 100 is the 101st), and the 2.14.1 wheel's
     * (directed/bug-123548-expandable-max-split.json agrees after every event) */
    ck_assert_uint_eq(reserved_after_cycles(EXP_MSPLIT, 1), 220 * MiB);
    ck_assert_uint_eq(reserved_after_cycles(EXP_MSPLIT, 21), 2980 * MiB);
    ck_assert_uint_eq(reserved_after_cycles(EXP_MSPLIT, 101), 14060 * MiB);
    /* PR #193400: expandable blocks skip the oversize rules: A and B reuse the freed
     * block, and only the 2 MiB blocks grow the segment (one 20 MiB page per 10
     * cycles): 220 + 20 · 10 = 420 MiB */
    ck_assert_uint_eq(reserved_after_cycles(EXP_MSPLIT ",torch_fixes=193400", 101), 420 * MiB);
    /* either option alone: under 500 MiB, as the issue says */
    ck_assert_uint_eq(reserved_after_cycles("alloc_conf=expandable_segments:True", 101), 420 * MiB);
    ck_assert_uint_lt(reserved_after_cycles("alloc_conf=max_split_size_mb:128", 101), 500 * MiB);
}
END_TEST

START_TEST(torch_fixes_should_name_only_modelled_pull_requests)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, "torch_fixes=193400,191302");
    ck_assert_str_eq(harness_option(h, "torch_fixes"), "191302,193400");
    harness_free(h);
    h = harness_new(torch_strategy(), 1024 * MiB, 0, "");
    ck_assert_str_eq(harness_option(h, "torch_fixes"), "none");
    harness_free(h);
    harness *bad = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1024 * MiB, "torch_fixes=191303", &bad, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "'191303' is not a modelled fix") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "193400") != NULL, "%s", err.msg);
}
END_TEST

GPUSIM_TCASE("platforms", 0, NULL, NULL);

/* Reserved memory after 30 MiB on a 1 GiB card under opts: 30 MiB as a cudaMalloc
 * segment (rounded to 2 MiB: 30), or with expandable segments one 20 MiB page more
 * than needed: 40 MiB. */
static uint64_t reserved_for_30(const char *opts)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, opts);
    harness_alloc(h, 30 * MiB, 0);
    uint64_t reserved = harness_sample(h).reserved_bytes;
    harness_free(h);
    return reserved;
}

START_TEST(rocm_should_ignore_expandable_segments_before_2_12_and_before_rocm_7)
{
    /* pytorch/pytorch#177974 brought them to ROCm in 2.12, #179930 gates them on
     * ROCm 7.0: elsewhere PyTorch warns and runs without */
#define EXP "alloc_conf=expandable_segments:True,"
    ck_assert_uint_eq(reserved_for_30(EXP "torch_version=2.11"), 40 * MiB); /* CUDA */
    ck_assert_uint_eq(reserved_for_30(EXP "torch_version=2.11,platform=rocm"), 30 * MiB);
    ck_assert_uint_eq(reserved_for_30(EXP "torch_version=2.12,platform=rocm"), 40 * MiB);
    ck_assert_uint_eq(reserved_for_30(EXP "torch_version=2.14,platform=rocm"), 40 * MiB);
    ck_assert_uint_eq(reserved_for_30(EXP "torch_version=2.14,platform=rocm6"), 30 * MiB);
#undef EXP
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, "platform=rocm6,alloc_conf=expandable_segments:True");
    ck_assert_str_eq(harness_option(h, "platform"), "rocm6");
    ck_assert_str_eq(harness_option(h, "expandable_segments"), "False");
    harness_free(h);
}
END_TEST

START_TEST(rocm_oom_message_should_say_hip_without_the_nvml_line)
{
    /* a ROCm build: "HIP out of memory." and no "Including non-PyTorch memory, this
     * process has ..." (no NVML); the advice names PYTORCH_HIP_ALLOC_CONF up to 2.8
     * (hipified), the CUDA name from 2.9 as the ROCm 2.9 test logs show */
    strategy_oom oom = oom_40("torch_version=2.11,platform=rocm");
    ck_assert_str_eq(oom.detail, "HIP out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 "
                                 "MiB of which 10.00 MiB is free. " TAIL_40 ADVICE_2_11);
    oom = oom_40("torch_version=2.8,platform=rocm6");
    ck_assert_str_eq(oom.detail, "HIP out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 "
                                 "MiB of which 10.00 MiB is free. " TAIL_40
                                 " If reserved but unallocated memory is large try setting "
                                 "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
                                 "documentation for Memory Management  "
                                 "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
    /* CUDA keeps its text */
    oom = oom_40("torch_version=2.11,platform=cuda");
    ck_assert_str_eq(oom.detail, HEAD_40 TAIL_40 ADVICE_2_11);
}
END_TEST

START_TEST(platform_should_name_only_modelled_platforms)
{
    harness *bad = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1024 * MiB, "platform=rocm5", &bad, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "rocm5") != NULL, "%s", err.msg);
}
END_TEST

GPUSIM_TCASE("release 2.12 to 2.14 keys", 0, NULL, NULL);

START_TEST(torch_2_13_should_round_a_configured_fraction_to_the_nearest_byte)
{
    /* 0.55 · 4 GiB = 2362232012.8 B: the 2.13.0 and 2.14.1 wheels cap a
     * per_process_memory_fraction key at 2362232013 B, 2.12.1 at 2362232012, and
     * set_per_process_memory_fraction (memory_fraction) truncates in every release;
     * 0.7 · 4 GiB = 3006477107.2 stays 3006477107 (nearest, not up) */
    const uint64_t GiB4 = 4096 * MiB;
    struct {
        const char *opts;
        uint64_t usable;
    } cases[] = {
        {"alloc_conf=per_process_memory_fraction:0.55,torch_version=2.14", 2362232013},
        {"alloc_conf=per_process_memory_fraction:0.55,torch_version=2.13", 2362232013},
        {"alloc_conf=per_process_memory_fraction:0.55,torch_version=2.12", 2362232012},
        {"memory_fraction=0.55,torch_version=2.14", 2362232012},
        {"alloc_conf=per_process_memory_fraction:0.7,torch_version=2.14", 3006477107},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        harness *h = harness_new(torch_strategy(), GiB4, 0, cases[i].opts);
        strategy_oom oom = harness_oom(h, 3500 * MiB, 0);
        ck_assert_msg(oom.usable_bytes == cases[i].usable, "%s: usable %llu", cases[i].opts,
                      (unsigned long long)oom.usable_bytes);
        harness_free(h);
    }
}
END_TEST

START_TEST(torch_2_12_should_accept_throw_on_cudamalloc_oom_which_changes_nothing_measured)
{
    /* pytorch/pytorch#179473's key is in 2.12's list and not 2.11's; on the 2.12.0,
     * 2.13.0 and 2.14.1 wheels it changed no counter or message in 99 runs each (the
     * fraction as the key or set_per_process_memory_fraction; plain, expandable, GC):
     * the ladder ran as without it. As here: 300 MiB cached + 310 > the 512 MiB cap,
     * so the ladder releases the cached segment and retries */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0,
                             "alloc_conf=per_process_memory_fraction:0.5,throw_on_cudamalloc_oom:True");
    harness_free_block(h, harness_alloc(h, 300 * MiB, 0));
    harness_alloc(h, 310 * MiB, 0);
    ck_assert_uint_eq(harness_stat(h, "num_alloc_retries"), 1);
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 1);
    harness_free(h);
    harness *bad = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1024 * MiB,
                                     "alloc_conf=throw_on_cudamalloc_oom:True,torch_version=2.11", &bad, &err),
                     SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "throw_on_cudamalloc_oom") != NULL, "%s", err.msg);
    sim_error_clear(&err);
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1024 * MiB, "alloc_conf=throw_on_cudamalloc_oom:1", &bad, &err),
                     SIM_EUSAGE);
    h = harness_new(torch_strategy(), 1024 * MiB, 0, "alloc_conf=pinned_free_catch_all:True");
    ck_assert_str_eq(harness_option(h, "ignored_keys"),
                     "pinned_free_catch_all (accepted; they do not change device memory placement)");
    harness_free(h);
}
END_TEST

START_TEST(torch_2_13_should_accept_the_pinned_rounding_and_cache_size_keys)
{
    /* host-memory keys of 2.13 (AllocatorConfig.h; not in 2.12.1): accepted, ignored */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0,
                             "alloc_conf=pinned_max_round_threshold_mb:32,pinned_max_cached_size_mb:64");
    ck_assert_str_eq(harness_option(h, "ignored_keys"), "pinned_max_round_threshold_mb,pinned_max_cached_size_mb "
                                                        "(accepted; they do not change device memory placement)");
    harness_free(h);
    harness *bad = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1024 * MiB,
                                     "alloc_conf=pinned_max_cached_size_mb:64,torch_version=2.12", &bad, &err),
                     SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "PyTorch 2.12 does not have it") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(torch_2_4_oom_message_should_not_name_the_fraction_cap)
{
    /* the 2.4.1 wheel prints no "X allowed; " (11 runs of its check differed in it
     * before this rule), 2.5.1's and 2.6.0's do */
    strategy_oom oom = oom_40("torch_version=2.4,memory_fraction=0.9");
    ck_assert_ptr_null(strstr(oom.detail, "allowed; "));
    ck_assert_ptr_nonnull(strstr(oom.detail, "memory in use. Of the allocated memory"));
    oom = oom_40("torch_version=2.5,memory_fraction=0.9");
    ck_assert_ptr_nonnull(strstr(oom.detail, "36.00 MiB allowed; Of the allocated memory"));
}
END_TEST
