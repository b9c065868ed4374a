#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "async.h"
#include "bfc.h"
#include "ideal.h"
#include "planned.h"
#include "raw.h"
#include "torch.h"

typedef const strategy_ops *(*strategy_getter)(void);

static const strategy_ops *greedy_getter(void) { return bfc_strategy(BFC_GREEDY); }
static const strategy_ops *growth_getter(void) { return bfc_strategy(BFC_GROWTH); }
static const strategy_ops *limit_getter(void) { return bfc_strategy(BFC_LIMIT); }

/* The usual order: the BFC family, then torch, then the two bounds, then CUDA's pool,
 * then the offline planner. */
static const strategy_getter GETTERS[] = {
    greedy_getter,
    growth_getter,
    limit_getter,
    torch_strategy,
    raw_strategy,
    ideal_strategy,
    async_strategy,
    planned_strategy,
};

size_t registry_count(void)
{
    return sizeof GETTERS / sizeof GETTERS[0];
}

const strategy_ops *registry_get(size_t i)
{
    return GETTERS[i]();
}

const strategy_ops *registry_find(const char *name)
{
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = GETTERS[i]();
        if (strcmp(ops->name, name) == 0)
            return ops;
    }
    return NULL;
}

/* ops's entry whose cli spelling (by_cli) or key is name, or NULL. */
static const strategy_option *entry_named(const strategy_ops *ops, const char *name, bool by_cli)
{
    for (uint32_t k = 0; k < ops->n_opts; k++)
        if (strcmp(by_cli ? ops->opts[k].cli : ops->opts[k].key, name) == 0)
            return &ops->opts[k];
    return NULL;
}

/* The first entry so named in the registry's order, or NULL. */
static const strategy_option *any_entry_named(const char *name, bool by_cli)
{
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_option *o = entry_named(GETTERS[i](), name, by_cli);
        if (o)
            return o;
    }
    return NULL;
}

const strategy_option *registry_option_of(const strategy_ops *ops, const char *key)
{
    return entry_named(ops, key, false);
}

const strategy_option *registry_recorded_conf(const strategy_ops *ops)
{
    return ops->recorded_conf_key != NULL ? registry_option_of(ops, ops->recorded_conf_key) : NULL;
}

const strategy_ops *registry_find_framework(const char *framework)
{
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = GETTERS[i]();
        if (ops->framework != NULL && strcmp(ops->framework, framework) == 0)
            return ops;
    }
    return NULL;
}

const strategy_option *registry_option_by_cli(const char *cli)
{
    return any_entry_named(cli, true);
}

const strategy_option *registry_option_by_key(const char *key)
{
    return any_entry_named(key, false);
}

/* Whether key is in the tables of the strategies before the s-th, or before entry k
 * of the s-th's own. */
static bool seen_before(size_t s, uint32_t k)
{
    const strategy_ops *ops = GETTERS[s]();
    for (size_t t = 0; t < s; t++)
        if (registry_option_of(GETTERS[t](), ops->opts[k].key))
            return true;
    for (uint32_t j = 0; j < k; j++)
        if (strcmp(ops->opts[j].key, ops->opts[k].key) == 0)
            return true;
    return false;
}

const strategy_option *registry_option_get(size_t i)
{
    size_t seen = 0;
    for (size_t s = 0; s < registry_count(); s++) {
        const strategy_ops *ops = GETTERS[s]();
        for (uint32_t k = 0; k < ops->n_opts; k++)
            if (!seen_before(s, k) && seen++ == i)
                return &ops->opts[k];
    }
    return NULL;
}

char *registry_option_owners(const char *key, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < registry_count() && cap; i++) {
        const strategy_ops *ops = GETTERS[i]();
        if (registry_option_of(ops, key) == NULL)
            continue;
        int n = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", ops->name);
        if (n < 0 || (size_t)n >= cap - len) {
            buf[len] = '\0'; /* whole names only */
            break;
        }
        len += (size_t)n;
    }
    return buf;
}

bool registry_option_applies(const char *key, const strategy_ops *const *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (registry_option_of(ops[i], key))
            return true;
    return false;
}
