/* node.h (reports) — renders a replay on a machine with several GPUs
 * (answers/node.h): per device, what each job holds there at its peak and at the end,
 * and what is left for other processes; the text table and its JSON object. */
#ifndef GPUSIM_REPORT_NODE_H
#define GPUSIM_REPORT_NODE_H

#include "answers/node.h"
#include "sim/buf.h"

void report_node_text(const node_result *r, const node_job *jobs, uint32_t n_jobs, const char *strategy_name,
                      sim_buf *out);
void report_node_json(const node_result *r, const node_job *jobs, uint32_t n_jobs, const char *strategy_name,
                      sim_buf *out);

#endif
