/* gpusim strategies : the allocator models this build knows. */
#include "cli.h"
#include "strategies/registry.h"

static const cli_opt STRATEGIES_OPTS[] = {
    {NULL, false, NULL},
};

int cmd_strategies(int argc, char **argv)
{
    cli_args a;
    bool help;
    if (cli_parse("strategies", STRATEGIES_OPTS, argc, argv, &a, &help) != SIM_OK)
        return 2;
    if (help) {
        printf("usage: gpusim strategies\n\nLists the allocator models --strategy accepts.\n");
        return 0;
    }
    if (a.n_positional)
        return cli_usage_error("strategies", "unexpected argument '%s'", a.positional[0]);
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = registry_get(i);
        printf("%-8s %s\n", ops->name, ops->summary);
    }
    return 0;
}
