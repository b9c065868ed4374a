#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sim_status_exit_code(sim_status st)
{
    switch (st) {
    case SIM_OK:
    case SIM_END:
    case SIM_OOM:
        return 0;
    case SIM_ETRACE:
        return 3;
    case SIM_EUSAGE:
    case SIM_EIO:
    case SIM_ENOMEM:
    case SIM_EINTERNAL:
        return 2;
    }
    return 2;
}

const char *sim_strerror(sim_status st)
{
    switch (st) {
    case SIM_OK: return "ok";
    case SIM_END: return "end of events";
    case SIM_OOM: return "out of memory (simulated)";
    case SIM_EUSAGE: return "usage error";
    case SIM_EIO: return "I/O error";
    case SIM_ETRACE: return "invalid trace";
    case SIM_ENOMEM: return "out of host memory";
    case SIM_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

void sim_error_clear(sim_error *err)
{
    memset(err, 0, sizeof *err);
}

sim_status sim_error_set(sim_error *err, sim_status st, const char *file, uint64_t line,
                         uint64_t event, const char *fmt, ...)
{
    if (err == NULL)
        return st;
    err->status = st;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    err->event = event;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return st;
}

void sim_error_format(const sim_error *err, char *buf, uint64_t cap)
{
    size_t n = (size_t)cap;
    if (err->file[0] && err->line && err->event)
        snprintf(buf, n, "%s:%llu: event %llu: %s", err->file, (unsigned long long)err->line,
                 (unsigned long long)err->event, err->msg);
    else if (err->file[0] && err->line)
        snprintf(buf, n, "%s:%llu: %s", err->file, (unsigned long long)err->line, err->msg);
    else if (err->file[0] && err->event)
        snprintf(buf, n, "%s: event %llu: %s", err->file, (unsigned long long)err->event, err->msg);
    else if (err->file[0])
        snprintf(buf, n, "%s: %s", err->file, err->msg);
    else
        snprintf(buf, n, "%s", err->msg);
}
