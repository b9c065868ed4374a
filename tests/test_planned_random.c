/* Check suite for the offline planners by seeded random tests (each prints its seed;
 * GPUSIM_SEED replays one): the overlap index (strategies/plan_index.h) against a
 * scan of the committed buffers, its chunk sort against qsort, and plan_xla,
 * plan_tflite and plan_tflite_gpu against the brute-force references of
 * support/plan_reference.h, with shares, resident buffers, a large BEST plan on two
 * threads and random traces through both clocks. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/plan.h"
#include "strategies/plan_index.h"
#include "strategies/plan_tflite.h"
#include "strategies/plan_xla.h"
#include "support/check_main.h"
#include "support/plan_random.h"
#include "support/plan_reference.h"
#include "support/seed.h"

GPUSIM_TCASE("random", 300, NULL, NULL);

/* ---- the overlap index alone ---- */

START_TEST(the_index_should_return_exactly_the_committed_buffers_that_share_a_time)
{
    uint64_t seed = test_seed("plan_index");
    uint64_t st = seed;
    enum { N = 3000 }; /* above 4 * 256: the longest-lived 256 sit in the scanned list */
    plan_buffer *b = calloc(N, sizeof *b);
    for (uint32_t i = 0; i < N; i++) {
        b[i].start = (int64_t)(test_rand(&st) % 2000);
        b[i].end = b[i].start + (int64_t)(test_rand(&st) % (i % 10 == 0 ? 2000 : 60));
        b[i].size = 1;
    }
    plan_index *x = plan_index_new(b, N);
    bool *in = calloc(N, sizeof *in);
    for (int round = 0; round < 2000; round++) {
        uint32_t c = (uint32_t)(test_rand(&st) % N);
        if (!in[c]) {
            in[c] = true;
            plan_index_commit(x, c, 0, c);
        }
        if (round == 1000) {
            plan_index_reset(x);
            memset(in, 0, N * sizeof *in);
        }
        plan_buffer q = {.start = (int64_t)(test_rand(&st) % 4100)};
        q.end = q.start + (int64_t)(test_rand(&st) % 30);
        plan_chunk *hits;
        uint32_t k;
        ck_assert_int_eq(plan_index_query_all(x, q.start, q.end, &hits, &k), SIM_OK);
        uint32_t want = 0;
        for (uint32_t i = 0; i < N; i++)
            want += in[i] && plan_overlap(&b[i], &q);
        EXPECT_MSG(k == want, "round %d: %u hits, want %u (seed %llu)", round, k, want,
                   (unsigned long long)seed);
        for (uint32_t i = 0; i < k; i++)
            EXPECT(in[hits[i].seq] && plan_overlap(&b[hits[i].seq], &q));
    }
    plan_index_free(x);
    free(in);
    free(b);
}
END_TEST

static int chunk_ref_cmp(const void *pa, const void *pb)
{
    const plan_chunk *a = pa, *b = pb;
    if (a->off != b->off)
        return a->off < b->off ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

START_TEST(chunk_sort_should_order_by_offset_then_seq_with_long_runs_of_one_offset)
{
    uint64_t seed = test_seed("plan_sort_chunks");
    uint64_t st = seed;
    enum { N = 5000 };
    plan_chunk *c = malloc(N * sizeof *c), *want = malloc(N * sizeof *c), *tmp = malloc(N * sizeof *c);
    for (int round = 0; round < 60; round++) {
        uint32_t n = (uint32_t)(test_rand(&st) % N);
        uint64_t offsets = 1 + test_rand(&st) % (round % 3 == 0 ? 3 : 4000); /* few: long runs */
        for (uint32_t i = 0; i < n; i++)
            c[i] = (plan_chunk){.off = (test_rand(&st) % offsets) << (test_rand(&st) % 2 ? 8 : 30),
                                .size = i, .seq = (uint32_t)test_rand(&st)};
        memcpy(want, c, n * sizeof *c);
        qsort(want, n, sizeof *want, chunk_ref_cmp);
        plan_sort_chunks(c, tmp, n);
        for (uint32_t i = 0; i < n; i++)
            EXPECT_MSG(c[i].off == want[i].off && c[i].seq == want[i].seq, "round %d place %u (seed %llu)", round,
                       i, (unsigned long long)seed);
    }
    free(c);
    free(want);
    free(tmp);
}
END_TEST

static const uint64_t ALIGNS[] = {1, 4, 20, 64, 256};
enum { MAXN = 160 }; /* buffers in one round of a differential test, at most */

/* A plan (r, off) of the n buffers b must equal the reference's heap and offsets
 * (want), and its buffers must not overlap. */
static void expect_reference(const char *what, int round, uint64_t seed, const plan_buffer *b, uint32_t n,
                             const plan_result *r, const uint64_t *off, uint64_t heap, const uint64_t *want)
{
    EXPECT_MSG(r->heap_size == heap, "round %d (%s): heap %llu, reference %llu (seed %llu)", round, what,
               (unsigned long long)r->heap_size, (unsigned long long)heap, (unsigned long long)seed);
    for (uint32_t i = 0; i < n; i++)
        EXPECT_MSG(off[i] == want[i], "round %d (%s) buffer %u: %llu, reference %llu (seed %llu)", round, what, i,
                   (unsigned long long)off[i], (unsigned long long)want[i], (unsigned long long)seed);
    plan_ref_check_disjoint(b, n, off, r->heap_size);
}

START_TEST(random_xla_plans_should_equal_the_brute_force_reference)
{
    uint64_t seed = test_seed("plan_xla differential"), st = seed;
    plan_buffer b[MAXN];
    uint64_t off[MAXN], want[MAXN];
    for (int round = 0; round < 1500; round++) {
        uint32_t n = (uint32_t)(test_rand(&st) % MAXN);
        plan_random_buffers(&st, b, n, false);
        plan_xla_config cfg = {.order = (plan_xla_order)(test_rand(&st) % 3),
                               .alignment = ALIGNS[test_rand(&st) % 5]};
        if (test_rand(&st) % 3 == 0)
            cfg.heap_limit = 1 + test_rand(&st) % 20000;
        plan_result r;
        ck_assert_int_eq(plan_xla(b, n, &cfg, off, &r), SIM_OK);
        const char *won;
        uint64_t heap = plan_ref_xla(b, n, cfg.order, cfg.alignment, cfg.heap_limit, want, &won);
        EXPECT_MSG(strcmp(r.order, won) == 0, "round %d: order %s, reference %s", round, r.order, won);
        expect_reference("xla", round, seed, b, n, &r, off, heap, want);
    }
}
END_TEST

/* Random shares (a quarter of the buffers share an earlier one, chains and shares of
 * empty buffers included) under every order, alignment and a heap limit: plan_xla
 * must equal plan_ref_xla_shared, the better of the two orders on a strict win. */
START_TEST(random_xla_plans_with_shares_should_equal_the_brute_force_reference)
{
    uint64_t seed = test_seed("plan_xla shares differential"), st = seed;
    plan_buffer b[MAXN];
    uint32_t share[MAXN], root[MAXN];
    uint64_t off[MAXN], want[MAXN], other[MAXN];
    for (int round = 0; round < 1000; round++) {
        uint32_t n = (uint32_t)(test_rand(&st) % MAXN);
        plan_random_buffers(&st, b, n, false);
        for (uint32_t i = 0; i < n; i++) {
            if (test_rand(&st) % 11 == 0)
                b[i].size = 0;
            share[i] = i > 0 && test_rand(&st) % 4 == 0 ? (uint32_t)(test_rand(&st) % i) : PLAN_NONE;
            uint32_t s = share[i];
            root[i] = s != PLAN_NONE && b[i].size && b[s].size ? root[s] : i;
        }
        plan_xla_config cfg = {
            .order = (plan_xla_order)(test_rand(&st) % 3), .alignment = ALIGNS[test_rand(&st) % 5], .share = share};
        if (test_rand(&st) % 3 == 0)
            cfg.heap_limit = 1 + test_rand(&st) % 20000;
        uint64_t lim = cfg.heap_limit ? cfg.heap_limit : UINT64_MAX;
        plan_result r;
        ck_assert_int_eq(plan_xla(b, n, &cfg, off, &r), SIM_OK);
        uint64_t heap = plan_ref_xla_shared(b, n, root, cfg.order == PLAN_XLA_TEMPORAL, cfg.alignment, lim, want);
        if (cfg.order == PLAN_XLA_BEST) {
            uint64_t t = plan_ref_xla_shared(b, n, root, true, cfg.alignment, lim, other);
            if (t < heap) {
                heap = t;
                memcpy(want, other, n * sizeof *want);
            }
        }
        EXPECT_MSG(r.heap_size == heap, "round %d: heap %llu, reference %llu (seed %llu)", round,
                   (unsigned long long)r.heap_size, (unsigned long long)heap, (unsigned long long)seed);
        for (uint32_t i = 0; i < n; i++)
            EXPECT_MSG(off[i] == want[i], "round %d buffer %u: %llu, reference %llu (seed %llu)", round, i,
                       (unsigned long long)off[i], (unsigned long long)want[i], (unsigned long long)seed);
        plan_ref_check_disjoint_groups(b, n, root, off, r.heap_size);
    }
}
END_TEST

START_TEST(random_tflite_plans_should_equal_the_brute_force_reference)
{
    uint64_t seed = test_seed("plan_tflite differential"), st = seed;
    plan_buffer b[MAXN];
    uint64_t off[MAXN], want[MAXN];
    for (int round = 0; round < 2000; round++) {
        bool gpu = round % 2; /* odd rounds: the GPU delegate's planner */
        uint32_t n = (uint32_t)(test_rand(&st) % MAXN);
        plan_random_buffers(&st, b, n, !gpu);
        uint64_t align = ALIGNS[test_rand(&st) % 5];
        plan_result r;
        if (gpu)
            ck_assert_int_eq(plan_tflite_gpu(b, n, align, off, &r), SIM_OK);
        else
            ck_assert_int_eq(plan_tflite(b, n, align, off, &r), SIM_OK);
        uint64_t heap = plan_ref_tflite(b, n, align, gpu, want);
        expect_reference(gpu ? "gpu" : "arena", round, seed, b, n, &r, off, heap, want);
    }
}
END_TEST


START_TEST(plans_with_many_resident_buffers_should_equal_the_brute_force_reference)
{
    uint64_t seed = test_seed("plan resident differential"), st = seed;
    plan_buffer b[MAXN];
    uint64_t off[MAXN], want[MAXN];
    for (int round = 0; round < 1500; round++) {
        uint32_t n = (uint32_t)(test_rand(&st) % MAXN);
        uint64_t align = ALIGNS[test_rand(&st) % 5];
        int kind = round % 3; /* xla, arena, gpu */
        plan_random_resident(&st, b, n, align, kind == 1);
        plan_result r;
        uint64_t heap;
        if (kind == 0) {
            plan_xla_config cfg = {.order = (plan_xla_order)(test_rand(&st) % 3), .alignment = align};
            if (test_rand(&st) % 4 == 0)
                cfg.heap_limit = 1 + test_rand(&st) % 40000;
            ck_assert_int_eq(plan_xla(b, n, &cfg, off, &r), SIM_OK);
            const char *won;
            heap = plan_ref_xla(b, n, cfg.order, cfg.alignment, cfg.heap_limit, want, &won);
            EXPECT_MSG(strcmp(r.order, won) == 0, "round %d: order %s, reference %s", round, r.order, won);
        } else if (kind == 1) {
            ck_assert_int_eq(plan_tflite(b, n, align, off, &r), SIM_OK);
            heap = plan_ref_tflite(b, n, align, false, want);
        } else {
            ck_assert_int_eq(plan_tflite_gpu(b, n, align, off, &r), SIM_OK);
            heap = plan_ref_tflite(b, n, align, true, want);
        }
        expect_reference(kind == 0 ? "xla" : kind == 1 ? "arena" : "gpu", round, seed, b, n, &r, off, heap, want);
    }
}
END_TEST

/* The merged query hides no usable gap and adds none: on the same commits, its
 * chunks and the exact hits cover the same bytes, with the same starts of what
 * they cover, wherever an aligned start could fit a byte. */
START_TEST(the_merged_query_should_cover_what_the_exact_hits_cover)
{
    uint64_t seed = test_seed("plan_index merged"), st = seed;
    enum { N = 400 };
    plan_buffer b[N];
    for (int round = 0; round < 40; round++) {
        uint64_t align = ALIGNS[test_rand(&st) % 5];
        plan_random_resident(&st, b, N, align, false);
        uint64_t *off = malloc(N * sizeof *off);
        plan_result r;
        plan_xla_config cfg = {.order = PLAN_XLA_SPATIAL, .alignment = align};
        ck_assert_int_eq(plan_xla(b, N, &cfg, off, &r), SIM_OK); /* a valid placement to commit */
        plan_index *x = plan_index_new(b, N);
        plan_index_set_alignment(x, align);
        for (uint32_t i = 0; i < N; i++) {
            if (b[i].size > 0)
                plan_index_commit(x, i, off[i], i);
            if (i % 7)
                continue;
            plan_chunk *c;
            uint32_t k;
            ck_assert_int_eq(plan_index_query_all(x, b[i].start, b[i].end, &c, &k), SIM_OK);
            uint64_t *all = calloc((size_t)r.heap_size + 1, 1), *merged = calloc((size_t)r.heap_size + 1, 1);
            unsigned char *ca = (unsigned char *)all, *cm = (unsigned char *)merged;
            for (uint32_t j = 0; j < k; j++)
                memset(ca + c[j].off, 1, c[j].size);
            ck_assert_int_eq(plan_index_query(x, b[i].start, b[i].end, &c, &k), SIM_OK);
            for (uint32_t j = 0; j + 1 < k; j++)
                EXPECT(c[j].off < c[j + 1].off || (c[j].off == c[j + 1].off && c[j].seq < c[j + 1].seq));
            for (uint32_t j = 0; j < k; j++)
                memset(cm + c[j].off, 1, c[j].size);
            /* a byte the merged chunks cover and the exact ones do not is inside a
             * gap no aligned start can use: the next aligned position is covered */
            for (uint64_t a = 0; a < r.heap_size; a++) {
                EXPECT_MSG(!ca[a] || cm[a], "round %d: byte %llu lost (seed %llu)", round, (unsigned long long)a,
                           (unsigned long long)seed);
                if (cm[a] && !ca[a]) {
                    uint64_t next = plan_align_up(a, align);
                    uint64_t run_start = a;
                    while (run_start > 0 && !ca[run_start - 1])
                        run_start--;
                    EXPECT_MSG(next >= r.heap_size || ca[plan_align_up(run_start, align)] ||
                                   plan_align_up(run_start, align) >= r.heap_size,
                               "round %d: usable gap at %llu merged away (seed %llu)", round,
                               (unsigned long long)a, (unsigned long long)seed);
                }
            }
            free(all);
            free(merged);
        }
        plan_index_free(x);
        free(off);
    }
}
END_TEST

/* Large enough that the two orders of PLAN_XLA_BEST run on two threads: the result
 * is still the better single order, offset for offset. */
START_TEST(a_large_best_plan_should_equal_the_better_of_its_two_orders)
{
    uint64_t seed = test_seed("plan_xla large best");
    uint64_t st = seed;
    enum { N = 30000 };
    plan_buffer *b = malloc(N * sizeof *b);
    uint64_t *best = malloc(N * sizeof *best), *sp = malloc(N * sizeof *sp), *te = malloc(N * sizeof *te);
    for (uint32_t i = 0; i < N; i++) {
        b[i].size = plan_random_size(&st);
        b[i].start = (int64_t)(test_rand(&st) % (4 * N));
        b[i].end = b[i].start + (int64_t)(test_rand(&st) % 400);
    }
    plan_result rb, rs, rt;
    plan_xla_config cfg = {.order = PLAN_XLA_BEST, .alignment = 256};
    ck_assert_int_eq(plan_xla(b, N, &cfg, best, &rb), SIM_OK);
    cfg.order = PLAN_XLA_SPATIAL;
    ck_assert_int_eq(plan_xla(b, N, &cfg, sp, &rs), SIM_OK);
    cfg.order = PLAN_XLA_TEMPORAL;
    ck_assert_int_eq(plan_xla(b, N, &cfg, te, &rt), SIM_OK);
    bool temporal = rt.heap_size < rs.heap_size;
    ck_assert_str_eq(rb.order, temporal ? "temporal" : "spatial");
    ck_assert_uint_eq(rb.heap_size, temporal ? rt.heap_size : rs.heap_size);
    ck_assert(memcmp(best, temporal ? te : sp, N * sizeof *best) == 0);
    free(b);
    free(best);
    free(sp);
    free(te);
}
END_TEST

/* Random alloc/free sequences through both clocks: every plan is at least the
 * no-fragmentation peak and agrees with the reference. */
START_TEST(random_traces_should_plan_at_or_above_the_live_peak_in_every_planner)
{
    uint64_t seed = test_seed("plan traces");
    uint64_t st = seed;
    enum { MAXB = 200 };
    for (int round = 0; round < 400; round++) {
        plan_trace *t = plan_trace_new();
        uint32_t live[MAXB], n_live = 0;
        uint32_t nb = 1 + (uint32_t)(test_rand(&st) % MAXB);
        for (uint32_t made = 0; made < nb || n_live > 0;) {
            bool do_alloc = made < nb && (n_live == 0 || test_rand(&st) % 3 != 0);
            if (do_alloc) {
                uint32_t id;
                ck_assert_int_eq(plan_trace_alloc(t, plan_random_size(&st), &id), SIM_OK);
                live[n_live++] = id;
                made++;
            } else if (test_rand(&st) % 10 == 0 && made == nb) {
                break; /* leave the rest unfreed */
            } else {
                uint32_t k = (uint32_t)(test_rand(&st) % n_live);
                ck_assert_int_eq(plan_trace_release(t, live[k]), SIM_OK);
                live[k] = live[--n_live];
            }
        }
        uint32_t n = plan_trace_buffers(t);
        plan_buffer bx[MAXB], bt[MAXB];
        uint64_t off[MAXB], want[MAXB];
        plan_lifetimes(t, PLAN_CLOCK_XLA, bx);
        plan_lifetimes(t, PLAN_CLOCK_TFLITE, bt);
        uint64_t peak = plan_trace_peak(t);
        plan_xla_config cfg = {.order = PLAN_XLA_BEST, .alignment = 1};
        plan_result r;
        const char *won;
        ck_assert_int_eq(plan_xla(bx, n, &cfg, off, &r), SIM_OK);
        EXPECT_MSG(r.heap_size >= peak, "xla heap %llu below the peak %llu (seed %llu)",
                   (unsigned long long)r.heap_size, (unsigned long long)peak, (unsigned long long)seed);
        EXPECT(r.heap_size == plan_ref_xla(bx, n, PLAN_XLA_BEST, 1, 0, want, &won));
        plan_ref_check_disjoint(bx, n, off, r.heap_size);
        ck_assert_int_eq(plan_tflite(bt, n, 1, off, &r), SIM_OK);
        EXPECT(r.heap_size >= peak);
        EXPECT(r.heap_size == plan_ref_tflite(bt, n, 1, false, want));
        plan_ref_check_disjoint(bt, n, off, r.heap_size);
        ck_assert_int_eq(plan_tflite_gpu(bt, n, 1, off, &r), SIM_OK);
        EXPECT(r.heap_size >= peak);
        EXPECT(r.heap_size == plan_ref_tflite(bt, n, 1, true, want));
        plan_trace_free(t);
    }
}
END_TEST

