/* Tests of answers/tune: the smallest memory_limit, the search's independence of the
 * thread count, the user's alloc_conf kept in every PyTorch candidate, the ranking. */
#include <check.h>
#include <string.h>

#include "answers/tune.h"
#include "sim/evbuf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "support/workload.h"

/* The question over the small workload (support/workload.h), which it loads into t
 * (the test releases it): fw's candidates against the setting current, for the least
 * reserved bytes on a 1 GiB card. */
static tune_question question(batch_traces *t, tune_framework fw, const char *current)
{
    workload_small(t, "tune");
    tune_question q = {.t = t, .framework = fw, .goal = TUNE_GOAL_MIN_RESERVED, .jobs = 1};
    q.base.device.name = "card";
    q.base.device.capacity_bytes = 1 * GiB;
    q.current = registry_find(current);
    ck_assert_ptr_nonnull(q.current);
    return q;
}

static const tune_candidate *find(const tune_answer *a, const char *setting)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (strcmp(a->c[i].setting, setting) == 0)
            return &a->c[i];
    return NULL;
}

static uint32_t rank_of(const tune_answer *a, const char *setting)
{
    for (uint32_t r = 0; r < a->n_ranked; r++)
        if (strcmp(a->c[a->rank[r]].setting, setting) == 0)
            return r;
    ck_abort_msg("%s is not ranked", setting);
    return UINT32_MAX;
}

START_TEST(goal_and_framework_names_should_parse_back)
{
    for (int g = 0; g < 3; g++) {
        tune_goal out;
        ck_assert(tune_goal_parse(tune_goal_name((tune_goal)g), &out));
        ck_assert_int_eq(out, g);
        tune_framework f;
        ck_assert(tune_framework_parse(tune_framework_name((tune_framework)g), &f));
        ck_assert_int_eq(f, g);
    }
    tune_goal out;
    ck_assert(!tune_goal_parse("smallest", &out));
    ck_assert(!tune_goal_parse(NULL, &out));
}
END_TEST

START_TEST(tf_should_find_the_smallest_memory_limit_that_runs)
{
    batch_traces t;
    tune_question q = question(&t, TUNE_TF, "greedy");
    tune_answer a;
    sim_error err;
    ck_assert_int_eq(tune_run(&q, &a, &err), SIM_OK);
    /* BFC rounds 3 MiB + 100 B up to 3 MiB + 256 B and splits a free chunk only when it
     * is at least twice that (the slack is far below 128 MiB): a 6 MiB region goes whole
     * to the first block and the 2 MiB one fails; 7 MiB >= 6 MiB + 512 B splits, leaving
     * 4 MiB - 256 B for it */
    const tune_candidate *c = find(&a, "memory_limit=7");
    ck_assert_ptr_nonnull(c);
    ck_assert(tune_candidate_ok(c));
    ck_assert_uint_eq(c->peak_reserved, 7 * MiB);
    ck_assert_ptr_null(find(&a, "memory_limit=6"));
    /* the limit ranks above growth (its doubling regions reach 8 MiB here) and greedy
     * (the whole card); a pool allocator (cuda_malloc_async, where built) may go lower */
    ck_assert_uint_lt(rank_of(&a, "memory_limit=7"), rank_of(&a, "allow_growth=true"));
    ck_assert_uint_lt(rank_of(&a, "memory_limit=7"), rank_of(&a, a.c[a.current].setting));
    ck_assert(strstr(c->code, "memory_limit=7)]") != NULL);
    ck_assert(a.c[a.current].current);
    ck_assert_uint_gt(a.c[a.current].peak_reserved, 7 * MiB);
    tune_answer_release(&a);
    batch_traces_release(&t);
}
END_TEST

START_TEST(the_answer_should_not_depend_on_the_number_of_threads)
{
    batch_traces t;
    tune_question q1 = question(&t, TUNE_TORCH, "torch"), q4 = q1;
    q4.jobs = 4;
    tune_answer a1, a4;
    sim_error err;
    ck_assert_int_eq(tune_run(&q1, &a1, &err), SIM_OK);
    ck_assert_int_eq(tune_run(&q4, &a4, &err), SIM_OK);
    ck_assert_uint_eq(a1.n, a4.n);
    ck_assert_uint_eq(a1.n_ranked, a4.n_ranked);
    for (uint32_t i = 0; i < a1.n_ranked; i++) {
        ck_assert_uint_eq(a1.rank[i], a4.rank[i]);
        ck_assert_str_eq(a1.c[a1.rank[i]].setting, a4.c[a4.rank[i]].setting);
        ck_assert_uint_eq(a1.c[a1.rank[i]].peak_reserved, a4.c[a4.rank[i]].peak_reserved);
    }
    /* ranked by peak reserved among the runs without an OOM */
    for (uint32_t i = 1; i < a1.n_ranked; i++)
        if (tune_candidate_ok(&a1.c[a1.rank[i]]))
            ck_assert_uint_le(a1.c[a1.rank[i - 1]].peak_reserved, a1.c[a1.rank[i]].peak_reserved);
    tune_answer_release(&a1);
    tune_answer_release(&a4);
    batch_traces_release(&t);
}
END_TEST

START_TEST(a_torch_candidate_should_keep_the_users_alloc_conf_and_replace_its_own_key)
{
    batch_traces t;
    tune_question q = question(&t, TUNE_TORCH, "torch");
    const sim_kv user[] = {{"alloc_conf", "max_split_size_mb:64,roundup_power2_divisions:4"}};
    q.user = user;
    q.n_user = 1;
    tune_answer a;
    sim_error err;
    ck_assert_int_eq(tune_run(&q, &a, &err), SIM_OK);
    ck_assert_str_eq(a.c[a.current].setting, "max_split_size_mb:64,roundup_power2_divisions:4");
    ck_assert_ptr_nonnull(find(&a, "roundup_power2_divisions:4,max_split_size_mb:20"));
    ck_assert_ptr_nonnull(find(&a, "max_split_size_mb:64,roundup_power2_divisions:4,expandable_segments:True"));
    ck_assert_ptr_nonnull(find(&a, "max_split_size_mb:64,roundup_power2_divisions:8"));
    ck_assert_ptr_null(find(&a, "max_split_size_mb:64,roundup_power2_divisions:4,max_split_size_mb:20"));
    const tune_candidate *c = find(&a, "roundup_power2_divisions:4,max_split_size_mb:20");
    ck_assert_str_eq(c->env, "PYTORCH_ALLOC_CONF=roundup_power2_divisions:4,max_split_size_mb:20");
    /* the lower bound is the live bytes: 3 MiB + 100 B + 2 MiB */
    const tune_candidate *ideal = find(&a, "ideal");
    ck_assert_ptr_nonnull(ideal);
    ck_assert(ideal->bound);
    ck_assert_uint_eq(ideal->peak_reserved, 5 * MiB + 100);
    tune_answer_release(&a);
    batch_traces_release(&t);
}
END_TEST

START_TEST(no_oom_should_put_the_settings_that_run_before_those_that_fail)
{
    batch_traces t;
    tune_question q = question(&t, TUNE_TF, "greedy");
    q.goal = TUNE_GOAL_NO_OOM;
    /* 6 MiB: greedy's one region goes whole to the first block (6 MiB < 2 x (3 MiB + 256 B))
     * and the 2 MiB one fails; growth's regions of 2 and 4 MiB hold one block each */
    q.base.device.capacity_bytes = 6 * MiB;
    tune_answer a;
    sim_error err;
    ck_assert_int_eq(tune_run(&q, &a, &err), SIM_OK);
    bool seen_fail = false;
    for (uint32_t i = 0; i < a.n_ranked; i++) {
        const tune_candidate *c = &a.c[a.rank[i]];
        if (!tune_candidate_ok(c))
            seen_fail = true;
        else
            ck_assert_msg(!seen_fail, "%s runs but ranks below a failing setting", c->setting);
        if (i > 0 && !tune_candidate_ok(c))
            ck_assert_uint_le(a.c[a.rank[i - 1]].ooms, c->ooms);
    }
    ck_assert(tune_candidate_ok(&a.c[a.rank[0]]));
    ck_assert_str_eq(a.c[a.rank[0]].setting, "allow_growth=true");
    ck_assert(seen_fail);
    ck_assert(!tune_candidate_ok(&a.c[a.current]));
    tune_answer_release(&a);
    batch_traces_release(&t);
}
END_TEST
