/* Check suite for XLA 2026's BFC (--bfc-version=xla2026): spatial partitioning (the
 * central gap and the lower partition's holes, XLA PR #43912), the requested
 * alignment (PR #40979), JAX's 2 MiB limit rounding (PR #43125), the option rules,
 * the checker on the partition invariants, and a seeded random stream replayed against a brute-force reference of the
 * partitioned best fit that is compared with the walker's whole layout after every
 * operation. The harness runs the full checker after every operation.
 * Sizes: 1 MiB = 1048576. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/bfc.h"
#include "support/corrupt_bfc.h"
#include "support/check_main.h"
#include "support/harness.h"
#include "support/seed.h"

#define GREEDY bfc_strategy(BFC_GREEDY)
#define GROWTH bfc_strategy(BFC_GROWTH)
#define LIMIT bfc_strategy(BFC_LIMIT)

/* Check reports every passing ck_assert through a pipe in fork mode; hot loops assert
 * only when the condition already failed. */
#define REQUIRE(cond, ...)                    \
    do {                                      \
        if (!(cond))                          \
            ck_assert_msg(cond, __VA_ARGS__); \
    } while (0)

/* ---- the walker's blocks (harness_walk) ---- */

#define MAX_BLOCKS HARNESS_MAX_BLOCKS

/* A block's partition as the walker names it: 'g' central gap, 'l' lower, '-' none. */
static char part_of(const strategy_block *b)
{
    if (b->pool == NULL)
        return '-';
    if (strcmp(b->pool, "central gap") == 0)
        return 'g';
    ck_assert_str_eq(b->pool, "lower");
    return 'l';
}

/* ==== the issue's 16 MiB case ==== */

GPUSIM_TCASE("partitions", 0, NULL, NULL);

/* MiB sizes: alloc 6, 1, 4; free the 6; alloc 4, then 5.5 under a 16 MiB limit
 * (jax preset, 0.5 of a 32 MiB card = 16777216, a multiple of 2 MiB). */
static sim_status issue_case(const char *opts, char *layout_after_4, size_t cap)
{
    harness *h = harness_new(GREEDY, 32 * MiB, 0, opts);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 16 * MiB);
    strategy_handle a = harness_alloc(h, 6 * MiB, 0);
    harness_alloc(h, 1 * MiB, 0);
    harness_alloc(h, 4 * MiB, 0);
    harness_free_block(h, a);
    harness_alloc(h, 4 * MiB, 0);
    snprintf(layout_after_4, cap, "%s", harness_layout(h));
    strategy_oom oom;
    sim_status st = harness_try_alloc(h, 5 * MiB + 512 * KiB, 0, NULL, &oom);
    harness_free(h);
    return st;
}

START_TEST(spatial_should_oom_at_event_6_of_the_issue_case_where_classic_bfc_does_not)
{
    char layout[256];
    /* spatial (the jax default under xla2026): 6 MiB from the 16 MiB gap (16 ≥ 2·6:
     * split, gap 10), 1 MiB (gap 9), 4 MiB (9 ≥ 8: split, gap 5). Freeing the 6 MiB at
     * the bottom leaves a lower hole: a used chunk lies above it. The next 4 MiB is
     * served from lower holes first: the 6 MiB hole, 6 < 2·4 and slack 2 MiB < 128 MiB,
     * taken whole. 5.5 MiB: no lower hole, the gap holds 5 MiB < 5.5 → OOM (event 6). */
    ck_assert_int_eq(issue_case("bfc_preset=jax,mem_fraction=0.5", layout, sizeof layout), SIM_OOM);
    ck_assert_str_eq(layout, "6291456 1048576 4194304 [5242880]");
    /* classic BFC: best fit among all free chunks puts the 4 MiB into the 5 MiB tail
     * (smaller than the 6 MiB hole; 5 < 8, taken whole); 5.5 MiB then takes the 6 MiB
     * hole whole: 16 MiB in use, no OOM */
    ck_assert_int_eq(issue_case("bfc_preset=jax,mem_fraction=0.5,bfc_spatial=off", layout, sizeof layout), SIM_OK);
    ck_assert_str_eq(layout, "[6291456] 1048576 4194304 5242880");
    ck_assert_int_eq(issue_case("bfc_preset=jax,mem_fraction=0.5,bfc_version=tsl2024", layout, sizeof layout),
                     SIM_OK);
}
END_TEST

START_TEST(the_walker_should_name_the_central_gap_and_the_lower_partition)
{
    harness *h = harness_new(GREEDY, 32 * MiB, 0, "bfc_preset=jax,mem_fraction=0.5");
    strategy_handle a = harness_alloc(h, 6 * MiB, 0);
    harness_alloc(h, 1 * MiB, 0);
    harness_free_block(h, a);
    static harness_blocks bs;
    harness_walk(h, &bs);
    /* [6 MiB lower hole][1 MiB used, lower][9 MiB central gap] */
    ck_assert_uint_eq(bs.n, 3);
    ck_assert(part_of(&bs.b[0]) == 'l' && bs.b[0].state == BLOCK_FREE && bs.b[0].size_bytes == 6 * MiB);
    ck_assert(part_of(&bs.b[1]) == 'l' && bs.b[1].state == BLOCK_USED);
    ck_assert(part_of(&bs.b[2]) == 'g' && bs.b[2].size_bytes == 9 * MiB);
    ck_assert_uint_eq(harness_stat(h, "central_gap_bytes"), 9 * MiB);
    ck_assert_uint_eq(harness_stat(h, "lower_hole_bytes"), 6 * MiB);
    ck_assert_uint_eq(harness_stat(h, "largest_lower_hole_bytes"), 6 * MiB);
    /* largest_free_block_bytes counts the gap (LargestFreeChunk) */
    ck_assert_uint_eq(harness_sample(h).largest_free_bytes, 9 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(freeing_the_top_lower_chunk_should_return_it_and_the_holes_below_to_the_gap)
{
    harness *h = harness_new(GREEDY, 32 * MiB, 0, "bfc_preset=jax,mem_fraction=0.5");
    strategy_handle a = harness_alloc(h, 2 * MiB, 0);
    strategy_handle b = harness_alloc(h, 3 * MiB, 0);
    harness_free_block(h, a);
    ck_assert_str_eq(harness_layout(h), "[2097152] 3145728 [11534336]");
    /* b borders the gap: it becomes gap, merges with the gap above and the 2 MiB lower
     * hole below (lower + gap → gap): one 16 MiB central gap */
    harness_free_block(h, b);
    ck_assert_str_eq(harness_layout(h), "[16777216]");
    ck_assert_uint_eq(harness_stat(h, "central_gap_bytes"), 16 * MiB);
    ck_assert_uint_eq(harness_stat(h, "lower_hole_bytes"), 0);
    harness_free(h);
}
END_TEST

START_TEST(a_carve_should_take_the_whole_gap_when_the_split_rule_says_so_and_give_it_back_on_free)
{
    harness *h = harness_new(GREEDY, 32 * MiB, 0, "bfc_preset=jax,mem_fraction=0.5");
    harness_alloc(h, 8 * MiB, 0);
    /* gap 8 MiB; 5 MiB: 8 < 2·5, slack 3 MiB < 128 MiB → the whole gap is handed out
     * (the 2026-08 carve follows the split rule): no central gap is left */
    strategy_handle b = harness_alloc(h, 5 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "8388608 8388608");
    ck_assert_uint_eq(harness_stat(h, "central_gap_bytes"), 0);
    harness_oom(h, 256, 0);
    /* the top chunk borders the region's end: freed, it is the gap again */
    harness_free_block(h, b);
    ck_assert_uint_eq(harness_stat(h, "central_gap_bytes"), 8 * MiB);
    harness_free(h);
}
END_TEST

/* [6 MiB lower hole][1 MiB used][9 MiB central gap], then one corruption: the checker
 * must name it. */
static void expect_partition_corruption_caught(bfc_corruption kind, const char *needle)
{
    harness *h = harness_new(GREEDY, 32 * MiB, 0, "bfc_preset=jax,mem_fraction=0.5");
    strategy_handle a = harness_alloc(h, 6 * MiB, 0);
    harness_alloc(h, 1 * MiB, 0);
    harness_free_block(h, a);
    ck_assert(corrupt_bfc(h->s, kind));
    sim_report r = harness_report(h);
    ck_assert_msg(sim_report_mentions(&r, needle), "expected '%s' in:\n%s", needle, r.text);
    harness_free(h);
}

START_TEST(checker_should_catch_a_second_central_gap_and_a_gap_binned_as_a_hole)
{
    expect_partition_corruption_caught(BFC_CORRUPT_SECOND_GAP, "tagged central gap");
    expect_partition_corruption_caught(BFC_CORRUPT_GAP_AS_HOLE, "borders no used chunk");
}
END_TEST

/* ==== alignment (PR #40979) ==== */

GPUSIM_TCASE("alignment", 0, NULL, NULL);

/* Two 1000-byte allocations on a 16 MiB greedy pool (opts: half of 32 MiB) must
 * leave the layout want. */
static void expect_two_small_allocs(const char *opts, const char *want)
{
    harness *h = harness_new(GREEDY, 32 * MiB, 0, opts);
    harness_alloc(h, 1000, 0);
    harness_alloc(h, 1000, 0);
    ck_assert_str_eq(harness_layout(h), want);
    harness_free(h);
}

START_TEST(alignment_above_256_should_leave_a_lower_hole_below_the_allocation)
{
    /* classic (tf preset), 4 MiB alignment, on a region whose base is 2 MiB past a
     * multiple of 4 MiB (the device's first range: device.h rounds bases to 2 MiB) */
    harness *h = harness_new(GREEDY, 32 * MiB, 0, "mem_fraction=0.5,bfc_alignment=4MiB");
    harness_alloc(h, 1 * MiB, 0);
    static harness_blocks bs;
    harness_walk(h, &bs);
    ck_assert_uint_eq(bs.b[0].addr % (4 * MiB), 2 * MiB);
    /* 1 MiB from the 16 MiB region: padding 2 MiB (a free prefix), the aligned 14 MiB
     * is split (14 ≥ 2·1): [2 MiB free][1 MiB][13 MiB free] */
    ck_assert_str_eq(harness_layout(h), "[2097152] 1048576 [13631488]");
    /* 1 MiB: in (size, address) order the 2 MiB prefix would need 2 MiB of padding
     * (1 + 2 > 2, skipped); the 13 MiB at base + 3 MiB needs 3 MiB: taken, split */
    harness_alloc(h, 1 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[2097152] 1048576 [3145728] 1048576 [9437184]");
    /* 2 MiB: the 2 MiB chunk needs 2 MiB of padding, the 3 MiB one 3 MiB (both too
     * small); the 9 MiB at base + 7 MiB needs 3 MiB: 2 + 3 ≤ 9, and 6 ≥ 2·2 splits */
    harness_alloc(h, 2 * MiB, 0);
    ck_assert_str_eq(harness_layout(h), "[2097152] 1048576 [3145728] 1048576 [3145728] 2097152 [4194304]");
    harness_free(h);

    /* the option is read as max(alignment, 256): 64 (XLA's default request) changes
     * nothing */
    expect_two_small_allocs("mem_fraction=0.5,bfc_alignment=64", "1024 1024 [16775168]");
}
END_TEST

START_TEST(tsl2024_should_ignore_the_alignment)
{
    expect_two_small_allocs("mem_fraction=0.5,bfc_alignment=1MiB,bfc_version=tsl2024", "1024 1024 [16775168]");
    /* xla2026: the base is 1 MiB-aligned; the second 1024 starts at the next 1 MiB: a
     * 1047552 prefix (1 MiB − 1024) */
    expect_two_small_allocs("mem_fraction=0.5,bfc_alignment=1MiB", "1024 [1047552] 1024 [15727616]");
}
END_TEST

/* ==== the limit and the options ==== */

GPUSIM_TCASE("limit_and_options", 0, NULL, NULL);

START_TEST(jax_limit_should_round_up_to_2mib_under_xla2026_only)
{
    /* An H100-80GB entry: 0.75 × 85029027840 = 63771770880 = 30408.75 × 2 MiB → up to
     * 30409 × 2097152 = 63772295168 under XLA 2026; tsl 2024 keeps 63771770880 */
    harness *h = harness_new(GREEDY, 85029027840u, 0, "bfc_preset=jax");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 63772295168u);
    harness_free(h);
    h = harness_new(GREEDY, 85029027840u, 0, "bfc_preset=jax,bfc_version=tsl2024");
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 63771770880u);
    harness_free(h);
    /* TensorFlow's wiring (gpu_device.cc) does not round: 80 GiB cc 9 → 80 GiB − 1536 MiB */
    h = harness_new(GREEDY, 80 * GiB, 0, NULL);
    ck_assert_uint_eq(harness_stat(h, "bytes_limit"), 80 * GiB - 1536 * MiB);
    harness_free(h);
}
END_TEST

/* Options, and what a test wants of them. */
typedef struct opts_case {
    const char *opts;
    const char *want;
} opts_case;

START_TEST(spatial_should_default_on_only_for_jax_preallocation_under_xla2026)
{
    static const opts_case cases[] = {
        {"bfc_preset=jax", "on"},
        {"bfc_preset=tf", "off"},
        {"bfc_preset=jax,bfc_version=tsl2024", "off"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        harness *h = harness_new(GREEDY, 1 * GiB, 0, cases[i].opts);
        ck_assert_str_eq(harness_option(h, "bfc_spatial"), cases[i].want);
        harness_free(h);
    }
    harness *h = harness_new(GROWTH, 1 * GiB, 0, "bfc_preset=jax");
    ck_assert_str_eq(harness_option(h, "bfc_version"), "xla2026");
    harness_free(h);
    h = harness_new(LIMIT, 1 * GiB, 0, "limit=64MiB");
    ck_assert_str_eq(harness_option(h, "bfc_spatial"), "off");
    harness_free(h);
    /* the limit strategy may turn it on: one fixed region */
    h = harness_new(LIMIT, 1 * GiB, 0, "limit=64MiB,bfc_spatial=on");
    ck_assert_str_eq(harness_option(h, "bfc_spatial"), "on");
    harness_free(h);
}
END_TEST

START_TEST(spatial_should_be_refused_with_tsl2024_and_ignored_by_growth)
{
    /* growth's table has no bfc_spatial (the command line refuses it there, as XLA
     * CHECKs): an instance ignores the key, as it ignores any key not its own */
    harness *g = harness_new(GROWTH, 1 * GiB, 0, "bfc_spatial=on,bfc_preset=jax");
    ck_assert_uint_eq(harness_stat(g, "regions"), 0);
    strategy_stat_value v;
    ck_assert(!strategy_option_find(g->ops, g->s, "bfc_spatial", &v));
    harness_free(g);
    static const opts_case bad[] = { /* want: what the message names */
        {"bfc_spatial=on,bfc_version=tsl2024", "--bfc-version=xla2026"},
        {"bfc_spatial=maybe", "--bfc-spatial"},
        {"bfc_version=xla2025", "--bfc-version"},
        {"bfc_alignment=96", "--bfc-alignment"},
        {"bfc_alignment=0", "--bfc-alignment"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        harness *h = NULL;
        sim_error err;
        ck_assert_int_eq(harness_try_new(GREEDY, 1 * GiB, bad[i].opts, &h, &err), SIM_EUSAGE);
        ck_assert_msg(strstr(err.msg, bad[i].want) != NULL, "'%s': %s", bad[i].opts, err.msg);
    }
}
END_TEST

/* ==== a seeded random stream against a brute-force partitioned best fit ==== */

GPUSIM_TCASE("random", 300, NULL, NULL);

/* The reference: one region as an address-ordered array of blocks, written from the
 * rules of bfc.c (rules 3, 4, 10, 11) with nothing shared with the strategy. */
typedef struct ref_block {
    uint64_t addr, size;
    bool used;
    char tag; /* 'g' gap, 'l' lower */
} ref_block;

typedef struct ref {
    ref_block b[MAX_BLOCKS];
    uint32_t n;
    bool spatial;
    uint64_t align, max_frag;
} ref;

static void ref_insert(ref *m, uint32_t at, ref_block blk)
{
    memmove(&m->b[at + 1], &m->b[at], (m->n - at) * sizeof m->b[0]);
    m->b[at] = blk;
    m->n++;
}

static void ref_remove(ref *m, uint32_t at)
{
    memmove(&m->b[at], &m->b[at + 1], (m->n - at - 1) * sizeof m->b[0]);
    m->n--;
}

static uint64_t ref_pad(const ref *m, uint64_t addr)
{
    uint64_t a = m->align;
    return ((addr + a - 1) / a * a - addr + 255) / 256 * 256;
}

/* Allocate rounded bytes; the index of the used block, or -1 for an OOM. */
static int ref_alloc(ref *m, uint64_t rounded)
{
    int best = -1;
    for (uint32_t i = 0; i < m->n; i++) {
        const ref_block *c = &m->b[i];
        if (c->used || c->tag == 'g' || c->size < rounded + ref_pad(m, c->addr))
            continue;
        /* TF's order among candidates that fit: (size, address) */
        if (best < 0 || c->size < m->b[best].size)
            best = (int)i;
    }
    if (best < 0)
        for (uint32_t i = 0; i < m->n; i++)
            if (!m->b[i].used && m->b[i].tag == 'g' && m->b[i].size >= rounded + ref_pad(m, m->b[i].addr))
                best = (int)i;
    if (best < 0)
        return -1;
    uint32_t i = (uint32_t)best;
    uint64_t pad = ref_pad(m, m->b[i].addr);
    if (pad > 0) {
        ref_block rest = {m->b[i].addr + pad, m->b[i].size - pad, false, m->b[i].tag};
        m->b[i].size = pad;
        m->b[i].tag = 'l';
        ref_insert(m, i + 1, rest);
        i++;
    }
    uint64_t size = m->b[i].size;
    if (size >= 2 * rounded || size - rounded >= m->max_frag) {
        ref_block rest = {m->b[i].addr + rounded, size - rounded, false, m->b[i].tag};
        m->b[i].size = rounded;
        ref_insert(m, i + 1, rest);
    }
    m->b[i].used = true;
    m->b[i].tag = 'l';
    return (int)i;
}

static void ref_free(ref *m, uint64_t addr)
{
    uint32_t i = 0;
    while (i < m->n && m->b[i].addr != addr)
        i++;
    REQUIRE(i < m->n && m->b[i].used, "reference: no used block at %llu", (unsigned long long)addr);
    m->b[i].used = false;
    if (m->spatial && (i + 1 == m->n || m->b[i + 1].tag != 'l'))
        m->b[i].tag = 'g';
    if (i + 1 < m->n && !m->b[i + 1].used) {
        m->b[i].tag = m->b[i].tag == m->b[i + 1].tag ? m->b[i].tag : 'g';
        m->b[i].size += m->b[i + 1].size;
        ref_remove(m, i + 1);
    }
    if (i > 0 && !m->b[i - 1].used) {
        m->b[i - 1].tag = m->b[i - 1].tag == m->b[i].tag ? m->b[i].tag : 'g';
        m->b[i - 1].size += m->b[i].size;
        ref_remove(m, i);
    }
}

static void ref_compare(const ref *m, const harness_blocks *bs, uint64_t seed, int op)
{
    REQUIRE(bs->n == m->n, "seed %llu op %d: %u blocks, the reference has %u", (unsigned long long)seed, op, bs->n,
            m->n);
    for (uint32_t i = 0; i < m->n; i++) {
        const strategy_block *b = &bs->b[i];
        const ref_block *r = &m->b[i];
        char part = part_of(b);
        REQUIRE(b->addr == r->addr && b->size_bytes == r->size && (b->state != BLOCK_FREE) == r->used &&
                    part == (m->spatial ? r->tag : '-'),
                "seed %llu op %d block %u: %llu+%llu %s %c, the reference has %llu+%llu %s %c",
                (unsigned long long)seed, op, i, (unsigned long long)b->addr, (unsigned long long)b->size_bytes,
                b->state == BLOCK_FREE ? "free" : "used", part, (unsigned long long)r->addr,
                (unsigned long long)r->size, r->used ? "used" : "free", m->spatial ? r->tag : '-');
    }
}

static void partitioned_stream(const strategy_ops *ops, const char *opts, bool spatial, uint64_t align,
                               uint64_t max_frag, uint64_t seed, int n_ops)
{
    harness *h = harness_new(ops, 128 * MiB, 0, opts);
    static ref m;
    static harness_blocks bs;
    static uint64_t live[MAX_BLOCKS];
    static strategy_handle handle[MAX_BLOCKS];
    uint32_t n_live = 0;
    uint64_t x = seed, ooms = 0;
    m = (ref){.spatial = spatial, .align = align, .max_frag = max_frag};
    for (int i = 0; i < n_ops; i++) {
        bool alloc = n_live == 0 || test_rand(&x) % 100 < 55;
        if (alloc && n_live < MAX_BLOCKS / 2) {
            /* tensor-like sizes: 1 B … 4 MiB, log-uniform, with repeats */
            uint64_t size = 1 + test_rand(&x) % ((uint64_t)1 << (1 + test_rand(&x) % 22));
            uint64_t rounded = (size + 255) / 256 * 256;
            strategy_handle hd;
            strategy_oom oom;
            sim_status st = harness_try_alloc(h, size, 0, &hd, &oom);
            if (m.n == 0 && st == SIM_OK) {
                /* the first allocation made the one region: seed the reference with it */
                harness_walk(h, &bs);
                uint64_t total = 0;
                for (uint32_t k = 0; k < bs.n; k++)
                    total += bs.b[k].size_bytes;
                m.b[0] = (ref_block){bs.b[0].addr, total, false, spatial ? 'g' : 'l'};
                m.n = 1;
            }
            int at = ref_alloc(&m, rounded);
            REQUIRE((st == SIM_OOM) == (at < 0), "seed %llu op %d: %llu B: gpusim %s, the reference %s",
                    (unsigned long long)seed, i, (unsigned long long)size, st == SIM_OOM ? "OOM" : "fits",
                    at < 0 ? "OOM" : "fits");
            if (st == SIM_OOM) {
                ooms++;
            } else {
                handle[n_live] = hd;
                live[n_live++] = m.b[at].addr;
            }
        } else if (n_live > 0) {
            uint32_t k = (uint32_t)(test_rand(&x) % n_live);
            ref_free(&m, live[k]);
            harness_free_block(h, handle[k]);
            n_live--;
            live[k] = live[n_live];
            handle[k] = handle[n_live];
        }
        harness_walk(h, &bs);
        ref_compare(&m, &bs, seed, i);
    }
    fprintf(stderr, "  %s %s: %d ops, %llu OOMs\n", ops->name, opts, n_ops, (unsigned long long)ooms);
    harness_free(h);
}

START_TEST(random_streams_should_match_the_brute_force_partitioned_best_fit)
{
    uint64_t seed = test_seed("bfc spatial random streams");
    /* 0.25 of 128 MiB = 32 MiB: the gap runs out, holes fill and OOMs happen */
    partitioned_stream(GREEDY, "bfc_preset=jax,mem_fraction=0.25", true, 256, 128 * MiB, seed, 4000);
    partitioned_stream(GREEDY, "bfc_preset=jax,mem_fraction=0.25,bfc_alignment=64KiB", true, 64 * KiB, 128 * MiB,
                       seed + 1, 4000);
    /* a small fragmentation cap makes rule 4's second clause bite */
    partitioned_stream(GREEDY, "bfc_preset=jax,mem_fraction=0.25,bfc_fragmentation_fraction=0.01", true, 256,
                       335544, seed + 2, 4000);
    /* classic BFC with alignment: the same reference with no gap */
    partitioned_stream(GREEDY, "mem_fraction=0.25,bfc_alignment=8KiB,bfc_gc=off", false, 8 * KiB, 128 * MiB,
                       seed + 3, 4000);
    partitioned_stream(LIMIT, "limit=24MiB,bfc_spatial=on", true, 256, 128 * MiB, seed + 4, 4000);
}
END_TEST
