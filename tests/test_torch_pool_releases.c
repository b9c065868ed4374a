/* Check suite for the `torch` strategy's private-pool rules that differ by PyTorch
 * release (strategies/torch_version.c; docs/allocators.md §2.15), each found and
 * checked by the upstream differential's pool traces against the 2.6 source and the
 * 2.14.1 wheel (validate/upstream/torch): from 2.13 the capture-only rules hold
 * where a capture runs on the current stream, not wherever a pool scope is open;
 * MemPool's use_on_oom (2.8 on; before the cache is released from 2.11) and no_split
 * (2.10 on). Sizes are MiB; a request of 10 MiB or more gets a segment of
 * its size rounded up to 2 MiB, one of 1-10 MiB a 20 MiB segment, one of at most
 * 1 MiB a 2 MiB segment of the small pool. In layouts "[n]" is a free block, "(n)"
 * one freed with a stream use whose event PyTorch has not seen complete. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/torch.h"
#include "support/check_main.h"
#include "support/harness.h"

/* 20 MiB on stream 0 freed with a stream use whose work is done, then a capture on
 * stream 1, then 1 KiB on stream 0, which is not capturing: the layout after it. */
static const char *poll_beside_a_capture(const char *opts)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, opts);
    strategy_handle d = harness_alloc(h, 20 * MiB, 0);
    harness_free_deferred(h, d);
    harness_free_ready(h, d);
    harness_pool_begin(h, 1, 1, false);
    harness_alloc(h, 1 * KiB, 0);
    static char layout[256];
    snprintf(layout, sizeof layout, "%s", harness_layout(h));
    harness_free(h);
    return layout;
}

GPUSIM_TCASE("capture context", 0, NULL, NULL);

START_TEST(from_2_13_an_allocation_on_a_stream_that_is_not_capturing_should_poll_its_events)
{
    /* 2.13 on (is_capture_context, pytorch/pytorch#175374): stream 0 does not capture,
     * so the malloc polls and the 20 MiB block is free again */
    ck_assert_str_eq(poll_beside_a_capture("torch_version=2.14"), "[20971520] | 1024 [2096128]");
    ck_assert_str_eq(poll_beside_a_capture("torch_version=2.13"), "[20971520] | 1024 [2096128]");
    /* before: any open scope stops the polling (captures_underway non-empty) */
    ck_assert_str_eq(poll_beside_a_capture("torch_version=2.12"), "(20971520) | 1024 [2096128]");
    ck_assert_str_eq(poll_beside_a_capture("torch_version=2.6"), "(20971520) | 1024 [2096128]");
}
END_TEST

/* In a use_mem_pool scope (every stream, no capture) 4 MiB is allocated and freed
 * with a stream use, its work done; then 1 KiB: the layout after it. */
static const char *free_in_a_mem_pool_scope(const char *opts)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, opts);
    harness_pool_begin(h, 1, 0, true);
    strategy_handle a = harness_alloc(h, 4 * MiB, 0);
    harness_free_deferred(h, a);
    harness_free_ready(h, a);
    harness_alloc(h, 1 * KiB, 0);
    static char layout[256];
    snprintf(layout, sizeof layout, "%s", harness_layout(h));
    harness_free(h);
    return layout;
}

START_TEST(from_2_13_a_use_mem_pool_scope_should_be_no_capture)
{
    /* 2.13 on: the free gets its event at once and the next malloc polls it: the
     * 4 MiB returns to the pool's 20 MiB segment, whole again, and the 1 KiB takes
     * a small segment of the pool */
    ck_assert_str_eq(free_in_a_mem_pool_scope("torch_version=2.14"), "[20971520] | 1024 [2096128]");
    /* 2.6-2.12: the scope counts as a capture: the free is parked, nothing polled */
    ck_assert_str_eq(free_in_a_mem_pool_scope("torch_version=2.12"), "(4194304) [16777216] | 1024 [2096128]");
}
END_TEST

GPUSIM_TCASE("MemPool options", 0, NULL, NULL);

/* A 60 MiB card; a use_mem_pool scope on pool 1 with options allocates 40 MiB and
 * frees it (the pool caches a 40 MiB segment, its use kept); then 30 MiB on stream
 * 0 outside the scope, which cudaMalloc cannot give (20 MiB left). */
static sim_status lend_from_pool(const char *opts, strategy_handle *out, strategy_oom *oom, uint64_t *reserved,
                                 uint64_t *retries)
{
    harness *h = harness_new(torch_strategy(), 60 * MiB, 0, opts);
    strategy_pool_scope sc = {.pool = 1, .stream = 0, .all_streams = true, .use_on_oom = true};
    harness_pool_scope(h, &sc);
    harness_free_block(h, harness_alloc(h, 40 * MiB, 0));
    harness_pool_end(h, 1);
    sim_status st = harness_try_alloc(h, 30 * MiB, 0, out, oom);
    *reserved = harness_sample(h).reserved_bytes;
    *retries = harness_stat(h, "num_alloc_retries");
    harness_free(h);
    return st;
}

START_TEST(a_use_on_oom_pool_should_lend_its_free_block_when_the_first_cudamalloc_fails)
{
    strategy_handle a;
    strategy_oom oom;
    uint64_t reserved = 0, retries = 0;
    /* 2.11 on (try_mempool_fallback): the pool's 40 MiB block serves the request right
     * after the first cudaMalloc fails, nothing more is reserved, no retry */
    ck_assert_int_eq(lend_from_pool("torch_version=2.14", &a, &oom, &reserved, &retries), SIM_OK);
    ck_assert_uint_eq(reserved, 40 * MiB);
    ck_assert_uint_eq(retries, 0);
    /* 2.8-2.10: the same block, after the last rung (release_cached_blocks and its
     * cudaMalloc, one retry) failed */
    ck_assert_int_eq(lend_from_pool("torch_version=2.10", &a, &oom, &reserved, &retries), SIM_OK);
    ck_assert_uint_eq(reserved, 40 * MiB);
    ck_assert_uint_eq(retries, 1);
    /* 2.7: the pool is not freeable (a use left): out of memory */
    ck_assert_int_eq(lend_from_pool("torch_version=2.7", &a, &oom, &reserved, &retries), SIM_OOM);
    ck_assert_uint_eq(oom.reserved_bytes, 40 * MiB);
}
END_TEST

/* Pool 1 with no_split caches a 40 MiB segment; a 10 MiB request in it: the bytes
 * allocated after it. */
static uint64_t allocated_from_no_split_pool(const char *opts)
{
    harness *h = harness_new(torch_strategy(), 1024 * MiB, 0, opts);
    strategy_pool_scope sc = {.pool = 1, .stream = 0, .all_streams = true, .no_split = true};
    harness_pool_scope(h, &sc);
    harness_free_block(h, harness_alloc(h, 40 * MiB, 0));
    harness_alloc(h, 10 * MiB, 0);
    uint64_t allocated = harness_sample(h).allocated_bytes;
    harness_free(h);
    return allocated;
}

START_TEST(a_no_split_pool_should_hand_out_its_blocks_whole)
{
    /* 2.10 on: the whole 40 MiB block; before, split to 10 MiB */
    ck_assert_uint_eq(allocated_from_no_split_pool("torch_version=2.14"), 40 * MiB);
    ck_assert_uint_eq(allocated_from_no_split_pool("torch_version=2.9"), 10 * MiB);
}
END_TEST
