/* against.h — renders a predicted-vs-recorded comparison (answers/against.h) as
 * text for people or as a JSON object for machines. Deterministic. */
#ifndef GPUSIM_REPORTS_AGAINST_H
#define GPUSIM_REPORTS_AGAINST_H

#include "answers/against.h"
#include "sim/buf.h"

/* The table: trace is the recording's path, device_name the simulated device's name. */
void report_against_text(const against_result *r, const char *trace, const char *device_name, sim_buf *out);
/* {"gpusim": VERSION, "against_recorded": {...}}, pretty-printed, ending in a newline. */
void report_against_json(const against_result *r, const char *trace, sim_buf *out);

#endif
