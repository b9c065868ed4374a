/* Check suite for NCCL's buffers outside the allocator (traces/synth/nccl.h): the
 * per-protocol defaults, one connection's allocation, and what a rank of a
 * dp x tp x pp job holds. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "support/check_main.h"
#include "traces/synth/nccl.h"

#define MIB ((uint64_t)1 << 20)

START_TEST(each_protocols_fifo_should_be_ncclS_default)
{
    ck_assert_uint_eq(nccl_proto_count(), 3);
    /* LL: 8 lines/thread x 512 threads x 8 steps x 16 B = 524,288 B */
    ck_assert_str_eq(nccl_proto_get(0)->name, "LL");
    ck_assert_uint_eq(nccl_proto_get(0)->bytes, 524288u);
    /* LL128: 120 elements/thread x 640 threads x 8 steps x 8 B = 4,915,200 B */
    ck_assert_str_eq(nccl_proto_get(1)->name, "LL128");
    ck_assert_uint_eq(nccl_proto_get(1)->bytes, 4915200u);
    /* Simple: NCCL_BUFFSIZE's documented default, 4 MiB = 4,194,304 B */
    ck_assert_str_eq(nccl_proto_get(2)->name, "Simple");
    ck_assert_uint_eq(nccl_proto_get(2)->bytes, 4 * MIB);
    ck_assert_ptr_null(nccl_proto_get(3));
    for (size_t i = 0; i < nccl_proto_count(); i++)
        ck_assert_ptr_nonnull(strstr(nccl_proto_get(i)->source, "NCCL"));
}
END_TEST

START_TEST(one_ring_connection_should_be_all_protocols_rounded_to_2_MiB)
{
    /* 524,288 + 4,915,200 + 4,194,304 = 9,633,792 B -> 5 granules of 2 MiB = 10,485,760 B,
     * the allocation size NVIDIA/nccl issue 1685 shows */
    ck_assert_uint_eq(nccl_connection_bytes(), 10485760u);
    ck_assert_uint_eq(nccl_p2p_connection_bytes(), 2 * MIB);
}
END_TEST

START_TEST(a_one_rank_job_or_no_channels_should_hold_nothing)
{
    ck_assert_uint_eq(nccl_rank_bytes(1, 1, 1, 0, 24), 0);
    ck_assert_uint_eq(nccl_rank_bytes(8, 2, 2, 0, 0), 0);
}
END_TEST

START_TEST(a_data_parallel_rank_should_hold_one_ring_of_channels)
{
    /* 24 channels x 10 MiB = 240 MiB, whatever the group's size */
    ck_assert_uint_eq(nccl_rank_bytes(8, 1, 1, 0, 24), 240 * MIB);
    ck_assert_uint_eq(nccl_rank_bytes(2, 1, 1, 0, 24), 240 * MIB);
    /* NCCL_MAX_NCHANNELS=4: 4 x 10 MiB */
    ck_assert_uint_eq(nccl_rank_bytes(64, 1, 1, 0, 4), 40 * MIB);
}
END_TEST

START_TEST(tensor_parallelism_should_add_a_second_ring)
{
    /* dp 4 and tp 2: two rings of 24 x 10 MiB = 480 MiB; tp alone: one ring */
    ck_assert_uint_eq(nccl_rank_bytes(4, 2, 1, 0, 24), 480 * MIB);
    ck_assert_uint_eq(nccl_rank_bytes(1, 8, 1, 0, 24), 240 * MIB);
}
END_TEST

START_TEST(a_pipeline_stage_should_connect_to_each_neighbouring_stage)
{
    /* pp 4, 24 channels x 2 MiB per neighbour: the first and last stage have one
     * neighbour (48 MiB), the middle ones two (96 MiB) */
    ck_assert_uint_eq(nccl_rank_bytes(1, 1, 4, 0, 24), 48 * MIB);
    ck_assert_uint_eq(nccl_rank_bytes(1, 1, 4, 1, 24), 96 * MIB);
    ck_assert_uint_eq(nccl_rank_bytes(1, 1, 4, 2, 24), 96 * MIB);
    ck_assert_uint_eq(nccl_rank_bytes(1, 1, 4, 3, 24), 48 * MIB);
    /* dp 2, tp 2, pp 2, stage 0: 240 + 240 + 48 = 528 MiB */
    ck_assert_uint_eq(nccl_rank_bytes(2, 2, 2, 0, 24), 528 * MIB);
}
END_TEST
