/* graphs.h — renders the CUDA graphs' answer (answers/graphs.h) of a replay: each
 * private pool at the end of capture, what its graphs would need a pool each, and
 * the what-if over pool sharing and capture order, in text, JSON and as the settings
 * to paste (tune). */
#ifndef GPUSIM_REPORTS_GRAPHS_H
#define GPUSIM_REPORTS_GRAPHS_H

#include "answers/graphs.h"
#include "sim/buf.h"
#include "sim/jsonw.h"

/* The text section (nothing when g is NULL or not present), each line indented by two
 * spaces; who, when not NULL, names the strategy in its first line (compare). */
void report_text_graphs(const graphs_answer *g, const char *who, sim_buf *out);
/* The "cuda_graphs" object's value into w (null when g is NULL or not present). */
void report_jsonw_graphs(const graphs_answer *g, jsonw *w);
/* The best variant as PyTorch settings, one sentence without a newline: "pass one
 * torch.cuda.graph_pool_handle() as pool= to every capture; capture the largest
 * batch first". Nothing when g has no best variant. */
void report_graphs_settings(const graphs_answer *g, sim_buf *out);

#endif
