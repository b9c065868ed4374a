/* Check suite for the engine and its parts: id map, deferred-free queue, timeline,
 * device, replay semantics (design.md §3) through in-memory event sources, and the
 * observer's and app_data's contracts (engine.h). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/device.h"
#include "sim/engine.h"
#include "sim/idmap.h"
#include "sim/pqueue.h"
#include "sim/timeline.h"
#include "strategies/ideal.h"
#include "strategies/raw.h"
#include "strategies/torch.h"
#include "support/array_source.h"
#include "support/check_main.h"
#include "support/seed.h"

/* ---------------------------------------------------------------- events */

static sim_event A(uint64_t id, uint64_t size, uint64_t t)
{
    return (sim_event){.op = SIM_OP_ALLOC, .id = id, .size = size, .t = t};
}

static sim_event F(uint64_t id, uint64_t t, uint64_t ready)
{
    return (sim_event){.op = SIM_OP_FREE, .id = id, .t = t, .ready_t = ready};
}

/* Run cfg over n array sources (at most 4, paths "a" and "b"); engine_run must return want. */
static sim_run *replay_config(const engine_config *cfg, array_source *srcs, uint32_t n, sim_status want,
                              sim_error *err)
{
    sim_event_source s[4];
    for (uint32_t i = 0; i < n; i++)
        s[i] = (sim_event_source){.next = array_source_next, .ctx = &srcs[i], .path = i ? "b" : "a", .name = NULL};
    sim_run *run = NULL;
    sim_error_clear(err);
    sim_status st = engine_run(cfg, s, n, &run, err);
    ck_assert_msg(st == want, "engine_run returned %s: %s", sim_strerror(st), err->msg);
    return run;
}

static sim_run *replay(const strategy_ops *ops, uint64_t capacity, uint64_t context, array_source *srcs,
                       uint32_t n, bool skip, sim_status want, sim_error *err)
{
    engine_config cfg = {
        .device = {.name = "t", .capacity_bytes = capacity, .context_bytes = context},
        .ops = ops,
        .on_oom_skip = skip,
        .paranoid = true,
        .timeline_rows = 100,
    };
    return replay_config(&cfg, srcs, n, want, err);
}

/* One process replaying the first n events of ev. */
static sim_run *replay_events(const strategy_ops *ops, uint64_t capacity, uint64_t context, const sim_event *ev,
                              uint64_t n, bool skip, sim_status want, sim_error *err)
{
    array_source src = {ev, n, 0};
    return replay(ops, capacity, context, &src, 1, skip, want, err);
}

/* Two processes a and b under ideal on a device of `capacity` bytes, no context. */
static sim_run *replay_ideal_pair(const sim_event *ea, uint64_t na, const sim_event *eb, uint64_t nb,
                                  uint64_t capacity)
{
    array_source srcs[2] = {{ea, na, 0}, {eb, nb, 0}};
    sim_error err;
    return replay(ideal_strategy(), capacity, 0, srcs, 2, false, SIM_OK, &err);
}

/* The same where a and b each allocate one block (a first at equal times) and free it at t=9. */
static sim_run *replay_one_block_each(uint64_t a_size, uint64_t a_t, uint64_t b_size, uint64_t b_t,
                                      uint64_t capacity)
{
    sim_event ea[] = {A(1, a_size, a_t), F(1, 9, 9)};
    sim_event eb[] = {A(1, b_size, b_t), F(1, 9, 9)};
    return replay_ideal_pair(ea, 2, eb, 2, capacity);
}

START_TEST(deferred_frees_due_at_t_should_run_before_trace_events_at_t)
{
    /* ideal: 100 live; free deferred to t=40; alloc 300 at t=30 -> 400 peak;
     * alloc 50 at t=40 comes after the deferred free: 300 + 50 = 350, not 450 */
    sim_event ev[] = {A(1, 100, 0), F(1, 20, 40), A(2, 300, 30), A(3, 50, 40), F(2, 50, 50), F(3, 50, 50)};
    sim_error err;
    sim_run *run = replay_events(ideal_strategy(), 1000, 0, ev, 6, false, SIM_OK, &err);
    ck_assert_uint_eq(run->total.peak_requested_bytes, 400);
    ck_assert_uint_eq(run->total.final_reserved_bytes, 0);
    /* 6 trace events + 1 deferred free */
    ck_assert_uint_eq(run->events, 7);
    sim_run_free(run);
}
END_TEST

START_TEST(traces_with_equal_times_should_go_in_the_order_given)
{
    /* capacity 100: a takes 60 at t=5 and b asks 60 at t=5. a is first, so b fails. */
    sim_run *run = replay_one_block_each(60, 5, 60, 5, 100);
    ck_assert_uint_eq(run->n_procs, 2);
    ck_assert(run->procs[0].m.completed);
    ck_assert(!run->procs[1].m.completed);
    ck_assert_uint_eq(run->total.first_oom.process, 1);
    ck_assert_uint_eq(run->total.first_oom.info.device_free_bytes, 40);
    sim_run_free(run);
}
END_TEST

START_TEST(a_stopped_process_should_release_its_memory_and_drop_its_deferred_frees)
{
    /* a: 50 live, then frees it deferred to t=100, then asks 80 at t=2 (50 + 80 > 100):
     * OOM, a exits; b (starting at t=3) then gets the whole device. */
    sim_event ea[] = {A(1, 50, 0), F(1, 1, 100), A(2, 80, 2), F(2, 5, 5)};
    sim_event eb[] = {A(1, 100, 3), F(1, 4, 4)};
    sim_run *run = replay_ideal_pair(ea, 4, eb, 2, 100);
    ck_assert(!run->procs[0].m.completed);
    ck_assert(run->procs[1].m.completed);
    ck_assert_uint_eq(run->procs[0].m.final_reserved_bytes, 50); /* what it held at the OOM */
    ck_assert_uint_eq(run->procs[1].m.peak_reserved_bytes, 100);
    ck_assert_uint_eq(run->total.ooms, 1);
    ck_assert_uint_eq(run->total.first_oom.event, 3);
    ck_assert_uint_eq(run->total.first_oom.size, 80);
    sim_run_free(run);
}
END_TEST

START_TEST(skip_should_drop_the_allocation_and_ignore_its_free)
{
    sim_event ev[] = {A(1, 90, 0), A(2, 20, 1), A(3, 10, 2), F(2, 3, 3), F(1, 4, 4), F(3, 4, 4)};
    sim_error err;
    sim_run *run = replay_events(ideal_strategy(), 100, 0, ev, 6, true, SIM_OK, &err);
    ck_assert(run->total.completed);
    ck_assert_uint_eq(run->total.ooms, 1);
    ck_assert_uint_eq(run->total.peak_requested_bytes, 100);
    ck_assert_uint_eq(run->total.final_reserved_bytes, 0);
    sim_run_free(run);
}
END_TEST

START_TEST(context_should_count_on_the_device_but_not_as_reserved)
{
    sim_event ev[] = {A(1, 600, 0), F(1, 1, 1)};
    sim_error err;
    sim_run *run = replay_events(raw_strategy(), 1 << 30, 300 << 20, ev, 2, false, SIM_OK, &err);
    /* raw: 600 -> 1024 bytes; device: 1024 + 300 MiB */
    ck_assert_uint_eq(run->total.peak_reserved_bytes, 1024);
    ck_assert_uint_eq(run->total.peak_device_bytes, 1024 + (300ull << 20));
    sim_run_free(run);
}
END_TEST

START_TEST(only_a_pools_first_graph_replay_should_be_a_mark)
{
    /* three replays of pool 1, then the trace's own mark: two marks, and the pool
     * events (begin, end, three replays) all counted */
    sim_event ev[] = {
        {.op = SIM_OP_POOL_BEGIN, .pool = 1, .stream = 1, .pool_flags = SIM_POOL_CAPTURE, .t = 0},
        A(1, 4096, 0),
        {.op = SIM_OP_POOL_END, .pool = 1, .t = 1},
        {.op = SIM_OP_GRAPH_REPLAY, .pool = 1, .name = "bs=8", .t = 2},
        {.op = SIM_OP_GRAPH_REPLAY, .pool = 1, .t = 3},
        {.op = SIM_OP_GRAPH_REPLAY, .pool = 1, .t = 4},
        {.op = SIM_OP_MARK, .name = "mine", .t = 5},
    };
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        ev[i].ready_t = ev[i].t;
    sim_error err;
    sim_run *run = replay_events(raw_strategy(), 1 << 30, 0, ev, 7, false, SIM_OK, &err);
    ck_assert_uint_eq(run->n_marks, 2);
    ck_assert_str_eq(run->marks[0].name, "bs=8");
    ck_assert_str_eq(run->marks[1].name, "mine");
    ck_assert_uint_eq(run->sources[0].pool_events, 5);
    sim_run_free(run);
}
END_TEST

START_TEST(semantic_errors_should_name_the_event)
{
    sim_event ev[] = {A(1, 10, 0), F(2, 1, 1)};
    sim_error err;
    sim_run *run = replay_events(ideal_strategy(), 100, 0, ev, 2, false, SIM_ETRACE, &err);
    ck_assert_ptr_null(run);
    ck_assert_uint_eq(err.event, 2);
    ck_assert(strstr(err.msg, "free of id 2 that is not allocated") != NULL);
}
END_TEST

/* A strategy that lies about what it holds: --paranoid must catch it. */
static void lying_sample(const strategy *s, strategy_sample *out)
{
    ideal_strategy()->sample(s, out);
    out->reserved_bytes += 1;
}

START_TEST(paranoid_mode_should_catch_a_strategy_whose_books_do_not_balance)
{
    strategy_ops liar = *ideal_strategy();
    liar.sample = lying_sample;
    sim_event ev[] = {A(1, 10, 0)};
    sim_error err;
    sim_run *run = replay_events(&liar, 100, 0, ev, 1, false, SIM_EINTERNAL, &err);
    ck_assert_ptr_null(run);
    ck_assert(strstr(err.msg, "the device holds 10 bytes") != NULL);
}
END_TEST

START_TEST(a_replay_should_stop_at_the_event_asked_for)
{
    /* ideal: after event 2 (two allocs) 300 bytes are live; the walk shows them */
    sim_event ev[] = {A(1, 100, 0), A(2, 200, 1), F(1, 2, 2), F(2, 3, 3)};
    array_source src = {ev, 4, 0};
    sim_event_source s = {.next = array_source_next, .ctx = &src, .path = "a"};
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = 1000}, .ops = ideal_strategy(),
                         .stop_after_event = 2};
    sim_run *run = NULL;
    sim_error err;
    ck_assert_int_eq(engine_run(&cfg, &s, 1, &run, &err), SIM_OK);
    ck_assert_uint_eq(run->events, 2);
    strategy_sample smp;
    run->ops->sample(run->procs[0].s, &smp);
    ck_assert_uint_eq(smp.reserved_bytes, 300);
    ck_assert_uint_eq(run->total.final_reserved_bytes, 300);
    sim_run_free(run);
}
END_TEST

START_TEST(a_replay_asked_to_should_end_at_the_first_oom_under_skip_and_stop)
{
    /* capacity 100: event 2 asks 20 on top of 90 live, the first OOM; the run ends
     * there (2 events of 6), not completed, under skip as under stop */
    sim_event ev[] = {A(1, 90, 0), A(2, 20, 1), A(3, 10, 2), F(2, 3, 3), F(1, 4, 4), F(3, 4, 4)};
    for (int skip = 0; skip < 2; skip++) {
        array_source src = {ev, 6, 0};
        sim_event_source s = {.next = array_source_next, .ctx = &src, .path = "a"};
        engine_config cfg = {.device = {.name = "t", .capacity_bytes = 100}, .ops = ideal_strategy(),
                             .on_oom_skip = skip, .end_at_first_oom = true};
        sim_run *run = NULL;
        sim_error err;
        ck_assert_int_eq(engine_run(&cfg, &s, 1, &run, &err), SIM_OK);
        ck_assert_uint_eq(run->events, 2);
        ck_assert(!run->total.completed);
        ck_assert_uint_eq(run->total.ooms, 1);
        ck_assert_uint_eq(run->total.first_oom.event, 2);
        sim_run_free(run);
    }
}
END_TEST

START_TEST(fragmentation_should_follow_tensorflow_s_definition)
{
    ck_assert(test_same_double(sim_fragmentation(0, 0), 0.0));
    ck_assert(test_same_double(sim_fragmentation(100, 100), 0.0));
    ck_assert(test_same_double(sim_fragmentation(100, 25), 0.75));
}
END_TEST

/* ---------------------------------------------------------------- parts */

START_TEST(the_id_map_should_agree_with_a_plain_array_under_random_churn)
{
    uint64_t seed = test_seed("idmap"), st = seed;
    enum { N = 4096 };
    static bool live[N];
    static uint64_t sizes[N];
    memset(live, 0, sizeof live);
    idmap m;
    ck_assert(idmap_init(&m));
    uint64_t count = 0;
    for (int step = 0; step < 200000; step++) {
        uint64_t id = test_rand(&st) % N;
        idmap_entry *e = idmap_find(&m, id * 1000003u);
        ck_assert_msg((e != NULL) == live[id], "seed %llu step %d id %llu", (unsigned long long)seed, step,
                      (unsigned long long)id);
        if (e) {
            ck_assert_uint_eq(e->size, sizes[id]);
            idmap_remove(&m, e);
            live[id] = false;
            count--;
        } else {
            e = idmap_insert(&m, id * 1000003u);
            ck_assert_ptr_nonnull(e);
            sizes[id] = e->size = test_rand(&st);
            live[id] = true;
            count++;
        }
        ck_assert_uint_eq(m.count, count);
    }
    idmap_release(&m);
}
END_TEST

START_TEST(the_queue_should_pop_in_time_then_push_order)
{
    uint64_t seed = test_seed("pqueue"), st = seed;
    pqueue q;
    pqueue_init(&q);
    for (int i = 0; i < 5000; i++) {
        pq_entry e = {.t = test_rand(&st) % 100, .size = (uint64_t)i};
        ck_assert(pqueue_push(&q, e));
    }
    uint64_t prev_t = 0, prev_seq = 0;
    bool first = true;
    while (pqueue_top(&q)) {
        pq_entry e = *pqueue_top(&q);
        pqueue_pop(&q);
        if (!first) {
            ck_assert_msg(e.t > prev_t || (e.t == prev_t && e.seq > prev_seq), "seed %llu",
                          (unsigned long long)seed);
        }
        ck_assert_uint_eq(e.seq, e.size); /* seq is push order */
        prev_t = e.t;
        prev_seq = e.seq;
        first = false;
    }
    pqueue_release(&q);
}
END_TEST

START_TEST(the_timeline_should_keep_every_peak_and_trough_within_its_row_budget)
{
    uint64_t seed = test_seed("timeline"), st = seed;
    timeline tl;
    ck_assert(timeline_init(&tl, 37));
    uint64_t max_res = 0, min_res = UINT64_MAX;
    const uint64_t n = 100003;
    for (uint64_t i = 0; i < n; i++) {
        timeline_row r = {.t = i, .event = i + 1, .reserved = test_rand(&st) % 1000000};
        if (r.reserved > max_res)
            max_res = r.reserved;
        if (r.reserved < min_res)
            min_res = r.reserved;
        timeline_add(&tl, &r);
        ck_assert_uint_le(tl.n, 2 * 37);
    }
    timeline_finish(&tl);
    ck_assert_uint_le(tl.n, 37);
    uint64_t seen = 0, seen_min = UINT64_MAX, covered = 0;
    for (uint64_t i = 0; i < tl.n; i++) {
        if (tl.rows[i].reserved > seen)
            seen = tl.rows[i].reserved;
        if (tl.rows[i].reserved_min < seen_min)
            seen_min = tl.rows[i].reserved_min;
        ck_assert_uint_le(tl.rows[i].reserved_min, tl.rows[i].reserved);
        covered += tl.rows[i].count;
        if (i)
            ck_assert_uint_gt(tl.rows[i].t, tl.rows[i - 1].t);
    }
    ck_assert_uint_eq(seen, max_res);
    ck_assert_uint_eq(seen_min, min_res);
    ck_assert_uint_eq(covered, n);
    timeline_release(&tl);
}
END_TEST

START_TEST(device_addresses_should_be_fresh_and_2mib_aligned)
{
    device_info info = {.name = "d", .capacity_bytes = 100ull << 20, .context_bytes = 1 << 20};
    device *d = device_new(&info);
    uint32_t p = device_proc_start(d);
    uint64_t a, b, c;
    ck_assert_int_eq(device_alloc(d, p, 1000, &a), SIM_OK);
    ck_assert_int_eq(device_alloc(d, p, 3 << 20, &b), SIM_OK);
    device_release(d, p, 1000);
    ck_assert_int_eq(device_alloc(d, p, 512, &c), SIM_OK);
    ck_assert_uint_eq(a % (2u << 20), 0);
    ck_assert_uint_eq(b, a + (2u << 20));          /* 1000 B rounded up to the next 2 MiB */
    ck_assert_uint_eq(c, b + (4u << 20));          /* freed ranges are never reused */
    ck_assert_uint_eq(device_free_bytes(d), (100ull << 20) - (1 << 20) - (3 << 20) - 512);
    ck_assert_int_eq(device_alloc(d, p, 100ull << 20, &c), SIM_OOM);
    device_proc_exit(d, p);
    ck_assert_uint_eq(device_free_bytes(d), 100ull << 20);
    device_free(d);
}
END_TEST

/* ---------------------------------------------------------------- the observer */

#define MAX_TICKS 64

/* What the observer saw, copied out (the tick is valid only during the call). */
typedef struct tick_log {
    uint32_t n;
    engine_tick k[MAX_TICKS];
    bool has_ev[MAX_TICKS];
    sim_op op[MAX_TICKS];
    uint64_t id[MAX_TICKS];
    strategy_sample sampled[MAX_TICKS]; /* the process's own sample at the call */
} tick_log;

static void log_tick(void *ctx, const engine_tick *t)
{
    tick_log *l = ctx;
    ck_assert_uint_lt(l->n, MAX_TICKS);
    l->k[l->n] = *t;
    l->has_ev[l->n] = t->ev != NULL;
    if (t->ev) {
        l->op[l->n] = t->ev->op;
        l->id[l->n] = t->ev->id;
    }
    t->run->ops->sample(t->run->procs[t->process].s, &l->sampled[l->n]);
    l->n++;
}

static sim_run *observed(const strategy_ops *ops, uint64_t capacity, uint64_t context, array_source *srcs,
                         uint32_t n, bool skip, tick_log *log)
{
    engine_config cfg = {
        .device = {.name = "t", .capacity_bytes = capacity, .context_bytes = context},
        .ops = ops,
        .on_oom_skip = skip,
        .paranoid = true,
        .timeline_rows = MAX_TICKS, /* one row per event: the engine's own record to compare with */
        .observers = {{log_tick, log}},
        .n_observers = 1,
    };
    memset(log, 0, sizeof *log);
    sim_error err;
    return replay_config(&cfg, srcs, n, SIM_OK, &err);
}

START_TEST(the_observer_should_see_each_event_once_in_replay_order)
{
    /* the trace of deferred_frees_due_at_t...: 6 trace events and the deferred free
     * of id 1 (100 bytes, due at t=40), which comes before the alloc at t=40; the
     * paranoid check after every event adds no tick */
    sim_event ev[] = {A(1, 100, 0), F(1, 20, 40), A(2, 300, 30), A(3, 50, 40), F(2, 50, 50), F(3, 50, 50)};
    array_source src = {ev, 6, 0};
    tick_log log;
    sim_run *run = observed(ideal_strategy(), 1000, 0, &src, 1, false, &log);
    ck_assert_uint_eq(log.n, 7);
    ck_assert_uint_eq(run->events, 7);
    for (uint32_t i = 0; i < log.n; i++) {
        ck_assert_uint_eq(log.k[i].event, i + 1);
        ck_assert_int_eq(log.k[i].outcome, ENGINE_DONE);
        ck_assert_ptr_eq(log.k[i].run, run);
    }
    ck_assert(!log.has_ev[3]);
    ck_assert_uint_eq(log.k[3].deferred_size, 100);
    ck_assert_uint_eq(log.k[3].t, 40);
    ck_assert(log.has_ev[4] && log.op[4] == SIM_OP_ALLOC && log.id[4] == 3);
    ck_assert_uint_eq(log.k[4].deferred_size, 0);
    /* requested after each: 100, 100 (deferred), 400, 300, 350, 350 (deferred), 300... */
    ck_assert_uint_eq(log.k[2].requested, 400);
    ck_assert_uint_eq(log.k[3].requested, 300);
    ck_assert_uint_eq(log.k[4].requested, 350);
    sim_run_free(run);
}
END_TEST

/* Each observer's calls append its mark to one shared string. */
typedef struct order_mark {
    char *seen;
    char mark;
} order_mark;

static void mark_tick(void *ctx, const engine_tick *t)
{
    order_mark *m = ctx;
    (void)t;
    size_t n = strlen(m->seen);
    if (n + 1 < 64) {
        m->seen[n] = m->mark;
        m->seen[n + 1] = '\0';
    }
}

START_TEST(several_observers_should_see_each_tick_in_the_order_they_were_added)
{
    sim_event ev[] = {A(1, 100, 0), F(1, 20, 10)};
    array_source src = {ev, 2, 0};
    char seen[64] = "";
    order_mark marks[ENGINE_MAX_OBSERVERS];
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = 1000}, .ops = ideal_strategy()};
    sim_error err;
    for (uint32_t i = 0; i < ENGINE_MAX_OBSERVERS; i++) {
        marks[i] = (order_mark){seen, (char)('a' + i)};
        ck_assert_int_eq(engine_config_observe(&cfg, mark_tick, &marks[i], &err), SIM_OK);
    }
    /* the list is full: the next is refused, and the list stays as it was */
    ck_assert_int_eq(engine_config_observe(&cfg, mark_tick, &marks[0], &err), SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "too many observers"));
    ck_assert_uint_eq(cfg.n_observers, ENGINE_MAX_OBSERVERS);
    sim_run *run = replay_config(&cfg, &src, 1, SIM_OK, &err);
    char want[64] = ""; /* "abcdabcd": each of the 2 events, every observer in order */
    for (uint32_t k = 0; k < 2 * ENGINE_MAX_OBSERVERS; k++)
        want[k] = (char)('a' + k % ENGINE_MAX_OBSERVERS);
    ck_assert_str_eq(seen, want);
    sim_run_free(run);
}
END_TEST

START_TEST(the_observer_should_see_an_oom_end_its_process_under_stop)
{
    /* capacity 100: 60 live, then 60 more fails and ends the process; the two
     * events after it are counted but never measured */
    sim_event ev[] = {A(1, 60, 0), A(2, 60, 1), A(3, 10, 2), F(1, 3, 3)};
    array_source src = {ev, 4, 0};
    tick_log log;
    sim_run *run = observed(ideal_strategy(), 100, 0, &src, 1, false, &log);
    ck_assert_uint_eq(run->events, 4);
    ck_assert_uint_eq(log.n, 2);
    ck_assert_int_eq(log.k[0].outcome, ENGINE_DONE);
    ck_assert_int_eq(log.k[1].outcome, ENGINE_OOM_ENDED);
    ck_assert_uint_eq(log.id[1], 2);
    /* its last tick still counts what it held: 60 */
    ck_assert_uint_eq(log.k[1].total.reserved_bytes, 60);
    ck_assert_uint_eq(log.k[1].requested, 60);
    sim_run_free(run);
}
END_TEST

START_TEST(the_observer_should_see_a_dropped_oom_and_the_ignored_free_under_skip)
{
    sim_event ev[] = {A(1, 60, 0), A(2, 60, 1), A(3, 10, 2), F(1, 3, 3), F(2, 4, 4)};
    array_source src = {ev, 5, 0};
    tick_log log;
    sim_run *run = observed(ideal_strategy(), 100, 0, &src, 1, true, &log);
    ck_assert_uint_eq(log.n, 5);
    const engine_outcome want[] = {ENGINE_DONE, ENGINE_OOM_DROPPED, ENGINE_DONE, ENGINE_DONE, ENGINE_IGNORED};
    for (uint32_t i = 0; i < 5; i++)
        ck_assert_int_eq(log.k[i].outcome, want[i]);
    /* 60, 60 (dropped), 70, 10, 10 */
    ck_assert_uint_eq(log.k[1].requested, 60);
    ck_assert_uint_eq(log.k[2].requested, 70);
    ck_assert_uint_eq(log.k[4].requested, 10);
    ck_assert_uint_eq(run->total.ooms, 1);
    sim_run_free(run);
}
END_TEST

START_TEST(the_observer_s_totals_should_equal_what_the_engine_recorded)
{
    /* two processes under raw (one device allocation per block), a context of 7
     * bytes each, deferred frees in both: every tick must match the engine's own
     * timeline row for the event, the process's own sample, and the peaks */
    sim_event ea[] = {A(1, 100, 0), A(2, 50, 2), F(1, 3, 9), F(2, 10, 10)};
    sim_event eb[] = {A(1, 300, 1), F(1, 4, 6), A(2, 20, 5), F(2, 8, 8)};
    array_source srcs[2] = {{ea, 4, 0}, {eb, 4, 0}};
    tick_log log;
    sim_run *run = observed(raw_strategy(), 1u << 30, 7, srcs, 2, false, &log);
    ck_assert_uint_eq(log.n, run->events);
    ck_assert_uint_eq(run->tl.n, log.n);
    uint64_t peak_dev = 0, peak_res = 0, peak_req = 0;
    for (uint32_t i = 0; i < log.n; i++) {
        const engine_tick *k = &log.k[i];
        const timeline_row *r = &run->tl.rows[i];
        ck_assert_uint_eq(r->event, k->event);
        ck_assert_uint_eq(r->t, k->t);
        ck_assert_uint_eq(r->requested, k->requested);
        ck_assert_uint_eq(r->allocated, k->total.allocated_bytes);
        ck_assert_uint_eq(r->reserved, k->total.reserved_bytes);
        ck_assert(r->fragmentation <= k->fragmentation && r->fragmentation >= k->fragmentation);
        ck_assert_mem_eq(&log.sampled[i], &k->proc, sizeof k->proc);
        ck_assert_uint_eq(k->proc_device_bytes, k->proc.reserved_bytes + 7);
        ck_assert_uint_le(k->proc_requested, k->requested);
        if (k->device_bytes > peak_dev)
            peak_dev = k->device_bytes;
        if (k->total.reserved_bytes > peak_res)
            peak_res = k->total.reserved_bytes;
        if (k->requested > peak_req)
            peak_req = k->requested;
    }
    ck_assert_uint_eq(peak_dev, run->total.peak_device_bytes);
    ck_assert_uint_eq(peak_res, run->total.peak_reserved_bytes);
    ck_assert_uint_eq(peak_req, run->total.peak_requested_bytes);
    /* at t=5: a's 100 (freed at t=3, due at 9) + 50, b's 300 (freed at 4, due at 6) + 20 */
    ck_assert_uint_eq(peak_req, 470);
    sim_run_free(run);
}
END_TEST

static sim_status counting_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    uint32_t *n = cfg->app_data;
    (*n)++;
    return ideal_strategy()->create(cfg, out, err);
}

START_TEST(app_data_should_reach_every_create)
{
    /* the engine creates one scratch instance to check the options, then one per process */
    strategy_ops counting = *ideal_strategy();
    counting.create = counting_create;
    sim_event ea[] = {A(1, 10, 0), F(1, 1, 1)};
    sim_event eb[] = {A(1, 10, 0), F(1, 1, 1)};
    array_source srcs[2] = {{ea, 2, 0}, {eb, 2, 0}};
    sim_event_source s[2] = {{.next = array_source_next, .ctx = &srcs[0], .path = "a"},
                             {.next = array_source_next, .ctx = &srcs[1], .path = "b"}};
    uint32_t created = 0;
    engine_config cfg = {.device = {.name = "t", .capacity_bytes = 1000}, .ops = &counting, .app_data = &created};
    sim_run *run = NULL;
    sim_error err;
    ck_assert_int_eq(engine_run(&cfg, s, 2, &run, &err), SIM_OK);
    ck_assert_uint_eq(created, 3);
    sim_run_free(run);
}
END_TEST

START_TEST(peaks_should_include_memory_taken_and_given_back_within_one_event)
{
    /* torch, expandable segments, 4 GiB, large pages of 20 MiB. Stream 0 maps
     * four 100 MiB blocks; freeing the 2nd and 4th and empty_cache unmaps them,
     * then the 1st and 3rd are freed: free 100 | hole 100 | free 100 | unmapped.
     * Stream 1 takes 3746 MiB (3760 mapped): reserved 200 + 3760 = 3960 MiB, 136
     * MiB of the device left. 400 MiB on stream 0 maps the 100 MiB hole (4060 MiB
     * reserved), fails to map the next 100 MiB, and its out-of-memory ladder
     * unmaps the 300 free MiB again: 3760 MiB after the event, but PyTorch's
     * max_memory_reserved, and so peak_reserved_bytes, is 4060 MiB
     * (validate/upstream agrees with PyTorch 2.6 on this trace). */
    const uint64_t M = 1u << 20;
    sim_event ev[] = {A(1, 100 * M, 10), A(2, 100 * M, 20), A(3, 100 * M, 30), A(4, 100 * M, 40),
                      F(2, 50, 50),      F(4, 60, 60),      {.op = SIM_OP_EMPTY_CACHE, .t = 70},
                      F(1, 80, 80),      F(3, 90, 90),      A(5, 3746 * M, 100), A(6, 400 * M, 110)};
    ev[9].stream = 1;
    array_source src = {ev, sizeof ev / sizeof ev[0], 0};
    sim_event_source s = {.next = array_source_next, .ctx = &src, .path = "a", .name = NULL};
    sim_kv opts[] = {{"alloc_conf", "expandable_segments:True"}};
    engine_config cfg = {
        .device = {.name = "t", .capacity_bytes = 4096 * M},
        .ops = torch_strategy(),
        .opts = opts,
        .n_opts = 1,
        .on_oom_skip = true,
        .paranoid = true,
    };
    sim_run *run = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(engine_run(&cfg, &s, 1, &run, &err), SIM_OK);
    ck_assert_uint_eq(run->total.ooms, 1);
    ck_assert_uint_eq(run->total.final_reserved_bytes, 3760 * M);
    ck_assert_uint_eq(run->total.peak_reserved_bytes, 4060 * M);
    ck_assert_uint_eq(run->total.peak_device_bytes, 4060 * M);
    /* the peak was reached during the last event */
    ck_assert_uint_eq(run->total.peak_reserved_event, 11);
    sim_run_free(run);
}
END_TEST

#define MiB ((uint64_t)1 << 20)

/* design.md §3 "OOM cause": L = live requested, S = the request, U = what the process may use */
START_TEST(an_oom_whose_live_bytes_exceed_what_the_process_may_use_should_be_capacity)
{
    /* ideal on 100 B, context 10: U = 90; 50 live + a 45 B request tagged "big" = 95 > 90 */
    sim_event ev[] = {A(1, 50, 0), A(2, 45, 1), F(1, 2, 2)};
    ev[1].tag = "big";
    sim_error err;
    sim_run *run = replay_events(ideal_strategy(), 100, 10, ev, 3, false, SIM_OK, &err);
    const sim_oom_record *o = &run->total.first_oom;
    ck_assert_int_eq(o->cause, SIM_OOM_CAPACITY);
    ck_assert_uint_eq(o->live_requested_bytes, 50);
    ck_assert_uint_eq(o->usable_bytes, 90);
    ck_assert_uint_eq(o->peak_demand_bytes, 95);
    ck_assert_str_eq(o->tag, "big");
    ck_assert_uint_eq(o->n_largest_live, 1);
    ck_assert_uint_eq(o->largest_live[0].id, 1);
    ck_assert_uint_eq(o->largest_live[0].size, 50);
    sim_run_free(run);
}
END_TEST

START_TEST(an_oom_that_would_fit_but_for_rounding_should_be_fragmentation_unless_the_trace_later_needs_more)
{
    /* raw on 8 MiB charges 2 MiB pages: 3 + 3 MiB take 8 MiB, so 1 MiB more fails while
     * 7 MiB live would fit in U = 8 MiB: fragmentation (the allocator's rounding) */
    sim_event ev[] = {A(1, 3 * MiB, 0), A(2, 3 * MiB, 1), A(3, 1 * MiB, 2), F(3, 3, 3), A(4, 5 * MiB, 4),
                      F(4, 5, 5), F(1, 6, 6), F(2, 6, 6)};
    sim_error err;
    sim_run *run = replay_events(raw_strategy(), 8 * MiB, 0, ev, 3, false, SIM_OK, &err);
    ck_assert_int_eq(run->total.first_oom.cause, SIM_OOM_FRAGMENTATION);
    ck_assert_uint_eq(run->total.first_oom.peak_demand_bytes, 7 * MiB);
    sim_run_free(run);
    /* the whole trace: after the OOM ended it, the program would have held 3 + 3 + 5 MiB
     * = 11 MiB > 8 MiB at event 5: no allocator could run it, so capacity */
    run = replay_events(raw_strategy(), 8 * MiB, 0, ev, 8, false, SIM_OK, &err);
    ck_assert_int_eq(run->total.first_oom.cause, SIM_OOM_CAPACITY);
    ck_assert_int_eq(run->procs[0].m.first_oom.cause, SIM_OOM_CAPACITY);
    ck_assert_uint_eq(run->total.first_oom.live_requested_bytes, 6 * MiB);
    ck_assert_uint_eq(run->total.first_oom.peak_demand_bytes, 11 * MiB);
    sim_run_free(run);
}
END_TEST

START_TEST(an_oom_that_would_fit_without_the_other_process_should_be_other_processes)
{
    /* ideal on 100 B: a holds 70; b's 40 B fit its U = 100, not beside a's 70 */
    sim_run *run = replay_one_block_each(70, 0, 40, 1, 100);
    const sim_oom_record *o = &run->total.first_oom;
    ck_assert_uint_eq(o->process, 1);
    ck_assert_int_eq(o->cause, SIM_OOM_OTHER_PROCESSES);
    ck_assert_uint_eq(o->other_processes_bytes, 70);
    ck_assert_uint_eq(o->other_processes, 1);
    ck_assert_uint_eq(o->usable_bytes, 100);
    sim_run_free(run);
}
END_TEST
