/* plan.h — renders a capacity plan (answers/plan.h): the text tables (peak on the
 * device per GPU and strategy, headroom, smallest capacity) and the JSON object.
 * Deterministic: the same answer gives the same bytes. */
#ifndef GPUSIM_REPORTS_PLAN_H
#define GPUSIM_REPORTS_PLAN_H

#include "answers/plan.h"
#include "sim/buf.h"

/* limits: the allocator's effective limit (answers/limit.h) of every cell,
 * limits[g * n_ops + s], then on the model card, limits[n_gpus * n_ops + s];
 * UINT64_MAX where the strategy does not run; NULL: none shown. sources: where the
 * model card's limit of each strategy comes from (n_ops texts, as limit_find writes
 * them), for the header; NULL: not said. */
/* The tables for people, without trailing spaces. */
void report_plan_text(const plan_question *q, const plan_answer *a, const uint64_t *limits,
                      const char *const *sources, sim_buf *out);
/* {"gpusim": VERSION, "traces": [...], "gpus": [...], "minimum_capacity": {...}}, ending in a newline. */
void report_plan_json(const plan_question *q, const plan_answer *a, const uint64_t *limits, sim_buf *out);

/* On nodes (plan --node): a row per node and strategy (fits, GPUs held, highest peak,
 * least headroom, the GPU that fails) and what each GPU holds; the JSON object
 * {"gpusim", "traces", "context_bytes", "strategies", "visible", "replicas",
 * "nodes": [{"name", "gpus", "runs": [{"strategy", "fits", ..., "devices": [...]}]}]}. */
void report_plan_nodes_text(const plan_node_question *q, const plan_node_cell *cells, sim_buf *out);
void report_plan_nodes_json(const plan_node_question *q, const plan_node_cell *cells, sim_buf *out);

#endif
