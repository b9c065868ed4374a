/* Check suite for the BFC strategy's binned free set (strategies/bfc_bins.h) alone,
 * without an allocator around it: TF's bin and our slice boundaries with their
 * arithmetic, hand cases for best fit, erase and iteration, and seeded random
 * insert/erase/rekey/best-fit sequences checked against a brute-force reference, a sorted
 * array of the same chunks by (size, address). After the changes, the treaps'
 * structure is checked too: key order, heap order, parent links, cached min/max and
 * both bitmaps. Sizes: 1 MiB = 1048576, 256 MiB = 268435456 = 2^28. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/bfc_bins.h"
#include "support/check_main.h"
#include "support/seed.h"

#define N_CHUNKS 4096u /* records in a test's chunk table; addresses below keep h in 12 bits */

typedef struct fixture {
    bfc_bins fs;
    bfc_chunk ck[N_CHUNKS];
    bool in_set[N_CHUNKS];
    uint32_t ref[N_CHUNKS]; /* the reference: members sorted by (size, address) */
    uint32_t n_ref;
} fixture;

static fixture *fixture_new(void)
{
    fixture *f = calloc(1, sizeof *f);
    EXPECT(f != NULL);
    bfc_bins_init(&f->fs);
    for (uint32_t h = 0; h < N_CHUNKS; h++) {
        f->ck[h].bin = BFC_NO_BIN;
        f->ck[h].child[0] = f->ck[h].child[1] = f->ck[h].parent = BFC_NONE;
    }
    return f;
}

static bool key_less(const fixture *f, uint32_t a, uint32_t b)
{
    const bfc_chunk *x = &f->ck[a], *y = &f->ck[b];
    return x->size < y->size || (x->size == y->size && x->addr < y->addr);
}

/* The reference's first index whose chunk does not order before h. */
static uint32_t ref_position(const fixture *f, uint32_t h)
{
    uint32_t lo = 0, hi = f->n_ref;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_less(f, f->ref[mid], h))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The brute-force best fit: the first chunk of the sorted reference with size ≥ size. */
static uint32_t ref_best_fit(const fixture *f, uint64_t size)
{
    uint32_t lo = 0, hi = f->n_ref;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->ck[f->ref[mid]].size < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->n_ref ? f->ref[lo] : BFC_NONE;
}

/* Insert record h with this key and treap priority, into the set and the reference. */
static void add(fixture *f, uint32_t h, uint64_t size, uint64_t addr, uint32_t prio)
{
    EXPECT(h < N_CHUNKS);
    EXPECT(!f->in_set[h]);
    f->ck[h].size = size;
    f->ck[h].addr = addr;
    f->ck[h].prio = prio;
    bfc_bins_insert(&f->fs, f->ck, h);
    uint32_t at = ref_position(f, h);
    memmove(&f->ref[at + 1], &f->ref[at], (f->n_ref - at) * sizeof f->ref[0]);
    f->ref[at] = h;
    f->n_ref++;
    f->in_set[h] = true;
}

static void del(fixture *f, uint32_t h)
{
    EXPECT(f->in_set[h]);
    bfc_bins_erase(&f->fs, f->ck, h);
    EXPECT(f->ck[h].bin == BFC_NO_BIN);
    EXPECT(f->ck[h].parent == BFC_NONE);
    EXPECT(f->ck[h].child[0] == BFC_NONE);
    EXPECT(f->ck[h].child[1] == BFC_NONE);
    uint32_t at = ref_position(f, h);
    EXPECT(at < f->n_ref);
    EXPECT(f->ref[at] == h);
    memmove(&f->ref[at], &f->ref[at + 1], (f->n_ref - at - 1) * sizeof f->ref[0]);
    f->n_ref--;
    f->in_set[h] = false;
}

/* Give member h a new key, in the set (bfc_bins_rekey) and in the reference. */
static void rekey(fixture *f, uint32_t h, uint64_t size, uint64_t addr)
{
    EXPECT(f->in_set[h]);
    uint32_t at = ref_position(f, h);
    EXPECT(at < f->n_ref && f->ref[at] == h);
    memmove(&f->ref[at], &f->ref[at + 1], (f->n_ref - at - 1) * sizeof f->ref[0]);
    f->n_ref--;
    bfc_bins_rekey(&f->fs, f->ck, h, size, addr);
    EXPECT(f->ck[h].size == size && f->ck[h].addr == addr);
    at = ref_position(f, h);
    memmove(&f->ref[at + 1], &f->ref[at], (f->n_ref - at) * sizeof f->ref[0]);
    f->ref[at] = h;
    f->n_ref++;
}

static void expect_best_fit(const fixture *f, uint64_t size)
{
    uint32_t got = bfc_bins_best_fit(&f->fs, f->ck, size);
    uint32_t want = ref_best_fit(f, size);
    EXPECT_MSG(got == want, "best fit of %llu: chunk %u (%llu@%llu), the reference says %u (%llu@%llu)",
                  (unsigned long long)size, got, got == BFC_NONE ? 0ull : (unsigned long long)f->ck[got].size,
                  got == BFC_NONE ? 0ull : (unsigned long long)f->ck[got].addr, want,
                  want == BFC_NONE ? 0ull : (unsigned long long)f->ck[want].size,
                  want == BFC_NONE ? 0ull : (unsigned long long)f->ck[want].addr);
}

/* One slice's treap below t, in order: key order against *last, heap order, parent
 * links, the chunk's bin fields. Returns the chunks seen; depth bounds a cycle. */
static uint32_t walk_slice(const fixture *f, unsigned b, unsigned sl, uint32_t t, uint32_t parent,
                           uint32_t *last, uint32_t *first, unsigned depth)
{
    if (t == BFC_NONE)
        return 0;
    EXPECT(depth < N_CHUNKS);
    EXPECT(t < N_CHUNKS);
    const bfc_chunk *c = &f->ck[t];
    EXPECT_MSG(f->in_set[t], "chunk %u is linked into slice %u.%u but was not inserted", t, b, sl);
    EXPECT(c->parent == parent);
    if (parent != BFC_NONE)
        EXPECT(c->prio <= f->ck[parent].prio);
    EXPECT(c->bin == b);
    EXPECT(c->slice == sl);
    EXPECT(bfc_bin_for(c->size) == b);
    EXPECT(bfc_slice_for(c->size, b) == sl);
    uint32_t n = walk_slice(f, b, sl, c->child[0], t, last, first, depth + 1);
    if (*last != BFC_NONE)
        EXPECT(key_less(f, *last, t));
    if (*first == BFC_NONE)
        *first = t;
    *last = t;
    return n + 1 + walk_slice(f, b, sl, c->child[1], t, last, first, depth + 1);
}

/* The whole set against the reference: structure, iteration order, largest, and
 * holds() for every member. */
static void verify(const fixture *f)
{
    uint32_t total = 0;
    for (unsigned b = 0; b < BFC_NUM_BINS; b++) {
        uint32_t in_bin = 0;
        for (unsigned sl = 0; sl < BFC_SLICES; sl++) {
            const bfc_bin *bn = &f->fs.slice[b][sl];
            uint32_t last = BFC_NONE, first = BFC_NONE;
            uint32_t n = walk_slice(f, b, sl, bn->root, BFC_NONE, &last, &first, 0);
            EXPECT(bn->min == first);
            EXPECT(bn->max == last);
            EXPECT(((f->fs.slice_mask[b] >> sl) & 1u) == (n > 0));
            in_bin += n;
        }
        EXPECT(((f->fs.bitmap >> b) & 1u) == (in_bin > 0));
        total += in_bin;
    }
    EXPECT((f->fs.bitmap >> BFC_NUM_BINS) == 0);
    EXPECT(total == f->n_ref);

    uint32_t i = 0;
    for (uint32_t h = bfc_bins_first(&f->fs); h != BFC_NONE; h = bfc_bins_next(&f->fs, f->ck, h), i++) {
        EXPECT(i < f->n_ref);
        EXPECT_MSG(h == f->ref[i], "iteration step %u gives chunk %u, the reference %u", i, h, f->ref[i]);
    }
    EXPECT(i == f->n_ref);
    EXPECT(bfc_bins_largest(&f->fs) == (f->n_ref ? f->ck[f->ref[f->n_ref - 1]].size : 0));
    for (uint32_t k = 0; k < f->n_ref; k++)
        EXPECT(bfc_bins_holds(&f->fs, f->ck, N_CHUNKS, f->ref[k]));
}

/* ---- bins and slices ---- */

GPUSIM_TCASE("bins_and_slices", 0, NULL, NULL);

START_TEST(bin_for_should_follow_tensorflows_power_of_two_bins)
{
    /* bin = min(20, floor(log2(max(size, 256) / 256))) */
    ck_assert_uint_eq(bfc_bin_for(0), 0);
    ck_assert_uint_eq(bfc_bin_for(255), 0);
    ck_assert_uint_eq(bfc_bin_for(256), 0);
    ck_assert_uint_eq(bfc_bin_for(511), 0);        /* 511 / 256 = 1.99 → log2 0 */
    ck_assert_uint_eq(bfc_bin_for(512), 1);        /* 512 / 256 = 2 → 1 */
    ck_assert_uint_eq(bfc_bin_for(1 * MiB), 12);   /* 2^20 / 2^8 = 2^12 */
    ck_assert_uint_eq(bfc_bin_for(256 * MiB - 1), 19);
    ck_assert_uint_eq(bfc_bin_for(256 * MiB), 20); /* 2^28 / 2^8 = 2^20, capped at 20 */
    ck_assert_uint_eq(bfc_bin_for(UINT64_MAX), 20);
}
END_TEST

START_TEST(slice_for_should_cut_each_bin_into_sixteen_equal_parts)
{
    /* bin 0 is [256, 512): 16 slices of 256 / 16 = 16 bytes */
    ck_assert_uint_eq(bfc_slice_for(0, 0), 0);
    ck_assert_uint_eq(bfc_slice_for(256, 0), 0);
    ck_assert_uint_eq(bfc_slice_for(271, 0), 0);
    ck_assert_uint_eq(bfc_slice_for(272, 0), 1);   /* 256 + 16 */
    ck_assert_uint_eq(bfc_slice_for(511, 0), 15);
    /* bin 12 is [1 MiB, 2 MiB): slices of 64 KiB; 1 MiB + 5·64 KiB = 1376256 */
    ck_assert_uint_eq(bfc_slice_for(1376256 - 1, 12), 4);
    ck_assert_uint_eq(bfc_slice_for(1376256, 12), 5);
    ck_assert_uint_eq(bfc_slice_for(2 * MiB - 1, 12), 15);
    /* bin 20: one slice per power of two from 256 MiB, the last one open-ended */
    ck_assert_uint_eq(bfc_slice_for(256 * MiB, 20), 0);
    ck_assert_uint_eq(bfc_slice_for(512 * MiB - 1, 20), 0);
    ck_assert_uint_eq(bfc_slice_for(512 * MiB, 20), 1);
    ck_assert_uint_eq(bfc_slice_for((uint64_t)1 << 43, 20), 15); /* 2^43 / 2^28 = 2^15 */
    ck_assert_uint_eq(bfc_slice_for(UINT64_MAX, 20), 15);
}
END_TEST

START_TEST(slices_should_never_decrease_as_sizes_grow)
{
    /* the (size, address) order of a bin is its slices in order, so slice_for must be
     * monotone: checked at every 64-byte step through bins 0-6 and at bin edges above */
    unsigned prev_b = 0, prev_sl = 0;
    for (uint64_t size = 0; size < 256 * 128; size += 64) {
        unsigned b = bfc_bin_for(size), sl = bfc_slice_for(size, b);
        ck_assert(b > prev_b || (b == prev_b && sl >= prev_sl));
        prev_b = b;
        prev_sl = sl;
    }
    for (unsigned b = 1; b < BFC_NUM_BINS; b++) {
        uint64_t edge = (uint64_t)256 << b;
        ck_assert_uint_eq(bfc_bin_for(edge - 1), b - 1);
        ck_assert_uint_eq(bfc_slice_for(edge - 1, b - 1), 15);
        ck_assert_uint_eq(bfc_bin_for(edge), b);
        ck_assert_uint_eq(bfc_slice_for(edge, b), 0);
    }
}
END_TEST

START_TEST(bin_slice_should_give_bin_for_and_slice_for_at_once)
{
    /* every size below 64 KiB, then around every power of two and at random */
    uint64_t seed = test_seed("bfc bin_slice");
    for (uint64_t i = 0; i < 3u * 65536u; i++) {
        uint64_t size;
        if (i < 65536u) {
            size = i;
        } else if (i < 65536u + 64u * 9u) {
            uint64_t k = (i - 65536u) / 9u, d = (i - 65536u) % 9u;
            size = ((uint64_t)1 << k) + d - 4u; /* 2^k - 4 .. 2^k + 4, wrapping at k = 0..1 */
        } else {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size = seed >> (seed & 63u); /* every magnitude */
        }
        unsigned sl, b = bfc_bin_slice(size, &sl);
        ck_assert_uint_eq(b, bfc_bin_for(size));
        ck_assert_uint_eq(sl, bfc_slice_for(size, b));
    }
    unsigned sl, b = bfc_bin_slice(UINT64_MAX, &sl);
    ck_assert_uint_eq(b, 20);
    ck_assert_uint_eq(sl, 15);
}
END_TEST

/* ---- hand cases ---- */

GPUSIM_TCASE("hand_cases", 0, NULL, NULL);

START_TEST(an_empty_set_should_have_no_best_fit_no_first_chunk_and_largest_zero)
{
    fixture *f = fixture_new();
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 0), BFC_NONE);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 256), BFC_NONE);
    ck_assert_uint_eq(bfc_bins_first(&f->fs), BFC_NONE);
    ck_assert_uint_eq(bfc_bins_largest(&f->fs), 0);
    verify(f);
    free(f);
}
END_TEST

START_TEST(best_fit_should_prefer_the_lowest_address_among_equal_sizes)
{
    fixture *f = fixture_new();
    add(f, 0, 4096, 3 * MiB, 7);
    add(f, 1, 4096, 1 * MiB, 3);
    add(f, 2, 4096, 2 * MiB, 9);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4096), 1);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 1), 1);
    verify(f);
    free(f);
}
END_TEST

START_TEST(best_fit_should_prefer_the_smallest_adequate_chunk_over_a_lower_address)
{
    fixture *f = fixture_new();
    add(f, 0, 8192, 0, 5);        /* larger, lower address */
    add(f, 1, 4352, 1 * MiB, 6);  /* 4096 + 256: just fits 4300 */
    add(f, 2, 4096, 2 * MiB, 7);  /* too small for 4300 */
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4300), 1);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4353), 0);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 8193), BFC_NONE);
    verify(f);
    free(f);
}
END_TEST

START_TEST(best_fit_should_search_inside_the_slice_when_its_minimum_is_too_small)
{
    /* bin 4 is [4096, 8192) in slices of 4096 / 16 = 256 bytes: sizes 4096 .. 4351 all
     * fall in slice 0 (4352 starts slice 1), so a query of 4200 must descend the treap */
    fixture *f = fixture_new();
    uint64_t sizes[] = {4096, 4100, 4150, 4200, 4201, 4300, 4351};
    for (uint32_t h = 0; h < 7; h++)
        add(f, h, sizes[h], h * MiB, (uint32_t)(h * 2654435761u));
    for (uint32_t h = 0; h < 7; h++)
        ck_assert_uint_eq(f->ck[h].slice, 0);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4200), 3);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4199), 3);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4202), 5);
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4352), BFC_NONE);
    verify(f);
    free(f);
}
END_TEST

START_TEST(best_fit_should_skip_to_a_later_slice_or_bin_when_the_slice_of_the_size_falls_short)
{
    fixture *f = fixture_new();
    add(f, 0, 4100, 0, 1);                /* bin 4, slice 0 */
    add(f, 1, 6144, 1 * MiB, 2);          /* bin 4, slice (6144 - 4096) / 256 = 8 */
    add(f, 2, 3 * MiB, 2 * MiB, 3);       /* bin 13 */
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4101), 1); /* slice 0 falls short */
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 4500), 1); /* slice 1 is empty */
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 6145), 2); /* bin 4 falls short */
    ck_assert_uint_eq(bfc_bins_best_fit(&f->fs, f->ck, 64 * 1024), 2); /* bin 8 is empty */
    verify(f);
    free(f);
}
END_TEST

START_TEST(erasing_the_minimum_and_the_maximum_should_move_the_slice_caches)
{
    /* priorities make 4160 the root with 4128 and 4192 as leaves: erasing a cached end
     * that is a leaf moves the cache to its parent, erasing the root with one child
     * moves it to that child */
    fixture *f = fixture_new();
    add(f, 0, 4160, 0, 100);
    add(f, 1, 4128, 1 * MiB, 50);
    add(f, 2, 4192, 2 * MiB, 60);
    const bfc_bin *bn = &f->fs.slice[4][0];
    ck_assert_uint_eq(bn->root, 0);
    ck_assert_uint_eq(bn->min, 1);
    ck_assert_uint_eq(bn->max, 2);
    del(f, 1);
    ck_assert_uint_eq(bn->min, 0);
    verify(f);
    del(f, 2);
    ck_assert_uint_eq(bn->max, 0);
    verify(f);
    add(f, 3, 4100, 3 * MiB, 1);
    del(f, 0); /* the root and the maximum, with one child left */
    ck_assert_uint_eq(bn->root, 3);
    ck_assert_uint_eq(bn->min, 3);
    ck_assert_uint_eq(bn->max, 3);
    verify(f);
    free(f);
}
END_TEST

START_TEST(erasing_the_last_chunk_of_a_bin_should_clear_both_bitmap_bits)
{
    fixture *f = fixture_new();
    add(f, 0, 4096, 0, 1);
    add(f, 1, 6144, 1 * MiB, 2);
    ck_assert_uint_eq(f->fs.bitmap, 1u << 4);
    ck_assert_uint_eq(f->fs.slice_mask[4], (1u << 0) | (1u << 8));
    del(f, 0);
    ck_assert_uint_eq(f->fs.slice_mask[4], 1u << 8);
    ck_assert_uint_eq(f->fs.bitmap, 1u << 4);
    del(f, 1);
    ck_assert_uint_eq(f->fs.slice_mask[4], 0);
    ck_assert_uint_eq(f->fs.bitmap, 0);
    ck_assert_uint_eq(bfc_bins_largest(&f->fs), 0);
    verify(f);
    free(f);
}
END_TEST

START_TEST(erase_should_leave_a_chunk_that_is_in_no_bin_alone)
{
    fixture *f = fixture_new();
    add(f, 0, 4096, 0, 1);
    f->ck[1].size = 4096;
    f->ck[1].addr = 1 * MiB; /* never inserted: bin is BFC_NO_BIN */
    bfc_bins_erase(&f->fs, f->ck, 1);
    ck_assert_uint_eq(f->fs.slice[4][0].root, 0);
    verify(f);
    free(f);
}
END_TEST

START_TEST(iteration_should_visit_every_chunk_by_size_then_address_across_bins_and_slices)
{
    fixture *f = fixture_new();
    /* inserted out of order, with ties, in bins 0, 4, 12 and 20 (two slices of 20) */
    add(f, 0, 1 * GiB, 0, 11);
    add(f, 1, 4096, 5 * MiB, 12);
    add(f, 2, 256, 9 * MiB, 13);
    add(f, 3, 4096, 1 * MiB, 14);
    add(f, 4, 256 * MiB, 7 * MiB, 15);
    add(f, 5, 1 * MiB, 3 * MiB, 16);
    add(f, 6, 7680, 2 * MiB, 17);
    uint32_t want[] = {2, 3, 1, 6, 5, 4, 0};
    uint32_t h = bfc_bins_first(&f->fs);
    for (unsigned i = 0; i < 7; i++, h = bfc_bins_next(&f->fs, f->ck, h))
        ck_assert_uint_eq(h, want[i]);
    ck_assert_uint_eq(h, BFC_NONE);
    ck_assert_uint_eq(bfc_bins_largest(&f->fs), 1 * GiB);
    verify(f);
    free(f);
}
END_TEST

START_TEST(holds_should_find_members_by_key_and_miss_a_chunk_filed_in_the_wrong_bin)
{
    fixture *f = fixture_new();
    add(f, 0, 4096, 0, 5);
    add(f, 1, 8192, 1 * MiB, 6);
    ck_assert(bfc_bins_holds(&f->fs, f->ck, N_CHUNKS, 0));
    ck_assert(bfc_bins_holds(&f->fs, f->ck, N_CHUNKS, 1));
    f->ck[2].size = 4096;
    f->ck[2].addr = 2 * MiB;
    f->ck[2].prio = 7;
    bfc_bins_insert_at(&f->fs, f->ck, 2, 3); /* 4096 belongs in bin 4 */
    ck_assert_uint_eq(f->ck[2].bin, 3);
    ck_assert(!bfc_bins_holds(&f->fs, f->ck, N_CHUNKS, 2));
    free(f);
}
END_TEST

START_TEST(inserting_in_sorted_order_should_still_give_a_heap_ordered_treap)
{
    /* increasing keys with increasing priorities: each insert rotates to the root */
    fixture *f = fixture_new();
    for (uint32_t h = 0; h < 200; h++)
        add(f, h, 4096 + 256 * (h % 4), h * MiB, h + 1);
    verify(f);
    for (uint32_t h = 0; h < 200; h += 2)
        del(f, h);
    verify(f);
    for (uint32_t h = 0; h < 200; h++)
        expect_best_fit(f, 4096 + 64 * (h % 20));
    free(f);
}
END_TEST

/* ---- random sequences against the reference ---- */

/* A size from one of four families: log-uniform over 1 B .. 2^44 B, a few multiples of
 * 256 (many ties, so the address decides), bin and slice edges ± 1, and huge sizes
 * across bin 20's slices. */
static uint64_t random_size(uint64_t *st)
{
    uint64_t r = test_rand(st);
    switch (r % 4) {
    case 0: {
        unsigned bits = 1 + (unsigned)((r >> 8) % 44);
        return 1 + (test_rand(st) & (((uint64_t)1 << bits) - 1));
    }
    case 1:
        return 256 * (1 + (r >> 8) % 24);
    case 2: {
        unsigned b = (unsigned)((r >> 8) % 20);
        uint64_t base = (uint64_t)256 << b;
        uint64_t edge = base + (base / 16) * ((r >> 16) % 16);
        return edge + ((r >> 24) % 3) - 1;
    }
    default:
        return ((uint64_t)256 << 20) << ((r >> 8) % 20);
    }
}

static uint64_t random_query(const fixture *f, uint64_t *st)
{
    uint64_t r = test_rand(st);
    if (f->n_ref > 0 && r % 3 == 0) {
        /* a member's size, or one byte around it */
        uint64_t s = f->ck[f->ref[(r >> 8) % f->n_ref]].size;
        return s + ((r >> 40) % 3) - 1;
    }
    if (r % 17 == 1)
        return (r % 2) ? 0 : UINT64_MAX;
    return random_size(st);
}

static void random_sequence(uint64_t seed, unsigned rounds, uint32_t target_live, unsigned verify_every)
{
    fixture *f = fixture_new();
    uint64_t st = seed;
    uint32_t free_h[N_CHUNKS], n_free = 0;
    for (uint32_t h = N_CHUNKS; h-- > 0;)
        free_h[n_free++] = h;
    for (unsigned i = 0; i < rounds; i++) {
        /* the live set swings between empty and target_live: grow, then drain */
        uint32_t phase = (i / (4 * target_live)) % 2;
        uint64_t r = test_rand(&st);
        bool insert = f->n_ref == 0 || (n_free > 0 && (phase == 0 ? r % 8 < 5 : r % 8 < 3));
        if (f->n_ref > 0 && (r >> 61) == 0) {
            /* a new key for a member: mostly a near one (as a split or a merge makes,
             * often in place), else anywhere; h stays in the address's low 12 bits */
            uint32_t h = f->ref[(r >> 8) % f->n_ref];
            uint64_t q = test_rand(&st), size = f->ck[h].size, addr = f->ck[h].addr;
            uint64_t step = 256 * (1 + (q >> 8) % 64);
            switch (q % 4) {
            case 0:
                size = size > step ? size - step : size + step;
                addr += step << 12;
                break;
            case 1:
                size += step;
                addr = addr > (step << 12) ? addr - (step << 12) : addr;
                break;
            case 2:
                size += step;
                break;
            default:
                size = random_size(&st);
                addr = (test_rand(&st) << 12) | h;
                break;
            }
            rekey(f, h, size, addr);
        } else if (insert) {
            uint32_t h = free_h[--n_free];
            /* unique address: h in the low 12 bits, random bits above */
            uint64_t addr = (test_rand(&st) << 12) | h;
            add(f, h, random_size(&st), addr, (uint32_t)(test_rand(&st) >> 32));
        } else {
            uint32_t h = f->ref[(r >> 8) % f->n_ref];
            del(f, h);
            free_h[n_free++] = h;
        }
        for (unsigned q = 0; q < 3; q++)
            expect_best_fit(f, random_query(f, &st));
        if (i % verify_every == 0)
            verify(f);
    }
    verify(f);
    while (f->n_ref > 0)
        del(f, f->ref[test_rand(&st) % f->n_ref]);
    verify(f);
    ck_assert_uint_eq(f->fs.bitmap, 0);
    free(f);
}

GPUSIM_TCASE("random", 300, NULL, NULL);

START_TEST(random_sequences_should_agree_with_a_sorted_array_at_every_step)
{
    uint64_t seed = test_seed("bfc_bins random sequences");
    uint64_t st = seed;
    random_sequence(test_rand(&st) | 1, 150000, 40, 7);     /* small sets: empty slices often */
    random_sequence(test_rand(&st) | 1, 200000, 1500, 211); /* large sets: deep treaps */
}
END_TEST

START_TEST(rekey_should_keep_a_chunk_in_place_or_move_it_across_slices)
{
    /* bin 12 = [1 MiB, 2 MiB), slices of 64 KiB = 65536: 1 MiB and 1 MiB + 32 KiB share
     * slice 0; 1 MiB + 64 KiB is slice 1 */
    fixture *f = fixture_new();
    add(f, 0, 1 * MiB, 0x1000, 10);
    add(f, 1, 1 * MiB + 16 * KiB, 0x2001, 20);
    add(f, 2, 1 * MiB + 32 * KiB, 0x3002, 5);
    verify(f);
    /* in place: 1 MiB + 16 KiB grows to + 24 KiB, still below 1 MiB + 32 KiB */
    rekey(f, 1, 1 * MiB + 24 * KiB, 0x2001);
    verify(f);
    ck_assert_uint_eq(f->fs.slice[12][0].root, 1);
    /* past its successor: reordered inside the slice */
    rekey(f, 0, 1 * MiB + 48 * KiB, 0x1000);
    verify(f);
    ck_assert_uint_eq(f->fs.slice[12][0].max, 0);
    /* into the next slice, and the largest follows: 1 MiB + 64 KiB = 1114112 */
    rekey(f, 2, 1 * MiB + 64 * KiB, 0x3002);
    verify(f);
    ck_assert_uint_eq(f->fs.slice[12][1].root, 2);
    ck_assert_uint_eq(bfc_bins_largest(&f->fs), 1114112);
    /* the largest shrinks in place: 1 MiB + 56 KiB = 1105920 is the largest left */
    rekey(f, 2, 1 * MiB + 72 * KiB, 0x3002);
    rekey(f, 0, 1 * MiB + 56 * KiB, 0x1000);
    verify(f);
    rekey(f, 2, 256, 0x3002);
    verify(f);
    ck_assert_uint_eq(bfc_bins_largest(&f->fs), 1105920);
    free(f);
}
END_TEST

START_TEST(random_sequences_with_one_repeated_size_should_order_by_address)
{
    /* every chunk the same size: the whole set is one treap ordered by address */
    uint64_t seed = test_seed("bfc_bins one size");
    uint64_t st = seed;
    fixture *f = fixture_new();
    for (unsigned i = 0; i < 20000; i++) {
        uint32_t h = (uint32_t)(test_rand(&st) % 1024);
        if (f->in_set[h])
            del(f, h);
        else
            add(f, h, 8192, (test_rand(&st) << 12) | h, (uint32_t)test_rand(&st));
        EXPECT(bfc_bins_best_fit(&f->fs, f->ck, 8192) == (f->n_ref ? f->ref[0] : BFC_NONE));
        if (i % 101 == 0)
            verify(f);
    }
    verify(f);
    free(f);
}
END_TEST
