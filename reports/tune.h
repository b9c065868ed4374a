/* tune.h — renders `gpusim tune` (answers/tune.h): the settings tried, ranked for
 * the goal, as a text table (peak reserved, the change against the current setting,
 * out of memory), the lower bounds, and the exact line to paste for the best; or
 * the same as one JSON object. Deterministic: the order is the answer's ranking. */
#ifndef GPUSIM_REPORTS_TUNE_H
#define GPUSIM_REPORTS_TUNE_H

#include <stdint.h>

#include "answers/graphs.h"
#include "answers/tune.h"
#include "sim/buf.h"

/* paths[0..n_paths): the traces, for the heading; top: the ranked rows shown in the
 * text table (the current setting is shown wherever it ranks; 0 = all). */
void report_tune_text(const tune_question *q, const tune_answer *a, const char *const *paths, uint32_t n_paths,
                      uint32_t top, sim_buf *out);
/* g: the CUDA graphs' answer of the current setting (NULL or not present: none), the
 * JSON's "cuda_graphs" member. */
void report_tune_json(const tune_question *q, const tune_answer *a, const graphs_answer *g, const char *const *paths,
                      uint32_t n_paths, sim_buf *out);
/* The CUDA graphs' best pool sharing and capture order as settings to paste, after
 * the text (nothing when g is NULL, not present or has no best). */
void report_tune_graphs_text(const graphs_answer *g, sim_buf *out);

#endif
