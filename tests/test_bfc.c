/* Check suite for the BFC strategies (`greedy`, `growth`, `limit`): the golden cases
 * of issue 3 with their arithmetic, limits and options, OOM fields, a seeded random
 * stream checked against a brute-force best fit, and one corruption test per
 * invariant of the checker. The harness runs the full checker after every operation.
 * Sizes: 1 MiB = 1048576, 256 KiB = 262144. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/bfc.h"
#include "support/corrupt_bfc.h"
#include "support/harness.h"
#include "support/check_main.h"
#include "support/seed.h"

#define GREEDY bfc_strategy(BFC_GREEDY)
#define GROWTH bfc_strategy(BFC_GROWTH)
#define LIMIT bfc_strategy(BFC_LIMIT)

static harness *new_cc(const strategy_ops *ops, uint64_t capacity, uint64_t context, unsigned cc,
                       const char *opts)
{
    device_info info = {.name = "test", .capacity_bytes = capacity, .context_bytes = context, .cc_major = cc};
    return harness_new_dev(ops, &info, opts);
}

/* Allocate size on stream 0; the layout must then be want. */
static void expect_alloc_layout(harness *h, uint64_t size, const char *want)
{
    harness_alloc(h, size, 0);
    ck_assert_str_eq(harness_layout(h), want);
}

/* Free block b; the layout must then be want. */
static void expect_free_layout(harness *h, strategy_handle b, const char *want)
{
    harness_free_block(h, b);
    ck_assert_str_eq(harness_layout(h), want);
}

static double fragmentation_metric(harness *h)
{
    strategy_stat_value v;
    ck_assert(strategy_stat_find(h->ops, h->s, "fragmentation_metric", &v));
    ck_assert(v.kind == STRATEGY_STAT_REAL);
    return v.real;
}

/* ==== growth and the worked example (allocators.md §1.5) ==== */

GPUSIM_TCASE("golden", 0, NULL, NULL);

START_TEST(growth_should_follow_the_worked_example_region_by_region)
{
    /* 80 GiB, cc 9, tf preset: a huge limit, so only the region sizes matter */
    harness *h = harness_new(GROWTH, 80 * GiB, 0, NULL);
    /* 1000 B → R = 1024; Extend: C = 2 MiB → region 2097152, C → 4 MiB;
     * 2097152 ≥ 2·1024 → split: 1024 used, 2097152 − 1024 = 2096128 free */
    expect_alloc_layout(h, 1000, "1024 [2096128]");
    ck_assert_uint_eq(harness_stat(h, "bytes_in_use"), 1024);
    /* 3 MiB: the free 2096128 is too small; Extend: 3 MiB ≤ C = 4 MiB → region 4194304,
     * C → 8 MiB; 4 MiB < 2·3 MiB and slack 1 MiB < 128 MiB → handed out whole */
    expect_alloc_layout(h, 3 * MiB, "1024 [2096128] | 4194304");
    ck_assert_uint_eq(harness_stat(h, "bytes_in_use"), 1024 + 4194304);
    /* 100 MiB: C 8 → 16 → 32 → 64 → 128 MiB (increased, so not doubled after) → region
     * 134217728; 128 MiB < 200 MiB and slack 28 MiB < 128 MiB → handed out whole */
    expect_alloc_layout(h, 100 * MiB, "1024 [2096128] | 4194304 | 134217728");
    ck_assert_uint_eq(harness_stat(h, "bytes_in_use"), 1024 + 4194304 + 134217728);
    ck_assert_uint_eq(harness_stat(h, "largest_alloc_size"), 134217728);
    /* 4 MiB: C stayed 128 MiB → region 134217728, split 4194304 + 130023424 free (124 MiB) */
    expect_alloc_layout(h, 4 * MiB, "1024 [2096128] | 4194304 | 134217728 | 4194304 [130023424]");
    /* pool = 2 + 4 + 128 + 128 MiB */
    ck_assert_uint_eq(harness_stat(h, "pool_bytes"), 2097152 + 4194304 + 2 * 134217728);
    ck_assert_uint_eq(harness_stat(h, "regions"), 4);
    ck_assert_uint_eq(harness_stat(h, "num_allocs"), 4);
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 4);
    ck_assert_uint_eq(harness_sample(h).largest_free_bytes, 130023424);
    harness_free(h);
}
END_TEST

START_TEST(growth_should_cut_the_last_region_at_the_limit)
{
    /* 16 MiB card, mem_fraction 0.5 → limit 8388608 */
    harness *h = harness_new(GROWTH, 16 * MiB, 0, "mem_fraction=0.5");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 8 * MiB);
    harness_alloc(h, 2 * MiB, 0); /* region 2 MiB, whole (2 MiB = R: no split) */
    harness_alloc(h, 4 * MiB, 0); /* region 4 MiB, whole */
    /* 1 MiB: C = 8 MiB but available = 8 − 6 = 2 MiB → region 2097152; split 1 + 1 MiB */
    expect_alloc_layout(h, 1 * MiB, "2097152 | 4194304 | 1048576 [1048576]");
    ck_assert_uint_eq(harness_stat(h, "pool_bytes"), 8 * MiB);
    /* 2 MiB more: no chunk, available 0, no wholly free region: 2 MiB > 1 MiB free + 0
     * extendable → capacity */
    strategy_oom oom = harness_oom(h, 2 * MiB, 0);
    ck_assert_uint_eq(oom.usable_bytes, harness_stat(h, "bytes_limit")); /* a BFC process may use its limit */
    ck_assert_uint_eq(oom.free_bytes, 1 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(growth_should_start_below_2mib_when_the_limit_is_smaller)
{
    /* limit = 0.5 × 2 MiB = 1 MiB → C starts at RoundedBytes(min(1 MiB, 2 MiB)) */
    harness *h = harness_new(GROWTH, 2 * MiB, 0, "mem_fraction=0.5");
    expect_alloc_layout(h, 1000, "1024 [1047552]");
    harness_free(h);
}
END_TEST

/* ==== the split rule at its boundaries (limit strategy: one region of S bytes) ==== */

static void expect_split_layout(const char *limit, uint64_t request, const char *opts_extra, const char *layout)
{
    char opts[128];
    snprintf(opts, sizeof opts, "limit=%s%s%s", limit, opts_extra ? "," : "", opts_extra ? opts_extra : "");
    harness *h = harness_new(LIMIT, 1 * GiB, 0, opts);
    harness_alloc(h, request, 0);
    ck_assert_str_eq(harness_layout(h), layout);
    harness_free(h);
}

/* Each boundary of the rule, one loop case each. */
static const struct split_case {
    const char *limit, *opts_extra, *layout;
    uint64_t request;
} SPLIT_CASES[] = {
    /* S = 2R − 256 = 2097152 − 256 = 2096896, R = 1 MiB: S < 2R, slack 1048320 < 128 MiB */
    {"2096896", NULL, "2096896", 1 * MiB},
    /* S = 2R = 2097152 → 1048576 used + 1048576 free */
    {"2097152", NULL, "1048576 [1048576]", 1 * MiB},
    /* R = 256 MiB = 268435456, S = R + 134217728 − 256 = 402652928 < 2R: no split */
    {"402652928", NULL, "402652928", 256 * MiB},
    /* S = R + 128 MiB = 402653184: slack 134217728 ≥ 128 MiB → split */
    {"402653184", NULL, "268435456 [134217728]", 256 * MiB},
    /* S = 402653440: slack 134217984 → split */
    {"402653440", NULL, "268435456 [134217984]", 256 * MiB},
    /* S = limit = 320 MiB = 335544320, R = 256 MiB, slack 64 MiB: default 128 MiB rule → whole;
     * fraction 0.2 → max_frag = (uint64)(0.2 × 335544320) = 67108864 → slack ≥ it → split */
    {"320MiB", NULL, "335544320", 256 * MiB},
    {"320MiB", "bfc_fragmentation_fraction=0.2", "268435456 [67108864]", 256 * MiB},
};
_Static_assert(sizeof SPLIT_CASES / sizeof SPLIT_CASES[0] == 7, "the loop below runs every case");

START_TEST(split_should_happen_at_twice_the_request_or_a_slack_of_128mib_or_the_fragmentation_fraction)
{
    const struct split_case *c = &SPLIT_CASES[_i];
    expect_split_layout(c->limit, c->request, c->opts_extra, c->layout);
}
END_TEST
GPUSIM_LOOP(split_should_happen_at_twice_the_request_or_a_slack_of_128mib_or_the_fragmentation_fraction, 0, 7);

/* ==== best fit, coalescing, deferred frees ==== */

static harness *four_quarters(void)
{
    /* 1 MiB region; 256 KiB ×4: 1M ≥ 512K split, 768K ≥ 512K split, 512K ≥ 512K split,
     * then the last 256K = R is handed out whole */
    harness *h = harness_new(LIMIT, 1 * GiB, 0, "limit=1MiB");
    return h;
}

/* four_quarters() with its four 256 KiB chunks allocated and the 1st and 3rd freed:
 * free, used (*b), free, used (*d). */
static harness *quarters_with_holes(strategy_handle *b, strategy_handle *d)
{
    harness *h = four_quarters();
    strategy_handle a = harness_alloc(h, 256 * KiB, 0);
    *b = harness_alloc(h, 256 * KiB, 0);
    strategy_handle c = harness_alloc(h, 256 * KiB, 0);
    *d = harness_alloc(h, 256 * KiB, 0);
    ck_assert_str_eq(harness_layout(h), "262144 262144 262144 262144");
    harness_free_block(h, a);
    expect_free_layout(h, c, "[262144] 262144 [262144] 262144");
    return h;
}

START_TEST(free_should_coalesce_with_both_neighbours)
{
    strategy_handle b, d;
    harness *h = quarters_with_holes(&b, &d);
    /* b merges with c (next) then into a (prev): 3 × 262144 = 786432 */
    expect_free_layout(h, b, "[786432] 262144");
    ck_assert_uint_eq(harness_stat(h, "largest_free_block_bytes"), 786432);
    expect_free_layout(h, d, "[1048576]");
    ck_assert_uint_eq(harness_stat(h, "bytes_in_use"), 0);
    ck_assert_uint_eq(harness_stat(h, "peak_bytes_in_use"), 1048576);
    harness_free(h);
}
END_TEST

START_TEST(best_fit_should_prefer_the_lowest_address_among_equal_sizes)
{
    strategy_handle b, d;
    harness *h = quarters_with_holes(&b, &d);
    /* two free 262144 chunks; 1000 → R = 1024 takes the lower one and splits it
     * (262144 ≥ 2048): 1024 + 261120 */
    expect_alloc_layout(h, 1000, "1024 [261120] 262144 [262144] 262144");
    harness_free(h);
}
END_TEST

START_TEST(best_fit_should_prefer_the_smallest_chunk_over_a_lower_address)
{
    harness *h = four_quarters();
    /* 512K: 1M ≥ 1M → split; 256K: 512K ≥ 512K → split; 256K: whole */
    strategy_handle a = harness_alloc(h, 512 * KiB, 0);
    harness_alloc(h, 256 * KiB, 0);
    strategy_handle c = harness_alloc(h, 256 * KiB, 0);
    harness_free_block(h, a);
    expect_free_layout(h, c, "[524288] 262144 [262144]");
    /* 200000 → R = 782 × 256 = 200192 (bin 9); the 262144 chunk (bin 10) fits better
     * than the lower 524288 (bin 11); 262144 < 2R and slack 61952 → whole */
    expect_alloc_layout(h, 200000, "[524288] 262144 262144");
    ck_assert_uint_eq(harness_stat(h, "bytes_in_use"), 2 * 262144); /* the 256K and the whole chunk */
    harness_free(h);
}
END_TEST

START_TEST(deferred_free_should_hold_the_chunk_until_ready)
{
    harness *h = four_quarters();
    strategy_handle a = harness_alloc(h, 256 * KiB, 0);
    strategy_handle b = harness_alloc(h, 256 * KiB, 0);
    harness_free_deferred(h, a);
    /* still in use: 2 × 262144 */
    ck_assert_str_eq(harness_layout(h), "(262144) 262144 [524288]");
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 524288);
    /* a pending chunk is not reusable: 256K goes to the free 512K chunk (split) */
    strategy_handle c = harness_alloc(h, 256 * KiB, 0);
    ck_assert_str_eq(harness_layout(h), "(262144) 262144 262144 [262144]");
    harness_free_ready(h, a);
    ck_assert_str_eq(harness_layout(h), "[262144] 262144 262144 [262144]");
    harness_free_block(h, b);
    expect_free_layout(h, c, "[1048576]");
    harness_free(h);
}
END_TEST

START_TEST(zero_byte_allocations_should_take_no_memory)
{
    harness *h = harness_new(GREEDY, 16 * GiB, 0, NULL);
    strategy_handle z[2];
    /* greedy does not take its region for a zero-byte request */
    harness_alloc_two_empty(h, 0, z);
    ck_assert_uint_eq(harness_stat(h, "num_allocs"), 0);
    harness_free_block(h, z[0]);
    harness_free_deferred(h, z[1]);
    harness_free_ready(h, z[1]);
    harness_free(h);
}
END_TEST

/* ==== greedy vs growth: fragmentation across regions, garbage collection ==== */

/* 32 MiB card, mem_fraction 0.5 → limit 16 MiB. Growth: A 2 MiB → region 2 MiB;
 * B 4 MiB → region 4 MiB; X 2 MiB → region C = 8 MiB (available 10 MiB), split 2 + 6;
 * then A and B are freed: 2 + 4 + 6 MiB free in three regions. */
static harness *three_regions(const strategy_ops *ops, const char *opts)
{
    harness *h = harness_new(ops, 32 * MiB, 0, opts);
    strategy_handle a = harness_alloc(h, 2 * MiB, 0);
    strategy_handle b = harness_alloc(h, 4 * MiB, 0);
    harness_alloc(h, 2 * MiB, 0);
    harness_free_block(h, a);
    harness_free_block(h, b);
    return h;
}

START_TEST(growth_should_hit_a_fragmentation_oom_that_greedy_does_not_have)
{
    harness *h = three_regions(GROWTH, "mem_fraction=0.5,bfc_gc=off");
    ck_assert_str_eq(harness_layout(h), "[2097152] | [4194304] | 2097152 [6291456]");
    /* 7 MiB: no chunk ≥ 7340032; Extend: available 16 − 14 = 2 MiB < 7 MiB; GC off.
     * free = 14 − 2 = 12 MiB; 7 MiB ≤ 12 MiB + 2 MiB → fragmentation */
    strategy_oom oom = harness_oom(h, 7 * MiB, 0);
    ck_assert_uint_eq(oom.usable_bytes, harness_stat(h, "bytes_limit")); /* a BFC process may use its limit */
    ck_assert_uint_eq(oom.size_bytes, 7340032);
    ck_assert_uint_eq(oom.free_bytes, 12582912);
    ck_assert_uint_eq(oom.largest_free_bytes, 6291456);
    ck_assert_uint_eq(oom.reserved_bytes, 14680064);
    ck_assert_uint_eq(oom.device_free_bytes, 32 * MiB - 14680064);
    ck_assert_msg(strstr(oom.detail, "GPU_0_bfc") != NULL, "%s", oom.detail);
    /* TF's metric: 1 − 6 MiB / 12 MiB */
    ck_assert(fragmentation_metric(h) > 0.4999 && fragmentation_metric(h) < 0.5001);
    ck_assert_uint_eq(harness_sample(h).num_device_frees, 0);
    harness_free(h);

    /* greedy, same sequence: one 16 MiB region: 2 | 14 → 2 4 | 10 → 2 4 2 | 8; the freed
     * 2 + 4 MiB coalesce to 6 MiB; 7 MiB takes the 8 MiB chunk whole (8 < 14, slack 1 MiB) */
    h = three_regions(GREEDY, "mem_fraction=0.5,bfc_gc=off");
    ck_assert_str_eq(harness_layout(h), "[6291456] 2097152 [8388608]");
    expect_alloc_layout(h, 7 * MiB, "[6291456] 2097152 8388608");
    ck_assert_uint_eq(harness_stat(h, "regions"), 1);
    harness_free(h);
}
END_TEST

START_TEST(gc_should_free_wholly_free_regions_and_extend_again_under_tf)
{
    harness *h = three_regions(GROWTH, "mem_fraction=0.5"); /* tf preset: gc on */
    ck_assert_str_eq(harness_option(h, "bfc_gc"), "on");
    /* 7 MiB: Extend fails (2 MiB available); regions 0 and 1 are wholly free: 6 MiB;
     * 7 MiB ≤ 16 − 14 + 6 MiB → free them (pool 8 MiB); Extend: C = 16 MiB, available
     * 8 MiB → region 8388608; 8 MiB < 14 MiB, slack 1 MiB → whole */
    expect_alloc_layout(h, 7 * MiB, "2097152 [6291456] | 8388608");
    ck_assert_uint_eq(harness_stat(h, "pool_bytes"), 16 * MiB);
    ck_assert_uint_eq(harness_stat(h, "regions"), 2);
    ck_assert_uint_eq(harness_stat(h, "peak_pool_bytes"), 16 * MiB);
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 4);
    ck_assert_uint_eq(harness_sample(h).num_device_frees, 2);
    harness_free(h);
}
END_TEST

START_TEST(gc_should_stay_off_under_jax)
{
    harness *h = three_regions(GROWTH, "bfc_preset=jax,mem_fraction=0.5");
    ck_assert_str_eq(harness_option(h, "bfc_gc"), "off");
    strategy_oom oom = harness_oom(h, 7 * MiB, 0);
    ck_assert_uint_eq(oom.usable_bytes, harness_stat(h, "bytes_limit")); /* a BFC process may use its limit */
    ck_assert_str_eq(harness_layout(h), "[2097152] | [4194304] | 2097152 [6291456]");
    ck_assert_uint_eq(harness_sample(h).num_device_frees, 0);
    harness_free(h);
}
END_TEST

START_TEST(gc_should_not_free_regions_when_that_would_not_help)
{
    /* limit 16 MiB, regions 2 + 4 + 8 MiB with 2 + 4 wholly free: 9 MiB > 16 − 14 + 6 */
    harness *h = three_regions(GROWTH, "mem_fraction=0.5");
    strategy_oom oom = harness_oom(h, 9 * MiB, 0);
    ck_assert_uint_eq(harness_sample(h).num_device_frees, 0);
    /* 9 MiB ≤ 12 MiB free + 2 MiB extendable → still fragmentation */
    ck_assert_uint_eq(oom.usable_bytes, harness_stat(h, "bytes_limit")); /* a BFC process may use its limit */
    harness_free(h);
}
END_TEST

START_TEST(greedy_should_take_the_whole_limit_at_the_first_allocation)
{
    /* 16 GiB, cc 9: limit = 17179869184 − 1536 MiB = 15569256448 (a multiple of 256) */
    harness *h = harness_new(GREEDY, 16 * GiB, 0, NULL);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    expect_alloc_layout(h, 1000, "1024 [15569255424]");
    harness_alloc(h, 5 * GiB, 0);
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 1);
    ck_assert_uint_eq(harness_stat(h, "pool_bytes"), 15569256448u);
    ck_assert_str_eq(harness_option(h, "allow_growth"), "false");
    harness_free(h);
}
END_TEST

/* ==== limit ==== */

START_TEST(limit_should_refuse_one_byte_past_m)
{
    /* --limit=4096MiB: one region of 4294967296 bytes at the first allocation */
    harness *h = harness_new(LIMIT, 16 * GiB, 0, "limit=4096MiB");
    expect_alloc_layout(h, 4096 * MiB, "4294967296");
    /* 1 byte → R = 256; no free chunk, available = 0, nothing to collect:
     * 256 > 0 free + 0 extendable → capacity */
    strategy_oom oom = harness_oom(h, 1, 0);
    ck_assert_uint_eq(oom.usable_bytes, harness_stat(h, "bytes_limit")); /* a BFC process may use its limit */
    ck_assert_uint_eq(oom.size_bytes, 256);
    ck_assert_uint_eq(oom.free_bytes, 0);
    ck_assert_uint_eq(oom.reserved_bytes, 4294967296u);
    ck_assert_uint_eq(oom.device_free_bytes, 16 * GiB - 4294967296u);
    harness_free(h);

    /* fresh: 4096 MiB + 1 → R = 4294967552 > floor256(limit) → fails before any region */
    h = harness_new(LIMIT, 16 * GiB, 0, "limit=4096MiB");
    ck_assert_int_eq(harness_try_alloc(h, 4096 * MiB + 1, 0, NULL, &oom), SIM_OOM);
    ck_assert_uint_eq(oom.usable_bytes, harness_stat(h, "bytes_limit")); /* a BFC process may use its limit */
    ck_assert_uint_eq(oom.size_bytes, 4294967552u);
    ck_assert_uint_eq(oom.reserved_bytes, 0);
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 0);
    harness_free(h);
}
END_TEST

/* The limit strategy (opts) on a card of capacity bytes (cc 9.0) where another
 * process already holds other_bytes. */
static harness *limit_beside_another(uint64_t capacity, const char *opts, uint64_t other_bytes)
{
    device_info info = {.name = "test", .capacity_bytes = capacity, .cc_major = 9};
    harness *h = harness_new_dev(LIMIT, &info, opts);
    uint32_t other = device_proc_start(h->dev);
    uint64_t addr;
    ck_assert_int_eq(device_alloc(h->dev, other, other_bytes, &addr), SIM_OK);
    return h;
}

START_TEST(extend_should_backpedal_by_nine_tenths_when_the_device_refuses)
{
    /* 128 MiB card; another process holds 40 MiB → 88 MiB free on the device.
     * limit 100 MiB: 104857600 refused; float(104857600)·0.9f = 94371840 (90 MiB) refused;
     * 94371840·0.9f = 84934656 (81 MiB) fits */
    harness *h = limit_beside_another(128 * MiB, "limit=100MiB", 40 * MiB);
    expect_alloc_layout(h, 1 * MiB, "1048576 [83886080]");
    ck_assert_uint_eq(harness_stat(h, "pool_bytes"), 84934656);
    harness_free(h);
}
END_TEST

START_TEST(extend_should_give_up_backpedalling_below_the_request)
{
    /* the other process leaves 8 MiB: 100 → 90 → 81 → 72.9… MiB … never ≥ 10 MiB and ≤ 8 MiB */
    harness *h = limit_beside_another(128 * MiB, "limit=100MiB", 120 * MiB);
    strategy_oom oom = harness_oom(h, 10 * MiB, 0);
    ck_assert_uint_eq(oom.reserved_bytes, 0);
    ck_assert_uint_eq(oom.device_free_bytes, 8 * MiB);
    /* what the allocator could still get is capped by the device: 0 free in the pool +
     * min(100 MiB under the limit, 8 MiB on the device) = 8 MiB < 10 MiB → capacity */
    ck_assert_uint_eq(oom.usable_bytes, harness_stat(h, "bytes_limit")); /* a BFC process may use its limit */
    /* 8 MiB fits after backpedalling 100 → … → 8 MiB or less */
    harness_alloc(h, 1 * MiB, 0);
    ck_assert_uint_le(harness_stat(h, "pool_bytes"), 8 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(extend_should_make_strict_progress_at_tiny_sizes)
{
    /* limit 512 B; the device has 256 B left. 512·0.9 = 460.8 → RoundedBytes = 512: no
     * progress, so newest XLA takes 256 off → 256 ≥ R = 256 → region of 256 */
    harness *h = limit_beside_another(1 * MiB, "limit=512", 1 * MiB - 256);
    expect_alloc_layout(h, 1, "256");
    harness_free(h);
}
END_TEST

/* ==== limits: TF reserve tiers, mem_fraction, JAX ==== */

GPUSIM_TCASE("limits_and_options", 0, NULL, NULL);

START_TEST(tf_limit_should_subtract_the_reserve_for_each_compute_capability)
{
    static const struct {
        unsigned cc;
        uint64_t reserve;
    } tiers[] = {
        {5, 500 * MiB}, {6, 500 * MiB}, {7, 1050 * MiB}, {8, 1536 * MiB}, {9, 1536 * MiB},
        {0, 1536 * MiB}, /* unknown → treated as ≥ 8 */
    };
    for (size_t i = 0; i < sizeof tiers / sizeof tiers[0]; i++) {
        harness *h = new_cc(GROWTH, 16 * GiB, 0, tiers[i].cc, NULL);
        /* 17179869184 − 524288000 = 16655581184 (cc ≤ 6); − 1101004800 = 16078864384 (cc 7);
         * − 1610612736 = 15569256448 (cc ≥ 8) */
        ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 16 * GiB - tiers[i].reserve);
        harness_free(h);
    }
    /* the context is not free at start: 16 GiB − 300 MiB − 1536 MiB = 15254683648 */
    harness *h = new_cc(GREEDY, 16 * GiB, 300 * MiB, 8, NULL);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 15254683648u);
    harness_free(h);
}
END_TEST

START_TEST(tf_limit_should_reserve_225mib_below_2gib_free)
{
    /* 2 GiB − 1 MiB free = 2146435072 < 2 GiB → 225 MiB: 2146435072 − 235929600 = 1910505472 */
    harness *h = new_cc(GROWTH, 2 * GiB, 1 * MiB, 9, NULL);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 1910505472u);
    harness_free(h);
    /* exactly 2 GiB free is not below 2 GiB → cc tier: 2147483648 − 1610612736 = 536870912 */
    h = new_cc(GROWTH, 2 * GiB, 0, 9, NULL);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 536870912u);
    harness_free(h);
    /* 200 MiB free: the 225 MiB reserve is not smaller → limit = all 209715200 */
    h = new_cc(GROWTH, 200 * MiB, 0, 9, NULL);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 209715200u);
    harness_free(h);
}
END_TEST

START_TEST(mem_fraction_should_set_the_limit_from_total_memory)
{
    /* 0.5 × 16 GiB = 8589934592, the context is not subtracted */
    harness *h = new_cc(GREEDY, 16 * GiB, 500 * MiB, 9, "mem_fraction=0.5");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 8589934592u);
    ck_assert_str_eq(harness_option(h, "mem_fraction"), "0.5");
    ck_assert_str_eq(harness_option(h, "limit_bytes"), "8589934592");
    harness_free(h);
    /* truncation: 0.3 × 1000001 = 300000.3 → 300000 */
    h = new_cc(GREEDY, 1000001, 0, 9, "mem_fraction=0.3");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 300000);
    harness_free(h);
}
END_TEST

START_TEST(jax_should_preallocate_three_quarters_of_total_memory)
{
    /* 0.75 × 16 GiB = 12884901888; greedy = preallocate: the whole limit at once */
    harness *h = harness_new(GREEDY, 16 * GiB, 300 * MiB, "bfc_preset=jax");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 12884901888u);
    expect_alloc_layout(h, 1 * MiB, "1048576 [12883853312]");
    ck_assert_str_eq(harness_option(h, "bfc_preset"), "jax");
    ck_assert_str_eq(harness_option(h, "allow_growth"), "false");
    ck_assert_str_eq(harness_option(h, "bfc_gc"), "off");
    harness_free(h);
    /* growth under jax: same limit, allow_growth; 0.75 × 1000001 = 750000.75 → 750000
     * under tsl 2024; XLA 2026 rounds it up to 2 MiB = 2097152 (RoundUpGpuMemoryLimit) */
    h = harness_new(GROWTH, 1000001, 0, "bfc_preset=jax,bfc_version=tsl2024");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 750000);
    ck_assert_str_eq(harness_option(h, "allow_growth"), "true");
    harness_free(h);
    h = harness_new(GROWTH, 1000001, 0, "bfc_preset=jax");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 2097152);
    harness_free(h);
    /* mem_fraction overrides the 0.75 */
    h = harness_new(GROWTH, 16 * GiB, 0, "bfc_preset=jax,mem_fraction=0.5");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 8589934592u);
    harness_free(h);
}
END_TEST

START_TEST(limit_strategy_should_ignore_the_reserve_and_report_its_options)
{
    harness *h = harness_new(LIMIT, 16 * GiB, 1 * GiB, "limit=4096MiB");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 4294967296u);
    ck_assert_str_eq(harness_option(h, "limit_bytes"), "4294967296");
    ck_assert_str_eq(harness_option(h, "allow_growth"), "false");
    ck_assert_str_eq(harness_option(h, "bfc_preset"), "tf");
    ck_assert_str_eq(harness_option(h, "bfc_gc"), "on");
    /* its table's keys, with values create() accepts back; no fraction applies */
    ck_assert_str_eq(harness_option(h, "limit"), "4294967296");
    ck_assert_str_eq(harness_option(h, "bfc_fragmentation_fraction"), "0");
    strategy_stat_value absent;
    ck_assert(!strategy_option_find(h->ops, h->s, "mem_fraction", &absent));
    harness_free(h);
}
END_TEST

/* ==== option errors ==== */

static void expect_usage_error(const strategy_ops *ops, const char *opts, const char *needle)
{
    harness *h = NULL;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = harness_try_new(ops, 16 * GiB, opts, &h, &err);
    ck_assert_msg(st == SIM_EUSAGE, "%s with '%s' gave %s", ops->name, opts ? opts : "", sim_strerror(st));
    ck_assert_ptr_null(h);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' does not name '%s'", err.msg, needle);
}

START_TEST(bad_options_should_be_usage_errors_that_name_the_option)
{
    expect_usage_error(GREEDY, "bfc_preset=pytorch", "--bfc-preset");
    expect_usage_error(GROWTH, "bfc_gc=yes", "--bfc-gc");
    expect_usage_error(GREEDY, "mem_fraction=0", "--mem-fraction");
    expect_usage_error(GREEDY, "mem_fraction=1.5", "--mem-fraction");
    expect_usage_error(GREEDY, "mem_fraction=half", "--mem-fraction");
    expect_usage_error(GROWTH, "bfc_fragmentation_fraction=-1", "--bfc-fragmentation-fraction");
    expect_usage_error(LIMIT, NULL, "--limit=SIZE");
    expect_usage_error(LIMIT, "limit=0", "--limit");
    expect_usage_error(LIMIT, "limit=4096XB", "--limit");
}
END_TEST

START_TEST(options_of_other_strategies_should_be_ignored)
{
    harness *h = NULL;
    sim_error err;
    sim_error_clear(&err);
    /* torch's alloc_conf and a limit meant for `limit` do not bother greedy */
    ck_assert_int_eq(harness_try_new(GREEDY, 16 * GiB, "alloc_conf=expandable_segments:True,limit=1GiB", &h, &err),
                     SIM_OK);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 15569256448u);
    harness_free(h);
    ck_assert_int_eq(harness_try_new(GREEDY, 16 * GiB, "mem_fraction=1", &h, &err), SIM_OK);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 16 * GiB);
    harness_free(h);
}
END_TEST

START_TEST(the_three_tables_should_carry_their_names)
{
    ck_assert_str_eq(GREEDY->name, "greedy");
    ck_assert_str_eq(GROWTH->name, "growth");
    ck_assert_str_eq(LIMIT->name, "limit");
    ck_assert_ptr_eq(bfc_strategy(BFC_GROWTH), GROWTH);
}
END_TEST

/* ==== seeded random stream against a brute-force best fit ==== */

#define RND_MAX_BLOCKS 65536
/* Check reports every passing ck_assert through a pipe in fork mode; hot loops assert
 * only when the condition already failed. */
#define REQUIRE(cond, ...)                \
    do {                                  \
        if (!(cond))                      \
            ck_assert_msg(cond, __VA_ARGS__); \
    } while (0)

typedef struct blocks {
    strategy_block b[RND_MAX_BLOCKS];
    uint32_t n;
} blocks;

static int collect(void *ctx, const strategy_block *b)
{
    blocks *bs = ctx;
    REQUIRE(bs->n < RND_MAX_BLOCKS, "more than %d blocks", RND_MAX_BLOCKS);
    bs->b[bs->n++] = *b;
    return 0;
}

static void random_stream(const strategy_ops *ops, uint64_t capacity, const char *opts, uint64_t max_frag,
                          unsigned max_log2, uint64_t seed, int n_ops)
{
    harness *h = harness_new(ops, capacity, 0, opts);
    static blocks before, after;
    strategy_handle live[4096], pending[4096];
    uint32_t n_live = 0, n_pending = 0;
    uint64_t x = seed;
    uint64_t ooms = 0;
    for (int i = 0; i < n_ops; i++) {
        uint64_t r = test_rand(&x) % 1000;
        if (r < 3) {
            /* a burst (end of a step): free most or all live blocks, so that whole
             * regions fall free and garbage collection has something to collect */
            bool all = test_rand(&x) % 2 == 0;
            for (uint32_t k = 0; k < n_live;) {
                if (all || test_rand(&x) % 10 != 0) {
                    harness_free_block(h, live[k]);
                    live[k] = live[--n_live];
                } else {
                    k++;
                }
            }
            continue;
        }
        r %= 100;
        if (r < 45 || (n_live == 0 && n_pending == 0)) {
            if (n_live == 4096)
                continue;
            uint64_t size = 0;
            static const uint64_t menu[] = {1 * MiB, 2 * MiB, 3 * MiB, 6 * MiB, 12 * MiB};
            if (max_log2 == 0) /* tensor-like sizes from a menu */
                size = menu[test_rand(&x) % (sizeof menu / sizeof menu[0])] - test_rand(&x) % 512;
            else if (test_rand(&x) % 10 != 0) /* log-uniform 1 B … 2^max_log2 */
                size = 1 + test_rand(&x) % (((uint64_t)1 << (1 + test_rand(&x) % max_log2)));
            uint64_t rounded = (size + 255) / 256 * 256;
            before.n = 0;
            h->ops->walk(h->s, collect, &before);
            /* brute force: smallest free block ≥ rounded, lowest address among equals */
            const strategy_block *best = NULL;
            for (uint32_t k = 0; k < before.n; k++) {
                const strategy_block *b = &before.b[k];
                if (b->state != BLOCK_FREE || b->size_bytes < rounded)
                    continue;
                if (!best || b->size_bytes < best->size_bytes ||
                    (b->size_bytes == best->size_bytes && b->addr < best->addr))
                    best = b;
            }
            strategy_handle hd;
            strategy_oom oom;
            uint64_t allocs_before = harness_sample(h).num_device_allocs;
            sim_status st = harness_try_alloc(h, size, 0, &hd, &oom);
            if (st == SIM_OOM) {
                REQUIRE(size > 0 && best == NULL, "seed %llu op %d: OOM although a block fits",
                              (unsigned long long)seed, i);
                ooms++;
                continue;
            }
            live[n_live++] = hd;
            if (size == 0 || best == NULL)
                continue;
            REQUIRE(harness_sample(h).num_device_allocs == allocs_before,
                    "seed %llu op %d: extended although a block fit", (unsigned long long)seed, i);
            after.n = 0;
            h->ops->walk(h->s, collect, &after);
            bool split = best->size_bytes / 2 >= rounded || best->size_bytes - rounded >= max_frag;
            bool found = false;
            for (uint32_t k = 0; k < after.n; k++)
                if (after.b[k].addr == best->addr) {
                    REQUIRE(after.b[k].state == BLOCK_USED && after.b[k].requested_bytes == size &&
                                      after.b[k].size_bytes == (split ? rounded : best->size_bytes),
                                  "seed %llu op %d: best fit at %llu not taken as expected",
                                  (unsigned long long)seed, i, (unsigned long long)best->addr);
                    found = true;
                }
            REQUIRE(found, "seed %llu op %d: best fit block vanished", (unsigned long long)seed, i);
        } else if (r < 75 && n_live > 0) {
            uint32_t k = (uint32_t)(test_rand(&x) % n_live);
            harness_free_block(h, live[k]);
            live[k] = live[--n_live];
        } else if (r < 90 && n_live > 0) {
            uint32_t k = (uint32_t)(test_rand(&x) % n_live);
            harness_free_deferred(h, live[k]);
            pending[n_pending++] = live[k];
            live[k] = live[--n_live];
        } else if (n_pending > 0) {
            uint32_t k = (uint32_t)(test_rand(&x) % n_pending);
            harness_free_ready(h, pending[k]);
            pending[k] = pending[--n_pending];
        }
        /* sample() agrees with the walker */
        strategy_sample smp = harness_sample(h);
        after.n = 0;
        h->ops->walk(h->s, collect, &after);
        uint64_t largest = 0, free_bytes = 0;
        for (uint32_t k = 0; k < after.n; k++)
            if (after.b[k].state == BLOCK_FREE) {
                free_bytes += after.b[k].size_bytes;
                if (after.b[k].size_bytes > largest)
                    largest = after.b[k].size_bytes;
            }
        REQUIRE(smp.largest_free_bytes == largest && smp.free_bytes == free_bytes &&
                    smp.free_bytes == smp.reserved_bytes - smp.allocated_bytes,
                "seed %llu op %d: sample disagrees with the walker", (unsigned long long)seed, i);
    }
    while (n_live > 0)
        harness_free_block(h, live[--n_live]);
    while (n_pending > 0)
        harness_free_ready(h, pending[--n_pending]);
    ck_assert_uint_eq(harness_stat(h, "bytes_in_use"), 0);
    /* every live region is one free chunk again */
    after.n = 0;
    h->ops->walk(h->s, collect, &after);
    ck_assert_uint_eq(after.n, harness_stat(h, "regions"));
    fprintf(stderr, "  %s %s: %d ops, %llu OOMs, %llu regions ever, %llu collected\n", ops->name, opts,
            n_ops, (unsigned long long)ooms, (unsigned long long)harness_sample(h).num_device_allocs,
            (unsigned long long)harness_sample(h).num_device_frees);
    harness_free(h);
}

GPUSIM_TCASE("random", 300, NULL, NULL);

START_TEST(random_streams_should_keep_every_invariant_and_the_best_fit)
{
    uint64_t seed = test_seed("bfc random streams");
    /* small limits so that regions fill up, OOMs happen and GC runs */
    random_stream(GROWTH, 256 * MiB, "mem_fraction=0.25", 128 * MiB, 23, seed, 5000);
    /* limit 24 MiB and sizes of 1 … 12 MiB: regions close to the request sizes, so
     * wholly free small regions get collected for larger requests */
    random_stream(GROWTH, 48 * MiB, "mem_fraction=0.5", 128 * MiB, 24, seed + 4, 5000);
    random_stream(GROWTH, 48 * MiB, "mem_fraction=0.5", 128 * MiB, 0, seed + 5, 5000);
    random_stream(GROWTH, 256 * MiB, "bfc_preset=jax,mem_fraction=0.25", 128 * MiB, 23, seed + 1, 5000);
    random_stream(GREEDY, 256 * MiB, "mem_fraction=0.125", 128 * MiB, 23, seed + 2, 5000);
    /* fraction 0.01 of 64 MiB = 671088 (truncated) */
    random_stream(LIMIT, 256 * MiB, "limit=64MiB,bfc_fragmentation_fraction=0.01", 671088, 23, seed + 3, 5000);
}
END_TEST

/* ==== the checker catches every invariant broken on purpose ==== */

/* limit 1 MiB, 256 KiB ×3, the first freed: "[262144] 262144 262144 [262144]" — two
 * free chunks in one bin, a used chunk before a free one, empty bins. */
static harness *corruptible(void)
{
    harness *h = four_quarters();
    strategy_handle a = harness_alloc(h, 256 * KiB, 0);
    harness_alloc(h, 256 * KiB, 0);
    harness_alloc(h, 256 * KiB, 0);
    expect_free_layout(h, a, "[262144] 262144 262144 [262144]");
    return h;
}

static void expect_caught(bfc_corruption kind, const char *needle)
{
    harness *h = corruptible();
    ck_assert_msg(corrupt_bfc(h->s, kind), "corruption %d could not be applied", (int)kind);
    sim_report r = harness_report(h);
    ck_assert_msg(r.violations >= 1, "corruption %d went unnoticed", (int)kind);
    ck_assert_msg(sim_report_mentions(&r, needle), "corruption %d: report does not mention '%s':\n%s", (int)kind,
                  needle, r.text);
    harness_free(h);
}

GPUSIM_TCASE("checker", 0, NULL, NULL);

START_TEST(checker_should_catch_a_gap_in_the_tiling)
{
    expect_caught(BFC_CORRUPT_GAP, "gap or overlap");
}
END_TEST

START_TEST(checker_should_catch_adjacent_free_chunks)
{
    expect_caught(BFC_CORRUPT_ADJACENT_FREE, "should have coalesced");
}
END_TEST

START_TEST(checker_should_catch_a_free_chunk_in_the_wrong_bin)
{
    expect_caught(BFC_CORRUPT_WRONG_BIN, "wrong bin");
}
END_TEST

START_TEST(checker_should_catch_a_free_chunk_missing_from_its_bin)
{
    expect_caught(BFC_CORRUPT_NOT_IN_BIN, "not in its bin");
}
END_TEST

START_TEST(checker_should_catch_a_bin_out_of_order)
{
    expect_caught(BFC_CORRUPT_BIN_ORDER, "bin order");
}
END_TEST

START_TEST(checker_should_catch_a_bitmap_that_disagrees_with_the_bins)
{
    expect_caught(BFC_CORRUPT_BITMAP, "bitmap bit");
}
END_TEST

START_TEST(checker_should_catch_bytes_in_use_that_drifted)
{
    expect_caught(BFC_CORRUPT_BYTES_IN_USE, "sum of used chunks");
}
END_TEST

START_TEST(checker_should_catch_pool_bytes_that_drifted)
{
    expect_caught(BFC_CORRUPT_POOL_BYTES, "sum of regions");
    expect_caught(BFC_CORRUPT_POOL_BYTES, "device holds");
}
END_TEST

START_TEST(checker_should_catch_a_peak_below_the_current_value)
{
    expect_caught(BFC_CORRUPT_PEAK_IN_USE, "peak_bytes_in_use");
    expect_caught(BFC_CORRUPT_PEAK_POOL, "peak_pool_bytes");
}
END_TEST

START_TEST(checker_should_catch_a_wrong_region_count)
{
    expect_caught(BFC_CORRUPT_REGION_COUNT, "region count");
}
END_TEST

START_TEST(checker_should_catch_a_stale_bin_cache)
{
    expect_caught(BFC_CORRUPT_BIN_CACHE, "bin cache");
}
END_TEST

START_TEST(checker_should_catch_a_kept_largest_size_that_drifted)
{
    expect_caught(BFC_CORRUPT_LARGEST, "largest cache");
}
END_TEST

START_TEST(checker_should_catch_a_region_chunk_that_is_also_a_spare_record)
{
    /* one record both in a region and among the spares: counted twice */
    expect_caught(BFC_CORRUPT_SPARE, "(leak)");
}
END_TEST

START_TEST(checker_should_catch_a_spare_count_that_disagrees_with_the_spare_list)
{
    expect_caught(BFC_CORRUPT_SPARE_COUNT, "spare records listed");
}
END_TEST

START_TEST(checker_should_catch_the_device_disagreeing_with_the_pool)
{
    harness *h = corruptible();
    device_release(h->dev, h->proc, 256); /* the device holds 256 B less than the pool */
    sim_report r = harness_report(h);
    ck_assert(sim_report_mentions(&r, "device holds"));
    device_map(h->dev, h->proc, 256);
    harness_free(h);
}
END_TEST
