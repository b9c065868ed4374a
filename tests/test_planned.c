/* Check suite for the offline planners (strategies/plan.h, plan_xla.h, plan_tflite.h),
 * by hand and by upstream: the two clocks that turn a trace into lifetimes; the
 * upstream unit tests' inputs and expected offsets and heap sizes, ported (XLA:
 * heap_simulator_test.cc at ROCm/xla 183fa00c; TFLite: simple_memory_arena_test.cc,
 * arena_planner_test.cc and memory_management_test.cc at google-ai-edge/LiteRT
 * f6745779); shares worked out by hand. The seeded random plans are
 * test_planned_random.c's, the replays through the engine test_planned_replay.c's. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/plan.h"
#include "strategies/plan_tflite.h"
#include "strategies/plan_xla.h"
#include "support/check_main.h"

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

