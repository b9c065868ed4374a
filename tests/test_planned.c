/* Check suite for the offline planners (strategies/plan.h, plan_xla.h, plan_tflite.h):
 * the two clocks that turn a trace into lifetimes; the upstream unit tests' inputs
 * and expected offsets and heap sizes, ported (XLA: heap_simulator_test.cc at
 * ROCm/xla 183fa00c; TFLite: simple_memory_arena_test.cc, arena_planner_test.cc and
 * memory_management_test.cc at google-ai-edge/LiteRT f6745779); and seeded random
 * plans checked against a brute-force reference of the same rules, written here
 * without the overlap index: every placed buffer is scanned for every placement. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "strategies/plan.h"
#include "strategies/plan_index.h"
#include "strategies/plan_tflite.h"
#include "strategies/plan_xla.h"
#include "strategies/planned.h"
#include "support/array_source.h"
#include "support/check_main.h"
#include "support/corrupt_planned.h"
#include "support/seed.h"

/* ---- a trace written as a string: "+a10" allocs buffer a of 10 bytes, "-a" frees it,
 * "+c10=a" allocs c sharing a's memory (the alloc's "share") ---- */

static plan_trace *run_script(const char *s, uint32_t *ids)
{
    plan_trace *t = plan_trace_new();
    ck_assert_ptr_nonnull(t);
    while (*s) {
        if (*s == ' ') {
            s++;
            continue;
        }
        char op = *s++;
        int name = *s++ - 'a';
        if (op == '+') {
            char *end;
            uint64_t size = strtoull(s, &end, 10);
            s = end;
            if (*s == '=')
                s += 2; /* the share: xla_script reads it */
            ck_assert_int_eq(plan_trace_alloc(t, size, &ids[name]), SIM_OK);
        } else {
            ck_assert_int_eq(plan_trace_release(t, ids[name]), SIM_OK);
        }
    }
    return t;
}

/* Plans a script with XLA's heap; offsets by buffer letter into off[26]. */
static plan_result xla_script(const char *s, plan_xla_order order, uint64_t align, uint64_t limit,
                              uint64_t off[26])
{
    uint32_t ids[26];
    plan_trace *t = run_script(s, ids);
    uint32_t n = plan_trace_buffers(t);
    plan_buffer b[26];
    uint64_t o[26];
    plan_lifetimes(t, PLAN_CLOCK_XLA, b);
    uint32_t share[26];
    bool shares = false;
    for (uint32_t i = 0; i < n; i++)
        share[i] = PLAN_NONE;
    for (const char *p = strchr(s, '='); p != NULL; p = strchr(p + 1, '=')) {
        const char *q = p;
        while (q[-1] != '+')
            q--;
        share[ids[*q - 'a']] = ids[p[1] - 'a'];
        shares = true;
    }
    plan_xla_config cfg = {.order = order, .alignment = align, .heap_limit = limit, .share = shares ? share : NULL};
    plan_result r;
    ck_assert_int_eq(plan_xla(b, n, &cfg, o, &r), SIM_OK);
    for (int i = 0; i < 26; i++)
        off[i] = UINT64_MAX;
    for (const char *p = s; *p; p++) {
        if (*p == '+')
            off[p[1] - 'a'] = o[ids[p[1] - 'a']];
    }
    plan_trace_free(t);
    return r;
}

/* Plans a script with XLA's heap (limit 0: none) and checks the heap's size and the
 * offsets of buffers a, b, ... (want, n of them); returns the plan. */
static plan_result expect_xla(const char *s, plan_xla_order order, uint64_t align, uint64_t limit, uint64_t heap,
                              const uint64_t *want, int n)
{
    uint64_t off[26];
    plan_result r = xla_script(s, order, align, limit, off);
    ck_assert_uint_eq(r.heap_size, heap);
    for (int i = 0; i < n; i++)
        ck_assert_msg(off[i] == want[i], "%s: buffer %c at %llu, want %llu", s, 'a' + i, (unsigned long long)off[i],
                      (unsigned long long)want[i]);
    return r;
}

/* ---- the clocks ---- */

GPUSIM_TCASE("clocks", 0, NULL, NULL);

/* The script's buffers (ids by letter) and their lifetimes under clock in b. */
static plan_trace *lifetimes_of(const char *s, plan_clock clock, uint32_t ids[26], plan_buffer *b)
{
    plan_trace *t = run_script(s, ids);
    plan_lifetimes(t, clock, b);
    return t;
}

/* Buffer `name` must live over [start, end]. */
static void expect_span(const plan_buffer *b, const uint32_t ids[26], char name, int64_t start, int64_t end)
{
    const plan_buffer *x = &b[ids[name - 'a']];
    ck_assert_msg(x->start == start && x->end == end, "buffer %c: [%lld, %lld], want [%lld, %lld]", name,
                  (long long)x->start, (long long)x->end, (long long)start, (long long)end);
}

START_TEST(xla_clock_should_tick_on_nonzero_allocs_and_frees_and_free_the_rest_in_alloc_order)
{
    /* +a10 +z0 +b20 -a -z +c5: a=[0,2] (ticks: +a 0, +b 1, -a 2), z takes no tick,
     * b and c are never freed: c allocs at 3, then b is freed at 4 and c at 5. */
    uint32_t ids[26];
    plan_buffer b[4];
    plan_trace *t = lifetimes_of("+a10 +z0 +b20 -a -z +c5", PLAN_CLOCK_XLA, ids, b);
    expect_span(b, ids, 'a', 0, 2);
    ck_assert_uint_eq(b[ids['z' - 'a']].size, 0);
    expect_span(b, ids, 'b', 1, 4);
    expect_span(b, ids, 'c', 3, 5);
    plan_trace_free(t);
}
END_TEST

START_TEST(tflite_clock_should_number_every_event_and_keep_unfreed_buffers_forever)
{
    /* events: 0 +a, 1 +z, 2 +b, 3 -a, 4 -z, 5 +c. */
    uint32_t ids[26];
    plan_buffer b[4];
    plan_trace *t = lifetimes_of("+a10 +z0 +b20 -a -z +c5", PLAN_CLOCK_TFLITE, ids, b);
    expect_span(b, ids, 'a', 0, 3);
    expect_span(b, ids, 'z', 1, 4);
    expect_span(b, ids, 'b', 2, PLAN_FOREVER);
    ck_assert_int_eq(b[ids[2]].start, 5);
    plan_trace_free(t);
}
END_TEST

START_TEST(a_freed_or_unknown_buffer_should_not_be_freed_again)
{
    uint32_t ids[26];
    plan_trace *t = run_script("+a10 -a", ids);
    ck_assert_int_eq(plan_trace_release(t, ids[0]), SIM_EINTERNAL);
    ck_assert_int_eq(plan_trace_release(t, 7), SIM_EINTERNAL);
    ck_assert_uint_eq(plan_trace_events(t), 2);
    plan_trace_free(t);
}
END_TEST

/* NoFragmentationStatsHeapTest.Simple and .Mixed. */
START_TEST(the_no_fragmentation_peak_should_be_xlas_max_running_sum)
{
    uint32_t ids[26];
    plan_trace *t = run_script("+a10 +b20 +c30 +d30 -a -b -c -d", ids);
    ck_assert_uint_eq(plan_trace_peak(t), 90); /* 10 + 20 + 30 + 30 */
    plan_trace_free(t);
    t = run_script("+a10 +b20 -b +c30 -c +d5 -d -a", ids);
    ck_assert_uint_eq(plan_trace_peak(t), 40); /* a + c */
    plan_trace_free(t);
    t = plan_trace_new();
    ck_assert_uint_eq(plan_trace_peak(t), 0);
    plan_trace_free(t);
}
END_TEST

GPUSIM_TCASE("xla_upstream", 0, NULL, NULL);

/* ---- XLA: heap_simulator_test.cc ---- */

START_TEST(xla_empty_should_give_one_empty_heap)
{
    plan_result r;
    plan_xla_config cfg = {.order = PLAN_XLA_SPATIAL, .alignment = 1};
    ck_assert_int_eq(plan_xla(NULL, 0, &cfg, NULL, &r), SIM_OK);
    ck_assert_uint_eq(r.heap_size, 0);
    ck_assert_uint_eq(r.n_heaps, 1);
}
END_TEST

/* GlobalDecreasingSizeBestFitHeapTest.DecreasingSize: d(40) at 0, b(30) at 40,
 * c(20) at 70, a(10) at 90; heap 100. */
START_TEST(xla_decreasing_size_should_stack_all_four_buffers)
{
    expect_xla("+a10 +b30 +c20 +d40 -a -b -c -d", PLAN_XLA_SPATIAL, 1, 0, 100, (const uint64_t[]){90, 40, 70, 0}, 4);
}
END_TEST

/* GlobalDecreasingSizeBestFitHeapTest.DecreasingSizeWithAlignment (alignment 20):
 * c(50) at 0, d(40) at 60 (50 rounded up), b(20) at 100, a(10) at 60; heap 120. */
START_TEST(xla_decreasing_size_with_alignment_should_start_gaps_at_aligned_ends)
{
    expect_xla("+a10 +b20 +c50 -a +d40 -b -c -d", PLAN_XLA_SPATIAL, 20, 0, 120, (const uint64_t[]){60, 100, 0, 60},
               4);
}
END_TEST

/* GlobalDecreasingSizeBestFitHeapTest.BestFit: a(10) goes into the 40-byte gap at
 * 90 beside d rather than the 50-byte one; heap 140. */
START_TEST(xla_best_fit_should_take_the_smallest_gap_that_holds_the_buffer)
{
    expect_xla("+a10 +b20 +c40 -a +d30 +e50 -b -c -d -e", PLAN_XLA_SPATIAL, 1, 0, 140,
               (const uint64_t[]){90, 120, 50, 90, 0}, 5);
}
END_TEST

/* ConstrainedGlobalDecreasingSizeBestFitHeapTest.DecreasingSize (limit 50): heap 0
 * holds d at 0 and a at 40 (b and c would end past 50); heap 1 holds b and c;
 * total 100 over 2 heaps. */
START_TEST(xla_heap_limit_should_split_the_plan_into_heaps_that_sum)
{
    uint64_t off[26];
    plan_result r = xla_script("+a10 +b30 +c20 +d40 -a -b -c -d", PLAN_XLA_SPATIAL, 1, 50, off);
    ck_assert_uint_eq(r.heap_size, 100);
    ck_assert_uint_eq(r.n_heaps, 2);
    ck_assert_uint_eq(off[0], 40);
    ck_assert_uint_eq(off[3], 0);
    ck_assert_uint_ge(off[1], 50); /* heap 1 starts where heap 0 (50 bytes) ends */
    ck_assert_uint_ge(off[2], 50);
}
END_TEST

/* ConstrainedGlobalDecreasingSizeBestFitHeapTest.DecreasingSizeWithAlignment
 * (limit 70, alignment 20): heap 0 = c at 0, a at 60 (70 bytes); heap 1 = d, b
 * (60 bytes: d at 0, b at 40); total 130. */
START_TEST(xla_heap_limit_with_alignment_should_sum_seventy_and_sixty)
{
    plan_result r = expect_xla("+a10 +b20 +c50 -a +d40 -b -c -d", PLAN_XLA_SPATIAL, 20, 70, 130,
                               (const uint64_t[]){60, 70 + 40, 0, 70 + 0}, 4);
    ck_assert_uint_eq(r.n_heaps, 2);
}
END_TEST

/* ConstrainedGlobalDecreasingSizeBestFitHeapTest.PhaseWindowEndClustersByExpiry,
 * its spatial half (limit 50): a(40) and c(10) share heap 0, b(35) is alone. */
START_TEST(xla_spatial_heap_limit_should_pack_the_small_buffer_with_the_largest)
{
    uint64_t off[26];
    plan_result r = xla_script("+a40 +b35 +c10 -b -c -a", PLAN_XLA_SPATIAL, 1, 50, off);
    ck_assert_uint_eq(r.n_heaps, 2);
    ck_assert_uint_eq(r.heap_size, 50 + 35);
    ck_assert_uint_lt(off[0], 50);
    ck_assert_uint_lt(off[2], 50);
    ck_assert_uint_eq(off[1], 50);
}
END_TEST

/* ChooseBestHeapAlgorithm: the strictly smaller heap wins, a tie keeps spatial.
 * Tie: a4 [0,7], b5 [1,3], d6 [2,5], c5 [4,6]. Spatial: d 0, b 6, c 6, a 11 (on
 * the merged [0,11)): 15. Temporal (lengths a 7, d 3, b 2, c 2): a 0, d 4, b 10,
 * c 10: 15 as well, so spatial stays.
 * Temporal wins: a5 [0,3], b5 [1,4], c8 [2,6], d9 [5,7]. Spatial: d 0, c 9, a 0
 * (the 9-byte gap under c), b 17 (the 4-byte gap at 5 is too small): 22.
 * Temporal (lengths c 4, a 3, b 3, d 2): c 0, a 8, b 13, d 8 (it meets only c): 18. */
START_TEST(xla_best_should_keep_spatial_on_a_tie_and_take_a_strictly_smaller_temporal)
{
    uint64_t off[26];
    plan_result r = xla_script("+a4 +b5 +d6 -b +c5 -d -c -a", PLAN_XLA_BEST, 1, 0, off);
    ck_assert_str_eq(r.order, "spatial");
    ck_assert_uint_eq(r.heap_size, 15);
    ck_assert_uint_eq(off[0], 11);
    r = xla_script("+a4 +b5 +d6 -b +c5 -d -c -a", PLAN_XLA_TEMPORAL, 1, 0, off);
    ck_assert_uint_eq(r.heap_size, 15);
    ck_assert_uint_eq(off[0], 0);

    const char *s = "+a5 +b5 +c8 -a -b +d9 -c -d";
    r = xla_script(s, PLAN_XLA_SPATIAL, 1, 0, off);
    ck_assert_uint_eq(r.heap_size, 22);
    ck_assert_uint_eq(off[1], 17);
    r = xla_script(s, PLAN_XLA_BEST, 1, 0, off);
    ck_assert_str_eq(r.order, "temporal");
    ck_assert_uint_eq(r.heap_size, 18);
    const uint64_t want[] = {8, 13, 0, 8};
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(off[i], want[i]);
}
END_TEST

START_TEST(xla_zero_byte_buffers_should_get_offset_zero_and_no_space)
{
    uint64_t off[26];
    plan_result r = xla_script("+a10 +z0 +b10 -z -a -b", PLAN_XLA_BEST, 1, 0, off);
    ck_assert_uint_eq(off['z' - 'a'], 0);
    ck_assert_uint_eq(r.heap_size, 20);
}
END_TEST

/* Shares (plan_xla.h rule 7). a [0,1] and c [3,5] (which shares a) are one group of
 * 10 bytes; b (20) [2,4] overlaps c. Spatial: b (the largest) at 0; the group is
 * placed against what is live at a's and c's times, so b's [0,20) pushes it to 20,
 * though a alone would fit at 0 (without the share: a 0, c 20). Temporal: the group's
 * length runs from a's start to c's end (5 > b's 2): a and c at 0, then b above c at
 * 10. Both heaps are 30: best keeps spatial. */
START_TEST(a_shared_buffer_should_take_its_groups_offset_and_the_group_every_members_time)
{
    const char *s = "+a10 -a +b20 +c10=a -b -c";
    expect_xla(s, PLAN_XLA_SPATIAL, 1, 0, 30, (const uint64_t[]){20, 0, 20}, 3);
    expect_xla(s, PLAN_XLA_TEMPORAL, 1, 0, 30, (const uint64_t[]){0, 10, 0}, 3);
    expect_xla(s, PLAN_XLA_BEST, 1, 0, 30, (const uint64_t[]){20, 0, 20}, 3);
    expect_xla("+a10 -a +b20 +c10 -b -c", PLAN_XLA_SPATIAL, 1, 0, 30, (const uint64_t[]){0, 0, 20}, 3);
}
END_TEST

/* A member larger than its root: a (10) [0,2] and b (20) [3,4] sharing it; c (40)
 * [1,5] goes first at 0; the group at d's end, 40, and the heap ends at b's end, 60
 * (CommitChunk counts each member's own chunk). Chains are transitive: with d the
 * large one, c shares b, so c is in a's group too. A share of an empty buffer colocates nothing. */
START_TEST(a_group_should_need_room_for_its_largest_member_and_follow_chains)
{
    expect_xla("+a10 +c40 -a +b20=a -b -c", PLAN_XLA_SPATIAL, 1, 0, 60, (const uint64_t[]){40, 40, 0}, 3);
    expect_xla("+a10 +d40 -a +b20=a -b +c20=b -c -d", PLAN_XLA_SPATIAL, 1, 0, 60, (const uint64_t[]){40, 40, 40, 0}, 4);
    expect_xla("+a0 +b10=a +c10 -b -c -a", PLAN_XLA_SPATIAL, 1, 0, 20, (const uint64_t[]){0, 0, 10}, 3);
}
END_TEST

GPUSIM_TCASE("tflite_upstream", 0, NULL, NULL);

/* ---- TFLite: simple_memory_arena_test.cc, arena_planner_test.cc ---- */

static void arena_in_order(const plan_buffer *b, uint32_t n, uint64_t align, uint64_t *off)
{
    plan_result r;
    ck_assert_int_eq(plan_tflite_arena_in_order(b, n, align, off, &r), SIM_OK);
}

/* SimpleMemoryArenaTest.BasicArenaOperations (alignment 32). */
START_TEST(tflite_arena_basic_operations_should_give_the_upstream_offsets)
{
    const plan_buffer b[] = {{2047, 1, 3}, {2047, 2, 5}, {2047, 3, 6},
                             {2047, 5, 6}, {1023, 4, 6}, {1023, 6, 6}};
    uint64_t off[6];
    arena_in_order(b, 6, 32, off);
    const uint64_t want[] = {0, 2048, 4096, 0, 6144, 2048};
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(off[i], want[i]);
}
END_TEST

/* SimpleMemoryArenaTest.BasicZeroAlloc and .InterleavedZeroAlloc. */
START_TEST(tflite_arena_zero_sized_allocs_should_take_offset_zero_and_not_move_others)
{
    const plan_buffer z[] = {{0, 1, 2}};
    uint64_t off[4];
    arena_in_order(z, 1, 32, off);
    ck_assert_uint_eq(off[0], 0);
    const plan_buffer b[] = {{2047, 0, 4}, {0, 1, 2}, {1023, 1, 2}, {2047, 3, 4}};
    arena_in_order(b, 4, 32, off);
    const uint64_t want[] = {0, 0, 2048, 2048};
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(off[i], want[i]);
}
END_TEST

/* SimpleMemoryArenaTest.TestClearPlan: three plans of three buffers each. */
START_TEST(tflite_arena_three_overlapping_buffers_should_stack_at_aligned_ends)
{
    const uint64_t sizes[] = {2047, 1023, 4095};
    const uint64_t want[3][3] = {{0, 2048, 4096}, {0, 1024, 2048}, {0, 4096, 8192}};
    for (int k = 0; k < 3; k++) {
        const plan_buffer b[] = {{sizes[k], 0, 2}, {sizes[k], 1, 2}, {sizes[k], 1, 2}};
        uint64_t off[3];
        arena_in_order(b, 3, 32, off);
        for (int i = 0; i < 3; i++)
            ck_assert_uint_eq(off[i], want[k][i]);
    }
}
END_TEST

/* ArenaPlannerTest.SimpleGraph (alignment 4, tensor i has (i + 1) * 3 bytes).
 * Nodes by PlanAllocations: inputs 0 and 1 live the whole run; 2 = [0,1];
 * 4, 5 = [1,2]; 3 = [2, forever) (a graph output). Expected: 1 at 4, 5 at 12,
 * 4 after 5 (30 -> 32), 3 and 2 after 4 (47 -> 48). */
START_TEST(tflite_simple_graph_should_give_the_upstream_offsets)
{
    const plan_buffer b[] = {{3, 0, PLAN_FOREVER}, {6, 0, PLAN_FOREVER}, {9, 0, 1},
                             {12, 2, PLAN_FOREVER}, {15, 1, 2}, {18, 1, 2}};
    uint64_t off[6];
    plan_result r;
    ck_assert_int_eq(plan_tflite(b, 6, 4, off, &r), SIM_OK);
    const uint64_t want[] = {0, 4, 48, 48, 32, 12};
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(off[i], want[i]);
    ck_assert_uint_eq(r.heap_size, 60); /* 3 and 2 end at 48 + 12 */
}
END_TEST

/* ArenaPlannerTest.ComplexGraph (alignment 4). Nodes: 0 = input; 1 = [0,3]; 2 =
 * [1,4]; 3 = [2,4]; 4 = [3,4]; 5 = [4,6]; 6 = [5,7]; 7 = [6,7]; 8 = [7, forever).
 * Expected: 0 at 0, 1 after 0 (32), 5 at 32, 7 after 5 (96), 6 after 7 (136), 2
 * after 5 (96), 3 after 2 (132), 4 after 3 (148), 8 at 32. */
START_TEST(tflite_complex_graph_should_give_the_upstream_offsets)
{
    const plan_buffer b[] = {{32, 0, PLAN_FOREVER}, {28, 0, 3}, {36, 1, 4}, {16, 2, 4}, {8, 3, 4},
                             {64, 4, 6}, {10, 5, 7}, {40, 6, 7}, {27, 7, PLAN_FOREVER}};
    uint64_t off[9];
    plan_result r;
    ck_assert_int_eq(plan_tflite(b, 9, 4, off, &r), SIM_OK);
    const uint64_t want[] = {0, 32, 96, 132, 148, 32, 136, 96, 32};
    for (int i = 0; i < 9; i++)
        ck_assert_uint_eq(off[i], want[i]);
}
END_TEST

/* ---- TFLite GPU delegate: memory_management_test.cc ---- */

static void gpu_case(const plan_buffer *b, uint32_t n, uint64_t align, const uint64_t *want,
                     uint64_t want_total)
{
    uint64_t off[16];
    plan_result r;
    ck_assert_int_eq(plan_tflite_gpu(b, n, align, off, &r), SIM_OK);
    for (uint32_t i = 0; i < n; i++)
        ck_assert_uint_eq(off[i], want[i]);
    ck_assert_uint_eq(r.heap_size, want_total);
}

START_TEST(tflite_gpu_one_and_no_records_should_give_the_upstream_totals)
{
    const plan_buffer one[] = {{16, 0, 1}};
    const uint64_t want[] = {0};
    gpu_case(one, 1, 1, want, 16);
    gpu_case(NULL, 0, 1, NULL, 0);
}
END_TEST

START_TEST(tflite_gpu_chain_records_should_alternate_two_offsets)
{
    const plan_buffer b[] = {{16, 0, 1}, {8, 1, 2}, {64, 2, 3}, {32, 3, 4}, {8, 4, 5}};
    const uint64_t want[] = {0, 64, 0, 64, 0};
    gpu_case(b, 5, 1, want, 96);
    const uint64_t want128[] = {0, 128, 0, 128, 0}; /* OffsetAssignmentWithAlignment */
    gpu_case(b, 5, 128, want128, 160);
}
END_TEST

START_TEST(tflite_gpu_complex_records_should_give_the_upstream_offsets)
{
    const plan_buffer b[] = {{32, 0, 1}, {32, 1, 4}, {8, 2, 5}, {16, 3, 5}, {8, 4, 5},
                             {64, 5, 7}, {8, 6, 8}, {8, 7, 8}, {16, 8, 9}};
    const uint64_t want[] = {0, 32, 80, 64, 88, 0, 64, 72, 0};
    gpu_case(b, 9, 1, want, 96);
}
END_TEST

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
        ck_assert_int_eq(plan_index_query(x, q.start, q.end, &hits, &k), SIM_OK);
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

/* ---- the brute-force references: the same rules, a scan over every placed buffer ---- */

typedef struct ref_placed {
    uint32_t id;
    uint64_t off;
} ref_placed;

static void ref_sort(uint32_t *ids, uint32_t n, plan_less less, const void *ctx)
{
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: stable */
        uint32_t v = ids[i], j = i;
        while (j > 0 && less(ctx, v, ids[j - 1])) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = v;
    }
}

static uint64_t ref_len(const plan_buffer *b) { return (uint64_t)(b->end - b->start); }

/* x before y when its keys (major, then minor) are greater, then by index: a
 * descending lexicographic order, ties kept stable. */
static bool ref_before(uint64_t major_x, uint64_t minor_x, uint64_t major_y, uint64_t minor_y, uint32_t x,
                       uint32_t y)
{
    if (major_x != major_y)
        return major_x > major_y;
    if (minor_x != minor_y)
        return minor_x > minor_y;
    return x < y;
}

/* Spatial: size, then lifetime; temporal: lifetime, then size. */
static bool ref_spatial(const void *ctx, uint32_t x, uint32_t y)
{
    const plan_buffer *b = ctx;
    return ref_before(b[x].size, ref_len(&b[x]), b[y].size, ref_len(&b[y]), x, y);
}

static bool ref_temporal(const void *ctx, uint32_t x, uint32_t y)
{
    const plan_buffer *b = ctx;
    return ref_before(ref_len(&b[x]), b[x].size, ref_len(&b[y]), b[y].size, x, y);
}

static uint64_t up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* XLA, one order: for every buffer, the time-overlapping placed chunks sorted by
 * offset (insertion sort), merged into runs; the gaps (start, end) listed; the
 * smallest that fits at its aligned start chosen. */
static uint64_t ref_xla_order(const plan_buffer *b, uint32_t n, plan_less less, uint64_t align,
                              uint64_t limit, uint64_t *off, uint32_t *heaps)
{
    uint32_t *todo = malloc((n + 1) * sizeof *todo), nt = 0;
    ref_placed *pl = malloc((n + 1) * sizeof *pl);
    uint64_t (*ch)[2] = malloc((n + 1) * sizeof *ch);
    uint64_t (*gaps)[2] = malloc((n + 2) * sizeof *gaps);
    for (uint32_t i = 0; i < n; i++) {
        off[i] = 0;
        if (b[i].size)
            todo[nt++] = i;
    }
    ref_sort(todo, nt, less, b);
    uint64_t base = 0;
    *heaps = 0;
    do {
        uint32_t np = 0, left = 0;
        uint64_t heap = 0;
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t id = todo[t];
            uint32_t k = 0;
            for (uint32_t p = 0; p < np; p++) {
                if (!plan_overlap(&b[pl[p].id], &b[id]))
                    continue;
                uint64_t o = pl[p].off, e = o + b[pl[p].id].size;
                uint32_t j = k++;
                while (j > 0 && ch[j - 1][0] > o) {
                    ch[j][0] = ch[j - 1][0];
                    ch[j][1] = ch[j - 1][1];
                    j--;
                }
                ch[j][0] = o;
                ch[j][1] = e;
            }
            uint32_t ng = 0;
            uint64_t gap_start = 0;
            for (uint32_t i = 0; i < k;) {
                uint64_t ro = ch[i][0], re = ch[i][1];
                for (i++; i < k && ch[i][0] < re; i++)
                    re = ch[i][1] > re ? ch[i][1] : re;
                if (ro >= gap_start && ro - gap_start >= b[id].size) {
                    gaps[ng][0] = gap_start;
                    gaps[ng++][1] = ro;
                }
                if (up(re, align) > gap_start)
                    gap_start = up(re, align);
            }
            gaps[ng][0] = gap_start;
            gaps[ng++][1] = (uint64_t)INT64_MAX;
            uint64_t best = 0, best_size = 0;
            bool found = false;
            for (uint32_t g = 0; g < ng; g++) {
                uint64_t at = up(gaps[g][0], align);
                if (gaps[g][1] - b[id].size < at)
                    continue;
                if (!found || gaps[g][1] - gaps[g][0] < best_size) {
                    found = true;
                    best = at;
                    best_size = gaps[g][1] - gaps[g][0];
                }
            }
            if (best + b[id].size <= limit || heap == 0) {
                off[id] = best;
                pl[np++] = (ref_placed){id, best};
                if (best + b[id].size > heap)
                    heap = best + b[id].size;
            } else {
                todo[left++] = id;
            }
        }
        for (uint32_t p = 0; p < np; p++)
            off[pl[p].id] += base;
        base += heap;
        (*heaps)++;
        nt = left;
    } while (nt > 0);
    free(todo);
    free(pl);
    free(ch);
    free(gaps);
    return base;
}

static uint64_t ref_xla(const plan_buffer *b, uint32_t n, plan_xla_order order, uint64_t align,
                        uint64_t limit, uint64_t *off, const char **won)
{
    uint64_t lim = limit ? limit : UINT64_MAX;
    uint32_t heaps;
    if (order == PLAN_XLA_TEMPORAL) {
        *won = "temporal";
        return ref_xla_order(b, n, ref_temporal, align, lim, off, &heaps);
    }
    uint64_t s = ref_xla_order(b, n, ref_spatial, align, lim, off, &heaps);
    *won = "spatial";
    if (order == PLAN_XLA_SPATIAL)
        return s;
    uint64_t *o2 = malloc((n + 1) * sizeof *o2);
    uint64_t t = ref_xla_order(b, n, ref_temporal, align, lim, o2, &heaps);
    if (t < s) {
        memcpy(off, o2, n * sizeof *off);
        s = t;
        *won = "temporal";
    }
    free(o2);
    return s;
}

/* TFLite: the placed list kept in offset order, a new one inserted after those at
 * its offset, walked whole for every placement. gpu selects the delegate's rules. */
static uint64_t ref_tflite(const plan_buffer *b, uint32_t n, uint64_t align, bool gpu, uint64_t *off)
{
    uint32_t *ord = malloc((n + 1) * sizeof *ord);
    ref_placed *pl = malloc((n + 1) * sizeof *pl);
    uint32_t np = 0;
    for (uint32_t i = 0; i < n; i++)
        ord[i] = i;
    for (uint32_t i = 1; i < n; i++) { /* insertion sort with the planner's order */
        uint32_t v = ord[i], j = i;
        for (; j > 0; j--) {
            uint32_t u = ord[j - 1];
            bool before;
            if (gpu) {
                before = b[v].size > b[u].size;
            } else {
                bool wv = b[v].start == 0 && b[v].end == PLAN_FOREVER;
                bool wu = b[u].start == 0 && b[u].end == PLAN_FOREVER;
                if (wv != wu)
                    before = wv;
                else if (wv)
                    before = v < u;
                else if (b[v].size != b[u].size)
                    before = b[v].size > b[u].size;
                else
                    before = b[v].start < b[u].start || (b[v].start == b[u].start && v < u);
            }
            if (!before)
                break;
            ord[j] = u;
        }
        ord[j] = v;
    }
    uint64_t high = 0;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t id = ord[t];
        uint64_t size = b[id].size;
        if (!gpu && size == 0) {
            off[id] = 0;
            continue;
        }
        uint64_t best = UINT64_MAX, fit = UINT64_MAX, cur = 0;
        for (uint32_t p = 0; p < np; p++) {
            const plan_buffer *o = &b[pl[p].id];
            if (o->end < b[id].start || o->start > b[id].end)
                continue;
            uint64_t po = pl[p].off;
            if (gpu) {
                if (po >= cur && po - cur >= size && po - cur < fit) {
                    fit = po - cur;
                    best = cur;
                }
                cur = up(po + o->size, align) > cur ? up(po + o->size, align) : cur;
            } else {
                uint64_t a = up(cur, align);
                if (a + size <= po && po - a < fit) {
                    best = a;
                    fit = po - cur;
                }
                cur = po + o->size > cur ? po + o->size : cur;
                if (fit == 0)
                    break;
            }
        }
        if (best == UINT64_MAX)
            best = gpu ? cur : up(cur, align);
        off[id] = best;
        high = best + size > high ? best + size : high;
        uint32_t j = np++;
        while (j > 0 && pl[j - 1].off > best) {
            pl[j] = pl[j - 1];
            j--;
        }
        pl[j] = (ref_placed){id, best};
    }
    free(ord);
    free(pl);
    return high;
}

/* No two buffers that share a time share a byte. */
static void check_disjoint(const plan_buffer *b, uint32_t n, const uint64_t *off, uint64_t heap)
{
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].size == 0)
            continue;
        EXPECT(off[i] + b[i].size <= heap);
        for (uint32_t j = i + 1; j < n; j++) {
            if (b[j].size == 0 || !plan_overlap(&b[i], &b[j]))
                continue;
            EXPECT_MSG(off[i] + b[i].size <= off[j] || off[j] + b[j].size <= off[i],
                       "buffers %u and %u overlap in time and space", i, j);
        }
    }
}

static uint64_t rand_size(uint64_t *st)
{
    switch (test_rand(st) % 6) {
    case 0: return 0;
    case 1: return 1 + test_rand(st) % 16;
    case 2: return 256 * (1 + test_rand(st) % 8); /* many equal sizes: tie-breaks */
    default: return 1 + test_rand(st) % 5000;
    }
}

static void random_buffers(uint64_t *st, plan_buffer *b, uint32_t n, bool forever)
{
    int64_t span = 1 + (int64_t)(test_rand(st) % (4 * n + 1));
    for (uint32_t i = 0; i < n; i++) {
        b[i].size = rand_size(st);
        b[i].start = (int64_t)(test_rand(st) % (uint64_t)span);
        if (test_rand(st) % 9 == 0)
            b[i].start = 0;
        b[i].end = b[i].start + (int64_t)(test_rand(st) % (uint64_t)(span / 3 + 1));
        if (forever && test_rand(st) % 7 == 0)
            b[i].end = PLAN_FOREVER;
    }
}

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
    check_disjoint(b, n, off, r->heap_size);
}

START_TEST(random_xla_plans_should_equal_the_brute_force_reference)
{
    uint64_t seed = test_seed("plan_xla differential"), st = seed;
    plan_buffer b[MAXN];
    uint64_t off[MAXN], want[MAXN];
    for (int round = 0; round < 1500; round++) {
        uint32_t n = (uint32_t)(test_rand(&st) % MAXN);
        random_buffers(&st, b, n, false);
        plan_xla_config cfg = {.order = (plan_xla_order)(test_rand(&st) % 3),
                               .alignment = ALIGNS[test_rand(&st) % 5]};
        if (test_rand(&st) % 3 == 0)
            cfg.heap_limit = 1 + test_rand(&st) % 20000;
        plan_result r;
        ck_assert_int_eq(plan_xla(b, n, &cfg, off, &r), SIM_OK);
        const char *won;
        uint64_t heap = ref_xla(b, n, cfg.order, cfg.alignment, cfg.heap_limit, want, &won);
        EXPECT_MSG(strcmp(r.order, won) == 0, "round %d: order %s, reference %s", round, r.order, won);
        expect_reference("xla", round, seed, b, n, &r, off, heap, want);
    }
}
END_TEST

/* XLA with shares (plan_xla.h rule 7), one order, brute force: the groups by a scan of
 * share[]; a root's placed neighbours are those live at any member's time, its gaps
 * must hold the group's largest member, and every member is committed at its offset.
 * The temporal order sorts copies of the roots whose end is their group's last. */
static uint64_t ref_shared_order(const plan_buffer *b, uint32_t n, const uint32_t *root, bool temporal, uint64_t align,
                                 uint64_t limit, uint64_t *off)
{
    plan_buffer *keys = calloc(n + 1, sizeof *keys);
    uint64_t *need = malloc((n + 1) * sizeof *need);
    uint32_t *todo = malloc((n + 1) * sizeof *todo), nt = 0;
    ref_placed *pl = malloc((n + 1) * sizeof *pl);
    uint64_t(*ch)[2] = malloc((n + 1) * sizeof *ch);
    for (uint32_t i = 0; i < n; i++) {
        keys[i] = b[i];
        need[i] = b[i].size;
    }
    for (uint32_t i = 0; i < n; i++) {
        off[i] = 0;
        uint32_t r = root[i];
        if (r != i) {
            keys[r].end = b[i].end > keys[r].end ? b[i].end : keys[r].end;
            need[r] = b[i].size > need[r] ? b[i].size : need[r];
        } else if (b[i].size) {
            todo[nt++] = i;
        }
    }
    ref_sort(todo, nt, temporal ? ref_temporal : ref_spatial, temporal ? keys : b);
    uint64_t base = 0;
    do {
        uint32_t np = 0, left = 0;
        uint64_t heap = 0;
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t id = todo[t], k = 0;
            for (uint32_t p = 0; p < np; p++) {
                bool live = false;
                for (uint32_t m = 0; m < n && !live; m++)
                    live = root[m] == id && plan_overlap(&b[pl[p].id], &b[m]);
                if (!live)
                    continue;
                uint64_t o = pl[p].off, e = o + b[pl[p].id].size;
                uint32_t j = k++;
                while (j > 0 && ch[j - 1][0] > o) {
                    ch[j][0] = ch[j - 1][0];
                    ch[j][1] = ch[j - 1][1];
                    j--;
                }
                ch[j][0] = o;
                ch[j][1] = e;
            }
            /* the gaps between merged runs, then after the last; the smallest that holds
             * need[id] from its (aligned) start, the first of equal ones */
            uint64_t gap_start = 0, best = 0, best_size = 0;
            bool found = false;
            for (uint32_t i = 0; i <= k;) {
                uint64_t ro = (uint64_t)INT64_MAX, re = 0;
                if (i < k) {
                    ro = ch[i][0];
                    re = ch[i][1];
                    for (i++; i < k && ch[i][0] < re; i++)
                        re = ch[i][1] > re ? ch[i][1] : re;
                } else {
                    i++;
                }
                if (ro >= gap_start && ro - gap_start >= need[id] && (!found || ro - gap_start < best_size)) {
                    found = true;
                    best = gap_start;
                    best_size = ro - gap_start;
                }
                if (up(re, align) > gap_start)
                    gap_start = up(re, align);
            }
            if (best + b[id].size <= limit || heap == 0) {
                for (uint32_t m = 0; m < n; m++) {
                    if (root[m] != id || b[m].size == 0)
                        continue;
                    off[m] = best;
                    pl[np++] = (ref_placed){m, best};
                    heap = best + b[m].size > heap ? best + b[m].size : heap;
                }
            } else {
                todo[left++] = id;
            }
        }
        for (uint32_t p = 0; p < np; p++)
            off[pl[p].id] += base;
        base += heap;
        nt = left;
    } while (nt > 0);
    free(keys);
    free(need);
    free(todo);
    free(pl);
    free(ch);
    return base;
}

/* Buffers of different groups that share a time share no byte; a group's members
 * all sit at its root's offset. */
static void check_disjoint_groups(const plan_buffer *b, uint32_t n, const uint32_t *root, const uint64_t *off,
                                  uint64_t heap)
{
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].size == 0)
            continue;
        EXPECT(off[i] + b[i].size <= heap);
        EXPECT_MSG(off[i] == off[root[i]], "buffer %u is not at its group's offset", i);
        for (uint32_t j = i + 1; j < n; j++) {
            if (b[j].size == 0 || root[i] == root[j] || !plan_overlap(&b[i], &b[j]))
                continue;
            EXPECT_MSG(off[i] + b[i].size <= off[j] || off[j] + b[j].size <= off[i],
                       "buffers %u and %u of two groups overlap in time and space", i, j);
        }
    }
}

/* Random shares (a quarter of the buffers share an earlier one, chains and shares of
 * empty buffers included) under every order, alignment and a heap limit: plan_xla
 * must equal ref_shared_order, the better of the two orders on a strict win. */
START_TEST(random_xla_plans_with_shares_should_equal_the_brute_force_reference)
{
    uint64_t seed = test_seed("plan_xla shares differential"), st = seed;
    plan_buffer b[MAXN];
    uint32_t share[MAXN], root[MAXN];
    uint64_t off[MAXN], want[MAXN], other[MAXN];
    for (int round = 0; round < 1000; round++) {
        uint32_t n = (uint32_t)(test_rand(&st) % MAXN);
        random_buffers(&st, b, n, false);
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
        uint64_t heap = ref_shared_order(b, n, root, cfg.order == PLAN_XLA_TEMPORAL, cfg.alignment, lim, want);
        if (cfg.order == PLAN_XLA_BEST) {
            uint64_t t = ref_shared_order(b, n, root, true, cfg.alignment, lim, other);
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
        check_disjoint_groups(b, n, root, off, r.heap_size);
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
        random_buffers(&st, b, n, !gpu);
        uint64_t align = ALIGNS[test_rand(&st) % 5];
        plan_result r;
        if (gpu)
            ck_assert_int_eq(plan_tflite_gpu(b, n, align, off, &r), SIM_OK);
        else
            ck_assert_int_eq(plan_tflite(b, n, align, off, &r), SIM_OK);
        uint64_t heap = ref_tflite(b, n, align, gpu, want);
        expect_reference(gpu ? "gpu" : "arena", round, seed, b, n, &r, off, heap, want);
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
        b[i].size = rand_size(&st);
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
                ck_assert_int_eq(plan_trace_alloc(t, rand_size(&st), &id), SIM_OK);
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
        EXPECT(r.heap_size == ref_xla(bx, n, PLAN_XLA_BEST, 1, 0, want, &won));
        check_disjoint(bx, n, off, r.heap_size);
        ck_assert_int_eq(plan_tflite(bt, n, 1, off, &r), SIM_OK);
        EXPECT(r.heap_size >= peak);
        EXPECT(r.heap_size == ref_tflite(bt, n, 1, false, want));
        check_disjoint(bt, n, off, r.heap_size);
        ck_assert_int_eq(plan_tflite_gpu(bt, n, 1, off, &r), SIM_OK);
        EXPECT(r.heap_size >= peak);
        EXPECT(r.heap_size == ref_tflite(bt, n, 1, true, want));
        plan_trace_free(t);
    }
}
END_TEST

GPUSIM_TCASE("strategy", 300, NULL, NULL);

/* ---- the strategy through the engine: plan first, then replay ---- */

static sim_event A(uint64_t id, uint64_t size, uint64_t t)
{
    return (sim_event){.op = SIM_OP_ALLOC, .id = id, .size = size, .t = t};
}

static sim_event F(uint64_t id, uint64_t t, uint64_t ready)
{
    return (sim_event){.op = SIM_OP_FREE, .id = id, .t = t, .ready_t = ready};
}

/* An alloc that shares the memory of the latest allocation of id `shared`. */
static sim_event S(uint64_t id, uint64_t size, uint64_t t, uint64_t shared)
{
    return (sim_event){.op = SIM_OP_ALLOC, .id = id, .size = size, .t = t, .has_share = true, .share = shared};
}

typedef struct stat_get {
    const char *key;
    uint64_t value;
    bool found;
} stat_get;

static void get_u64(void *ctx, const char *key, uint64_t v)
{
    stat_get *g = ctx;
    if (strcmp(key, g->key) == 0) {
        g->value = v;
        g->found = true;
    }
}
static void get_real(void *ctx, const char *key, double v) { (void)ctx; (void)key; (void)v; }
static void get_text(void *ctx, const char *key, const char *v) { (void)ctx; (void)key; (void)v; }

static uint64_t stat_of(const sim_run *run, uint32_t proc, const char *key)
{
    stat_get g = {.key = key};
    strategy_stat_sink sink = {get_u64, get_real, get_text, &g};
    run->ops->stats(run->procs[proc].s, &sink);
    ck_assert_msg(g.found, "no stat %s", key);
    return g.value;
}

static sim_run *replay_planned(const sim_event *ev, uint64_t n, uint64_t capacity, const sim_kv *opts,
                               uint32_t n_opts, bool skip, sim_status want)
{
    array_source src = {ev, n, 0};
    sim_event_source s = {.next = array_source_next, .ctx = &src, .path = "t.jsonl", .name = NULL};
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = capacity}, .ops = planned_strategy(),
                         .opts = opts, .n_opts = n_opts, .on_oom_skip = skip, .paranoid = true};
    sim_run *run = NULL;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = engine_run(&cfg, &s, 1, &run, &err);
    ck_assert_msg(st == want, "engine_run returned %s: %s", sim_strerror(st), err.msg);
    return run;
}

/* XLA's DecreasingSizeWithAlignment trace as a replay: the plan's heap is 120
 * (test above); the live peak is a + b + c = 80, then b + c + d = 110; so the
 * arena is 120, fragmentation_size 10, and reserved is 120 from the first alloc. */
START_TEST(planned_replay_should_reserve_the_planned_heap_at_the_first_alloc)
{
    const sim_event ev[] = {A(1, 10, 0), A(2, 20, 1), A(3, 50, 2), F(1, 3, 3), A(4, 40, 4),
                            F(2, 5, 5), F(3, 6, 6), F(4, 7, 7)};
    const sim_kv opts[] = {{"planner", "xla-spatial"}, {"alignment", "20"}};
    sim_run *run = replay_planned(ev, 8, 1000, opts, 2, false, SIM_OK);
    ck_assert(run->total.completed);
    ck_assert_uint_eq(stat_of(run, 0, "heap_size_bytes"), 120);
    ck_assert_uint_eq(stat_of(run, 0, "no_fragmentation_peak_bytes"), 110);
    ck_assert_uint_eq(stat_of(run, 0, "fragmentation_size_bytes"), 10);
    ck_assert_uint_eq(run->total.peak_reserved_bytes, 120);
    ck_assert_uint_eq(run->total.peak_allocated_bytes, 110);
    ck_assert_uint_eq(run->total.peak_requested_bytes, 110);
    ck_assert_uint_eq(run->total.num_device_allocs, 1);
    /* after the run nothing is live: locate finds no block */
    strategy_block blk;
    ck_assert(!run->ops->locate(run->procs[0].s, 0, &blk));
    sim_run_free(run);
    /* stopped after the first three allocs, a, b and c sit at their planned offsets
     * (60, 100, 0: the upstream expectations); the handle is the buffer's number */
    array_source src = {ev, 8, 0};
    sim_event_source so = {.next = array_source_next, .ctx = &src, .path = "t.jsonl"};
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = 1000}, .ops = planned_strategy(),
                         .opts = opts, .n_opts = 2, .stop_after_event = 3, .paranoid = true};
    sim_error err;
    ck_assert_int_eq(engine_run(&cfg, &so, 1, &run, &err), SIM_OK);
    const uint64_t at[] = {60, 100, 0};
    for (strategy_handle h = 0; h < 3; h++) {
        ck_assert(run->ops->locate(run->procs[0].s, h, &blk));
        ck_assert_uint_eq(blk.addr, at[h]);
    }
    ck_assert(!run->ops->locate(run->procs[0].s, 3, &blk)); /* d is not allocated yet */
    /* the checker: clean here, and each corruption is caught by its own invariant */
    sim_report rep;
    sim_report_init(&rep);
    run->ops->check(run->procs[0].s, &rep);
    ck_assert_msg(rep.violations == 0, "%s", rep.text);
    static const struct {
        planned_corruption kind;
        const char *needle;
    } CASES[] = {{PLANNED_CORRUPT_LIVE_BYTES, "live bytes"},
                 {PLANNED_CORRUPT_OVERLAP, "overlaps"},
                 {PLANNED_CORRUPT_PEAK, "below the no-fragmentation peak"}};
    sim_run_free(run);
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        src.i = 0;
        ck_assert_int_eq(engine_run(&cfg, &so, 1, &run, &err), SIM_OK);
        ck_assert(corrupt_planned(run->procs[0].s, CASES[k].kind));
        sim_report_init(&rep);
        run->ops->check(run->procs[0].s, &rep);
        ck_assert_msg(sim_report_mentions(&rep, CASES[k].needle), "corruption %zu: %s", k, rep.text);
        sim_run_free(run);
    }
}
END_TEST

/* The same trace on a 100-byte device: the 120-byte arena cannot be taken, and
 * neither would the 110-byte peak fit: capacity. On 115 bytes the peak would fit
 * and the arena does not: fragmentation (the plan's holes). Either way the first
 * alloc fails and the program never runs. */
START_TEST(planned_should_fail_at_the_first_alloc_when_the_arena_does_not_fit)
{
    const sim_event ev[] = {A(1, 10, 0), A(2, 20, 1), A(3, 50, 2), F(1, 3, 3), A(4, 40, 4),
                            F(2, 5, 5), F(3, 6, 6), F(4, 7, 7)};
    const sim_kv opts[] = {{"planner", "xla-spatial"}, {"alignment", "20"}};
    sim_run *run = replay_planned(ev, 8, 100, opts, 2, false, SIM_OK);
    ck_assert(!run->total.completed);
    ck_assert(run->total.first_oom.happened);
    ck_assert_uint_eq(run->total.first_oom.event, 1);
    ck_assert_uint_eq(run->total.first_oom.info.size_bytes, 120);
    ck_assert_int_eq(run->total.first_oom.cause, SIM_OOM_CAPACITY);
    ck_assert(strstr(run->total.first_oom.info.detail, "cannot run at all") != NULL);
    sim_run_free(run);
    run = replay_planned(ev, 8, 115, opts, 2, false, SIM_OK);
    ck_assert_int_eq(run->total.first_oom.cause, SIM_OOM_FRAGMENTATION);
    sim_run_free(run);
    /* --on-oom=skip: every alloc tries again and fails; the frees of the dropped
     * ones are ignored; no buffer is ever live */
    run = replay_planned(ev, 8, 100, opts, 2, true, SIM_OK);
    ck_assert_uint_eq(run->total.ooms, 4);
    ck_assert_uint_eq(run->total.peak_reserved_bytes, 0);
    sim_run_free(run);
}
END_TEST

/* Shares through the engine. Buffers (XLA clock): b0 = id 1 [0,2]; b1 = id 2 sharing
 * id 1 [1,4]; b2 = id 3 (30 B) [3,6]; b3 = id 1 again, sharing the freed first id 1
 * (the latest allocation of that id before it) [5,7]. b0, b1, b3 are one 10 B group:
 * spatial places b2 (the largest) at 0 and the group, which overlaps b2 through b1
 * and b3, at 30; temporal puts the group (length 7) first at 0 and b2 at 10; both
 * heaps are 40, so spatial's offsets. While b0 and b1 are both live they are one
 * block: 10 B allocated for 20 B requested. TFLite ignores shares: b0 and b1 are
 * two blocks. A share that names no earlier allocation is an invalid trace. */
START_TEST(planned_should_colocate_shared_allocs_and_count_a_group_once)
{
    const sim_event ev[] = {A(1, 10, 0), S(2, 10, 1, 1), F(1, 2, 2), A(3, 30, 3),
                            F(2, 4, 4),  S(1, 10, 5, 1), F(3, 6, 6), F(1, 7, 7)};
    const sim_kv opts[] = {{"planner", "xla"}, {"alignment", "1"}};
    array_source src = {ev, 8, 0};
    sim_event_source so = {.next = array_source_next, .ctx = &src, .path = "t.jsonl"};
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = 1000}, .ops = planned_strategy(),
                         .opts = opts, .n_opts = 2, .stop_after_event = 2, .paranoid = true};
    sim_run *run = NULL;
    sim_error err;
    ck_assert_int_eq(engine_run(&cfg, &so, 1, &run, &err), SIM_OK);
    strategy_block blk;
    for (strategy_handle h = 0; h < 2; h++) {
        ck_assert(run->ops->locate(run->procs[0].s, h, &blk));
        ck_assert_uint_eq(blk.addr, 30);
        ck_assert_uint_eq(blk.size_bytes, 10);
    }
    strategy_sample smp;
    run->ops->sample(run->procs[0].s, &smp);
    ck_assert_uint_eq(smp.reserved_bytes, 40);
    ck_assert_uint_eq(smp.allocated_bytes, 10);
    ck_assert_uint_eq(smp.largest_free_bytes, 30);
    ck_assert_uint_eq(stat_of(run, 0, "live_allocations"), 2);
    sim_run_free(run);

    run = replay_planned(ev, 8, 1000, opts, 2, false, SIM_OK);
    ck_assert(run->total.completed);
    ck_assert_uint_eq(stat_of(run, 0, "heap_size_bytes"), 40);
    ck_assert_uint_eq(run->total.peak_requested_bytes, 40);
    ck_assert_uint_eq(run->total.peak_allocated_bytes, 40);
    sim_run_free(run);

    /* TFLite (nodes: b0 [0,2], b1 [1,4], b2 [3,6], b3 [5,7]): b2 at 0, b0 at 0 (it
     * meets no placed buffer), b1 above b2 at 30: two blocks, 20 B allocated */
    const sim_kv tfl[] = {{"planner", "tflite"}, {"alignment", "1"}};
    src.i = 0;
    cfg.opts = tfl;
    ck_assert_int_eq(engine_run(&cfg, &so, 1, &run, &err), SIM_OK);
    ck_assert(run->ops->locate(run->procs[0].s, 0, &blk));
    ck_assert_uint_eq(blk.addr, 0);
    ck_assert(run->ops->locate(run->procs[0].s, 1, &blk));
    ck_assert_uint_eq(blk.addr, 30);
    run->ops->sample(run->procs[0].s, &smp);
    ck_assert_uint_eq(smp.allocated_bytes, 20);
    sim_run_free(run);
    cfg.opts = opts;

    const sim_event bad[] = {A(1, 10, 0), S(2, 10, 1, 7)};
    src = (array_source){bad, 2, 0};
    cfg.stop_after_event = 0;
    sim_error_clear(&err);
    ck_assert_int_eq(engine_run(&cfg, &so, 1, &run, &err), SIM_ETRACE);
    ck_assert_msg(strstr(err.msg, "\"share\": 7 names no earlier allocation") != NULL, "%s", err.msg);
    ck_assert_uint_eq(err.event, 2);
}
END_TEST

/* A group's members keep their own sizes: a (10 B, [0,3]) and b (30 B, [4,5], sharing
 * a) are placed at 0 with room for 30; x (5 B, [1,2]) lives only beside a, so XLA
 * puts it at a's end, 10, inside the 30 B b will take later. While a and x are live
 * the block at 0 is a's 10 B (15 B allocated, no overlap); the heap is 30, the peak
 * of live blocks 30 (b alone). */
START_TEST(a_groups_block_should_be_its_largest_live_member)
{
    const sim_event ev[] = {A(1, 10, 0), A(2, 5, 1), F(2, 2, 2), F(1, 3, 3), S(3, 30, 4, 1), F(3, 5, 5)};
    const sim_kv opts[] = {{"planner", "xla"}, {"alignment", "1"}};
    array_source src = {ev, 6, 0};
    sim_event_source so = {.next = array_source_next, .ctx = &src, .path = "t.jsonl"};
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = 1000}, .ops = planned_strategy(),
                         .opts = opts, .n_opts = 2, .stop_after_event = 2, .paranoid = true};
    sim_run *run = NULL;
    sim_error err;
    ck_assert_int_eq(engine_run(&cfg, &so, 1, &run, &err), SIM_OK);
    strategy_block blk;
    ck_assert(run->ops->locate(run->procs[0].s, 0, &blk));
    ck_assert_uint_eq(blk.addr, 0);
    ck_assert_uint_eq(blk.size_bytes, 10);
    ck_assert(run->ops->locate(run->procs[0].s, 1, &blk));
    ck_assert_uint_eq(blk.addr, 10);
    strategy_sample smp;
    run->ops->sample(run->procs[0].s, &smp);
    ck_assert_uint_eq(smp.reserved_bytes, 30);
    ck_assert_uint_eq(smp.allocated_bytes, 15);
    sim_run_free(run);
    run = replay_planned(ev, 6, 1000, opts, 2, false, SIM_OK);
    ck_assert_uint_eq(stat_of(run, 0, "heap_size_bytes"), 30);
    ck_assert_uint_eq(stat_of(run, 0, "no_fragmentation_peak_bytes"), 30);
    ck_assert_uint_eq(run->total.peak_allocated_bytes, 30);
    sim_run_free(run);
}
END_TEST

START_TEST(planned_options_should_reject_an_unknown_planner_and_a_heap_limit_for_tflite)
{
    const sim_event ev[] = {A(1, 10, 0), F(1, 1, 1)};
    const sim_kv bad[] = {{"planner", "bfc"}};
    sim_run *run = replay_planned(ev, 2, 1000, bad, 1, false, SIM_EUSAGE);
    ck_assert_ptr_null(run);
    const sim_kv lim[] = {{"planner", "tflite"}, {"heap_limit", "1MiB"}};
    run = replay_planned(ev, 2, 1000, lim, 2, false, SIM_EUSAGE);
    ck_assert_ptr_null(run);
    const sim_kv zero[] = {{"alignment", "0"}};
    run = replay_planned(ev, 2, 1000, zero, 1, false, SIM_EUSAGE);
    ck_assert_ptr_null(run);
}
END_TEST

/* Random traces with deferred frees and two processes, under --paranoid (the
 * checker after every event): each process's heap is what the planner gives for
 * its own sequence, and deferred frees do not change it. */
START_TEST(random_replays_should_plan_each_process_alone_and_pass_the_checker)
{
    uint64_t seed = test_seed("planned replays");
    uint64_t st = seed;
    static const char *const PLANNERS[] = {"xla", "xla-spatial", "xla-temporal", "tflite", "tflite-gpu"};
    enum { MAXE = 600 };
    sim_event *ev = calloc(MAXE, sizeof *ev);
    for (int round = 0; round < 40; round++) {
        uint64_t n = 0, t = 0, next_id = 1;
        uint64_t live[2][64];
        uint32_t n_live[2] = {0, 0};
        plan_trace *pt[2] = {plan_trace_new(), plan_trace_new()};
        uint32_t pid[2][64];
        while (n < MAXE - 130) {
            uint32_t p = (uint32_t)(test_rand(&st) % 2);
            const char *proc = p ? "second" : NULL;
            if (n_live[p] < 64 && (n_live[p] == 0 || test_rand(&st) % 2)) {
                uint64_t size = rand_size(&st);
                ev[n] = A(next_id, size, t++);
                ev[n++].proc = proc;
                live[p][n_live[p]] = next_id++;
                ck_assert_int_eq(plan_trace_alloc(pt[p], size, &pid[p][n_live[p]]), SIM_OK);
                n_live[p]++;
            } else {
                uint32_t k = (uint32_t)(test_rand(&st) % n_live[p]);
                uint64_t ready = test_rand(&st) % 3 == 0 ? t + 1 + test_rand(&st) % 5 : t;
                ev[n] = F(live[p][k], t++, ready);
                ev[n++].proc = proc;
                ck_assert_int_eq(plan_trace_release(pt[p], pid[p][k]), SIM_OK);
                live[p][k] = live[p][--n_live[p]];
                pid[p][k] = pid[p][n_live[p]];
            }
        }
        const char *planner = PLANNERS[round % 5];
        const sim_kv opts[] = {{"planner", planner}};
        sim_run *run = replay_planned(ev, n, UINT64_C(1) << 40, opts, 1, false, SIM_OK);
        ck_assert(run->total.completed);
        for (uint32_t p = 0; p < run->n_procs; p++) {
            uint32_t which = strcmp(run->procs[p].name, "second") == 0;
            uint32_t nb = plan_trace_buffers(pt[which]);
            plan_buffer *b = calloc(nb + 1, sizeof *b);
            uint64_t *off = calloc(nb + 1, sizeof *off);
            plan_result r;
            bool xla = planner[0] == 'x';
            plan_lifetimes(pt[which], xla ? PLAN_CLOCK_XLA : PLAN_CLOCK_TFLITE, b);
            if (xla) {
                plan_xla_config cfg = {.order = planner[3] == 0 ? PLAN_XLA_BEST
                                                : planner[4] == 's' ? PLAN_XLA_SPATIAL : PLAN_XLA_TEMPORAL,
                                       .alignment = PLAN_XLA_ALIGNMENT};
                ck_assert_int_eq(plan_xla(b, nb, &cfg, off, &r), SIM_OK);
            } else if (strcmp(planner, "tflite") == 0) {
                ck_assert_int_eq(plan_tflite(b, nb, PLAN_TFLITE_ALIGNMENT, off, &r), SIM_OK);
            } else {
                ck_assert_int_eq(plan_tflite_gpu(b, nb, PLAN_TFLITE_GPU_ALIGNMENT, off, &r), SIM_OK);
            }
            EXPECT_MSG(stat_of(run, p, "heap_size_bytes") == r.heap_size, "round %d %s: heap %llu, plan %llu (seed %llu)",
                       round, planner, (unsigned long long)stat_of(run, p, "heap_size_bytes"),
                       (unsigned long long)r.heap_size, (unsigned long long)seed);
            EXPECT(stat_of(run, p, "no_fragmentation_peak_bytes") == plan_trace_peak(pt[which]));
            EXPECT(run->procs[p].m.peak_allocated_bytes <= r.heap_size);
            free(b);
            free(off);
        }
        sim_run_free(run);
        plan_trace_free(pt[0]);
        plan_trace_free(pt[1]);
    }
    free(ev);
}
END_TEST
