/* Check suite for start states (sim/seed.h): the checks on a seed, the rebuild of a
 * snapshot's state at its first entry (traces/import_snapshot_rebuild.h), the
 * torch strategy started from a seed through the engine, and the device's planned
 * addresses. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/device.h"
#include "sim/engine.h"
#include "sim/seed.h"
#include "strategies/ideal.h"
#include "strategies/torch.h"
#include "support/array_source.h"
#include "support/check_main.h"
#include "traces/import_snapshot_rebuild.h"

#define MIB ((uint64_t)1 << 20)
#define SEG0 ((uint64_t)0x100000000)
#define SEG1 ((uint64_t)0x200000000)

/* seg0: large, 20 MiB: id 7 (4000000 B asked, 4 MiB held) then 16 MiB free.
 * seg1: small, 2 MiB: id 8 (100 B asked, 512 held) then free. */
static const sim_seed_block BLOCKS[] = {
    {.offset = 0, .size_bytes = 4 * MIB, .requested_bytes = 4000000, .id = 7, .state = SIM_SEED_USED},
    {.offset = 4 * MIB, .size_bytes = 16 * MIB, .state = SIM_SEED_FREE},
    {.offset = 0, .size_bytes = 512, .requested_bytes = 100, .id = 8, .state = SIM_SEED_USED},
    {.offset = 512, .size_bytes = 2 * MIB - 512, .state = SIM_SEED_FREE},
};
static const sim_seed_segment SEGS[] = {
    {.addr = SEG0, .size_bytes = 20 * MIB, .first_block = 0, .n_blocks = 2},
    {.addr = SEG1, .size_bytes = 2 * MIB, .small_pool = true, .first_block = 2, .n_blocks = 2},
};

static sim_seed two_segments(void)
{
    return (sim_seed){.segs = SEGS, .n_segs = 2, .blocks = BLOCKS, .n_blocks = 4};
}

GPUSIM_TCASE("start states", 0, NULL, NULL);

START_TEST(a_seed_should_be_checked_for_blocks_that_tile_their_segments)
{
    sim_error err;
    sim_seed s = two_segments();
    ck_assert_int_eq(sim_seed_check(&s, "x", &err), SIM_OK);
    ck_assert_uint_eq(sim_seed_reserved(&s), 22 * MIB);
    ck_assert_uint_eq(sim_seed_allocated(&s), 4 * MIB + 512);
    ck_assert_uint_eq(sim_seed_used_count(&s), 2);
    /* a gap: the free block starts 512 B late */
    sim_seed_block b[4];
    memcpy(b, BLOCKS, sizeof b);
    b[1].offset += 512;
    s.blocks = b;
    ck_assert_int_eq(sim_seed_check(&s, "x", &err), SIM_ETRACE);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not tile the segment"));
    /* a used block asking for more than it holds */
    memcpy(b, BLOCKS, sizeof b);
    b[0].requested_bytes = 4 * MIB + 1;
    ck_assert_int_eq(sim_seed_check(&s, "x", &err), SIM_ETRACE);
    /* a free block with an id */
    memcpy(b, BLOCKS, sizeof b);
    b[3].id = 9;
    ck_assert_int_eq(sim_seed_check(&s, "x", &err), SIM_ETRACE);
    /* overlapping segments */
    sim_seed_segment g[2];
    memcpy(g, SEGS, sizeof g);
    g[1].addr = SEG0 + 10 * MIB;
    s = (sim_seed){.segs = g, .n_segs = 2, .blocks = BLOCKS, .n_blocks = 4};
    ck_assert_int_eq(sim_seed_check(&s, "x", &err), SIM_ETRACE);
    ck_assert_ptr_nonnull(strstr(err.msg, "overlaps"));
}
END_TEST

/* ---------------------------------------------------------------- the rebuild */

START_TEST(the_rebuild_should_undo_segment_events_and_infer_the_sizes_of_freed_blocks)
{
    /* at the end: seg A (20 MiB, large) with a block of 2 MiB at +6 MiB live to the
     * end; the trace freed a 2 MiB segment B before (undo: it existed) and allocated
     * segment C (undo: it did not). Live at the start: a block at A+0 the trace
     * frees (3000000 B asked: 5860 × 512 = 3000320 held; the next live block, at
     * +6 MiB, is 3291136 B further, more than 1 MiB: the rest was split off) and one
     * at B+0 (700 B asked: 1024 held, small pool). */
    const uint64_t A = 0x7f0000000000, B = 0x7f0010000000, C = 0x7f0020000000;
    rb_segment segs[] = {
        {.addr = A, .size = 20 * MIB, .first_block = 0, .n_blocks = 3},
        {.addr = C, .size = 30 * MIB, .first_block = 3, .n_blocks = 1},
    };
    rb_block blocks[] = {
        {A, 6 * MIB, 0, false, false},
        {A + 6 * MIB, 2 * MIB, 2 * MIB, true, false},
        {A + 8 * MIB, 12 * MIB, 0, false, false},
        {C, 30 * MIB, 0, false, false},
    };
    rb_seg_event ev[] = {
        {.action = RB_SEG_FREE, .addr = B, .size = 2 * MIB, .entry = 3},
        {.action = RB_SEG_ALLOC, .addr = C, .size = 30 * MIB, .entry = 5},
    };
    rb_live live[] = {
        {.addr = A, .requested = 3000000, .id = 1},
        {.addr = B, .requested = 700, .id = 2},
        {.addr = A + 6 * MIB, .requested = 2 * MIB, .size = 2 * MIB, .id = 3},
    };
    rb_input in = {.segs = segs, .n_segs = 2, .blocks = blocks, .n_blocks = 4, .events = ev, .n_events = 2,
                   .live = live, .n_live = 3, .settings = {.max_split_size = UINT64_MAX}};
    rb_result r;
    ck_assert_msg(rb_rebuild(&in, &r), "%s", r.why);
    ck_assert_uint_eq(r.seed.n_segs, 2);
    ck_assert_uint_eq(r.seed.segs[0].addr, A);
    ck_assert_uint_eq(r.seed.segs[1].addr, B);
    ck_assert(r.seed.segs[1].small_pool);
    ck_assert_uint_eq(r.inferred, 2);
    /* A: used 3000320, free to +6 MiB, used 2 MiB, free 12 MiB */
    ck_assert_uint_eq(r.seed.segs[0].n_blocks, 4);
    const sim_seed_block *a = &r.seed.blocks[r.seed.segs[0].first_block];
    ck_assert(a[0].size_bytes == 3000320 && a[0].id == 1 && a[0].state == SIM_SEED_USED);
    ck_assert(a[1].offset == 3000320 && a[1].size_bytes == 6 * MIB - 3000320 && a[1].state == SIM_SEED_FREE);
    ck_assert(a[2].offset == 6 * MIB && a[2].id == 3);
    ck_assert(a[3].size_bytes == 12 * MIB && a[3].state == SIM_SEED_FREE);
    const sim_seed_block *b = &r.seed.blocks[r.seed.segs[1].first_block];
    ck_assert(b[0].size_bytes == 1024 && b[0].requested_bytes == 700 && b[0].id == 2);
    /* the planned cudaMalloc addresses: C */
    ck_assert_uint_eq(r.seed.n_planned, 1);
    ck_assert_uint_eq(r.seed.planned[0].addr, C);
    rb_result_release(&r);

    /* a large-pool block keeps a remainder of at most 1 MiB: the live block at +6 MiB
     * moves to 3 MiB + 512 KiB, so the 3000320 B block keeps the 669696 B after it */
    live[2].addr = blocks[1].addr = A + 3 * MIB + 512 * 1024;
    blocks[0].size = 3 * MIB + 512 * 1024;
    blocks[2].addr = A + 5 * MIB + 512 * 1024;
    blocks[2].size = 20 * MIB - (5 * MIB + 512 * 1024);
    ck_assert_msg(rb_rebuild(&in, &r), "%s", r.why);
    a = &r.seed.blocks[r.seed.segs[0].first_block];
    ck_assert_uint_eq(a[0].size_bytes, 3 * MIB + 512 * 1024);
    ck_assert_uint_eq(a[1].id, 3);
    rb_result_release(&r);

    /* a segment_alloc whose segment is not there after it: not rebuildable, and why */
    ev[1].addr = C + 2 * MIB;
    ck_assert(!rb_rebuild(&in, &r));
    ck_assert_ptr_nonnull(strstr(r.why, "device_traces entry 5 (segment_alloc"));
    /* a live block outside every segment of the start */
    ev[1].addr = C;
    live[1].addr = C;
    ck_assert(!rb_rebuild(&in, &r));
    ck_assert_ptr_nonnull(strstr(r.why, "lies in no segment"));
}
END_TEST

/* A 20 MiB large-pool segment at A whose only live block at the start, at A, is
 * known by its free alone (event 9; 3 MiB + 1 B asked: 3 MiB + 512 held at least),
 * the rest free. Where the trace's first allocation in the rest lands, before event
 * 9, is where the free block began, so where the live block ends. */
static rb_result remainder_rebuild(const rb_addr *allocs, size_t n)
{
    const uint64_t A = 0x7f0000000000;
    static const rb_segment segs[] = {{.addr = 0x7f0000000000, .size = 20 * MIB, .first_block = 0, .n_blocks = 1}};
    static const rb_block blocks[] = {{0x7f0000000000, 20 * MIB, 0, false, false}};
    rb_live live[] = {{.addr = A, .requested = 3 * MIB + 1, .id = 1, .freed_at = 9}};
    rb_input in = {.segs = segs,
                   .n_segs = 1,
                   .blocks = blocks,
                   .n_blocks = 1,
                   .live = live,
                   .n_live = 1,
                   .allocs = allocs,
                   .n_allocs = n,
                   .settings = {.max_split_size = UINT64_MAX}};
    rb_result r;
    ck_assert_msg(rb_rebuild(&in, &r), "%s", r.why);
    ck_assert_uint_eq(r.inferred, 1);
    return r;
}

START_TEST(a_later_allocations_address_should_size_a_block_known_only_by_its_free)
{
    const uint64_t A = 0x7f0000000000;
    /* at A + 3.5 MiB at event 4: PyTorch left the 523776 B rest on the block */
    rb_addr at_rest[] = {{A + 3 * MIB + MIB / 2, 4}, {A + 3 * MIB + 512, 12}};
    rb_result r = remainder_rebuild(at_rest, 2);
    ck_assert_uint_eq(r.seed.blocks[0].size_bytes, 3 * MIB + MIB / 2);
    ck_assert_uint_eq(r.seed.blocks[1].offset, 3 * MIB + MIB / 2);
    ck_assert(r.by_address == 1 && r.undetermined == 0 && r.contradicted == 0);
    rb_result_release(&r);
    /* right after the rounded request: no rest, and still evidence of the size */
    rb_addr exact[] = {{A + 3 * MIB + 512, 2}};
    r = remainder_rebuild(exact, 1);
    ck_assert_uint_eq(r.seed.blocks[0].size_bytes, 3 * MIB + 512);
    ck_assert(r.by_address == 0 && r.undetermined == 0 && r.contradicted == 0);
    rb_result_release(&r);
    /* only an allocation after the block's free (event 12): nothing tells, the
     * rounded request is taken and the block counted as undetermined */
    rb_addr late[] = {{A + 3 * MIB + MIB / 2, 12}};
    r = remainder_rebuild(late, 1);
    ck_assert_uint_eq(r.seed.blocks[0].size_bytes, 3 * MIB + 512);
    ck_assert(r.by_address == 0 && r.undetermined == 1 && r.contradicted == 0);
    rb_result_release(&r);
    /* 2 MiB after the rounded request: a rest over 1 MiB would have been split off,
     * so the address contradicts the rules; the rounded request is kept */
    rb_addr far[] = {{A + 5 * MIB + 512, 3}};
    r = remainder_rebuild(far, 1);
    ck_assert_uint_eq(r.seed.blocks[0].size_bytes, 3 * MIB + 512);
    ck_assert(r.by_address == 0 && r.undetermined == 0 && r.contradicted == 1);
    rb_result_release(&r);
}
END_TEST

START_TEST(the_recordings_rounding_should_follow_roundup_power2_divisions)
{
    rb_settings s = {.max_split_size = UINT64_MAX};
    ck_assert_uint_eq(rb_round_size(&s, 1), 512);
    ck_assert_uint_eq(rb_round_size(&s, 513), 1024);
    ck_assert_uint_eq(rb_round_size(&s, 3000000), 3000320); /* 5860 × 512 */
    /* 4 divisions for the [2 MiB, 4 MiB) interval (index 1): steps of 512 KiB */
    s.divisions[1] = 4;
    ck_assert_uint_eq(rb_round_size(&s, 3000000), 3 * MIB);
    ck_assert_uint_eq(rb_round_size(&s, 2 * MIB), 2 * MIB); /* a power of two stays */
}
END_TEST

/* ---------------------------------------------------------------- the torch strategy from a seed */

typedef struct where {
    uint64_t addr[8];
    uint32_t region[8];
    const strategy_ops *ops;
} where;

static void note(void *ctx, const engine_tick *t)
{
    where *w = ctx;
    if (t->ev == NULL || t->ev->op != SIM_OP_ALLOC) {
        ck_assert_uint_eq(t->handle, STRATEGY_HANDLE_NONE);
        return;
    }
    strategy_block b;
    ck_assert(w->ops->locate(t->run->procs[t->process].s, t->handle, &b));
    w->addr[t->ev->index - 1] = b.addr;
    w->region[t->ev->index - 1] = b.region;
}

START_TEST(the_torch_strategy_should_continue_from_a_seed)
{
    const strategy_ops *ops = torch_strategy();
    ck_assert(ops->seed != NULL && ops->locate != NULL);
    sim_seed seed = two_segments();
    /* 1: 3 MiB, best fit the 16 MiB free at SEG0 + 4 MiB; 2: the seeded id 7 is freed;
     * 3: 4 MiB, best fit the 4 MiB block id 7 left at SEG0 (the other free block has
     * 13 MiB); 4: 1000 B, the small pool at SEG1 + 512; 5: the seeded id 8 is freed */
    static const sim_event EV[] = {
        {.op = SIM_OP_ALLOC, .id = 1, .size = 3 * MIB, .t = 1},
        {.op = SIM_OP_FREE, .id = 7, .t = 2},
        {.op = SIM_OP_ALLOC, .id = 2, .size = 4 * MIB, .t = 3},
        {.op = SIM_OP_ALLOC, .id = 3, .size = 1000, .t = 4},
        {.op = SIM_OP_FREE, .id = 8, .t = 5},
    };
    array_source a = {.ev = EV, .n = 5};
    sim_event_source src = {.next = array_source_next, .ctx = &a, .path = "seeded", .seed = &seed};
    where w = {.ops = ops};
    engine_config cfg = {
        .device = {.name = "t", .capacity_bytes = 1024 * MIB},
        .ops = ops,
        .paranoid = true, /* the checker runs after every event, the first included */
        .timeline_rows = 16,
        .observers = {{note, &w}},
        .n_observers = 1,
    };
    sim_run *run = NULL;
    sim_error err;
    ck_assert_msg(engine_run(&cfg, &src, 1, &run, &err) == SIM_OK, "%s", err.msg);
    ck_assert(run->total.completed);
    ck_assert_uint_eq(w.addr[0], SEG0 + 4 * MIB);
    ck_assert_uint_eq(w.region[0], 0);
    ck_assert_uint_eq(w.addr[2], SEG0);
    ck_assert_uint_eq(w.addr[3], SEG1 + 512);
    ck_assert_uint_eq(w.region[3], 1);
    /* reserved is the seed's 22 MiB throughout: no cudaMalloc */
    ck_assert_uint_eq(run->total.peak_reserved_bytes, 22 * MIB);
    ck_assert_uint_eq(run->total.num_device_allocs, 0);
    /* at the first event: 4 MiB + 512 seeded + the 3 MiB block */
    ck_assert_uint_eq(run->tl.rows[0].allocated, 7 * MIB + 512);
    /* live at the end: 3 MiB + 4 MiB + 1024 (1000 B rounded) */
    ck_assert_uint_eq(run->total.final_allocated_bytes, 7 * MIB + 1024);
    ck_assert_uint_eq(run->total.final_requested_bytes, 3 * MIB + 4 * MIB + 1000);
    sim_run_free(run);
}
END_TEST

/* A one-allocation trace seeded with two_segments() under ops on a device of capacity
 * bytes: engine_run must refuse it as a usage error whose message holds want. */
static void check_seeded_run_refused(const strategy_ops *ops, uint64_t capacity, const char *want)
{
    sim_seed seed = two_segments();
    static const sim_event EV[] = {{.op = SIM_OP_ALLOC, .id = 1, .size = 512, .t = 1}};
    array_source a = {.ev = EV, .n = 1};
    sim_event_source src = {.next = array_source_next, .ctx = &a, .path = "seeded", .seed = &seed};
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = capacity}, .ops = ops};
    sim_run *run = NULL;
    sim_error err;
    ck_assert_int_eq(engine_run(&cfg, &src, 1, &run, &err), SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, want));
}

START_TEST(a_strategy_without_a_seed_entry_should_refuse_a_seeded_source)
{
    check_seeded_run_refused(ideal_strategy(), 1024 * MIB, "cannot start from a recorded state");
}
END_TEST

START_TEST(a_seed_larger_than_the_device_should_be_a_usage_error)
{
    check_seeded_run_refused(torch_strategy(), 16 * MIB, "does not fit on the device");
}
END_TEST

/* ---------------------------------------------------------------- planned addresses */

START_TEST(the_device_should_hand_out_planned_addresses_while_the_sizes_agree)
{
    device_info info = {.name = "t", .capacity_bytes = 1024 * MIB};
    device *dev = device_new(&info);
    uint32_t p = device_proc_start(dev);
    const sim_range plan[] = {{SEG1, 2 * MIB}, {SEG0, 20 * MIB}, {SEG1 + 2 * MIB, 2 * MIB}};
    ck_assert(device_plan_va(dev, p, plan, 3));
    uint64_t a = 0;
    ck_assert_int_eq(device_alloc(dev, p, 2 * MIB, &a), SIM_OK);
    ck_assert_uint_eq(a, SEG1);   /* addresses need not grow: they are the recording's */
    ck_assert_int_eq(device_alloc(dev, p, 20 * MIB, &a), SIM_OK);
    ck_assert_uint_eq(a, SEG0);
    /* another size than planned: the plan ends, and fresh bases lie above all of it */
    ck_assert_int_eq(device_alloc(dev, p, 4 * MIB, &a), SIM_OK);
    ck_assert_uint_ge(a, SEG1 + 4 * MIB);
    uint64_t b = 0;
    ck_assert_int_eq(device_alloc(dev, p, 2 * MIB, &b), SIM_OK);
    ck_assert_uint_ge(b, a + 4 * MIB);
    device_free(dev);
}
END_TEST
