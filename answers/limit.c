/* The effective limit of a replay and its source (limit.h). */
#include "limit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"

uint64_t limit_find(const sim_run *run, char *source, size_t n)
{
    char tmp[8];
    if (source == NULL) { /* the caller wants the bytes only */
        source = tmp;
        n = sizeof tmp;
    }
    device_info d = device_get_info(run->dev);
    if (run->n_procs > 0 && run->ops->limit != NULL)
        return run->ops->limit(run->procs[0].s, source, n);
    uint64_t ctx = d.context_bytes * (run->n_procs ? run->n_procs : 1);
    uint64_t room = d.capacity_bytes > ctx ? d.capacity_bytes - ctx : 0;
    char cap[32], cx[32];
    units_format_size(d.capacity_bytes, cap, sizeof cap);
    units_format_size(ctx, cx, sizeof cx);
    if (ctx == 0)
        snprintf(source, n, "capacity");
    else
        snprintf(source, n, "capacity - %s context", cx);
    /* PyTorch's set_per_process_memory_fraction caps reserved memory at
     * (uint64)(fraction · capacity) (the torch strategy's rule 9; async's pytorch
     * preset the same): the effective limit when it is below capacity − context */
    strategy_stat_value f;
    if (run->n_procs > 0 && strategy_option_find(run->ops, run->procs[0].s, "memory_fraction", &f) &&
        f.kind == STRATEGY_STAT_TEXT) {
        char *end = NULL;
        double fr = strtod(f.text, &end);
        if (end != f.text && fr >= 0.0 && fr <= 1.0) {
            uint64_t c = (uint64_t)(fr * (double)d.capacity_bytes);
            if (c < room) {
                /* PyTorch's per_process_memory_fraction conf key sets the same cap
                 * (torch.c: an explicit --memory-fraction wins over it) */
                strategy_stat_value conf;
                bool in_conf = strategy_option_find(run->ops, run->procs[0].s, "alloc_conf", &conf) &&
                               conf.kind == STRATEGY_STAT_TEXT && strstr(conf.text, "per_process_memory_fraction");
                room = c;
                snprintf(source, n, "%g x %s, %s", fr, cap,
                         in_conf ? "per_process_memory_fraction in --alloc-conf" : "--memory-fraction");
            }
        }
    }
    return room;
}
