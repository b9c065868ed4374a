/* check_main.h — the main() every Check suite shares: run the suite built by
 * make_suite(), exit non-zero on any failure. */
#ifndef GPUSIM_TEST_CHECK_MAIN_H
#define GPUSIM_TEST_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define GPUSIM_CHECK_MAIN(make_suite)                     \
    int main(void)                                        \
    {                                                     \
        SRunner *sr = srunner_create(make_suite());       \
        srunner_run_all(sr, CK_NORMAL);                   \
        int failed = srunner_ntests_failed(sr);           \
        srunner_free(sr);                                 \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;      \
    }

#endif
