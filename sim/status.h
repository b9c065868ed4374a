/* status.h — the one status enum of gpusim, its messages, and the error context
 * that parsers and the engine fill in (file, line or event index, what is wrong).
 * A simulated out-of-memory is not an error: it is recorded as data (see engine.h).
 * Thread-safe: every function works on the caller's sim_error or on constant text. */
#ifndef GPUSIM_STATUS_H
#define GPUSIM_STATUS_H

#include <stdint.h>

typedef enum sim_status {
    SIM_OK = 0,
    SIM_END,        /* an event source has no more events */
    SIM_OOM,        /* a strategy could not satisfy an allocation (data, not failure) */
    SIM_EUSAGE,     /* bad command line or option value */
    SIM_EIO,        /* a file could not be opened, read or written */
    SIM_ETRACE,     /* the trace is invalid */
    SIM_ENOMEM,     /* the host ran out of memory */
    SIM_EINTERNAL   /* a bug: an invariant of gpusim itself was broken */
} sim_status;

/* Exit status the command line uses for a status (design.md §6): 0, 2 or 3. */
int sim_status_exit_code(sim_status st);
const char *sim_strerror(sim_status st);

/* Where and what went wrong. `line` is a 1-based line (JSONL, JSON) or 0;
 * `event` a 1-based event index or 0. Caller-owned; no allocation. */
typedef struct sim_error {
    sim_status status;
    char file[512];
    uint64_t line;
    uint64_t event;
    char msg[512];
} sim_error;

void sim_error_clear(sim_error *err);
/* Fill err and return st; file may be NULL. */
sim_status sim_error_set(sim_error *err, sim_status st, const char *file, uint64_t line,
                         uint64_t event, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* "file:line: msg", "file: event N: msg" or "file: msg" into buf. */
void sim_error_format(const sim_error *err, char *buf, uint64_t cap);

#endif
