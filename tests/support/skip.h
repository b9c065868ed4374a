/* skip.h — saying that a part of a suite did not run, and why. A test that cannot check a case
 * here (a recording that is not on this machine) calls test_skip instead of passing
 * quietly: the line is printed and, when scripts/test collects skips ($GPUSIM_SKIP_LOG),
 * appended there, so the run ends with the list and CI (GPUSIM_NO_SKIPS=1) fails on it. */
#ifndef GPUSIM_TESTS_SUPPORT_SKIP_H
#define GPUSIM_TESTS_SUPPORT_SKIP_H

/* test_skip(SUITE, FORMAT, ...): print "skipped: ..." and log "SUITE: ..." */
void test_skip(const char *suite, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
