/* The what-if replays (whatif.h). */
#include "whatif.h"

#include <stdio.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/registry.h"

#define EXPANDABLE "expandable_segments:True"

/* Replay srcs under cfg with ops and its options kv, plainly (no timeline,
 * --paranoid or observer), into *out (whose setting the caller wrote). */
static sim_status whatif_replay(const engine_config *cfg, const strategy_ops *ops, const sim_kv *kv, uint32_t n_kv,
                                const sim_event_source *srcs, uint32_t n, whatif *out, sim_error *err)
{
    engine_config c = engine_config_plain(cfg);
    c.ops = ops;
    c.opts = kv;
    c.n_opts = n_kv;
    sim_run *w = NULL;
    sim_status st = engine_run(&c, srcs, n, &w, err);
    if (st == SIM_OK) {
        out->present = true;
        out->completed = w->total.completed;
        out->ooms = w->total.ooms;
        out->peak_reserved_bytes = w->total.peak_reserved_bytes;
        out->first_oom = w->total.first_oom;
    }
    sim_run_free(w);
    return st;
}

bool whatif_expandable_applies(const engine_config *cfg, const sim_run *run)
{
    if (cfg->ops->family != STRATEGY_FAMILY_TORCH || run->total.ooms == 0)
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
    snprintf(out->setting, sizeof out->setting, "--alloc-conf=%s", conf);
    return whatif_replay(cfg, cfg->ops, kv, n_kv, srcs, n, out, err);
}

/* ---------------------------------------------------------------- BFC */

static bool is_bfc(const strategy_ops *ops)
{
    return ops->family == STRATEGY_FAMILY_BFC && ops->whatif_strategies != NULL;
}

/* The questions in order (the strategy's whatif_strategies), less the run's own strategy. */
static const char *bfc_question(const engine_config *cfg, uint32_t i)
{
    const char *const *ask = cfg->ops->whatif_strategies;
    uint32_t k = 0;
    for (uint32_t j = 0; ask != NULL && ask[j] != NULL; j++) {
        if (strcmp(ask[j], cfg->ops->name) == 0)
            continue;
        if (k++ == i)
            return ask[j];
    }
    return NULL;
}

/* Whether ops cannot run without a limit (TF's logical device: memory_limit). */
static bool needs_limit(const strategy_ops *ops)
{
    const strategy_option *o = registry_option_of(ops, "limit");
    return o != NULL && o->required;
}

uint32_t whatif_bfc_count(const engine_config *cfg, const sim_run *run)
{
    if (!is_bfc(cfg->ops) || run->total.ooms == 0)
        return 0;
    uint32_t n = 0;
    while (bfc_question(cfg, n) != NULL)
        n++;
    return n;
}

sim_status whatif_bfc(const engine_config *cfg, const sim_run *run, uint32_t i, const sim_event_source *srcs,
                      uint32_t n, whatif *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    const char *name = bfc_question(cfg, i);
    const strategy_ops *ops = name ? registry_find(name) : NULL;
    if (ops == NULL || !is_bfc(cfg->ops))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "what-if: no BFC question %u for strategy %s", i,
                             cfg->ops->name);
    if (cfg->n_opts >= WHATIF_MAX_OPTS)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "what-if: more than %u strategy options",
                             WHATIF_MAX_OPTS - 1);
    sim_kv kv[WHATIF_MAX_OPTS];
    uint32_t n_kv = 0;
    for (uint32_t k = 0; k < cfg->n_opts; k++)
        if (strcmp(cfg->opts[k].key, "limit") != 0 && registry_option_of(ops, cfg->opts[k].key) != NULL)
            kv[n_kv++] = cfg->opts[k];
    char lim[32] = "";
    if (needs_limit(ops)) {
        /* TF's memory_limit is in MiB: all a process can have (with several processes,
         * an even share of the device), rounded down */
        device_info d = device_get_info(run->dev);
        uint64_t procs = run->n_procs ? run->n_procs : 1;
        uint64_t ctx = d.context_bytes * procs;
        uint64_t room = (d.capacity_bytes > ctx ? d.capacity_bytes - ctx : 0) / procs;
        snprintf(lim, sizeof lim, "%lluMiB", (unsigned long long)(room / MiB));
        kv[n_kv++] = (sim_kv){"limit", lim};
        snprintf(out->setting, sizeof out->setting, "--strategy=%s --limit=%s", name, lim);
    } else {
        snprintf(out->setting, sizeof out->setting, "--strategy=%s", name);
    }
    return whatif_replay(cfg, ops, kv, n_kv, srcs, n, out, err);
}
