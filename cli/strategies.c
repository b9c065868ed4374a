/* gpusim strategies : the allocator models this build knows. */
#include "common.h"
#include "strategies/registry.h"

static const cli_opt STRATEGIES_OPTS[] = {
    {NULL, false, NULL},
};

static void strategies_help(void)
{
    printf("usage: gpusim strategies\n\nLists the allocator models --strategy accepts.\n");
}

static const cli_command STRATEGIES = {"strategies", STRATEGIES_OPTS, strategies_help, 0, NULL};

int cmd_strategies(int argc, char **argv)
{
    cli_session s;
    sim_status st = cli_session_parse(&s, &STRATEGIES, argc, argv);
    if (st == SIM_OK)
        st = cli_session_no_arguments(&s);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = registry_get(i);
        printf("%-8s %s\n", ops->name, ops->summary);
    }
    return 0;
}
