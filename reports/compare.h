/* compare.h — renders `gpusim compare`: the same workload replayed under several
 * strategies on one device, side by side, as a text table (peaks, fragmentation,
 * the first OOM explained) or a JSON object with one §5 result per strategy.
 * Every run must share its traces and device. Deterministic. */
#ifndef GPUSIM_REPORTS_COMPARE_H
#define GPUSIM_REPORTS_COMPARE_H

#include <stdint.h>

#include "answers/graphs.h"
#include "sim/buf.h"
#include "sim/engine.h"

/* runs[0..n), n >= 1, in the order to print. */
void report_compare_text(const sim_run *const *runs, uint32_t n, sim_buf *out);
void report_compare_json(const sim_run *const *runs, uint32_t n, sim_buf *out);
/* The same with each row's CUDA graphs' answer (graphs[i] NULL or not present: none;
 * reports/graphs.h): a section per strategy after the table, a "cuda_graphs" member per row. */
void report_compare_text_graphs(const sim_run *const *runs, const graphs_answer *const *graphs, uint32_t n,
                                sim_buf *out);
void report_compare_json_graphs(const sim_run *const *runs, const graphs_answer *const *graphs, uint32_t n,
                                sim_buf *out);

#endif
