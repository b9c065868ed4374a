/* Check suite for the `torch` strategy against its own checks: seeded random runs
 * with the invariant checker after every operation (per release and configuration),
 * best fit against a brute-force reference over the walker's view, and one
 * corruption per checker invariant (support/corrupt_torch.c), each of which the
 * checker must report. Sizes in comments are MiB unless marked. */
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

/* ==== Seeded random run ==== */

typedef struct live_alloc {
    strategy_handle h;
    bool pending;
} live_alloc;

static uint64_t random_size(uint64_t *x)
{
    switch (test_rand(x) % 8) {
    case 0: return 0;
    case 1: case 2: return test_rand(x) % (64 * KiB);
    case 3: return test_rand(x) % (1 * MiB + 1);
    case 4: case 5: return 1 * MiB + test_rand(x) % (9 * MiB);
    case 6: return 10 * MiB + test_rand(x) % (40 * MiB);
    default: return (test_rand(x) % 8) * 2 * MiB;
    }
}

static void random_run(const char *conf, const char *fraction, const char *version, uint64_t seed, int ops)
{
    harness *h = torch_harness_new(384 * MiB, 16 * MiB, conf, fraction, version);
    enum { MAX_LIVE = 512 };
    live_alloc live[MAX_LIVE];
    int n = 0;
    uint64_t x = seed;
    for (int i = 0; i < ops; i++) {
        uint64_t r = test_rand(&x) % 100;
        if (r < 50 && n < MAX_LIVE) {
            strategy_handle hh;
            strategy_oom oom;
            uint32_t stream = (uint32_t)(test_rand(&x) % 3);
            if (harness_try_alloc(h, random_size(&x), stream, &hh, &oom) == SIM_OK)
                live[n++] = (live_alloc){hh, false};
        } else if (r < 97 && n > 0) {
            int k = (int)(test_rand(&x) % (uint64_t)n);
            if (live[k].pending) {
                harness_free_ready(h, live[k].h);
                live[k] = live[--n];
            } else if (test_rand(&x) % 4 == 0) {
                harness_free_deferred(h, live[k].h);
                live[k].pending = true;
            } else {
                harness_free_block(h, live[k].h);
                live[k] = live[--n];
            }
        } else if (r >= 97) {
            harness_empty_cache(h);
        }
    }
    for (int k = 0; k < n; k++) {
        if (live[k].pending)
            harness_free_ready(h, live[k].h);
        else
            harness_free_block(h, live[k].h);
    }
    ck_assert_uint_eq(harness_sample(h).allocated_bytes, 0);
    harness_empty_cache(h);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    harness_free(h);
}

GPUSIM_TCASE("random", 300, NULL, NULL);

START_TEST(torch_random_operations_should_keep_every_invariant)
{
    static const struct {
        const char *conf, *fraction, *version;
    } CONFS[] = {
        {NULL, NULL, NULL},
        {"max_split_size_mb:20,roundup_power2_divisions:[1:2,16:4,>:8]", NULL, NULL},
        {"expandable_segments:True", NULL, NULL},
        {"garbage_collection_threshold:0.6", "0.8", NULL},
        {"max_split_size_mb:24,large_segment_size_mb:32,max_non_split_rounding_mb:40", "0.9", NULL},
        {"expandable_segments:True,large_segment_size_mb:12", "0.7", NULL},
        /* 2.12's tie order by creation number (the checker walks the sets in it) */
        {"max_split_size_mb:20,roundup_power2_divisions:4", NULL, "2.12"},
        {"expandable_segments:True", "0.8", "2.12"},
    };
    uint64_t seed = test_seed("torch random operations");
    int c = _i;
    random_run(CONFS[c].conf, CONFS[c].fraction, CONFS[c].version, seed + (uint64_t)c, 3000);
}
END_TEST
GPUSIM_LOOP(torch_random_operations_should_keep_every_invariant, 0, 8);

/* ==== Differential: best fit against a brute-force reference ==== */

/* The block get_free_block must pick, from the walker's view: among free blocks of
 * the request's pool and stream with size ≥ rs, the smallest, lowest address among
 * equal sizes; then the oversize rules. -1: none (a new segment). */
static int diff_best_fit(const harness_blocks *w, uint64_t rs, uint32_t stream, uint64_t max_split, uint64_t non_split)
{
    const char *pool = rs <= 1 * MiB ? "small" : "large";
    int best = -1;
    for (int i = 0; i < (int)w->n; i++) {
        const strategy_block *b = &w->b[i];
        if (b->state != BLOCK_FREE || b->stream != stream || strcmp(b->pool, pool) != 0 || b->size_bytes < rs)
            continue;
        if (best < 0 || b->size_bytes < w->b[best].size_bytes ||
            (b->size_bytes == w->b[best].size_bytes && b->addr < w->b[best].addr))
            best = i;
    }
    if (best < 0)
        return -1;
    uint64_t bs = w->b[best].size_bytes;
    if (rs < max_split && bs >= max_split)
        return -1;
    if (rs >= max_split && bs >= rs + non_split)
        return -1;
    return best;
}

static void differential_run(const char *conf, uint64_t max_split, uint64_t non_split, uint64_t seed, int ops)
{
    harness *h = torch_harness_new(64 * GiB, 0, conf, NULL, NULL);
    static harness_blocks before, after; /* the walker's view around one malloc */
    enum { MAX_LIVE = 384 };
    live_alloc live[MAX_LIVE];
    /* a palette of repeated sizes makes equal-size free blocks: the address order
     * among them is tested too */
    static const uint64_t PALETTE[] = {512, 4096, 64 * KiB, 1 * MiB, 1 * MiB + 512, 3 * MiB, 6 * MiB, 12 * MiB,
                                       20 * MiB, 24 * MiB, 40 * MiB};
    int n = 0, checked_fits = 0;
    bool unpolled = false; /* a deferred free came due since the last malloc */
    uint64_t x = seed;
    for (int i = 0; i < ops; i++) {
        uint64_t r = test_rand(&x) % 100;
        if (r < 52 && n < MAX_LIVE) {
            uint64_t size = test_rand(&x) % 2 ? PALETTE[test_rand(&x) % (sizeof PALETTE / sizeof PALETTE[0])]
                                             : random_size(&x);
            if (size == 0)
                continue;
            uint32_t stream = (uint32_t)(test_rand(&x) % 4);
            uint64_t rs = size < 512 ? 512 : (size + 511) / 512 * 512;
            if (unpolled) {
                /* this malloc first frees the deferred frees that came due
                 * (process_events): the walker's view before it is not the
                 * free set the lookup sees */
                unpolled = false;
                live[n++] = (live_alloc){harness_alloc(h, size, stream), false};
                continue;
            }
            harness_walk(h, &before);
            int want = diff_best_fit(&before, rs, stream, max_split, non_split);
            strategy_handle hh = harness_alloc(h, size, stream);
            live[n++] = (live_alloc){hh, false};
            harness_walk(h, &after);
            /* the new used block: the one at an address no used block had */
            int got = -1;
            for (int j = 0; j < (int)after.n && got < 0; j++) {
                if (after.b[j].state != BLOCK_USED)
                    continue;
                bool old = false;
                for (int k = 0; k < (int)before.n && !old; k++)
                    old = before.b[k].addr == after.b[j].addr &&
                          (before.b[k].state == BLOCK_USED || before.b[k].state == BLOCK_PENDING);
                if (!old)
                    got = j;
            }
            ck_assert_int_ge(got, 0);
            if (want >= 0) {
                checked_fits++;
                ck_assert_msg(after.b[got].addr == before.b[want].addr,
                              "alloc(%llu) on stream %u took %llu, best fit is the free block at %llu of %llu",
                              (unsigned long long)size, stream, (unsigned long long)after.b[got].addr,
                              (unsigned long long)before.b[want].addr, (unsigned long long)before.b[want].size_bytes);
            } else {
                /* no fit: a new segment, outside every block there was */
                for (int k = 0; k < (int)before.n; k++)
                    ck_assert_msg(after.b[got].addr < before.b[k].addr ||
                                      after.b[got].addr >= before.b[k].addr + before.b[k].size_bytes,
                                  "alloc(%llu) on stream %u found no fit but took %llu inside an old block",
                                  (unsigned long long)size, stream, (unsigned long long)after.b[got].addr);
            }
        } else if (r < 98 && n > 0) {
            int k = (int)(test_rand(&x) % (uint64_t)n);
            if (live[k].pending) {
                harness_free_ready(h, live[k].h);
                live[k] = live[--n];
                unpolled = true;
            } else if (test_rand(&x) % 8 == 0) {
                harness_free_deferred(h, live[k].h);
                live[k].pending = true;
            } else {
                harness_free_block(h, live[k].h);
                live[k] = live[--n];
            }
        } else if (r >= 98) {
            harness_empty_cache(h);
            unpolled = false;
        }
    }
    ck_assert_int_gt(checked_fits, ops / 10);
    harness_free(h);
}

START_TEST(torch_best_fit_should_match_a_brute_force_reference)
{
    static const struct {
        const char *conf;
        uint64_t max_split, non_split;
    } CONFS[] = {
        {NULL, UINT64_MAX, 20 * MiB},
        {"max_split_size_mb:20", 20 * MiB, 20 * MiB},
        {"max_split_size_mb:32,max_non_split_rounding_mb:48", 32 * MiB, 48 * MiB},
    };
    uint64_t seed = test_seed("torch best fit against brute force");
    differential_run(CONFS[_i].conf, CONFS[_i].max_split, CONFS[_i].non_split, seed + 100 + (uint64_t)_i, 4000);
}
END_TEST
GPUSIM_LOOP(torch_best_fit_should_match_a_brute_force_reference, 0, 3);

/* ==== Checker: one corruption per invariant ==== */

/* Free and used blocks in both pools, split and whole segments, and two deferred
 * frees pending behind each other on stream 7 (the tdefer links). */
static harness *busy_harness(void)
{
    harness *h = torch_harness_new(1 * GiB, 0, NULL, NULL, NULL);
    harness_alloc(h, 1000, 0);
    harness_alloc(h, 5 * MiB, 0);
    strategy_handle c = harness_alloc(h, 3 * MiB, 0);
    harness_alloc(h, 2 * MiB, 1);
    strategy_handle e = harness_alloc(h, 12 * MiB, 0);
    strategy_handle f = harness_alloc(h, 4096, 0);
    strategy_handle g = harness_alloc(h, 8192, 0);
    harness_free_block(h, c);
    harness_free_block(h, e);
    harness_free_deferred_on(h, f, 7);
    harness_free_deferred_on(h, g, 7);
    return h;
}

static const struct {
    torch_corruption kind;
    const char *needle;
} CORRUPTIONS[] = {
    {TORCH_CORRUPT_TILE_GAP, "do not tile"},
    {TORCH_CORRUPT_UNMERGED_FREE, "should have merged"},
    {TORCH_CORRUPT_FREE_NOT_IN_SET, "missing from its pool's set"},
    {TORCH_CORRUPT_USED_IN_SET, "not one of its free blocks"},
    {TORCH_CORRUPT_WRONG_POOL, "disagrees with segment"},
    {TORCH_CORRUPT_ALLOCATED_COUNTER, "allocated_bytes.all.current"},
    {TORCH_CORRUPT_RESERVED_COUNTER, "reserved_bytes.all.current"},
    {TORCH_CORRUPT_ACTIVE_COUNTER, "active_bytes.all.current"},
    {TORCH_CORRUPT_REQUESTED_COUNTER, "requested_bytes.all.current"},
    {TORCH_CORRUPT_INACTIVE_SPLIT, "inactive_split_bytes.all.current"},
    {TORCH_CORRUPT_PEAK, "peak"},
    {TORCH_CORRUPT_FREE_BYTES, "free bytes counter"},
    {TORCH_CORRUPT_SET_ORDER, "out of (stream"},
    {TORCH_CORRUPT_HANDLE, "not owned by its allocation handle"},
    {TORCH_CORRUPT_WRONG_BIN, "sits in size bin"},
    {TORCH_CORRUPT_BIN_BITMAP, "bin bitmap of stream"},
    {TORCH_CORRUPT_BIN_SUMMARY, "bin bitmap of stream"},
    {TORCH_CORRUPT_STREAM_COUNT, "free blocks of stream"},
    {TORCH_CORRUPT_STREAM_ORDER, "stream index of the large pool is out of order"},
    {TORCH_CORRUPT_STREAM_MISSING, "which the stream index"},
    {TORCH_CORRUPT_TREAP_PRIORITY, "breaks its treap's priorities"},
    {TORCH_CORRUPT_DEFER_LINK, "list is broken backwards"},
    {TORCH_CORRUPT_DEFER_WAIT, "waits on stream queue"},
};

GPUSIM_TCASE("checker", 0, NULL, NULL);

START_TEST(torch_checker_should_catch_each_corruption)
{
    harness *h = busy_harness();
    ck_assert_uint_eq(harness_report(h).violations, 0);
    ck_assert(corrupt_torch(h->s, CORRUPTIONS[_i].kind));
    sim_report r = harness_report(h);
    ck_assert_msg(r.violations >= 1 && sim_report_mentions(&r, CORRUPTIONS[_i].needle),
                  "corruption %d not reported as '%s'; report:\n%s", (int)CORRUPTIONS[_i].kind,
                  CORRUPTIONS[_i].needle, r.text);
    /* leave the device consistent for teardown */
    harness_free(h);
}
END_TEST
GPUSIM_LOOP(torch_checker_should_catch_each_corruption, 0, (int)(sizeof CORRUPTIONS / sizeof CORRUPTIONS[0]));

START_TEST(torch_checker_should_catch_a_device_disagreement)
{
    harness *h = busy_harness();
    ck_assert_int_eq(device_map(h->dev, h->proc, 2 * MiB), SIM_OK);
    sim_report r = harness_report(h);
    ck_assert(sim_report_mentions(&r, "device holds"));
    device_release(h->dev, h->proc, 2 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(torch_checker_should_catch_a_wrong_pool_size)
{
    harness *h = busy_harness();
    /* the first segment is the small one; flipped to large, its 2 MiB is no large
     * segment size and its blocks disagree with it */
    ck_assert(corrupt_torch(h->s, TORCH_CORRUPT_WRONG_POOL));
    sim_report r = harness_report(h);
    ck_assert(sim_report_mentions(&r, "not one of its sizes"));
    harness_free(h);
}
END_TEST
