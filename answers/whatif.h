/* whatif.h — "would one setting have avoided this OOM?": a second replay of the
 * same traces with that setting changed, answered as data that the reports render
 * (reports/result.h: report_json_whatif, report_text_whatif; reports/html.h). The
 * report asks the BFC questions; text and JSON show the expandable one only. */

/* Two questions: PyTorch's own OOM message suggests expandable_segments:True, so a
 * torch replay that ran out of memory is replayed once more that way; and a BFC
 * replay (greedy, growth, limit) that ran out of memory is replayed under the other
 * TensorFlow set-ups: greedy (allow_growth=false, the whole limit as one region) and
 * limit (a logical device whose memory_limit is all a process can have). */
#ifndef GPUSIM_WHATIF_H
#define GPUSIM_WHATIF_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"

typedef struct whatif {
    bool present;       /* false: not asked (nothing to render) */
    char setting[1100]; /* e.g. "--alloc-conf=expandable_segments:True" */
    bool completed;
    uint64_t ooms;
    uint64_t peak_reserved_bytes;
    sim_oom_record first_oom;
} whatif;

/* Options whatif_expandable can take (cfg->n_opts, the alloc_conf included). */
#define WHATIF_MAX_OPTS 64u

/* True when the question applies to a finished run under cfg: the strategy is of
 * the torch family, an OOM happened, and cfg's alloc_conf does not already turn
 * expandable segments on. */
bool whatif_expandable_applies(const engine_config *cfg, const sim_run *run);

/* Replay srcs (fresh, from the start) under cfg with expandable_segments:True
 * appended to alloc_conf (or as the whole alloc_conf), without a timeline,
 * --paranoid or an observer, and fill *out. Errors: engine_run's, and SIM_EUSAGE
 * for more than WHATIF_MAX_OPTS - 1 options. */
sim_status whatif_expandable(const engine_config *cfg, const sim_event_source *srcs, uint32_t n, whatif *out,
                             sim_error *err);

/* The BFC questions: up to WHATIF_BFC_MAX of them apply to a finished run under cfg
 * that ran out of memory with a BFC strategy (each asks a strategy of its
 * whatif_strategies other than the run's, sim/strategy.h). Returns how many; 0 for
 * any other run. */
#define WHATIF_BFC_MAX 2u
uint32_t whatif_bfc_count(const engine_config *cfg, const sim_run *run);
/* Replay srcs (fresh) as question i (i < whatif_bfc_count) asks: the strategy
 * greedy, or limit with --limit = the device's capacity less one context, rounded
 * down to a MiB (with several processes, an even share: capacity less their
 * contexts, divided by their number); the options the new strategy takes carry over. setting names the
 * change ("--strategy=greedy", "--strategy=limit --limit=15360MiB"). Errors as
 * whatif_expandable's. */
sim_status whatif_bfc(const engine_config *cfg, const sim_run *run, uint32_t i, const sim_event_source *srcs,
                      uint32_t n, whatif *out, sim_error *err);

#endif
