/* check_main.h — what every Check suite shares: the main() that runs a suite and
 * exits non-zero on any failure, and the annotations by which tests register
 * themselves. A suite's Suite is generated from its file (support/gen_suite.sh):
 * every START_TEST in file order; GPUSIM_TCASE starts a test case, GPUSIM_LOOP makes
 * a test a loop test. Both compile to nothing in the test file itself. */
#ifndef GPUSIM_TEST_CHECK_MAIN_H
#define GPUSIM_TEST_CHECK_MAIN_H

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

/* Exact equality of two doubles that are not NaN, for results that must be exact
 * (a ratio of two integers, a seeded draw repeated): the build warns on `==` between
 * floating-point values (-Wfloat-equal), which is right everywhere else. */
static inline bool test_same_double(double a, double b)
{
    return !(a < b) && !(a > b);
}

/* EXPECT and EXPECT_MSG, assertions for hot loops: Check's ck_assert records the
 * location of every passing check through its parent pipe, a system call each;
 * these only fail. */
#define EXPECT(cond)                                   \
    do {                                               \
        if (!(cond))                                   \
            ck_abort_msg("expected %s", #cond);        \
    } while (0)
#define EXPECT_MSG(cond, ...)                          \
    do {                                               \
        if (!(cond))                                   \
            ck_abort_msg(__VA_ARGS__);                 \
    } while (0)

#define GPUSIM_CHECK_MAIN(make_suite)                     \
    int main(void)                                        \
    {                                                     \
        SRunner *sr = srunner_create(make_suite());       \
        srunner_run_all(sr, CK_NORMAL);                   \
        int failed = srunner_ntests_failed(sr);           \
        srunner_free(sr);                                 \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;      \
    }

/* GPUSIM_TCASE("name", timeout_s, setup, teardown); the tests below it, up to the
 * next marker, form one test case (timeout 0 keeps CK_DEFAULT_TIMEOUT; setup and
 * teardown are a checked fixture, or NULL). Tests above the first marker form a case
 * named after the suite. */
#define GPUSIM_TCASE(name, timeout_s, setup, teardown) _Static_assert(1, "test case marker")
/* GPUSIM_LOOP(test, start, end); runs that test once for each _i in [start, end). */
#define GPUSIM_LOOP(test, start, end) _Static_assert(1, "loop test marker")

#endif
