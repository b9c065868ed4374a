#include "strategy.h"

#include <stdio.h>
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

sim_status strategy_option_error(sim_error *err, const char *flag, const char *value, const char *expected,
                                 const sim_error *inner)
{
    return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s=%s: expected %s%s%s", flag, value ? value : "", expected,
                         inner ? " (" : "", inner ? inner->msg : "");
}

const char *sim_oom_cause_name(sim_oom_cause c)
{
    switch (c) {
    case SIM_OOM_FRAGMENTATION:
        return "fragmentation";
    case SIM_OOM_OTHER_PROCESSES:
        return "other_processes";
    case SIM_OOM_CAPACITY:
        break;
    }
    return "capacity";
}

typedef struct stat_finder {
    const char *key;
    strategy_stat_value *value;
    bool found;
} stat_finder;

/* The value to fill when key is the one sought (cleared, its kind set), else NULL. */
static strategy_stat_value *finder_take(void *ctx, const char *key, strategy_stat_kind kind)
{
    stat_finder *f = ctx;
    if (strcmp(key, f->key) != 0)
        return NULL;
    memset(f->value, 0, sizeof *f->value);
    f->value->kind = kind;
    f->found = true;
    return f->value;
}

static void find_u64(void *ctx, const char *key, uint64_t v)
{
    strategy_stat_value *out = finder_take(ctx, key, STRATEGY_STAT_U64);
    if (out)
        out->u64 = v;
}

static void find_real(void *ctx, const char *key, double v)
{
    strategy_stat_value *out = finder_take(ctx, key, STRATEGY_STAT_REAL);
    if (out)
        out->real = v;
}

static void find_text(void *ctx, const char *key, const char *v)
{
    strategy_stat_value *out = finder_take(ctx, key, STRATEGY_STAT_TEXT);
    if (out)
        snprintf(out->text, sizeof out->text, "%s", v);
}

static bool find_in(void (*emit)(const strategy *, const strategy_stat_sink *), const strategy *s, const char *key,
                    strategy_stat_value *value)
{
    memset(value, 0, sizeof *value);
    stat_finder f = {key, value, false};
    /* all three callbacks: the finder must see every kind */
    strategy_stat_sink sink = {find_u64, find_real, find_text, &f};
    emit(s, &sink);
    return f.found;
}

bool strategy_stat_find(const strategy_ops *ops, const strategy *s, const char *key, strategy_stat_value *value)
{
    return find_in(ops->stats, s, key, value);
}

bool strategy_option_find(const strategy_ops *ops, const strategy *s, const char *key, strategy_stat_value *value)
{
    return find_in(ops->options, s, key, value);
}
