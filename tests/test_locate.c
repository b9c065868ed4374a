/* Check suite for the strategies' locate (sim/strategy.h): which have it, and a
 * seeded random run per strategy and configuration in which, after every operation,
 * the harness holds locate to the walker for every allocation it made
 * (harness_check_locate: the same block, field by field, every used and pending
 * block located by exactly one). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "support/harness.h"
#include "support/seed.h"

GPUSIM_TCASE("which", 0, NULL, NULL);

START_TEST(every_strategy_with_addresses_should_locate_its_allocations)
{
    /* ideal packs its live allocations anew at every walk (no stable addresses);
     * every other strategy places each allocation in a block of its own */
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = registry_get(i);
        bool has = ops->locate != NULL;
        ck_assert_msg(has == (strcmp(ops->name, "ideal") != 0), "%s: locate %s", ops->name, has ? "set" : "unset");
    }
}
END_TEST

GPUSIM_TCASE("random", 300, NULL, NULL);

#define CHURN_MAX 512

/* n_ops random operations on one instance: allocations of 0 B to 64 MiB
 * (log-uniform) on streams 0..2, frees, deferred frees and their free_ready in any
 * order, and empty_cache; OOMs are allowed. Every harness operation ends in
 * harness_check_locate. */
static void churn(const char *name, uint64_t capacity, const char *opts, uint64_t seed, int n_ops)
{
    /* torch keeps a block pending past its free_ready, until a malloc polls it */
    bool polls = strcmp(name, "torch") == 0;
    const strategy_ops *ops = registry_find(name);
    ck_assert_ptr_nonnull(ops);
    ck_assert(ops->locate != NULL);
    harness *h = harness_new(ops, capacity, 0, opts);
    uint32_t stray = 0; /* pending blocks located by no deferred free */
    strategy_handle live[CHURN_MAX], pending[CHURN_MAX];
    uint32_t n_live = 0, n_pending = 0;
    uint64_t x = seed, ooms = 0, allocs = 0;
    for (int i = 0; i < n_ops; i++) {
        uint64_t r = test_rand(&x) % 100;
        if (r < 50 && n_live < CHURN_MAX) {
            uint64_t size = test_rand(&x) % 16 == 0 ? 0 : 1 + test_rand(&x) % ((uint64_t)1 << (1 + test_rand(&x) % 26));
            strategy_handle hd;
            if (harness_try_alloc(h, size, (uint32_t)(test_rand(&x) % 3), &hd, NULL) == SIM_OK) {
                live[n_live++] = hd;
                allocs++;
            } else {
                ooms++;
            }
        } else if (r < 90 && n_live > 0) { /* a free, deferred from 75 on */
            uint32_t k = (uint32_t)(test_rand(&x) % n_live);
            strategy_handle v = live[k];
            live[k] = live[--n_live];
            if (r >= 75)
                pending[n_pending++] = v;
            (r < 75 ? harness_free_block : harness_free_deferred)(h, v);
        } else if (r < 98 && n_pending > 0) {
            uint32_t k = (uint32_t)(test_rand(&x) % n_pending);
            harness_free_ready(h, pending[k]);
            pending[k] = pending[--n_pending];
        } else if (r >= 98) {
            harness_empty_cache(h);
        }
        stray += harness_check_locate(h);
    }
    EXPECT_MSG(polls || stray == 0, "%s %s, seed %llu: %u pending blocks that no deferred free is located in",
               name, opts ? opts : "", (unsigned long long)seed, stray);
    while (n_live > 0)
        harness_free_block(h, live[--n_live]);
    while (n_pending > 0)
        harness_free_ready(h, pending[--n_pending]);
    EXPECT_MSG(harness_check_locate(h) == 0 || polls, "%s: a pending block left", name);
    ck_assert_uint_gt(allocs, (uint64_t)n_ops / 4); /* most allocations succeeded: there was something to locate */
    fprintf(stderr, "  %s %s: %d ops, %llu allocations, %llu OOMs\n", name, opts ? opts : "", n_ops,
            (unsigned long long)allocs, (unsigned long long)ooms);
    harness_free(h);
}

/* The configurations each test runs: name, capacity, options (seed + i for the i-th). */
typedef struct churn_case {
    const char *name;
    uint64_t capacity;
    const char *opts;
} churn_case;

static void churn_all(const char *what, const churn_case *cases, size_t n)
{
    uint64_t seed = test_seed(what);
    for (size_t i = 0; i < n; i++)
        churn(cases[i].name, cases[i].capacity, cases[i].opts, seed + i, 2000);
}

START_TEST(bfc_locate_should_agree_with_the_walker_after_every_operation)
{
    static const churn_case cases[] = {
        {"growth", 4 * GiB, NULL},
        {"greedy", 1 * GiB, NULL},
        {"limit", 4 * GiB, "limit=512MiB"},
        {"growth", 4 * GiB, "mem_fraction=0.125,bfc_gc=on"}, /* 512 MiB, regions collected */
        {"greedy", 1 * GiB, "bfc_spatial=on"},
        {"greedy", 1 * GiB, "bfc_alignment=1MiB"},
        {"greedy", 1 * GiB, "bfc_version=tsl2024"},
    };
    churn_all("bfc locate", cases, sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(raw_locate_should_agree_with_the_walker_after_every_operation)
{
    static const churn_case cases[] = {{"raw", 4 * GiB, NULL}, {"raw", 512 * MiB, NULL} /* with OOMs */};
    churn_all("raw locate", cases, sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(async_locate_should_agree_with_the_walker_after_every_operation)
{
    /* same-stream reuse of pending pieces, synchronizes at empty_cache and on OOM */
    static const churn_case cases[] = {
        {"async", 4 * GiB, NULL},
        {"async", 512 * MiB, "async_preset=tf"}, /* OOMs: synchronize and retry */
        {"async", 1 * GiB, "async_preset=pytorch,pool_placement=first"},
        {"async", 512 * MiB, "pool_coalesce=off,pool_granularity=32MiB"},
    };
    churn_all("async locate", cases, sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(torch_locate_should_agree_with_the_walker_after_every_operation)
{
    static const churn_case cases[] = {
        {"torch", 4 * GiB, NULL},
        {"torch", 1 * GiB, "alloc_conf=expandable_segments:True"},
        {"torch", 512 * MiB, "alloc_conf=max_split_size_mb:64,garbage_collection_threshold:0.5"},
    };
    churn_all("torch locate", cases, sizeof cases / sizeof cases[0]);
}
END_TEST
