/* plan.h — renders a capacity plan (answers/plan.h): the text tables (peak on the
 * device per GPU and strategy, headroom, smallest capacity) and the JSON object.
 * Deterministic: the same answer gives the same bytes. */
#ifndef GPUSIM_REPORTS_PLAN_H
#define GPUSIM_REPORTS_PLAN_H

#include "answers/plan.h"
#include "sim/buf.h"

/* The tables for people, without trailing spaces. */
void report_plan_text(const plan_question *q, const plan_answer *a, sim_buf *out);
/* {"gpusim": VERSION, "traces": [...], "gpus": [...], "minimum_capacity": {...}}, ending in a newline. */
void report_plan_json(const plan_question *q, const plan_answer *a, sim_buf *out);

#endif
