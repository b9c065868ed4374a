/* measured.h — the measured format of validate/ ("gpusim-measured", version 1;
 * validate/README.md), what both its writer (validate/vjson.c) and its reader
 * (`gpusim validate-report`) share, and the validate-report tables: predicted
 * (gpusim) vs measured (a real GPU), metric by metric, as text or JSON. */
#ifndef GPUSIM_REPORTS_MEASURED_H
#define GPUSIM_REPORTS_MEASURED_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/buf.h"

#define MEASURED_FORMAT "gpusim-measured"
#define MEASURED_VERSION 1

/* The trace fingerprint a measurement carries as trace.fnv1a64: FNV-1a (64 bits)
 * of the file's bytes, written as 16 lower-case hex digits. false when the file
 * cannot be read. */
bool measured_trace_fnv1a64(const char *path, uint64_t *out);

#define MEASURED_MAX_ROWS 512
#define MEASURED_MAX_NOTES 16

/* One compared metric. */
typedef struct measured_row {
    char metric[96];
    bool has_pred, has_meas;
    uint64_t pred, meas;
    bool is_stat;
    const char *unit; /* "B", "event" or "" */
} measured_row;

/* One measurement against its prediction. */
typedef struct measured_report {
    char file[512];
    char trace_path[1024];
    char trace_name[256];
    char allocator[96];
    char strategy[64];
    char options[512];   /* "k=v, k=v" */
    char device[256];
    uint64_t total, context;
    bool fixture;
    bool has_model;
    bool completed_pred, completed_meas;
    measured_row rows[MEASURED_MAX_ROWS];
    uint32_t n_rows;
    char notes[MEASURED_MAX_NOTES][512];
    uint32_t n_notes;
} measured_report;

/* The report of reps[0..n): text lists allocator statistics that agree exactly only
 * with all_stats; JSON lists every row. */
void report_measured_text(const measured_report *reps, int n, bool all_stats, sim_buf *out);
void report_measured_json(const measured_report *reps, int n, sim_buf *out);

#endif
