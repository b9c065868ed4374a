/* Check suite for the `torch` strategy's private pools (design.md §3 "Pools";
 * strategies/torch_pools.c, the rules of PyTorch 2.6's CUDACachingAllocator.cpp):
 * routing by capture scope, reuse within a pool, what empty_cache may release, and
 * what a capture does to the event polling and the out-of-memory ladder. Every
 * operation runs the full invariant checker (support/harness.h). Sizes are MiB; a
 * request ≥ 10 MiB gets a segment of its size rounded up to 2 MiB, one of 1–10 MiB a
 * 20 MiB segment, one ≤ 1 MiB a 2 MiB segment of the small pool. */
#include <check.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/torch.h"
#include "support/check_main.h"
#include "support/harness.h"

static uint64_t pool_of(harness *h, strategy_handle a)
{
    strategy_block b;
    ck_assert(h->ops->locate(h->s, a, &b));
    return b.pool_id;
}

GPUSIM_TCASE("routing", 0, NULL, NULL);

START_TEST(a_capture_should_allocate_from_its_own_pool_although_the_default_pool_has_a_fitting_block)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    harness_free_block(h, harness_alloc(h, 20 * MiB, 0)); /* default: [20] cached */
    harness_pool_begin(h, 1, 0, false);
    strategy_handle b = harness_alloc(h, 20 * MiB, 0); /* pool 1: a segment of its own */
    harness_pool_end(h, 1);
    ck_assert_str_eq(harness_layout(h), "[20971520] | 20971520");
    ck_assert_uint_eq(pool_of(h, b), 1);
    strategy_pool_info pi;
    ck_assert(harness_pool_info(h, 1, &pi));
    ck_assert_uint_eq(pi.reserved_bytes, 20 * MiB);
    ck_assert_uint_eq(pi.allocated_bytes, 20 * MiB);
    ck_assert_uint_eq(pi.segments, 1);
    ck_assert_uint_eq(pi.uses, 1);
    ck_assert(!pi.routed);
    /* after the capture the default pool's cached block serves again: 20 + 20 reserved */
    strategy_handle c = harness_alloc(h, 20 * MiB, 0);
    ck_assert_uint_eq(pool_of(h, c), 0);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 40 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(a_capture_should_route_only_its_stream_and_use_mem_pool_every_stream)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    harness_pool_begin(h, 1, 0, false); /* a capture on stream 0 */
    strategy_handle on0 = harness_alloc(h, 4 * MiB, 0);
    strategy_handle on1 = harness_alloc(h, 4 * MiB, 1);
    harness_pool_end(h, 1);
    ck_assert_uint_eq(pool_of(h, on0), 1);
    ck_assert_uint_eq(pool_of(h, on1), 0);
    harness_pool_begin(h, 2, 0, true); /* use_mem_pool: every stream */
    strategy_handle any = harness_alloc(h, 4 * MiB, 1);
    harness_pool_end(h, 2);
    ck_assert_uint_eq(pool_of(h, any), 2);
    /* the first scope that takes the stream wins (get_pool walks captures_underway in order) */
    harness_pool_begin(h, 2, 0, true);
    harness_pool_begin(h, 1, 0, false);
    strategy_handle first = harness_alloc(h, 4 * MiB, 0);
    harness_pool_end(h, 2);
    strategy_handle second = harness_alloc(h, 4 * MiB, 0);
    harness_pool_end(h, 1);
    ck_assert_uint_eq(pool_of(h, first), 2);
    ck_assert_uint_eq(pool_of(h, second), 1);
    harness_free(h);
}
END_TEST

GPUSIM_TCASE("sharing", 0, NULL, NULL);

START_TEST(captures_sharing_one_pool_should_reuse_what_earlier_captures_freed)
{
    /* capture 1 allocates 30 and frees it: pool [30]; capture 2 asks 20: it takes the
     * 30 block (split: 10 > 1 MiB stays free), so the pool holds 30, not 30 + 20 */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    harness_pool_begin(h, 1, 0, false);
    harness_free_block(h, harness_alloc(h, 30 * MiB, 0));
    harness_pool_end(h, 1);
    harness_pool_begin(h, 1, 0, false);
    strategy_handle y = harness_alloc(h, 20 * MiB, 0);
    harness_pool_end(h, 1);
    ck_assert_str_eq(harness_layout(h), "20971520 [10485760]");
    strategy_pool_info pi;
    ck_assert(harness_pool_info(h, 1, &pi));
    ck_assert_uint_eq(pi.uses, 2);
    ck_assert_uint_eq(pi.peak_reserved_bytes, 30 * MiB);
    ck_assert_uint_eq(pi.peak_allocated_bytes, 30 * MiB);
    ck_assert_uint_eq(pool_of(h, y), 1);
    harness_free(h);
}
END_TEST

START_TEST(captures_into_separate_pools_should_hold_the_sum)
{
    /* the same two captures, one pool each: 30 + 20 */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    harness_pool_begin(h, 1, 0, false);
    harness_free_block(h, harness_alloc(h, 30 * MiB, 0));
    harness_pool_end(h, 1);
    harness_pool_begin(h, 2, 0, false);
    harness_alloc(h, 20 * MiB, 0);
    harness_pool_end(h, 2);
    ck_assert_str_eq(harness_layout(h), "[31457280] | 20971520");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 50 * MiB);
    harness_free(h);
}
END_TEST

GPUSIM_TCASE("release", 0, NULL, NULL);

START_TEST(empty_cache_should_keep_a_pools_segments_until_every_use_is_released)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    harness_pool_begin(h, 1, 0, false);
    harness_free_block(h, harness_alloc(h, 30 * MiB, 0));
    harness_pool_end(h, 1);
    harness_pool_begin(h, 1, 0, false); /* a second graph shares the pool: two uses */
    harness_pool_end(h, 1);
    harness_empty_cache(h); /* the pool is in use: [30] stays */
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 30 * MiB);
    harness_pool_release(h, 1);
    harness_empty_cache(h); /* one use left */
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 30 * MiB);
    harness_pool_release(h, 1);
    strategy_pool_info pi;
    ck_assert(harness_pool_info(h, 1, &pi)); /* freeable, not yet released */
    ck_assert_uint_eq(pi.uses, 0);
    harness_empty_cache(h); /* graph_pools_freeable: cudaFree, then the pool is erased */
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    ck_assert(!harness_pool_info(h, 1, &pi));
    harness_free(h);
}
END_TEST

START_TEST(a_released_pool_should_keep_a_segment_whose_block_is_still_live)
{
    /* 4 MiB takes a 20 MiB segment, split 4 + [16]: release_blocks frees unsplit
     * segments only, so the pool and its segment outlive the graph until the output
     * is freed */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    harness_pool_begin(h, 1, 0, false);
    strategy_handle out = harness_alloc(h, 4 * MiB, 0);
    harness_pool_end(h, 1);
    harness_pool_release(h, 1);
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "4194304 [16777216]");
    strategy_pool_info pi;
    ck_assert(harness_pool_info(h, 1, &pi));
    harness_free_block(h, out);
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "");
    ck_assert(!harness_pool_info(h, 1, &pi));
    harness_free(h);
}
END_TEST

GPUSIM_TCASE("capture", 0, NULL, NULL);

START_TEST(no_event_should_be_polled_while_a_capture_is_underway)
{
    /* a default-pool block freed with a stream use, its work done (ready): the next
     * malloc outside a capture returns it; one inside a capture does not poll */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    strategy_handle d = harness_alloc(h, 20 * MiB, 0);
    harness_free_deferred(h, d);
    harness_free_ready(h, d);
    harness_pool_begin(h, 1, 0, false);
    harness_alloc(h, 1 * KiB, 0);
    harness_pool_end(h, 1);
    ck_assert_str_eq(harness_layout(h), "(20971520) | 1024 [2096128]");
    harness_alloc(h, 1 * KiB, 1); /* outside the capture: polled */
    ck_assert_str_eq(harness_layout(h), "[20971520] | 1024 [2096128] | 1024@1 [2096128]@1");
    harness_free(h);
}
END_TEST

START_TEST(a_capture_should_not_release_cached_segments_to_make_room)
{
    /* 60 MiB card, 40 cached in the default pool: a 30 MiB request needs a segment;
     * outside a capture the ladder would release the 40 and retry, during one it
     * stops before release_cached_blocks: out of memory with 40 MiB free inside */
    harness *h = harness_new(torch_strategy(), 60 * MiB, 0, NULL);
    harness_free_block(h, harness_alloc(h, 40 * MiB, 0));
    harness_pool_begin(h, 1, 0, false);
    strategy_oom oom = harness_oom(h, 30 * MiB, 0);
    ck_assert_uint_eq(oom.free_bytes, 40 * MiB);
    ck_assert_uint_eq(oom.reserved_bytes, 40 * MiB);
    harness_pool_end(h, 1);
    /* after it, the same request on stream 1 (the cached 40 is stream 0's): the
     * ladder releases the 40 and takes 30 */
    harness_alloc(h, 30 * MiB, 1);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 30 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(a_capture_freed_with_stream_uses_should_wait_for_the_end_of_the_capture)
{
    /* needs_events_deferred_until_no_capture: a block the capture allocated and freed
     * with a stream use waits in no queue; at the first malloc after the capture its
     * capture-time uses are dropped and it returns at once, before its work is done.
     * A block from before the capture gets its event then, and waits for it. */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    strategy_handle before = harness_alloc(h, 20 * MiB, 0);
    harness_pool_begin(h, 1, 0, false);
    strategy_handle a = harness_alloc(h, 4 * MiB, 0);
    harness_free_deferred(h, a);
    harness_free_deferred(h, before);
    harness_pool_end(h, 1);
    ck_assert_str_eq(harness_layout(h), "(20971520) | (4194304) [16777216]");
    harness_alloc(h, 1 * KiB, 0);
    ck_assert_str_eq(harness_layout(h), "(20971520) | [20971520] | 1024 [2096128]");
    harness_free_ready(h, a);
    harness_free_ready(h, before);
    harness_alloc(h, 1 * KiB, 0);
    ck_assert_str_eq(harness_layout(h), "[20971520] | [20971520] | 1024 1024 [2095104]");
    harness_free(h);
}
END_TEST

START_TEST(empty_cache_during_a_capture_should_leave_the_cache_alone)
{
    /* PyTorch 2.6 asserts that no capture is underway when it synchronizes */
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, NULL);
    harness_free_block(h, harness_alloc(h, 20 * MiB, 0));
    harness_pool_begin(h, 1, 0, false);
    harness_empty_cache(h);
    harness_pool_end(h, 1);
    ck_assert_str_eq(harness_layout(h), "[20971520]");
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "");
    harness_free(h);
}
END_TEST

START_TEST(the_oom_message_should_count_a_private_pools_cached_blocks_as_allocated)
{
    /* 60 MiB card: a capture frees its 30 MiB back into pool 1, which still has its
     * use; 40 MiB outside the capture: 30 free on the device, and release_cached_blocks
     * may not take the pool's segment. PyTorch's message (2.6 lines 1283-1304, 1338-1359)
     * sums the private pools' free blocks (30) into "allocated by PyTorch" (0 + 30) and
     * takes them off "reserved but unallocated" (30 - 0 - 30 = 0 bytes). */
    harness *h = harness_new(torch_strategy(), 60 * MiB, 0, "torch_version=2.6");
    harness_pool_begin(h, 1, 0, false);
    harness_free_block(h, harness_alloc(h, 30 * MiB, 0));
    harness_pool_end(h, 1);
    strategy_oom oom = harness_oom(h, 40 * MiB, 0);
    ck_assert_str_eq(oom.detail,
                     "CUDA out of memory. Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 60.00 MiB of which "
                     "30.00 MiB is free. Including non-PyTorch memory, this process has 30.00 MiB memory in use. Of the "
                     "allocated memory 30.00 MiB is allocated by PyTorch, with 30.00 MiB allocated in private pools "
                     "(e.g., CUDA Graphs), and 0 bytes is reserved by PyTorch but unallocated. If reserved but "
                     "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
                     "avoid fragmentation.  See documentation for Memory Management  "
                     "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
    harness_free(h);
}
END_TEST
