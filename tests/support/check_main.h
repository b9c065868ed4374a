/* check_main.h — the main() every Check suite shares: run the suite built by
 * make_suite(), exit non-zero on any failure; GPUSIM_CHECK_TESTS builds the suite too
 * when it is one list of tests. */
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

#define GPUSIM_CHECK_MAIN(make_suite)                     \
    int main(void)                                        \
    {                                                     \
        SRunner *sr = srunner_create(make_suite());       \
        srunner_run_all(sr, CK_NORMAL);                   \
        int failed = srunner_ntests_failed(sr);           \
        srunner_free(sr);                                 \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;      \
    }

/* The whole main() of a suite of one test case: its name, the case's timeout in
 * seconds (0 keeps CK_DEFAULT_TIMEOUT) and its tests, in the order they run. */
#define GPUSIM_CHECK_TESTS(name, timeout_s, ...)                                   \
    static Suite *gpusim_tests_suite(void)                                        \
    {                                                                              \
        const TTest *tests[] = {__VA_ARGS__};                                      \
        Suite *s = suite_create(name);                                             \
        TCase *tc = tcase_create(name);                                            \
        if ((timeout_s) > 0)                                                       \
            tcase_set_timeout(tc, (timeout_s));                                    \
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)                \
            tcase_add_test(tc, tests[i]);                                          \
        suite_add_tcase(s, tc);                                                    \
        return s;                                                                  \
    }                                                                              \
    GPUSIM_CHECK_MAIN(gpusim_tests_suite)

#endif
