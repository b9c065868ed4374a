/* The `torch` free set (strategies/torch_freeset.h) alone, without an allocator
 * around it: hand cases, and seeded random sequences of insert / erase /
 * lower_bound / find and take / last_below / next / prev / largest / collect
 * checked step by step against a brute-force reference, a sorted array of
 * (stream, size, address). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/torch_freeset.h"
#include "support/check_main.h"
#include "support/seed.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

/* ==== Fixture: block records in a slots table, the set, the reference ==== */

typedef struct ref_entry {
    uint32_t stream;
    uint64_t size, addr;
    uint32_t h;
} ref_entry;

typedef struct fixture {
    slots blocks;
    tfree f;
    ref_entry *ref; /* sorted by (stream, size, addr) */
    uint32_t n_ref, cap_ref;
    tlist list;
} fixture;

static void fx_init(fixture *x)
{
    memset(x, 0, sizeof *x);
    slots_init(&x->blocks, sizeof(tblock));
    torch_fs_init(&x->f, &x->blocks);
}

static void fx_free(fixture *x)
{
    torch_fs_release(&x->f);
    slots_release(&x->blocks);
    torch_fs_list_release(&x->list);
    free(x->ref);
}

static tblock *blk(const fixture *x, uint32_t h)
{
    return (tblock *)slots_get(&x->blocks, h);
}

static int ref_cmp(uint32_t sa, uint64_t za, uint64_t aa, uint32_t sb, uint64_t zb, uint64_t ab)
{
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (za != zb)
        return za < zb ? -1 : 1;
    if (aa != ab)
        return aa < ab ? -1 : 1;
    return 0;
}

/* Index of the first reference entry whose key is ≥ (stream, size, addr). */
static uint32_t ref_lower(const fixture *x, uint32_t stream, uint64_t size, uint64_t addr)
{
    uint32_t i = 0;
    while (i < x->n_ref && ref_cmp(x->ref[i].stream, x->ref[i].size, x->ref[i].addr, stream, size, addr) < 0)
        i++;
    return i;
}

/* A block record with this key, put in the set and the reference. */
static uint32_t fx_add(fixture *x, uint32_t stream, uint64_t size, uint64_t addr)
{
    uint32_t h = slots_take(&x->blocks);
    ck_assert_uint_ne(h, T_NONE);
    *blk(x, h) = (tblock){.addr = addr, .size = size, .stream = stream, .left = T_NONE, .right = T_NONE,
                          .prev = T_NONE, .next = T_NONE, .seg = T_NONE, .alloc = T_NONE, .state = BLOCK_FREE};
    ck_assert(torch_fs_insert(&x->f, h));
    if (x->n_ref == x->cap_ref) {
        x->cap_ref = x->cap_ref ? 2 * x->cap_ref : 64;
        x->ref = realloc(x->ref, x->cap_ref * sizeof *x->ref);
        ck_assert_ptr_nonnull(x->ref);
    }
    uint32_t i = ref_lower(x, stream, size, addr);
    memmove(&x->ref[i + 1], &x->ref[i], (x->n_ref - i) * sizeof *x->ref);
    x->ref[i] = (ref_entry){stream, size, addr, h};
    x->n_ref++;
    return h;
}

/* Take reference entry i out of the set and the reference. */
static void fx_erase_at(fixture *x, uint32_t i)
{
    uint32_t h = x->ref[i].h;
    ck_assert(torch_fs_erase(&x->f, h));
    memmove(&x->ref[i], &x->ref[i + 1], (x->n_ref - i - 1) * sizeof *x->ref);
    x->n_ref--;
    slots_put(&x->blocks, h);
}

/* The reference's answers. */
static uint32_t want_lower_bound(const fixture *x, uint32_t stream, uint64_t size)
{
    uint32_t i = ref_lower(x, stream, size, 0);
    return i < x->n_ref && x->ref[i].stream == stream ? x->ref[i].h : T_NONE;
}

static uint32_t want_last_below(const fixture *x, uint32_t stream, uint64_t size)
{
    uint32_t i = ref_lower(x, stream, size, 0);
    return i > 0 && x->ref[i - 1].stream == stream ? x->ref[i - 1].h : T_NONE;
}

static uint64_t want_largest(const fixture *x)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < x->n_ref; i++)
        m = x->ref[i].size > m ? x->ref[i].size : m;
    return m;
}

static uint64_t want_bytes(const fixture *x)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < x->n_ref; i++)
        sum += x->ref[i].size;
    return sum;
}

/* torch_fs_collect lists exactly the reference, in its order. */
static void expect_collect_matches(fixture *x)
{
    ck_assert(torch_fs_collect(&x->f, &x->list));
    ck_assert_uint_eq(x->list.len, x->n_ref);
    for (uint32_t i = 0; i < x->n_ref; i++)
        ck_assert_msg(x->list.h[i] == x->ref[i].h, "collect: position %u holds %u, expected %u", i, x->list.h[i],
                      x->ref[i].h);
}

/* ==== Hand cases ==== */

GPUSIM_TCASE("hand", 0, NULL, NULL);

START_TEST(size_bins_should_be_exact_below_16_kib_and_monotone_above)
{
    for (uint64_t k = 1; k < 32; k++)
        ck_assert_uint_eq(torch_fs_bin(k * 512), k);
    /* 16 KiB = 32 units of 512: first level 5, second level 0 → bin (5 − 5 + 1) · 32 + 0 = 32 */
    ck_assert_uint_eq(torch_fs_bin(16 * KiB), 32);
    /* 1 MiB = 2048 units: fl = 11, (11 − 5 + 1) · 32 + 0 = 224; one unit less is the
     * last bin of the level below, 224 − 1 */
    ck_assert_uint_eq(torch_fs_bin(1 * MiB), 224);
    ck_assert_uint_eq(torch_fs_bin(1 * MiB - 512), 223);
    uint32_t last = 0;
    for (uint64_t size = 512; size < ((uint64_t)1 << 62); size += size / 7 + 512) {
        uint32_t b = torch_fs_bin(size);
        ck_assert_uint_ge(b, last);
        ck_assert_uint_lt(b, FB_BINS);
        last = b;
    }
    ck_assert_uint_lt(torch_fs_bin(UINT64_MAX - 511), FB_BINS);
}
END_TEST

START_TEST(an_empty_set_should_answer_none_and_hold_nothing)
{
    fixture x;
    fx_init(&x);
    ck_assert_uint_eq(torch_fs_lower_bound(&x.f, 0, 512), T_NONE);
    ck_assert_uint_eq(torch_fs_last_below(&x.f, 0, 1 * GiB), T_NONE);
    ck_assert_uint_eq(torch_fs_largest(&x.f), 0);
    ck_assert_uint_eq(torch_fs_bytes(&x.f), 0);
    expect_collect_matches(&x);
    fx_free(&x);
}
END_TEST

START_TEST(lower_bound_should_pick_the_lowest_address_among_equal_sizes)
{
    fixture x;
    fx_init(&x);
    fx_add(&x, 0, 4 * MiB, 900 * MiB);
    uint32_t low = fx_add(&x, 0, 4 * MiB, 100 * MiB);
    fx_add(&x, 0, 4 * MiB, 500 * MiB);
    fx_add(&x, 0, 2 * MiB, 50 * MiB);
    ck_assert_uint_eq(torch_fs_lower_bound(&x.f, 0, 3 * MiB), low);
    ck_assert_uint_eq(torch_fs_lower_bound(&x.f, 0, 4 * MiB), low);
    fx_free(&x);
}
END_TEST

START_TEST(lower_bound_should_never_hand_out_a_block_of_another_stream)
{
    fixture x;
    fx_init(&x);
    fx_add(&x, 1, 64 * MiB, 0);
    uint32_t own = fx_add(&x, 2, 1 * MiB, 64 * MiB);
    /* stream 2 has nothing ≥ 2 MiB even though stream 1 has 64 MiB free */
    ck_assert_uint_eq(torch_fs_lower_bound(&x.f, 2, 2 * MiB), T_NONE);
    ck_assert_uint_eq(torch_fs_lower_bound(&x.f, 2, 512), own);
    ck_assert_uint_eq(torch_fs_lower_bound(&x.f, 3, 512), T_NONE);
    fx_free(&x);
}
END_TEST

START_TEST(next_and_prev_should_cross_bins_in_size_order_within_one_stream)
{
    fixture x;
    fx_init(&x);
    /* three sizes in three different bins, and another stream's block between them */
    uint32_t a = fx_add(&x, 0, 1024, 0);
    uint32_t b = fx_add(&x, 0, 3 * MiB, 4 * MiB);
    uint32_t c = fx_add(&x, 0, 40 * MiB, 16 * MiB);
    fx_add(&x, 1, 8 * MiB, 64 * MiB);
    ck_assert_uint_ne(torch_fs_bin(1024), torch_fs_bin(3 * MiB));
    ck_assert_uint_eq(torch_fs_next(&x.f, a), b);
    ck_assert_uint_eq(torch_fs_next(&x.f, b), c);
    ck_assert_uint_eq(torch_fs_next(&x.f, c), T_NONE);
    ck_assert_uint_eq(torch_fs_prev(&x.f, c), b);
    ck_assert_uint_eq(torch_fs_prev(&x.f, b), a);
    ck_assert_uint_eq(torch_fs_prev(&x.f, a), T_NONE);
    ck_assert_uint_eq(torch_fs_last_below(&x.f, 0, 40 * MiB), b);
    fx_free(&x);
}
END_TEST

START_TEST(largest_should_be_recomputed_when_the_largest_block_leaves)
{
    fixture x;
    fx_init(&x);
    fx_add(&x, 0, 2 * MiB, 0);
    fx_add(&x, 1, 6 * MiB, 2 * MiB);
    fx_add(&x, 0, 20 * MiB, 8 * MiB);
    ck_assert_uint_eq(torch_fs_largest(&x.f), 20 * MiB);
    /* the 20 MiB block is reference entry 1 (stream 0, after the 2 MiB one) */
    ck_assert_uint_eq(x.ref[1].size, 20 * MiB);
    fx_erase_at(&x, 1);
    ck_assert_uint_eq(torch_fs_largest(&x.f), 6 * MiB);
    ck_assert_uint_eq(torch_fs_bytes(&x.f), 8 * MiB);
    fx_free(&x);
}
END_TEST

START_TEST(erase_should_refuse_a_block_the_set_does_not_hold)
{
    fixture x;
    fx_init(&x);
    fx_add(&x, 0, 2 * MiB, 0);
    uint32_t h = slots_take(&x.blocks);
    *blk(&x, h) = (tblock){.addr = 2 * MiB, .size = 2 * MiB, .left = T_NONE, .right = T_NONE};
    ck_assert(!torch_fs_erase(&x.f, h));
    ck_assert_uint_eq(torch_fs_bytes(&x.f), 2 * MiB);
    expect_collect_matches(&x);
    fx_free(&x);
}
END_TEST

START_TEST(collect_should_list_blocks_by_stream_then_size_then_address)
{
    fixture x;
    fx_init(&x);
    fx_add(&x, 3, 512, 10 * MiB);
    fx_add(&x, 1, 8 * MiB, 0);
    fx_add(&x, 1, 1024, 20 * MiB);
    fx_add(&x, 1, 1024, 12 * MiB);
    fx_add(&x, 0, 100 * MiB, 30 * MiB);
    expect_collect_matches(&x);
    /* the reference's order: (0, 100M), (1, 1024 @12M), (1, 1024 @20M), (1, 8M), (3, 512) */
    ck_assert_uint_eq(blk(&x, x.list.h[1])->addr, 12 * MiB);
    ck_assert_uint_eq(blk(&x, x.list.h[4])->stream, 3);
    fx_free(&x);
}
END_TEST

/* ==== Seeded random sequences against the reference ==== */

/* A block size: a multiple of 512, log-uniform from 512 B to 64 GiB, or (one in
 * four) one of a few fixed sizes so that equal sizes and full bins occur. */
static uint64_t random_size(uint64_t *rng)
{
    static const uint64_t common[] = {512, 1024, 2 * MiB, 20 * MiB, 3 * MiB + 512};
    uint64_t r = test_rand(rng);
    if (r % 4 == 0)
        return common[(r >> 8) % (sizeof common / sizeof common[0])];
    unsigned bits = 9 + (unsigned)((r >> 8) % 27);
    uint64_t v = ((uint64_t)1 << bits) + (test_rand(rng) & (((uint64_t)1 << bits) - 1));
    return (v + 511) & ~(uint64_t)511;
}

static void random_run(uint64_t seed, uint32_t n_streams, uint32_t steps)
{
    fixture x;
    fx_init(&x);
    uint64_t rng = seed;
    uint64_t next_addr = 0;
    for (uint32_t step = 0; step < steps; step++) {
        uint64_t r = test_rand(&rng);
        uint32_t stream = (uint32_t)((r >> 16) % n_streams) * 7; /* gaps between stream ids */
        uint64_t op = r % 8;
        if (op < 3 && x.n_ref > 400)
            op = 3; /* fill to a few hundred blocks, then hover around there */
        switch (op) {
        case 0:
        case 1:
        case 2: {
            uint64_t size = random_size(&rng);
            next_addr += size + 512 * (test_rand(&rng) % 4);
            fx_add(&x, stream, size, next_addr);
            break;
        }
        case 3:
            if (x.n_ref > 0)
                fx_erase_at(&x, (uint32_t)(test_rand(&rng) % x.n_ref));
            break;
        case 4: {
            uint64_t size = 1 + test_rand(&rng) % (random_size(&rng) + 1024);
            ck_assert_msg(torch_fs_lower_bound(&x.f, stream, size) == want_lower_bound(&x, stream, size),
                          "seed %llu step %u: lower_bound(stream %u, %llu)", (unsigned long long)seed, step, stream,
                          (unsigned long long)size);
            ck_assert_msg(torch_fs_last_below(&x.f, stream, size) == want_last_below(&x, stream, size),
                          "seed %llu step %u: last_below(stream %u, %llu)", (unsigned long long)seed, step, stream,
                          (unsigned long long)size);
            /* torch_fs_find names the same block; half the time torch_fs_take takes it out
             * where torch_fs_find found it (the malloc path's best fit) */
            torch_fs_pos p = torch_fs_find(&x.f, stream, size);
            ck_assert_msg(p.h == want_lower_bound(&x, stream, size), "seed %llu step %u: find(stream %u, %llu)",
                          (unsigned long long)seed, step, stream, (unsigned long long)size);
            if (p.h != T_NONE && (r >> 40) & 1) {
                uint32_t i = ref_lower(&x, stream, size, 0);
                torch_fs_take(&x.f, p);
                memmove(&x.ref[i], &x.ref[i + 1], (x.n_ref - i - 1) * sizeof *x.ref);
                x.n_ref--;
                slots_put(&x.blocks, p.h);
            }
            break;
        }
        case 5:
        case 6: {
            if (x.n_ref == 0)
                break;
            uint32_t i = (uint32_t)(test_rand(&rng) % x.n_ref);
            uint32_t h = x.ref[i].h;
            uint32_t want_next = i + 1 < x.n_ref && x.ref[i + 1].stream == x.ref[i].stream ? x.ref[i + 1].h : T_NONE;
            uint32_t want_prev = i > 0 && x.ref[i - 1].stream == x.ref[i].stream ? x.ref[i - 1].h : T_NONE;
            ck_assert_msg(torch_fs_next(&x.f, h) == want_next, "seed %llu step %u: next", (unsigned long long)seed,
                          step);
            ck_assert_msg(torch_fs_prev(&x.f, h) == want_prev, "seed %llu step %u: prev", (unsigned long long)seed,
                          step);
            break;
        }
        default:
            ck_assert_msg(torch_fs_largest(&x.f) == want_largest(&x), "seed %llu step %u: largest %llu, expected %llu",
                          (unsigned long long)seed, step, (unsigned long long)torch_fs_largest(&x.f),
                          (unsigned long long)want_largest(&x));
            ck_assert_uint_eq(torch_fs_bytes(&x.f), want_bytes(&x));
            if (step % 64 == 7)
                expect_collect_matches(&x);
            break;
        }
    }
    /* drain: every block leaves, the set is empty again */
    while (x.n_ref > 0)
        fx_erase_at(&x, (uint32_t)(test_rand(&rng) % x.n_ref));
    ck_assert_uint_eq(torch_fs_largest(&x.f), 0);
    ck_assert_uint_eq(torch_fs_bytes(&x.f), 0);
    expect_collect_matches(&x);
    fx_free(&x);
}

GPUSIM_TCASE("random", 0, NULL, NULL);

START_TEST(random_sequences_on_one_stream_should_match_the_reference)
{
    uint64_t seed = test_seed("random_sequences_on_one_stream_should_match_the_reference");
    random_run(seed, 1, 20000);
}
END_TEST

START_TEST(random_sequences_on_many_streams_should_match_the_reference)
{
    /* 20 streams: more than FB_KEEP_EMPTY, so empty index entries get dropped and re-added */
    uint64_t seed = test_seed("random_sequences_on_many_streams_should_match_the_reference");
    random_run(seed, 20, 20000);
}
END_TEST
