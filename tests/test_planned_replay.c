/* Check suite for the planned strategy (strategies/planned.h) through the engine:
 * the plan's heap reserved at the first alloc, an arena that does not fit, shares
 * colocated and counted once per group, the checker's catches under --paranoid,
 * the plan memo (sim/memo.h) shared by the replays of one command and raced by
 * threads, the options, and seeded random replays of two processes. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/memo.h"
#include "strategies/plan.h"
#include "strategies/plan_tflite.h"
#include "strategies/plan_xla.h"
#include "strategies/planned.h"
#include "support/array_source.h"
#include "support/check_main.h"
#include "support/corrupt_planned.h"
#include "support/plan_random.h"
#include "support/seed.h"

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
 * (test_planned.c); the live peak is a + b + c = 80, then b + c + d = 110; so the
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

/* One replay of ev under opts on a device of capacity bytes with memo m; the
 * handles 0..2 located after stop events (0: to the end, nothing located). */
static sim_run *replay_memo(const sim_event *ev, uint64_t n, uint64_t capacity, const sim_kv *opts, uint32_t n_opts,
                            sim_memo *m, uint64_t stop)
{
    array_source src = {ev, n, 0};
    sim_event_source s = {.next = array_source_next, .ctx = &src, .path = "t.jsonl", .name = NULL};
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = capacity}, .ops = planned_strategy(),
                         .opts = opts, .n_opts = n_opts, .paranoid = true, .memo = m, .stop_after_event = stop};
    sim_run *run = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_msg(engine_run(&cfg, &s, 1, &run, &err) == SIM_OK, "%s", err.msg);
    return run;
}

/* The replays of one command share a memo: the first plans, the others take its
 * plan whatever the capacity (a plan never depends on the device), so a 100-byte
 * device still fails on the 120-byte arena and the offsets stay the upstream ones
 * (60, 100, 0). Another option set or another sequence is planned again. */
START_TEST(replays_sharing_a_memo_should_plan_each_option_set_and_sequence_once)
{
    const sim_event ev[] = {A(1, 10, 0), A(2, 20, 1), A(3, 50, 2), F(1, 3, 3), A(4, 40, 4),
                            F(2, 5, 5), F(3, 6, 6), F(4, 7, 7)};
    const sim_kv opts[] = {{"planner", "xla-spatial"}, {"alignment", "20"}};
    sim_memo *m = sim_memo_new();
    ck_assert_ptr_nonnull(m);
    const uint64_t caps[] = {1000, 100, 1000, 4096};
    for (int k = 0; k < 4; k++) {
        sim_run *run = replay_memo(ev, 8, caps[k], opts, 2, m, 3);
        ck_assert_uint_eq(stat_of(run, 0, "heap_size_bytes"), 120);
        ck_assert_uint_eq(stat_of(run, 0, "no_fragmentation_peak_bytes"), 110);
        ck_assert_uint_eq(stat_of(run, 0, "buffers"), 4);
        if (caps[k] < 120) {
            ck_assert(run->total.first_oom.happened);
        } else {
            const uint64_t at[] = {60, 100, 0};
            strategy_block blk;
            for (strategy_handle h = 0; h < 3; h++) {
                ck_assert(run->ops->locate(run->procs[0].s, h, &blk));
                ck_assert_uint_eq(blk.addr, at[h]);
            }
        }
        sim_run_free(run);
    }
    ck_assert_uint_eq(sim_memo_computed(m), 1);
    ck_assert_uint_eq(sim_memo_found(m), 3);
    /* tflite's arena on the same trace: planned again, as it plans without a memo */
    const sim_kv tfl[] = {{"planner", "tflite"}, {"alignment", "1"}};
    sim_run *alone = replay_memo(ev, 8, 1000, tfl, 2, NULL, 0);
    sim_run *shared = replay_memo(ev, 8, 1000, tfl, 2, m, 0);
    ck_assert_uint_eq(sim_memo_computed(m), 2);
    ck_assert_uint_eq(stat_of(shared, 0, "heap_size_bytes"), stat_of(alone, 0, "heap_size_bytes"));
    ck_assert_uint_ne(stat_of(shared, 0, "heap_size_bytes"), 120);
    sim_run_free(alone);
    sim_run_free(shared);
    /* d one byte larger: another sequence, planned again (a larger heap) */
    sim_event ev2[8];
    memcpy(ev2, ev, sizeof ev2);
    ev2[4].size = 41;
    sim_run *run = replay_memo(ev2, 8, 1000, opts, 2, m, 0);
    ck_assert_uint_eq(sim_memo_computed(m), 3);
    ck_assert_uint_ne(stat_of(run, 0, "heap_size_bytes"), 120);
    sim_run_free(run);
    sim_memo_free(m);
}
END_TEST

/* The shares trace of the colocation test through a memo: the replay that takes
 * the plan from it counts a group once as the one that made it (its groups are its
 * own), and the same sizes without shares are another plan. */
START_TEST(a_plan_with_shares_taken_from_the_memo_should_count_a_group_once)
{
    const sim_event ev[] = {A(1, 10, 0), S(2, 10, 1, 1), F(1, 2, 2), A(3, 30, 3),
                            F(2, 4, 4),  S(1, 10, 5, 1), F(3, 6, 6), F(1, 7, 7)};
    const sim_kv opts[] = {{"planner", "xla"}, {"alignment", "1"}};
    sim_memo *m = sim_memo_new();
    ck_assert_ptr_nonnull(m);
    for (int k = 0; k < 2; k++) {
        sim_run *run = replay_memo(ev, 8, 1000, opts, 2, m, 2);
        strategy_sample smp;
        run->ops->sample(run->procs[0].s, &smp);
        ck_assert_uint_eq(smp.allocated_bytes, 10); /* b0 and b1: one 10 B block */
        strategy_block blk;
        ck_assert(run->ops->locate(run->procs[0].s, 1, &blk));
        ck_assert_uint_eq(blk.addr, 30);
        sim_run_free(run);
        run = replay_memo(ev, 8, 1000, opts, 2, m, 0);
        ck_assert_uint_eq(stat_of(run, 0, "heap_size_bytes"), 40);
        ck_assert_uint_eq(stat_of(run, 0, "no_fragmentation_peak_bytes"), 40);
        ck_assert_uint_eq(run->total.peak_allocated_bytes, 40);
        sim_run_free(run);
    }
    ck_assert_uint_eq(sim_memo_computed(m), 1);
    ck_assert_uint_eq(sim_memo_found(m), 3);
    sim_event plain[8];
    memcpy(plain, ev, sizeof plain);
    plain[1] = A(2, 10, 1);
    plain[5] = A(1, 10, 5);
    sim_run *run = replay_memo(plain, 8, 1000, opts, 2, m, 0);
    ck_assert_uint_eq(sim_memo_computed(m), 2);
    ck_assert(run->total.completed);
    sim_run_free(run);
    sim_memo_free(m);
}
END_TEST

typedef struct memo_race {
    sim_memo *m;
    int computed;
    const char *seen;
} memo_race;

static void *memo_racer(void *arg)
{
    memo_race *r = arg;
    const char key[] = "the same key";
    sim_memo_part part = {key, sizeof key};
    const void *v = NULL;
    size_t len = 0;
    sim_memo_state st = sim_memo_begin(r->m, &part, 1, &v, &len);
    if (st == SIM_MEMO_COMPUTE) {
        r->computed = 1;
        sim_memo_put(r->m, &part, 1, "value", 6);
        st = sim_memo_begin(r->m, &part, 1, &v, &len);
    }
    r->seen = st == SIM_MEMO_FOUND && len == 6 ? v : NULL;
    return NULL;
}

/* Eight threads ask for one key at once: exactly one computes it, all see its
 * value; an abandoned key is computed by the next caller; keys differing only in
 * how their bytes split into parts are different keys. */
START_TEST(a_memo_should_compute_a_key_once_however_many_threads_ask)
{
    sim_memo *m = sim_memo_new();
    ck_assert_ptr_nonnull(m);
    enum { N = 8 };
    memo_race r[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        r[i] = (memo_race){.m = m};
        ck_assert_int_eq(pthread_create(&th[i], NULL, memo_racer, &r[i]), 0);
    }
    int computed = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        computed += r[i].computed;
        ck_assert_ptr_nonnull(r[i].seen);
        ck_assert_str_eq(r[i].seen, "value");
    }
    ck_assert_int_eq(computed, 1);
    ck_assert_uint_eq(sim_memo_computed(m), 1);
    sim_memo_part ab[2] = {{"ab", 2}, {"c", 1}}, a_bc[2] = {{"a", 1}, {"bc", 2}};
    const void *v;
    size_t len;
    ck_assert_int_eq(sim_memo_begin(m, ab, 2, &v, &len), SIM_MEMO_COMPUTE);
    sim_memo_abandon(m, ab, 2);
    ck_assert_int_eq(sim_memo_begin(m, ab, 2, &v, &len), SIM_MEMO_COMPUTE);
    ck_assert_int_eq(sim_memo_put(m, ab, 2, "x", 2), SIM_OK);
    ck_assert_int_eq(sim_memo_begin(m, a_bc, 2, &v, &len), SIM_MEMO_COMPUTE);
    ck_assert_int_eq(sim_memo_put(m, a_bc, 2, "y", 2), SIM_OK);
    ck_assert_int_eq(sim_memo_begin(m, ab, 2, &v, &len), SIM_MEMO_FOUND);
    ck_assert_str_eq(v, "x");
    sim_memo_free(m);
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
                uint64_t size = plan_random_size(&st);
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

