#include "registry.h"

#include <string.h>

#include "ideal.h"
#include "raw.h"
#include "torch.h"

typedef const strategy_ops *(*strategy_getter)(void);

static const strategy_getter GETTERS[] = {
    ideal_strategy,
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
