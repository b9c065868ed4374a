/* Check suite for the published context figures (sim/gpu_context.h): the default
 * --context per CUDA major and GPU generation, and the spread plan warns within. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "sim/gpu_context.h"
#include "support/check_main.h"

#define MIB ((uint64_t)1 << 20)

START_TEST(the_cuda_11_figure_should_be_the_published_reading_less_its_tensors_segment)
{
    /* PR 86509 read total - free = 287,047,680 B with one 20x16x50x100 fp32 tensor
     * (6,400,000 B), which the caching allocator serves from a 20 MiB segment (a large
     * request under 10 MiB): 287047680 - 20971520 = 266076160 B = 253.75 MiB */
    const gpu_context *c = gpu_context_find(8, 11);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->bytes, 266076160u);
    ck_assert_uint_eq(c->bytes * 4, 1015 * MIB);
}
END_TEST

START_TEST(each_cuda_major_should_have_its_own_figure)
{
    ck_assert_uint_eq(gpu_context_find(8, 12)->bytes, 256 * MIB);
    ck_assert_uint_eq(gpu_context_find(8, 13)->bytes, 426 * MIB);
    ck_assert_ptr_null(gpu_context_find(8, 10)); /* before lazy loading: no figure */
    ck_assert_ptr_null(gpu_context_find(8, 14));
}
END_TEST

START_TEST(a_generation_nobody_measured_should_borrow_its_cuda_majors_figure_as_an_estimate)
{
    const gpu_context *ampere = gpu_context_find(8, 12), *hopper = gpu_context_find(9, 12);
    ck_assert_ptr_eq(ampere, hopper);
    ck_assert(gpu_context_measured_for(ampere, 8));
    ck_assert(!gpu_context_measured_for(hopper, 9));
    char why[256];
    ck_assert_ptr_nonnull(strstr(gpu_context_describe(hopper, 9, why, sizeof why), "[estimate for cc 9.x]"));
    ck_assert_ptr_null(strstr(gpu_context_describe(ampere, 8, why, sizeof why), "estimate"));
    /* an unknown card (cc 0) gets the CUDA major's figure, marked */
    ck_assert_ptr_eq(gpu_context_find(0, 12), ampere);
    ck_assert_ptr_nonnull(strstr(gpu_context_describe(ampere, 0, why, sizeof why), "generation is unknown"));
    /* the CUDA 11 row names no card: no generation is measured */
    ck_assert(!gpu_context_measured_for(gpu_context_find(8, 11), 8));
}
END_TEST

START_TEST(the_spread_should_be_the_largest_figure_less_the_smallest)
{
    /* 426 MiB (CUDA 13) - 253.75 MiB (CUDA 11) = 172.25 MiB = 180617216 B */
    ck_assert_uint_eq(gpu_context_spread(), 426 * MIB - 266076160u);
    ck_assert_uint_eq(gpu_context_spread(), 180617216u);
}
END_TEST

START_TEST(every_row_should_name_its_source_and_card)
{
    ck_assert_uint_ge(gpu_context_count(), 3);
    for (size_t i = 0; i < gpu_context_count(); i++) {
        const gpu_context *c = gpu_context_get(i);
        ck_assert(c->source && strlen(c->source) > 20);
        ck_assert(c->measured_on && c->measured_on[0]);
        ck_assert_uint_gt(c->bytes, 0);
    }
    ck_assert_ptr_null(gpu_context_get(gpu_context_count()));
}
END_TEST
