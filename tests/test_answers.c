/* Check suite for answers/plan: the capacity bisection and its confirmation on a
 * workload whose answer follows from the `ideal` strategy's rule (a card fits iff
 * context + peak live bytes <= capacity), and the grid of GPUs × strategies. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers/plan.h"
#include "sim/evbuf.h"
#include "sim/gpus.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "support/seed.h"
#include "support/workload.h"

static plan_question question(const batch_traces *t, const strategy_ops *const *ops, uint64_t context)
{
    plan_question q = {.t = t, .ops = ops, .n_ops = 1};
    q.model.name = "model";
    q.model.capacity_bytes = 64 * MiB;
    q.model.context_bytes = context;
    return q;
}

GPUSIM_TCASE("plan", 0, NULL, NULL);

START_TEST(the_minimum_should_be_the_peak_rounded_up_to_a_step_when_the_strategy_is_ideal)
{
    batch_traces t;
    workload_small(&t, "plan");
    const strategy_ops *ops[1] = {registry_find("ideal")};
    ck_assert_ptr_nonnull(ops[0]);
    plan_question q = question(&t, ops, 0);
    plan_min m;
    plan_find_min(&q, ops[0], &m);
    ck_assert_int_eq(m.st, SIM_OK);
    ck_assert(m.found);
    /* 5 MiB + 100 B does not fit in 5 MiB; 6 MiB holds it */
    ck_assert_uint_eq(m.capacity, 6 * MiB);
    ck_assert(m.at_min.fits);
    ck_assert_uint_eq(m.at_min.peak_device, WORKLOAD_PEAK_BYTES);
    ck_assert(m.below_fails);
    ck_assert(m.monotonic);
    ck_assert_uint_eq(m.counter_capacity, 0);
    ck_assert_uint_gt(m.runs, 2);
    for (uint32_t i = 0; i < m.n_probes; i++) {
        ck_assert_uint_gt(m.probes[i].capacity, m.capacity);
        ck_assert(m.probes[i].fits);
    }
    batch_traces_release(&t);
}
END_TEST

START_TEST(the_minimum_should_include_the_context_when_the_model_card_has_one)
{
    batch_traces t;
    workload_small(&t, "plan");
    const strategy_ops *ops[1] = {registry_find("ideal")};
    plan_question q = question(&t, ops, MiB);
    plan_min m;
    plan_find_min(&q, ops[0], &m);
    ck_assert(m.found);
    /* 1 MiB context + 5 MiB + 100 B: 7 MiB */
    ck_assert_uint_eq(m.capacity, 7 * MiB);
    ck_assert_uint_eq(m.at_min.peak_device, MiB + WORKLOAD_PEAK_BYTES);
    batch_traces_release(&t);
}
END_TEST

/* A trace in memory for t: "+ID SIZE_KIB" allocs, "-ID" frees, one event per time step. */
static void add_trace(batch_traces *t, const char *name, const char *script)
{
    evbuf *b = evbuf_new(name, name);
    ck_assert_ptr_nonnull(b);
    uint64_t now = 1;
    for (const char *p = script; *p;) {
        char op = *p++;
        char *end;
        uint64_t id = strtoull(p, &end, 10), size = 0;
        p = end;
        if (op == '+') {
            size = strtoull(p, &end, 10) * KiB;
            p = end;
        }
        sim_event ev = {.op = op == '+' ? SIM_OP_ALLOC : SIM_OP_FREE, .id = id, .size = size, .t = now,
                        .ready_t = now};
        now += 2;
        ck_assert_int_eq(evbuf_push(b, &ev), SIM_OK);
        while (*p == ' ')
            p++;
    }
    t->b[t->n++] = b;
    t->events += evbuf_count(b);
}

/* The search as the bisection makes it: ops without its fits_by_peak trait. */
static void bisect_min(const plan_question *q, const strategy_ops *ops, plan_min *m)
{
    strategy_ops plain = *ops;
    plain.fits_by_peak = false;
    plan_find_min(q, &plain, m);
}

static void expect_same_min(const plan_min *a, const plan_min *b, const char *what)
{
    ck_assert_msg(a->st == SIM_OK && b->st == SIM_OK, "%s: %s / %s", what, a->err.msg, b->err.msg);
    ck_assert_msg(a->found == b->found && a->capacity == b->capacity, "%s: %llu MiB, the bisection %llu MiB", what,
                  (unsigned long long)(a->capacity / MiB), (unsigned long long)(b->capacity / MiB));
    ck_assert_uint_eq(a->at_min.peak_device, b->at_min.peak_device);
    ck_assert_uint_eq(a->at_min.peak_reserved, b->at_min.peak_reserved);
    ck_assert_int_eq(a->at_min.fits, b->at_min.fits);
    ck_assert_int_eq(a->below_fails, b->below_fails);
    ck_assert_int_eq(a->monotonic, b->monotonic);
    ck_assert_uint_eq(a->n_probes, b->n_probes);
    for (uint32_t i = 0; i < a->n_probes; i++) {
        ck_assert_uint_eq(a->probes[i].capacity, b->probes[i].capacity);
        ck_assert_int_eq(a->probes[i].fits, b->probes[i].fits);
    }
}

/* raw, ideal and planned fit by their peak: the search replays three times (the
 * largest card, the minimum, a step below) and answers what the bisection's two
 * dozen replays answer: alone, with a 1 MiB context, and with a second process
 * on the card. */
START_TEST(a_strategy_that_fits_by_its_peak_should_find_the_bisections_minimum_in_three_replays)
{
    const char *names[] = {"raw", "ideal", "planned"};
    for (int k = 0; k < 3; k++) {
        const strategy_ops *ops[1] = {registry_find(names[k])};
        ck_assert_ptr_nonnull(ops[0]);
        ck_assert(ops[0]->fits_by_peak);
        for (int variant = 0; variant < 3; variant++) {
            batch_traces t;
            memset(&t, 0, sizeof t);
            add_trace(&t, "a", "+1 1000 +2 2000 -1 +3 500 -2 -3");
            if (variant == 2)
                add_trace(&t, "b", "+1 2500 +2 3 -1 -2");
            plan_question q = question(&t, ops, variant ? MiB : 0);
            plan_min fast, slow;
            plan_find_min(&q, ops[0], &fast);
            bisect_min(&q, ops[0], &slow);
            char what[64];
            snprintf(what, sizeof what, "%s, variant %d", names[k], variant);
            expect_same_min(&fast, &slow, what);
            ck_assert(fast.found);
            ck_assert_uint_le(fast.replays, 3);
            ck_assert_uint_gt(slow.replays, 10);
            batch_traces_release(&t);
        }
    }
}
END_TEST

/* The rule's one exception: the second process starts (its 1 MiB context is
 * charged) after the first reached its peak, and asks for nothing but zero bytes.
 * The device's peak, 1 + 4 + 1 MiB, is then no allocation's: every card of 5 MiB
 * runs it (4 MiB + the first context), the confirmation says so, and the
 * bisection answers 5 MiB. */
START_TEST(a_peak_no_allocation_reached_should_leave_the_minimum_to_the_bisection)
{
    batch_traces t;
    memset(&t, 0, sizeof t);
    add_trace(&t, "a", "+1 4096 -1");
    add_trace(&t, "b", "+1 0 -1");
    const strategy_ops *ops[1] = {registry_find("ideal")};
    plan_question q = question(&t, ops, MiB);
    plan_min fast, slow;
    plan_find_min(&q, ops[0], &fast);
    bisect_min(&q, ops[0], &slow);
    expect_same_min(&fast, &slow, "late context");
    ck_assert_uint_eq(fast.capacity, 5 * MiB);
    ck_assert_uint_eq(fast.at_min.peak_device, 6 * MiB);
    ck_assert_uint_gt(fast.replays, 3);
    batch_traces_release(&t);
}
END_TEST

/* ideal fits by its peak (5 MiB + 100 B): on cards of 6 and 64 MiB its cells are
 * the minimum's confirming run, not replayed, and equal to a replay there; on 5 MiB
 * and on a byte below the peak they fail, and are replayed (an OOM's figures come
 * from its own run). */
START_TEST(cells_above_a_peak_strategys_peak_should_come_from_its_minimum_without_a_replay)
{
    batch_traces t;
    workload_small(&t, "plan");
    const strategy_ops *ops[2] = {registry_find("ideal"), registry_find("torch")};
    static const gpu_model cards[4] = {{.name = "five", .capacity_bytes = 5 * MiB},
                                       {.name = "peak", .capacity_bytes = WORKLOAD_PEAK_BYTES - 1},
                                       {.name = "six", .capacity_bytes = 6 * MiB},
                                       {.name = "big", .capacity_bytes = 64 * MiB}};
    const gpu_model *gpus[4] = {&cards[0], &cards[1], &cards[2], &cards[3]};
    plan_question q = question(&t, ops, 0);
    q.n_ops = 2;
    q.gpus = gpus;
    q.n_gpus = 4;
    plan_answer a;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(plan_answer_compute(&q, 2, &a, &err), SIM_OK);
    const bool replayed[4] = {true, true, false, false};
    for (uint32_t g = 0; g < 4; g++) {
        const plan_cell *c = &a.cells[g * 2];
        ck_assert_msg(c->replayed == replayed[g], "%s: replayed %d", cards[g].name, c->replayed);
        /* torch's search saw a capacity-blind run: cards at or above its peak are
         * answered by it, the others replayed */
        const plan_cell *tc = &a.cells[g * 2 + 1];
        ck_assert(a.mins[1].has_blind);
        ck_assert_int_eq(tc->replayed, cards[g].capacity_bytes < a.mins[1].blind.peak_device);
        device_info d = plan_gpu_device(&q, g);
        plan_cell r = plan_run(&q, ops[0], &d);
        ck_assert_int_eq(c->fits, r.fits);
        ck_assert_int_eq(c->fits, g >= 2);
        ck_assert_uint_eq(c->peak_device, r.peak_device);
        ck_assert_uint_eq(c->peak_reserved, r.peak_reserved);
        ck_assert_uint_eq(c->ooms, r.ooms);
    }
    plan_answer_release(&a);
    batch_traces_release(&t);
}
END_TEST

START_TEST(the_grid_should_hold_one_cell_per_gpu_and_strategy_in_order)
{
    batch_traces t;
    workload_small(&t, "plan");
    const strategy_ops *ops[2] = {registry_find("ideal"), registry_find("torch")};
    ck_assert_ptr_nonnull(ops[1]);
    const gpu_model *gpus[1] = {gpus_find("T4")};
    ck_assert_ptr_nonnull(gpus[0]);
    plan_question q = question(&t, ops, 0);
    q.n_ops = 2;
    q.gpus = gpus;
    q.n_gpus = 1;
    plan_answer a;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(plan_answer_compute(&q, 2, &a, &err), SIM_OK);
    ck_assert_int_eq(a.cells[0].st, SIM_OK);
    ck_assert(a.cells[0].fits);
    ck_assert_uint_eq(a.cells[0].peak_device, WORKLOAD_PEAK_BYTES); /* ideal holds exactly the live bytes */
    ck_assert(a.cells[1].fits);
    ck_assert_uint_ge(a.cells[1].peak_device, WORKLOAD_PEAK_BYTES); /* torch rounds and caches: never less */
    ck_assert_uint_eq(a.mins[0].capacity, 6 * MiB);
    ck_assert_uint_ge(a.mins[1].capacity, a.mins[0].capacity);
    plan_answer_release(&a);
    batch_traces_release(&t);
}
END_TEST

GPUSIM_TCASE("capacity-blind runs", 120, NULL, NULL);

/* Allocator settings whose runs read the capacity only through failed cudaMallocs
 * (strategy_ops.capacity_blind) and settings that derive a limit from it. */
typedef struct blind_case {
    const char *strategy;
    sim_kv opts[2];
    uint32_t n_opts;
    bool blind;
} blind_case;

static const blind_case BLIND_CASES[] = {
    {"torch", {{0}}, 0, true},
    {"torch", {{"alloc_conf", "expandable_segments:True"}}, 1, true},
    {"torch", {{"alloc_conf", "max_split_size_mb:20,roundup_power2_divisions:4"}}, 1, true},
    {"torch", {{"alloc_conf", "garbage_collection_threshold:0.5"}}, 1, true}, /* no fraction: no collection */
    {"torch", {{"memory_fraction", "0.9"}}, 1, false},
    {"async", {{0}}, 0, true},
    {"async", {{"async_preset", "pytorch"}}, 1, true},
    {"async", {{"async_preset", "tf"}, {"release_threshold", "8MiB"}}, 2, true},
    {"async", {{"async_preset", "tf"}}, 1, false},
    {"async", {{"memory_fraction", "0.9"}}, 1, false},
};
#define N_BLIND_CASES (sizeof BLIND_CASES / sizeof BLIND_CASES[0])

/* A random trace of n events on process name: allocations of 1 KiB to 24 MiB (small
 * and large pools, several segments), frees of a random live one. */
static void add_random_trace(batch_traces *t, const char *name, uint64_t *rng, int n)
{
    char script[8192];
    size_t len = 0;
    uint64_t live[64];
    int n_live = 0, next = 1;
    for (int k = 0; k < n && len + 32 < sizeof script; k++) {
        if (n_live > 0 && (n_live == 64 || test_rand(rng) % 5 < 2)) {
            int i = (int)(test_rand(rng) % (uint64_t)n_live);
            len += (size_t)snprintf(script + len, sizeof script - len, "-%llu ", (unsigned long long)live[i]);
            live[i] = live[--n_live];
        } else {
            uint64_t kib = test_rand(rng) % 3 ? 1 + test_rand(rng) % 1024 : 1024 + test_rand(rng) % (23 * 1024);
            len += (size_t)snprintf(script + len, sizeof script - len, "+%d %llu ", next, (unsigned long long)kib);
            live[n_live++] = (uint64_t)next++;
        }
    }
    if (len > 0)
        script[len - 1] = '\0';
    add_trace(t, name, script);
}

static plan_question blind_question(const batch_traces *t, const strategy_ops *const *ops, const blind_case *c)
{
    plan_question q = question(t, ops, MiB);
    q.model.capacity_bytes = 4 * GiB;
    q.base.opts = c->opts;
    q.base.n_opts = c->n_opts;
    return q;
}

/* For each setting, on random traces of one and two processes: a complete run on a
 * large card is capacity-blind exactly when the setting is; a blind run then is the
 * same run (fits, peak on the device, peak reserved, OOMs) on a card of exactly its
 * peak, on cards above it and on cards of another compute capability, all replayed
 * here; a card a byte below its peak is not claimed. */
START_TEST(a_capacity_blind_run_should_be_the_same_run_on_every_card_at_or_above_its_peak)
{
    uint64_t rng = test_seed("a_capacity_blind_run_should_be_the_same_run_on_every_card_at_or_above_its_peak");
    for (size_t ci = 0; ci < N_BLIND_CASES; ci++) {
        const blind_case *c = &BLIND_CASES[ci];
        const strategy_ops *ops[1] = {registry_find(c->strategy)};
        ck_assert_ptr_nonnull(ops[0]);
        for (int round = 0; round < 6; round++) {
            batch_traces t;
            memset(&t, 0, sizeof t);
            add_random_trace(&t, "a", &rng, 120);
            if (round % 2)
                add_random_trace(&t, "b", &rng, 80);
            plan_question q = blind_question(&t, ops, c);
            plan_cell big = plan_run(&q, ops[0], &q.model);
            ck_assert_msg(big.st == SIM_OK && big.fits, "%s case %zu: %s", c->strategy, ci, big.err.msg);
            ck_assert_msg(big.blind == c->blind, "%s case %zu round %d: blind %d", c->strategy, ci, round, big.blind);
            if (big.blind) {
                const uint64_t caps[4] = {big.peak_device, big.peak_device + 1 + test_rand(&rng) % (64 * MiB),
                                          big.peak_device + 3 * MiB, 64 * GiB};
                for (int k = 0; k < 4; k++) {
                    device_info d = q.model;
                    d.capacity_bytes = caps[k];
                    d.cc_major = k == 2 ? 7 : 9; /* the compute capability is not read either */
                    plan_cell r = plan_run(&q, ops[0], &d);
                    ck_assert_msg(r.st == SIM_OK && r.fits, "%s case %zu, %llu B: does not fit", c->strategy, ci,
                                  (unsigned long long)caps[k]);
                    ck_assert_uint_eq(r.peak_device, big.peak_device);
                    ck_assert_uint_eq(r.peak_reserved, big.peak_reserved);
                    ck_assert_uint_eq(r.ooms, 0);
                    ck_assert(r.blind);
                }
                device_info below = q.model;
                below.capacity_bytes = big.peak_device - 1;
                plan_cell r = plan_run(&q, ops[0], &below);
                ck_assert(!r.blind); /* it fails there, or fits only after a cudaMalloc failed */
            }
            batch_traces_release(&t);
        }
    }
}
END_TEST

/* torch on a 16 MiB card (no context): 10 MiB allocated and freed stays cached; the
 * 12 MiB asked next does not fit beside it (22 > 16), so that cudaMalloc fails, the
 * cache goes back, and the retry fits. The run fits but is not capacity-blind: on a
 * card of its peak (12 MiB) it would not have failed first, and the peak it reports
 * (12 MiB) is not that of the run on a large card (22 MiB). */
START_TEST(a_run_in_which_a_cudamalloc_failed_should_not_be_capacity_blind)
{
    batch_traces t;
    memset(&t, 0, sizeof t);
    add_trace(&t, "a", "+1 10240 -1 +2 12288 -2");
    const strategy_ops *ops[1] = {registry_find("torch")};
    plan_question q = question(&t, ops, 0);
    device_info d = q.model;
    d.capacity_bytes = 16 * MiB;
    plan_cell small = plan_run(&q, ops[0], &d);
    ck_assert(small.fits);
    ck_assert(!small.blind);
    ck_assert_uint_eq(small.peak_device, 12 * MiB);
    d.capacity_bytes = 64 * MiB;
    plan_cell large = plan_run(&q, ops[0], &d);
    ck_assert(large.fits);
    ck_assert(large.blind);
    ck_assert_uint_eq(large.peak_device, 22 * MiB);
    batch_traces_release(&t);
}
END_TEST

/* The search with the rule answers what the bisection without it answers (the same
 * minimum, confirming run, probes and verdict), for every setting on random traces,
 * and over the blind settings in less than two thirds of its replays; the grid's
 * cells equal replays on those cards. Where more memory can fail (rare here), the two
 * bisect different ranges and may stop at different confirmed minima. */
START_TEST(the_search_should_find_the_bisections_minimum_in_fewer_replays_when_runs_are_capacity_blind)
{
    uint64_t rng = test_seed("the_search_should_find_the_bisections_minimum_in_fewer_replays_when_runs_are_capacity_blind");
    static const gpu_model cards[3] = {{.name = "small", .capacity_bytes = 24 * MiB, .cc_major = 7},
                                       {.name = "mid", .capacity_bytes = 160 * MiB, .cc_major = 8},
                                       {.name = "big", .capacity_bytes = 8 * GiB, .cc_major = 9}};
    const gpu_model *gpus[3] = {&cards[0], &cards[1], &cards[2]};
    uint32_t fast_replays = 0, slow_replays = 0, searches_blind = 0, not_monotonic = 0;
    for (size_t ci = 0; ci < N_BLIND_CASES; ci++) {
        const blind_case *c = &BLIND_CASES[ci];
        const strategy_ops *ops[1] = {registry_find(c->strategy)};
        for (int round = 0; round < 3; round++) {
            batch_traces t;
            memset(&t, 0, sizeof t);
            add_random_trace(&t, "a", &rng, 100);
            plan_question q = blind_question(&t, ops, c);
            q.model.capacity_bytes = 256 * MiB;
            plan_min fast, slow;
            plan_find_min(&q, ops[0], &fast);
            strategy_ops plain = *ops[0];
            plain.capacity_blind = NULL;
            plan_find_min(&q, &plain, &slow);
            char what[96];
            snprintf(what, sizeof what, "%s case %zu round %d", c->strategy, ci, round);
            if (fast.capacity != slow.capacity) {
                /* a trace on which more memory can fail (torch's cache, held longer on a
                 * larger card): the searches bisect other ranges and stop at different
                 * steps, each confirmed (runs there, fails a step below); the smaller
                 * then runs where the larger's step below fails */
                ck_assert_msg(fast.found && slow.found && fast.at_min.fits && slow.at_min.fits && fast.below_fails &&
                                  slow.below_fails,
                              "%s", what);
                not_monotonic++;
            } else {
                expect_same_min(&fast, &slow, what);
            }
            ck_assert(!fast.has_blind || c->blind);
            if (fast.has_blind) {
                searches_blind++;
                fast_replays += fast.replays;
                slow_replays += slow.replays;
            }
            q.gpus = gpus;
            q.n_gpus = 3;
            plan_answer a;
            sim_error err;
            sim_error_clear(&err);
            ck_assert_int_eq(plan_answer_compute(&q, 2, &a, &err), SIM_OK);
            for (uint32_t g = 0; g < 3; g++) {
                device_info d = plan_gpu_device(&q, g);
                plan_cell r = plan_run(&q, ops[0], &d);
                ck_assert_int_eq(a.cells[g].fits, r.fits);
                ck_assert_uint_eq(a.cells[g].peak_device, r.peak_device);
                ck_assert_uint_eq(a.cells[g].peak_reserved, r.peak_reserved);
                ck_assert_uint_eq(a.cells[g].ooms, r.ooms);
            }
            plan_answer_release(&a);
            batch_traces_release(&t);
        }
    }
    /* one search may replay a probe between its minimum and the blind run's peak that
     * the bisection's memo answered; together they replay less */
    ck_assert_msg(fast_replays * 3 < slow_replays * 2, "%u replays, the bisection %u", fast_replays, slow_replays);
    ck_assert_uint_gt(searches_blind, 10);
    ck_assert_uint_lt(not_monotonic, 4);
}
END_TEST
