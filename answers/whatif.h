/* whatif.h — "would one setting have avoided this OOM?": a second replay of the
 * same traces with that setting changed, answered as data that the reports render
 * (reports/result.h: report_json_whatif, report_text_whatif). The one question
 * asked today: PyTorch's own OOM message suggests expandable_segments:True, so a
 * torch replay that ran out of memory is replayed once more that way. */
#ifndef GPUSIM_WHATIF_H
#define GPUSIM_WHATIF_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"

typedef struct whatif {
    bool present;             /* false: not asked (nothing to render) */
    char setting[1100];       /* e.g. "--alloc-conf=expandable_segments:True" */
    bool completed;
    uint64_t ooms;
    uint64_t peak_reserved_bytes;
    sim_oom_record first_oom;
} whatif;

/* Options whatif_expandable can take (cfg->n_opts, the alloc_conf included). */
#define WHATIF_MAX_OPTS 64u

/* True when the question applies to a finished run under cfg: the strategy is
 * torch, an OOM happened, and cfg's alloc_conf does not already turn expandable
 * segments on. */
bool whatif_expandable_applies(const engine_config *cfg, const sim_run *run);

/* Replay srcs (fresh, from the start) under cfg with expandable_segments:True
 * appended to alloc_conf (or as the whole alloc_conf), without a timeline,
 * --paranoid or an observer, and fill *out. Errors: engine_run's, and SIM_EUSAGE
 * for more than WHATIF_MAX_OPTS - 1 options. */
sim_status whatif_expandable(const engine_config *cfg, const sim_event_source *srcs, uint32_t n, whatif *out,
                             sim_error *err);

#endif
