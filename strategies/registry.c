#include "registry.h"

#include <string.h>

#include "bfc.h"
#include "ideal.h"
#include "planned.h"
#include "raw.h"
#include "torch.h"

typedef const strategy_ops *(*strategy_getter)(void);

static const strategy_ops *greedy_getter(void) { return bfc_strategy(BFC_GREEDY); }
static const strategy_ops *growth_getter(void) { return bfc_strategy(BFC_GROWTH); }
static const strategy_ops *limit_getter(void) { return bfc_strategy(BFC_LIMIT); }

static const strategy_getter GETTERS[] = {
    greedy_getter,
    growth_getter,
    limit_getter,
    ideal_strategy,
    planned_strategy,
    raw_strategy,
    torch_strategy,
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
