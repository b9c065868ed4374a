/* junit.h — writes test verdicts as JUnit XML (<testsuites> holding one <testsuite>,
 * one <testcase> per verdict, a <failure> when it failed), the format CI systems read.
 * The document is valid against both common schemas: Jenkins' (the xunit plugin's
 * junit-10) and Apache Ant's (the JUnit task's, as restated by Windy Road): the suite
 * has package, id, timestamp, hostname, time and a <properties> block, every case a
 * classname and a time, and the verdict lines go to the suite's <system-out> (Ant's
 * schema allows no output inside a test case). Used by `gpusim check --junit`. */
#ifndef GPUSIM_REPORTS_JUNIT_H
#define GPUSIM_REPORTS_JUNIT_H

#include <stdbool.h>

#include "sim/buf.h"

typedef struct junit_property {
    const char *name, *value; /* e.g. "strategy", "growth" */
} junit_property;

typedef struct junit_case {
    const char *name;    /* the test case, e.g. "peak_reserved: t.jsonl under growth vs base.json" */
    const char *message; /* its verdict: one line (line breaks become spaces) */
    const char *details; /* a failure's body: the details, any number of lines */
    bool failed;
    double time_s; /* seconds */
} junit_case;

typedef struct junit_suite {
    const char *name;         /* <testsuites name> and <testsuite name> */
    const char *package;      /* <testsuite package> and each case's classname, e.g. "gpusim.check" */
    const char *failure_type; /* e.g. "regression" */
    const junit_property *props;
    int n_props;
    double time_s;          /* the whole suite, seconds */
    const char *timestamp;  /* when it ran, "YYYY-MM-DDTHH:MM:SS" (UTC; Ant's schema takes no zone) */
    const char *hostname;   /* where it ran; "localhost" when unknown */
    const char *system_out; /* the suite's output (the verdict lines) */
} junit_suite;

/* The whole document, XML-escaped, ending in a newline. */
void report_junit(const junit_suite *s, const junit_case *cases, int n, sim_buf *out);

/* "YYYY-MM-DDTHH:MM:SS" of a time in UTC into buf (20 bytes at least); returns buf. */
char *junit_timestamp(long long unix_s, char *buf, size_t cap);

#endif
