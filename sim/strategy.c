#include "strategy.h"

#include <string.h>

const char *strategy_config_get(const strategy_config *cfg, const char *key)
{
    /* the last occurrence wins, as on a command line */
    const char *v = NULL;
    for (uint32_t i = 0; i < cfg->n_opts; i++)
        if (strcmp(cfg->opts[i].key, key) == 0)
            v = cfg->opts[i].value;
    return v && v[0] ? v : NULL;
}

const char *strategy_option_kind_name(strategy_option_kind k)
{
    switch (k) {
    case STRATEGY_OPTION_SIZE:
        return "size";
    case STRATEGY_OPTION_REAL:
        return "real";
    case STRATEGY_OPTION_ENUM:
        return "enum";
    case STRATEGY_OPTION_TEXT:
        return "text";
    }
    return "text";
}

const char *sim_oom_cause_name(sim_oom_cause c)
{
    return c == SIM_OOM_FRAGMENTATION ? "fragmentation" : "capacity";
}
