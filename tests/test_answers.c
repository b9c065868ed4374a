/* Check suite for answers/plan: the capacity bisection and its confirmation on a
 * workload whose answer follows from the `ideal` strategy's rule (a card fits iff
 * context + peak live bytes <= capacity), and the grid of GPUs × strategies. */
#include <check.h>
#include <string.h>

#include "answers/plan.h"
#include "sim/evbuf.h"
#include "sim/gpus.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"
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
