/* The expandable-segments what-if (whatif.h). */
#include "whatif.h"

#include <stdio.h>
#include <string.h>

#define EXPANDABLE "expandable_segments:True"

bool whatif_expandable_applies(const engine_config *cfg, const sim_run *run)
{
    if (strcmp(cfg->ops->name, "torch") != 0 || run->total.ooms == 0)
        return false;
    for (uint32_t i = 0; i < cfg->n_opts; i++)
        if (strcmp(cfg->opts[i].key, "alloc_conf") == 0 && strstr(cfg->opts[i].value, EXPANDABLE) != NULL)
            return false;
    return true;
}

sim_status whatif_expandable(const engine_config *cfg, const sim_event_source *srcs, uint32_t n, whatif *out,
                             sim_error *err)
{
    memset(out, 0, sizeof *out);
    if (cfg->n_opts >= WHATIF_MAX_OPTS)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "what-if: more than %u strategy options",
                             WHATIF_MAX_OPTS - 1);
    sim_kv kv[WHATIF_MAX_OPTS];
    char conf[1024] = EXPANDABLE;
    uint32_t n_kv = 0;
    for (uint32_t i = 0; i < cfg->n_opts; i++) {
        const sim_kv *o = &cfg->opts[i];
        if (strcmp(o->key, "alloc_conf") == 0) {
            snprintf(conf, sizeof conf, "%s%s" EXPANDABLE, o->value, o->value[0] ? "," : "");
            continue;
        }
        kv[n_kv++] = *o;
    }
    kv[n_kv++] = (sim_kv){"alloc_conf", conf};
    engine_config c = *cfg;
    c.opts = kv;
    c.n_opts = n_kv;
    c.timeline_rows = 0;
    c.paranoid = false;
    c.observe = NULL;
    c.observe_ctx = NULL;
    sim_run *w = NULL;
    sim_status st = engine_run(&c, srcs, n, &w, err);
    if (st == SIM_OK) {
        out->present = true;
        snprintf(out->setting, sizeof out->setting, "--alloc-conf=%s", conf);
        out->completed = w->total.completed;
        out->ooms = w->total.ooms;
        out->peak_reserved_bytes = w->total.peak_reserved_bytes;
        out->first_oom = w->total.first_oom;
    }
    sim_run_free(w);
    return st;
}
