/* kvfit.h — renders `plan --gpu-memory-utilization` (answers/kvfit.h): per card and
 * strategy the largest gpu_memory_utilization that survives CUDA graph capture, in
 * text and JSON. */
#ifndef GPUSIM_REPORTS_KVFIT_H
#define GPUSIM_REPORTS_KVFIT_H

#include "answers/kvfit.h"
#include "sim/buf.h"

/* One row: a card and a strategy. */
typedef struct kvfit_row {
    const char *gpu;
    uint64_t capacity_bytes, context_bytes;
    const char *strategy;
    kvfit_answer a;
} kvfit_row;

void report_kvfit_text(const char *path, const kvfit_rule *r, const kvfit_row *rows, uint32_t n, sim_buf *out);
void report_kvfit_json(const char *path, const kvfit_rule *r, const kvfit_row *rows, uint32_t n, sim_buf *out);

#endif
