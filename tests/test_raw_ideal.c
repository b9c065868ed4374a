/* Check suites for the two simplest strategies, `ideal` and `raw`. */
#include <check.h>
#include <stdlib.h>

#include "sim/units.h"
#include "strategies/ideal.h"
#include "strategies/raw.h"
#include "support/harness.h"
#include "support/check_main.h"

START_TEST(ideal_should_hold_exactly_the_live_requested_bytes)
{
    harness *h = harness_new(ideal_strategy(), 1 * GiB, 0, NULL);
    strategy_handle a = harness_alloc(h, 1000, 0);
    strategy_handle b = harness_alloc(h, 3, 0);
    /* no rounding: 1000 + 3 */
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 1003);
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 1003);
    ck_assert_str_eq(harness_layout(h), "1000 3");
    harness_free_block(h, a);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 3);
    harness_free_block(h, b);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 0);
    harness_free(h);
}
END_TEST

START_TEST(ideal_should_fail_only_past_capacity_minus_context)
{
    /* capacity 1000, context 100: 900 bytes usable */
    harness *h = harness_new(ideal_strategy(), 1000, 100, NULL);
    harness_alloc(h, 899, 0);
    harness_alloc(h, 1, 0);
    strategy_oom oom = harness_oom(h, 1, 0);
    ck_assert_uint_eq(oom.usable_bytes, 0); /* the engine's default, capacity − context */
    ck_assert_uint_eq(oom.reserved_bytes, 900);
    ck_assert_uint_eq(oom.device_free_bytes, 0);
    harness_free(h);
}
END_TEST

START_TEST(ideal_deferred_free_should_hold_bytes_until_ready)
{
    harness *h = harness_new(ideal_strategy(), 1 * GiB, 0, NULL);
    strategy_handle a = harness_alloc(h, 4096, 0);
    harness_free_deferred(h, a);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 4096);
    ck_assert_str_eq(harness_layout(h), "(4096)");
    harness_free_ready(h, a);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    harness_free(h);
}
END_TEST

START_TEST(raw_should_charge_512_byte_units_below_2mib_and_pages_above)
{
    harness *h = harness_new(raw_strategy(), 1 * GiB, 0, NULL);
    /* 1 → 512; 513 → 1024; 2 MiB − 1 → 2 MiB (512-rounded: 2097152);
     * 2 MiB + 1 → 4 MiB (page-rounded); 0 → nothing, not even a block */
    harness_alloc(h, 1, 0);
    harness_alloc(h, 513, 0);
    harness_alloc(h, 2 * MiB - 1, 0);
    harness_alloc(h, 2 * MiB + 1, 0);
    harness_alloc(h, 0, 0);
    ck_assert_str_eq(harness_layout(h), "512 | 1024 | 2097152 | 4194304");
    /* 512 + 1024 + 2097152 + 4194304 = 6292992 */
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 6292992);
    /* four device allocations; the zero-byte one takes none */
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 4);
    harness_free(h);
}
END_TEST

START_TEST(raw_free_should_return_memory_to_the_device_at_once)
{
    harness *h = harness_new(raw_strategy(), 8 * MiB, 0, NULL);
    strategy_handle a = harness_alloc(h, 6 * MiB, 0);
    strategy_oom oom = harness_oom(h, 4 * MiB, 0);
    ck_assert_uint_eq(oom.device_free_bytes, 2 * MiB); /* 8 − 6 MiB: 4 MiB does not fit */
    harness_free_block(h, a);
    ck_assert_uint_eq(harness_sample(h).num_device_frees, 1); /* the free itself gave it back */
    harness_alloc(h, 4 * MiB, 0);
    harness_free(h);
}
END_TEST

START_TEST(raw_checker_should_catch_a_corrupted_charge)
{
    /* The checker must notice when the device and the strategy disagree. */
    harness *h = harness_new(raw_strategy(), 1 * GiB, 0, NULL);
    harness_alloc(h, 4096, 0);
    device_release(h->dev, h->proc, 512); /* the device now holds 3584, the strategy 4096 */
    sim_report r = harness_report(h);
    ck_assert_uint_ge(r.violations, 1);
    ck_assert(sim_report_mentions(&r, "device holds"));
    device_map(h->dev, h->proc, 512);
    harness_free(h);
}
END_TEST
