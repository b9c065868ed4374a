/* node.h (reports) — renders a replay on a machine with several GPUs
 * (answers/node.h): per device, what each job holds there at its peak and at the end,
 * and what is left for other processes; the text table and its JSON object. */
#ifndef GPUSIM_REPORT_NODE_H
#define GPUSIM_REPORT_NODE_H

#include "answers/node.h"
#include "sim/buf.h"
#include "sim/jsonw.h"

void report_node_text(const node_result *r, const node_job *jobs, uint32_t n_jobs, const char *strategy_name,
                      sim_buf *out);
void report_node_json(const node_result *r, const node_job *jobs, uint32_t n_jobs, const char *strategy_name,
                      sim_buf *out);

/* Every GPU's figures as a JSON array: [{"gpu", "name", "capacity_bytes", "limit_bytes"
 * (the allocator's effective limit, null where no job touched the GPU), "peak_used_bytes",
 * "final_used_bytes", "headroom_bytes" (capacity − peak on the device), "oom", "use"
 * ("rank N", "start" or null)}], as a value of w: in pretty layout one GPU a line, one
 * space deeper than the line the array opens on. */
void report_jsonw_node_devices(const node_result *r, jsonw *w);
/* How GPU d is used: "rank N", "start" (the framework took it without using it), or ""
 * (untouched); the processes of jobs after the first named: "start + job 2 rank 0". */
void report_node_use(const node_device_result *d, char *buf, size_t cap);
/* Whether a process on the GPU ran out of memory. */
bool report_node_oom(const node_device_result *d);

#endif
