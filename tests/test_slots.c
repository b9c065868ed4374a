/* Check suite for strategies/slots.{h,c}, the side table of fixed-size records that
 * the strategies keep their blocks and chunks in: handles are reused, records keep
 * their contents as the table grows, and an aligned table (slots_init_aligned, the
 * BFC chunk table's) keeps every record at a multiple of its alignment through every
 * growth. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "strategies/slots.h"
#include "support/check_main.h"

typedef struct rec64 {
    uint64_t word[8];
} rec64;

/* Take n records, writing into each its handle times 8 plus the word's index. */
static void fill(slots *t, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = slots_take_uninit(t);
        ck_assert_uint_eq(h, i); /* a table that never gave one back hands out 0, 1, 2 ... */
        rec64 *r = slots_get(t, h);
        for (unsigned k = 0; k < 8; k++)
            r->word[k] = (uint64_t)h * 8u + k;
    }
}

static void expect_filled(const slots *t, uint32_t n)
{
    for (uint32_t h = 0; h < n; h++) {
        const rec64 *r = slots_get(t, h);
        for (unsigned k = 0; k < 8; k++)
            ck_assert_uint_eq(r->word[k], (uint64_t)h * 8u + k);
    }
}

GPUSIM_TCASE("slots", 0, NULL, NULL);

START_TEST(a_put_handle_should_be_the_next_one_taken)
{
    slots t;
    slots_init(&t, sizeof(rec64));
    fill(&t, 3);
    slots_put(&t, 1);
    ck_assert(!slots_valid(&t, 1));
    ck_assert_uint_eq(t.live, 2);
    ck_assert_uint_eq(slots_take(&t), 1);
    const rec64 *r = slots_get(&t, 1);
    ck_assert_uint_eq(r->word[0] | r->word[7], 0); /* slots_take zeroes the record */
    ck_assert(slots_valid(&t, 1));
    ck_assert_uint_eq(t.live, 3);
    slots_release(&t);
}
END_TEST

START_TEST(records_should_keep_their_contents_as_the_table_grows)
{
    /* 64 records at first, doubled eight times on the way to 10,000 */
    slots t;
    slots_init(&t, sizeof(rec64));
    fill(&t, 10000);
    expect_filled(&t, 10000);
    slots_release(&t);
}
END_TEST

START_TEST(an_aligned_table_should_keep_every_record_in_one_cache_line)
{
    slots t;
    slots_init_aligned(&t, sizeof(rec64), 64);
    for (uint32_t n = 1; n <= 10000; n = n * 3 + 1) {
        slots_release(&t); /* keeps the alignment: the table starts over empty */
        fill(&t, n);
        ck_assert_uint_eq((uintptr_t)t.data % 64u, 0);
        expect_filled(&t, n);
    }
    ck_assert_uint_eq(t.align, 64);
    slots_release(&t);
}
END_TEST
