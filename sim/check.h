/* check.h — what an invariant checker found: a count of violations and the first
 * few messages. Checkers append to it and never abort, so a test can corrupt a
 * state on purpose and read which invariant caught it. Caller-owned, no allocation. */
/* Thread safety: a report is not thread-safe; each checker run fills its own. */
#ifndef GPUSIM_CHECK_H
#define GPUSIM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_REPORT_TEXT 4096

typedef struct sim_report {
    uint64_t violations;
    uint64_t len;               /* bytes used in text */
    char text[SIM_REPORT_TEXT]; /* one violation per line, truncated when full */
} sim_report;

void sim_report_init(sim_report *r);
/* Record a violation when cond is false; returns cond. */
bool sim_report_insist(sim_report *r, bool cond, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether any recorded line contains needle (tests look for a named invariant). */
bool sim_report_mentions(const sim_report *r, const char *needle);

#endif
