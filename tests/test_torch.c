/* Check suite for the `torch` strategy (PyTorch CUDA caching allocator): golden
 * layouts with their arithmetic, the OOM ladder, expandable segments, options,
 * deferred frees and the release rules; the seeded random runs, the best-fit
 * differential and the checker's corruptions are test_torch_checked.c's. Sizes in
 * comments are MiB unless marked. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/torch.h"
#include "support/corrupt_torch.h"
#include "support/harness.h"
#include "support/torch_harness.h"
#include "support/check_main.h"
#include "support/seed.h"

static harness *torch_new(uint64_t capacity, uint64_t context, const char *alloc_conf, const char *fraction)
{
    return torch_harness_new(capacity, context, alloc_conf, fraction, NULL);
}

/* ==== Golden layouts ==== */

GPUSIM_TCASE("golden", 0, NULL, NULL);

START_TEST(torch_should_hand_out_a_12_mib_block_whole_for_11_mib_plus_1)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    /* 11 MiB + 1 → round to 512: 11 MiB + 512 = 11534848; ≥ 10 MiB → segment
     * round_up(2 MiB) = 12 MiB; remainder 1 MiB − 512 is not > 1 MiB → no split */
    harness_alloc(h, 11 * MiB + 1, 0);
    ck_assert_str_eq(harness_layout(h), "12582912");
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 12 * MiB);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 12 * MiB);
    ck_assert_uint_eq(harness_stat(h, "requested_bytes.all.current"), 11 * MiB + 1);
    ck_assert_uint_eq(harness_stat(h, "inactive_split.all.current"), 0);
    harness_free(h);
}
END_TEST

START_TEST(torch_small_requests_should_share_one_2_mib_segment)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    /* 1000 → 1024; ≤ 1 MiB → small pool, a 2 MiB segment; remainder 2097152 − 1024
     * = 2096128 ≥ 512 → split */
    strategy_handle a = harness_alloc(h, 1000, 0);
    ck_assert_str_eq(harness_layout(h), "1024 [2096128]");
    /* 512 KiB from the free remainder: 2096128 − 524288 = 1571840 left */
    strategy_handle b = harness_alloc(h, 512 * KiB, 0);
    /* 1 MiB is still small: 1571840 − 1048576 = 523264 left */
    strategy_handle c = harness_alloc(h, 1 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "1024 524288 1048576 [523264]");
    ck_assert_uint_eq(harness_stat(h, "segment.small_pool.current"), 1);
    ck_assert_uint_eq(harness_stat(h, "reserved_bytes.small_pool.current"), 2 * MiB);
    /* freeing the middle block: neighbours are used, nothing merges */
    harness_free_block(h, b);
    ck_assert_str_eq(harness_layout(h), "1024 [524288] 1048576 [523264]");
    /* two inactive split blocks: 524288 + 523264 = 1047552 bytes */
    ck_assert_uint_eq(harness_stat(h, "inactive_split.small_pool.current"), 2);
    ck_assert_uint_eq(harness_stat(h, "inactive_split_bytes.small_pool.current"), 1047552);
    /* freeing c merges it with both neighbours: 524288 + 1048576 + 523264 */
    harness_free_block(h, c);
    ck_assert_str_eq(harness_layout(h), "1024 [2096128]");
    harness_free_block(h, a);
    ck_assert_str_eq(harness_layout(h), "[2097152]");
    ck_assert_uint_eq(harness_stat(h, "inactive_split.small_pool.current"), 0);
    ck_assert_uint_eq(harness_stat(h, "num_device_alloc"), 1);
    harness_free(h);
}
END_TEST

START_TEST(torch_a_5_mib_request_should_take_a_20_mib_segment_and_split_it)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    /* 1 MiB < 5 MiB < 10 MiB → a 20 MiB segment; remainder 15 MiB > 1 MiB → split */
    harness_alloc(h, 5 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "5242880 [15728640]");
    /* the next 5 MiB is cut from the 15 MiB remainder: 10 MiB left */
    harness_alloc(h, 5 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "5242880 5242880 [10485760]");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 20 * MiB);
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 10 * MiB);
    ck_assert_uint_eq(harness_sample(h).largest_free_bytes, 10 * MiB);
    ck_assert_uint_eq(harness_stat(h, "num_device_alloc"), 1);
    ck_assert_uint_eq(harness_stat(h, "reserved_bytes.large_pool.peak"), 20 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(torch_streams_should_not_share_free_blocks)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 5 * MiB, 1);
    ck_assert_str_eq(harness_layout(h), "5242880@1 [15728640]@1");
    harness_free_block(h, a);
    ck_assert_str_eq(harness_layout(h), "[20971520]@1");
    /* the cached 20 MiB belongs to stream 1: stream 0 gets its own segment */
    harness_alloc(h, 5 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[20971520]@1 | 5242880 [15728640]");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 40 * MiB);
    /* and stream 1 reuses its own block */
    harness_alloc(h, 2 * MiB, 1);
    ck_assert_str_eq(harness_layout(h), "2097152@1 [18874368]@1 | 5242880 [15728640]");
    ck_assert_uint_eq(harness_stat(h, "num_device_alloc"), 2);
    harness_free(h);
}
END_TEST

START_TEST(torch_max_split_size_should_keep_big_blocks_whole)
{
    harness *h = torch_new(1 * GiB, 0, "max_split_size_mb:20", NULL);
    /* 30 MiB ≥ M = 20 MiB: its own 30 MiB segment, never split; oversize */
    strategy_handle a = harness_alloc(h, 30 * MiB, 0);
    ck_assert_uint_eq(harness_stat(h, "oversize_allocations.current"), 1);
    ck_assert_uint_eq(harness_stat(h, "oversize_segments.current"), 1);
    ck_assert_uint_eq(harness_stat(h, "max_split_size"), 20 * MiB);
    harness_free_block(h, a);
    ck_assert_uint_eq(harness_stat(h, "oversize_allocations.current"), 0);
    /* 5 MiB < M may not take the cached 30 MiB block (≥ M): a new 20 MiB segment,
     * itself ≥ M (oversize segment), split because the request is < M */
    harness_alloc(h, 5 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[31457280] | 5242880 [15728640]");
    ck_assert_uint_eq(harness_stat(h, "oversize_segments.current"), 2);
    /* 25 MiB ≥ M takes the 30 MiB block: 30 < 25 + 20 (max_non_split_rounding) —
     * whole, 5 MiB of slack */
    harness_alloc(h, 25 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "31457280 | 5242880 [15728640]");
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 35 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(torch_oversize_request_should_not_take_a_block_max_non_split_rounding_larger)
{
    harness *h = torch_new(1 * GiB, 0, "max_split_size_mb:20", NULL);
    strategy_handle a = harness_alloc(h, 50 * MiB, 0);
    harness_free_block(h, a);
    /* 21 MiB ≥ M: the cached 50 MiB block is ≥ 21 + 20 = 41 MiB → refused; a new
     * segment of round_up(21 MiB, 2 MiB) = 22 MiB */
    harness_alloc(h, 21 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[52428800] | 23068672");
    harness_free(h);
}
END_TEST

START_TEST(torch_should_release_one_oversize_block_before_retrying)
{
    /* capacity 64 MiB: two 30 MiB oversize segments leave 4 MiB */
    harness *h = torch_new(64 * MiB, 0, "max_split_size_mb:20", NULL);
    strategy_handle a = harness_alloc(h, 30 * MiB, 0);
    strategy_handle b = harness_alloc(h, 30 * MiB, 0);
    harness_free_block(h, a);
    harness_free_block(h, b);
    ck_assert_str_eq(harness_layout(h), "[31457280] | [31457280]");
    /* 5 MiB may not use them (≥ M); the 20 MiB segment does not fit in 4 MiB;
     * release_available_cached_blocks frees the first block ≥ max(5, 20) MiB on
     * this stream (lowest address among equals), then the segment fits */
    harness_alloc(h, 5 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[31457280] | 5242880 [15728640]");
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 1);
    ck_assert_uint_eq(harness_stat(h, "num_alloc_retries"), 0);
    ck_assert_uint_eq(harness_stat(h, "num_sync_all_streams"), 0);
    harness_free(h);
}
END_TEST

START_TEST(torch_oom_ladder_should_free_cached_blocks_and_retry)
{
    /* capacity 40 MiB: cached 12 + 14 MiB segments leave 14 MiB on the device */
    harness *h = torch_new(40 * MiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 12 * MiB, 0);
    strategy_handle b = harness_alloc(h, 14 * MiB, 0);
    harness_free_block(h, a);
    harness_free_block(h, b);
    ck_assert_str_eq(harness_layout(h), "[12582912] | [14680064]");
    /* 30 MiB: no cached block fits, cudaMalloc(30 MiB) fails (14 MiB free); no
     * max_split_size, so rung 6 is a no-op; rung 7 synchronizes, frees both unsplit
     * segments (14 + 26 = 40 MiB free) and the retry succeeds */
    harness_alloc(h, 30 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "31457280");
    ck_assert_uint_eq(harness_stat(h, "num_alloc_retries"), 1);
    ck_assert_uint_eq(harness_stat(h, "num_sync_all_streams"), 1);
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 2);
    ck_assert_uint_eq(harness_stat(h, "num_device_alloc"), 3);
    ck_assert_uint_eq(harness_stat(h, "num_ooms"), 0);
    ck_assert_uint_eq(harness_stat(h, "reserved_bytes.all.peak"), 30 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(torch_oom_should_mirror_pytorch_message_and_classify_capacity)
{
    /* 2.10's wording (PYTORCH_ALLOC_CONF, 2.10 only); the others in test_torch_release.c */
    harness *h = torch_harness_new(40 * MiB, 0, NULL, NULL, "2.10");
    harness_alloc(h, 30 * MiB, 0);
    /* 20 MiB > 40 − 30 = 10 MiB that could ever be free → capacity */
    strategy_oom oom = harness_oom(h, 20 * MiB, 0);
    ck_assert_uint_eq(oom.usable_bytes, 40 * MiB); /* capacity − context; the engine names the cause */
    ck_assert_uint_eq(oom.size_bytes, 20 * MiB);
    ck_assert_uint_eq(oom.reserved_bytes, 30 * MiB);
    ck_assert_uint_eq(oom.device_free_bytes, 10 * MiB);
    ck_assert_str_eq(oom.detail,
                     "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 MiB of "
                     "which 10.00 MiB is free. Including non-PyTorch memory, this process has 30.00 MiB memory in "
                     "use. Of the allocated memory 30.00 MiB is allocated by PyTorch, and 0 bytes is reserved by "
                     "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
                     "PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
                     "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
    ck_assert_uint_eq(harness_stat(h, "num_ooms"), 1);
    ck_assert_uint_eq(harness_stat(h, "num_alloc_retries"), 1);
    harness_free(h);
}
END_TEST

START_TEST(torch_empty_cache_should_release_only_unsplit_segments)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    harness_alloc(h, 5 * MiB, 0);                   /* 20 MiB segment, split */
    strategy_handle b = harness_alloc(h, 16 * MiB, 0); /* > the 15 MiB left: its own segment */
    strategy_handle c = harness_alloc(h, 1000, 0);     /* a small 2 MiB segment */
    ck_assert_str_eq(harness_layout(h), "5242880 [15728640] | 16777216 | 1024 [2096128]");
    harness_free_block(h, b);
    harness_free_block(h, c);
    harness_empty_cache(h);
    /* the 16 MiB and 2 MiB segments were whole and free: released; the 20 MiB one
     * still holds the 5 MiB block */
    ck_assert_str_eq(harness_layout(h), "5242880 [15728640]");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 20 * MiB);
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 2);
    ck_assert_uint_eq(harness_stat(h, "segment.all.current"), 1);
    ck_assert_uint_eq(harness_stat(h, "segment.all.peak"), 3);
    ck_assert_uint_eq(harness_stat(h, "num_sync_all_streams"), 1);
    harness_free(h);
}
END_TEST

/* ==== Expandable segments ==== */

/* The same program on a 100 MiB device: 40 + 40 MiB, then 30 MiB into each freed
 * 40 MiB, then 30 MiB more. Returns the status of the last allocation. */
static sim_status fragmenting_program(harness *h)
{
    strategy_handle a = harness_alloc(h, 40 * MiB, 0);
    strategy_handle b = harness_alloc(h, 40 * MiB, 0);
    harness_free_block(h, a);
    harness_alloc(h, 30 * MiB, 0);
    harness_free_block(h, b);
    harness_alloc(h, 30 * MiB, 0);
    strategy_oom oom;
    return harness_try_alloc(h, 30 * MiB, 0, NULL, &oom);
}

GPUSIM_TCASE("expandable", 0, NULL, NULL);

START_TEST(torch_default_should_hit_a_fragmentation_oom)
{
    harness *h = torch_new(100 * MiB, 0, NULL, NULL);
    /* two 40 MiB segments; each freed one is split 30 + [10]; 10 + 10 MiB free in
     * the cache and 20 MiB on the device, but no 30 MiB piece anywhere */
    strategy_oom oom;
    ck_assert_int_eq(fragmenting_program(h), SIM_OOM);
    ck_assert_str_eq(harness_layout(h), "31457280 [10485760] | 31457280 [10485760]");
    oom = harness_oom(h, 30 * MiB, 0);
    /* 30 MiB ≤ 100 − 60 = 40 MiB that could be free → fragmentation */
    ck_assert_uint_eq(oom.usable_bytes, 100 * MiB);
    ck_assert_uint_eq(oom.free_bytes, 20 * MiB);
    ck_assert_uint_eq(oom.largest_free_bytes, 10 * MiB);
    ck_assert_ptr_nonnull(strstr(oom.detail, "20.00 MiB is reserved by PyTorch but unallocated"));
    harness_free(h);
}
END_TEST

START_TEST(torch_expandable_segments_should_avoid_that_oom)
{
    harness *h = torch_new(100 * MiB, 0, "expandable_segments:True", NULL);
    /* one segment, 20 MiB pages: A maps 0..40, B 40..80. A freed → [40]; 30 MiB
     * splits it (expandable: remainder ≥ 512) → 30 [10]; B freed merges with the
     * [10] → [50] at 30..80; 30 MiB → 30 [20]; the last 30 MiB takes the [20] at
     * 60..80 plus one new 20 MiB page → [40] → 30 [10] */
    ck_assert_int_eq(fragmenting_program(h), SIM_OK);
    ck_assert_str_eq(harness_layout(h), "31457280 31457280 31457280 [10485760]");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 100 * MiB);
    /* one map call per new range: 40, 40, 20 */
    ck_assert_uint_eq(harness_stat(h, "num_device_alloc"), 3);
    /* expandable memory is not counted in segment / inactive_split */
    ck_assert_uint_eq(harness_stat(h, "segment.all.current"), 0);
    ck_assert_uint_eq(harness_stat(h, "inactive_split_bytes.all.current"), 0);
    harness_free(h);
}
END_TEST

START_TEST(torch_expandable_release_should_unmap_whole_free_pages_and_refill_the_lowest_hole)
{
    harness *h = torch_new(1 * GiB, 0, "expandable_segments:True", NULL);
    strategy_handle a = harness_alloc(h, 30 * MiB, 0); /* maps 2 pages: 0..40 */
    harness_alloc(h, 5 * MiB, 0);                      /* 30..35, [5] at 35..40 */
    ck_assert_str_eq(harness_layout(h), "31457280 5242880 [5242880]");
    harness_free_block(h, a);
    harness_empty_cache(h);
    /* [0, 30) is free: only page [0, 20) lies inside it → unmapped; [20, 30) stays */
    ck_assert_str_eq(harness_layout(h), "~20971520 [10485760] 5242880 [5242880]");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 20 * MiB);
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 1);
    /* 25 MiB: no free block fits; the lowest address with room is the hole at 0
     * (20 unmapped + 10 free): map one page, merge → [30], split 25 + [5] */
    harness_alloc(h, 25 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "26214400 [5242880] 5242880 [5242880]");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 40 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(torch_expandable_segment_should_disappear_when_all_its_pages_are_unmapped)
{
    harness *h = torch_new(1 * GiB, 0, "expandable_segments:True", NULL);
    strategy_handle a = harness_alloc(h, 1000, 0); /* small pool: one 2 MiB page */
    strategy_handle b = harness_alloc(h, 30 * MiB, 3);
    ck_assert_str_eq(harness_layout(h), "1024 [2096128] | 31457280@3 [10485760]@3");
    harness_free_block(h, a);
    harness_free_block(h, b);
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 2);
    harness_free(h);
}
END_TEST

/* ==== Options ==== */

GPUSIM_TCASE("options", 0, NULL, NULL);

START_TEST(torch_roundup_power2_divisions_should_round_to_divisions)
{
    harness *h = torch_new(4 * GiB, 0, "roundup_power2_divisions:4", NULL);
    /* 3 MiB + 1: d = 4, > 512·4; floor power 2 MiB, step 2 MiB / 4 = 512 KiB →
     * 3.5 MiB = 3670016; a 20 MiB segment: 20971520 − 3670016 = 17301504 left */
    harness_alloc(h, 3 * MiB + 1, 0);
    ck_assert_str_eq(harness_layout(h), "3670016 [17301504]");
    /* 1200 B is not > 512·4 = 2048 → plain 512 rounding: 1536 */
    harness_alloc(h, 1200, 1);
    /* 4 MiB is a power of two: unchanged, from the [17301504] remainder */
    harness_alloc(h, 4 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "3670016 4194304 [13107200] | 1536@1 [2095616]@1");
    harness_free(h);
}
END_TEST

START_TEST(torch_roundup_power2_divisions_list_should_pick_the_interval)
{
    harness *h = torch_new(4 * GiB, 0, "roundup_power2_divisions:[64:8,256:4,>:1]", NULL);
    /* 3 MiB + 1 (interval 1: 8 divisions): step 2 MiB / 8 = 256 KiB → 3407872 */
    strategy_handle a = harness_alloc(h, 3 * MiB + 1, 0);
    ck_assert_str_eq(harness_layout(h), "3407872 [17563648]");
    harness_free_block(h, a);
    harness_empty_cache(h);
    /* 130 MiB + 1 (interval 7, 128 MiB: left 0) → 512 rounding: 136315392; segment
     * round_up(2 MiB) = 132 MiB = 138412032; remainder 2096640 > 1 MiB → split */
    a = harness_alloc(h, 130 * MiB + 1, 0);
    ck_assert_str_eq(harness_layout(h), "136315392 [2096640]");
    harness_free_block(h, a);
    harness_empty_cache(h);
    /* 300 MiB + 1 (interval 8: 4 divisions): step 256 MiB / 4 = 64 MiB → 320 MiB */
    a = harness_alloc(h, 300 * MiB + 1, 0);
    ck_assert_str_eq(harness_layout(h), "335544320");
    harness_free_block(h, a);
    harness_empty_cache(h);
    /* 600 MiB + 1 (interval 9: '>' gave 1, no rounding beyond 512): 629146112;
     * segment 600 MiB + 2 MiB = 631242752, remainder 2096640 > 1 MiB → split */
    harness_alloc(h, 600 * MiB + 1, 0);
    ck_assert_str_eq(harness_layout(h), "629146112 [2096640]");
    harness_free(h);
}
END_TEST

START_TEST(torch_memory_fraction_should_cap_reserved_memory)
{
    /* 0.25 · 100 MiB = 26214400 = 25 MiB allowed */
    harness *h = torch_new(100 * MiB, 0, NULL, "0.25");
    harness_alloc(h, 12 * MiB, 0);
    /* 12 + 14 = 26 MiB > 25 MiB: refused without asking the device; 14 MiB is more
     * than the 25 − 12 = 13 MiB that could be free → capacity */
    strategy_oom oom = harness_oom(h, 14 * MiB, 0);
    ck_assert_uint_eq(oom.usable_bytes, 26214400); /* min(capacity − context, the fraction cap) */
    ck_assert_uint_eq(oom.device_free_bytes, 88 * MiB);
    /* the process holds its 12 MiB segment, no context: "this process has 12.00 MiB" */
    ck_assert_ptr_nonnull(strstr(oom.detail, "of which 88.00 MiB is free. Including non-PyTorch memory, this process "
                                             "has 12.00 MiB memory in use. 25.00 MiB allowed; Of the allocated"));
    /* a small segment (2 MiB) still fits: 12 + 2 = 14 ≤ 25 */
    harness_alloc(h, 1000, 0);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 14 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(torch_garbage_collection_should_free_the_oldest_cached_blocks_first)
{
    /* fraction 1.0 of 100 MiB: allowed 100 MiB in 2.6 (later releases take 1.0 as
     * no limit: test_torch_release.c); threshold 0.5 → GC above 50 MiB */
    harness *h = torch_harness_new(100 * MiB, 0, "garbage_collection_threshold:0.5", "1.0", "2.6");
    /* large-pool get_free_block calls count 1, 2, 3 for A, B, C */
    strategy_handle a = harness_alloc(h, 20 * MiB, 0); /* 20 MiB segment */
    strategy_handle b = harness_alloc(h, 12 * MiB, 0); /* 12 MiB segment */
    harness_free_block(h, a);                          /* cached at count 2 */
    strategy_handle c = harness_alloc(h, 2 * MiB, 1);  /* 20 MiB segment on stream 1 */
    harness_free_block(h, b);                          /* cached at count 3 */
    harness_free_block(h, c);                          /* merged, cached at count 3 */
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 52 * MiB);
    /* 22 MiB at count 4: nothing fits; reserved 52 > 50 → target 2 MiB; ages A 2,
     * B 1, C 1, mean 4/3: only A (20 MiB) goes, which meets the target */
    harness_alloc(h, 22 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[12582912] | [20971520]@1 | 23068672");
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 1);
    harness_free(h);
}
END_TEST

START_TEST(torch_garbage_collection_should_need_a_memory_fraction)
{
    /* the same program without set_per_process_memory_fraction: GC never runs */
    harness *h = torch_new(100 * MiB, 0, "garbage_collection_threshold:0.5", NULL);
    strategy_handle a = harness_alloc(h, 20 * MiB, 0);
    strategy_handle b = harness_alloc(h, 12 * MiB, 0);
    harness_free_block(h, a);
    strategy_handle c = harness_alloc(h, 2 * MiB, 1);
    harness_free_block(h, b);
    harness_free_block(h, c);
    harness_alloc(h, 22 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[20971520] | [12582912] | [20971520]@1 | 23068672");
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 0);
    harness_free(h);
}
END_TEST

START_TEST(torch_large_segment_size_should_set_the_1_to_10_mib_segment)
{
    harness *h = torch_new(1 * GiB, 0, "large_segment_size_mb:40", NULL);
    /* 2 MiB (large pool, < 10 MiB) → a 40 MiB segment; remainder 38 MiB */
    harness_alloc(h, 2 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "2097152 [39845888]");
    harness_free(h);
}
END_TEST

START_TEST(torch_options_should_reject_bad_values)
{
    harness *h = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1 * GiB, "alloc_conf=max_split_size_mb:10", &h, &err),
                     SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "max_split_size_mb"));
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1 * GiB, "alloc_conf=backend:cudaMallocAsync", &h, &err),
                     SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "native backend"));
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1 * GiB, "memory_fraction=1.5", &h, &err), SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "memory_fraction"));
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1 * GiB, "memory_fraction=half", &h, &err), SIM_EUSAGE);
    /* keys that are not ours are ignored */
    ck_assert_int_eq(harness_try_new(torch_strategy(), 1 * GiB, "limit=4GiB", &h, &err), SIM_OK);
    harness_free(h);
}
END_TEST

START_TEST(torch_options_should_report_the_effective_conf)
{
    harness *h = torch_new(1 * GiB, 0, "expandable_segments:True,release_lock_on_cudamalloc:True", "0.5");
    ck_assert_str_eq(harness_option(h, "expandable_segments"), "True");
    ck_assert_str_eq(harness_option(h, "max_split_size_mb"), "unlimited");
    ck_assert_str_eq(harness_option(h, "max_non_split_rounding_mb"), "20");
    ck_assert_str_eq(harness_option(h, "memory_fraction"), "0.5");
    ck_assert_ptr_nonnull(strstr(harness_option(h, "ignored_keys"), "release_lock_on_cudamalloc"));
    harness_free(h);
    /* unset: written as "", which create() reads back as unset (strategy.h) */
    h = torch_new(1 * GiB, 0, NULL, NULL);
    ck_assert_str_eq(harness_option(h, "memory_fraction"), "");
    ck_assert_str_eq(harness_option(h, "alloc_conf"), "");
    harness_free(h);
}
END_TEST

/* ==== Deferred frees and zero bytes ==== */

GPUSIM_TCASE("deferred", 0, NULL, NULL);

START_TEST(torch_deferred_free_should_keep_the_block_unusable_until_the_next_malloc_after_ready)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 1000, 0);
    harness_free_deferred(h, a);
    /* memory_allocated drops at once; the block stays active */
    ck_assert_str_eq(harness_layout(h), "(1024) [2096128]");
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 0);
    ck_assert_uint_eq(harness_stat(h, "active_bytes.all.current"), 1024);
    ck_assert_uint_eq(harness_stat(h, "requested_bytes.all.current"), 1000);
    /* a new request cannot reuse the pending block */
    harness_alloc(h, 1000, 0);
    ck_assert_str_eq(harness_layout(h), "(1024) 1024 [2095104]");
    /* ready_t: the event completed, but PyTorch has not polled it yet */
    harness_free_ready(h, a);
    ck_assert_str_eq(harness_layout(h), "(1024) 1024 [2095104]");
    ck_assert_uint_eq(harness_stat(h, "active_bytes.all.current"), 2048);
    ck_assert_uint_eq(harness_stat(h, "inactive_split.all.current"), 1);
    /* the next malloc polls it first (process_events): the block is free again
     * and, as the best fit of 1024 B, taken at once */
    harness_alloc(h, 1000, 0);
    ck_assert_str_eq(harness_layout(h), "1024 1024 [2095104]");
    ck_assert_uint_eq(harness_stat(h, "active_bytes.all.current"), 2048);
    ck_assert_uint_eq(harness_stat(h, "active.all.freed"), 1);
    harness_free(h);
}
END_TEST

START_TEST(torch_ready_frees_of_one_stream_should_be_polled_in_record_order_up_to_the_first_pending_one)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 1000, 0);
    strategy_handle b = harness_alloc(h, 3000, 1);
    harness_free_deferred_on(h, a, 7);
    harness_free_deferred_on(h, b, 7);
    /* b's event completes first, but a, recorded on stream 7 before it, still
     * waits: PyTorch stops polling a stream's events at the first one not ready */
    harness_free_ready(h, b);
    harness_alloc(h, 0x100000, 0);
    ck_assert_uint_eq(harness_stat(h, "active.all.current"), 3);
    ck_assert_uint_eq(harness_stat(h, "active.all.freed"), 0);
    /* once a completes, the next malloc frees both */
    harness_free_ready(h, a);
    ck_assert_uint_eq(harness_stat(h, "active.all.current"), 3);
    harness_alloc(h, 512, 2);
    ck_assert_uint_eq(harness_stat(h, "active.all.current"), 2);
    ck_assert_uint_eq(harness_stat(h, "active.all.freed"), 2);
    harness_free(h);
}
END_TEST

START_TEST(torch_ready_frees_should_wait_only_on_their_own_stream_or_on_nothing)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 1000, 0);
    strategy_handle b = harness_alloc(h, 3000, 1);
    strategy_handle c = harness_alloc(h, 5000, 2);
    strategy_handle d = harness_alloc(h, 7000, 3);
    harness_free_deferred_on(h, a, 7);
    harness_free_deferred_on(h, b, 8); /* another stream: not behind a */
    harness_free_deferred(h, c);       /* no stream: waits for nothing but its own ready_t */
    harness_free_deferred_on(h, d, 7); /* behind a */
    harness_free_ready(h, b);
    harness_free_ready(h, c);
    harness_free_ready(h, d);
    /* the next malloc completes b and c; d waits behind a (4 active: a, d, the new one) */
    harness_alloc(h, 0x100000, 0);
    ck_assert_uint_eq(harness_stat(h, "active.all.freed"), 2);
    ck_assert_uint_eq(harness_stat(h, "active.all.current"), 3);
    /* a completes: then d, in one poll */
    harness_free_ready(h, a);
    harness_alloc(h, 512, 4);
    ck_assert_uint_eq(harness_stat(h, "active.all.freed"), 4);
    ck_assert_uint_eq(harness_stat(h, "active.all.current"), 2);
    harness_free(h);
}
END_TEST

START_TEST(torch_zero_byte_malloc_should_not_poll_events)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 1000, 0);
    harness_free_deferred(h, a);
    harness_free_ready(h, a);
    /* allocate(0) returns no block without entering malloc */
    harness_alloc(h, 0, 0);
    ck_assert_str_eq(harness_layout(h), "(1024) [2096128]");
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "");
    harness_free(h);
}
END_TEST

START_TEST(torch_empty_cache_should_complete_pending_frees_early)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 1000, 0);
    strategy_handle b = harness_alloc(h, 1000, 0);
    strategy_handle c = harness_alloc(h, 5 * MiB, 0);
    harness_free_deferred(h, a);
    harness_free_deferred(h, c);
    ck_assert_str_eq(harness_layout(h), "(1024) 1024 [2095104] | (5242880) [15728640]");
    /* empty_cache synchronizes: a and c complete; c's segment is then whole and
     * free → released; a's segment still holds b */
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "[1024] 1024 [2095104]");
    ck_assert_uint_eq(harness_stat(h, "num_device_free"), 1);
    /* their handles stay valid; free_ready is then a no-op */
    harness_free_ready(h, a);
    harness_free_ready(h, c);
    ck_assert_str_eq(harness_layout(h), "[1024] 1024 [2095104]");
    harness_free_block(h, b);
    ck_assert_str_eq(harness_layout(h), "[2097152]");
    harness_free(h);
}
END_TEST

START_TEST(torch_oom_retry_should_complete_pending_frees)
{
    /* 40 MiB device: a 30 MiB block freed with ready_t in the future */
    harness *h = torch_new(40 * MiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 30 * MiB, 0);
    harness_free_deferred(h, a);
    /* 30 MiB again: the pending block is unusable, the device has 10 MiB; rung 7
     * synchronizes (a completes), releases its segment, and the retry fits */
    harness_alloc(h, 30 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "31457280");
    ck_assert_uint_eq(harness_stat(h, "num_alloc_retries"), 1);
    harness_free_ready(h, a);
    ck_assert_str_eq(harness_layout(h), "31457280");
    harness_free(h);
}
END_TEST

START_TEST(torch_zero_byte_allocations_should_take_nothing)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle z[2];
    harness_alloc_two_empty(h, 2, z);
    ck_assert_uint_eq(harness_stat(h, "allocation.all.current"), 0);
    harness_free_block(h, z[0]);
    harness_free_deferred(h, z[1]);
    harness_empty_cache(h);
    harness_free_ready(h, z[1]);
    harness_free(h);
}
END_TEST

START_TEST(torch_stats_should_carry_memory_stats_names)
{
    harness *h = torch_new(1 * GiB, 0, NULL, NULL);
    strategy_handle a = harness_alloc(h, 5 * MiB, 0);
    harness_alloc(h, 1000, 0);
    harness_free_block(h, a);
    ck_assert_uint_eq(harness_stat(h, "allocated_bytes.all.current"), 1024);
    ck_assert_uint_eq(harness_stat(h, "allocated_bytes.all.peak"), 5 * MiB + 1024);
    ck_assert_uint_eq(harness_stat(h, "allocated_bytes.large_pool.freed"), 5 * MiB);
    ck_assert_uint_eq(harness_stat(h, "reserved_bytes.all.peak"), 22 * MiB);
    ck_assert_uint_eq(harness_stat(h, "reserved_bytes.small_pool.peak"), 2 * MiB);
    ck_assert_uint_eq(harness_stat(h, "active_bytes.all.peak"), 5 * MiB + 1024);
    ck_assert_uint_eq(harness_stat(h, "requested_bytes.all.peak"), 5 * MiB + 1000);
    ck_assert_uint_eq(harness_stat(h, "segment.all.peak"), 2);
    /* the 5 MiB split off a 20 MiB segment left a 15 MiB inactive split block */
    ck_assert_uint_eq(harness_stat(h, "inactive_split_bytes.all.peak"), 15 * MiB + 2096128);
    ck_assert_uint_eq(harness_stat(h, "inactive_split.all.peak"), 2);
    ck_assert_uint_eq(harness_stat(h, "num_device_alloc"), 2);
    ck_assert_uint_eq(harness_stat(h, "oversize_allocations.current"), 0);
    strategy_sample smp = harness_sample(h);
    /* free: the whole 20 MiB segment plus 2096128 in the small one */
    ck_assert_uint_eq(smp.free_bytes, 20 * MiB + 2096128);
    ck_assert_uint_eq(smp.largest_free_bytes, 20 * MiB);
    harness_free(h);
}
END_TEST

/* ==== Releases (--torch-version) ==== */

GPUSIM_TCASE("versions", 0, NULL, NULL);

START_TEST(torch_2_6_should_round_1100_mib_to_1152_under_the_roundup_list)
{
    /* [256:1,512:2,1024:4,>:8]: 2.6 gives 1100 MiB's interval (entry 10) the '>'
     * value 8: steps of 1024/8 = 128 MiB, 1100 → 1152 MiB; main keeps 4 there:
     * steps of 256 MiB, 1280 MiB */
    const char *list = "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]";
    harness *h = torch_harness_new(8 * GiB, 0, list, NULL, "2.6");
    harness_alloc(h, 1100 * MiB, 0);
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 1152 * MiB);
    harness_free(h);
    h = torch_harness_new(8 * GiB, 0, list, NULL, "main");
    harness_alloc(h, 1100 * MiB, 0);
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 1280 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(torch_one_division_should_keep_the_exact_size_before_2_4)
{
    /* divisions 1: 2.3 hands out the size as asked, 2.4 on rounds to 512 B */
    harness *h = torch_harness_new(1 * GiB, 0, "roundup_power2_divisions:1", NULL, "2.3");
    harness_alloc(h, 3 * MiB + 1, 0);
    ck_assert_uint_eq(harness_stat(h, "allocated_bytes.all.current"), 3 * MiB + 1);
    harness_free(h);
    h = torch_harness_new(1 * GiB, 0, "roundup_power2_divisions:1", NULL, "2.4");
    harness_alloc(h, 3 * MiB + 1, 0);
    ck_assert_uint_eq(harness_stat(h, "allocated_bytes.all.current"), 3 * MiB + 512);
    harness_free(h);
}
END_TEST

START_TEST(torch_2_6_oom_message_should_advise_pytorch_cuda_alloc_conf)
{
    /* 2.6 names the environment variable it reads, PYTORCH_CUDA_ALLOC_CONF; 2.10
     * PYTORCH_ALLOC_CONF (torch_oom_should_mirror_pytorch_message_and_classify_capacity) */
    harness *h = torch_harness_new(40 * MiB, 0, NULL, NULL, "2.6");
    harness_alloc(h, 30 * MiB, 0);
    strategy_oom oom = harness_oom(h, 20 * MiB, 0);
    ck_assert_str_eq(oom.detail,
                     "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 MiB of "
                     "which 10.00 MiB is free. Including non-PyTorch memory, this process has 30.00 MiB memory in "
                     "use. Of the allocated memory 30.00 MiB is allocated by PyTorch, and 0 bytes is reserved by "
                     "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
                     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
                     "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
    harness_free(h);
}
END_TEST

START_TEST(torch_per_process_memory_fraction_key_should_cap_reserved_memory)
{
    /* per_process_memory_fraction:0.25 of 1 GiB: 256 MiB allowed; a 300 MiB
     * request cannot get its segment */
    harness *h = torch_harness_new(1 * GiB, 0, "per_process_memory_fraction:0.25", NULL, "2.10");
    ck_assert_str_eq(harness_option(h, "memory_fraction"), "0.25");
    ck_assert_str_eq(harness_option(h, "torch_version"), "2.10");
    harness_oom(h, 300 * MiB, 0);
    harness_alloc(h, 200 * MiB, 0);
    harness_free(h);
}
END_TEST
