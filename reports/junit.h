/* junit.h — writes test verdicts as JUnit XML (one <testsuite>, one <testcase> per
 * verdict: a <failure> when it failed, else its line as <system-out>), the format CI
 * systems read. Used by `gpusim check --junit`. */
#ifndef GPUSIM_REPORTS_JUNIT_H
#define GPUSIM_REPORTS_JUNIT_H

#include <stdbool.h>

#include "sim/buf.h"

typedef struct junit_case {
    const char *name;   /* the test case, e.g. "peak_reserved" */
    const char *text;   /* its one-line verdict */
    bool failed;
} junit_case;

typedef struct junit_suite {
    const char *name;          /* <testsuites name>, e.g. "gpusim check" */
    const char *subject;       /* <testsuite name> is "NAME SUBJECT", e.g. the trace */
    const char *classname;     /* of every test case, e.g. "gpusim.check" */
    const char *failure_type;  /* e.g. "regression" */
} junit_suite;

/* The whole document, XML-escaped, ending in a newline. */
void report_junit(const junit_suite *s, const junit_case *cases, int n, sim_buf *out);

#endif
