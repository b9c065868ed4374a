/* gpusim strategies : the allocator models this build knows and the options each
 * takes, printed from the strategies' own option tables (strategies/registry.h). */
#include <string.h>

#include "catalog.h"
#include "commands.h"
#include "sim/buf.h"
#include "strategies/registry.h"

static void json_str_or_null(sim_buf *b, const char *s)
{
    if (s)
        sim_buf_json_str(b, s);
    else
        sim_buf_puts(b, "null");
}

static void option_json(sim_buf *b, const strategy_option *o)
{
    sim_buf_puts(b, "{\"key\": ");
    sim_buf_json_str(b, o->key);
    sim_buf_puts(b, ", \"cli\": ");
    sim_buf_json_str(b, o->cli);
    sim_buf_printf(b, ", \"kind\": \"%s\", \"choices\": ", strategy_option_kind_name(o->kind));
    json_str_or_null(b, o->choices);
    sim_buf_puts(b, ", \"default\": ");
    json_str_or_null(b, o->default_text);
    sim_buf_puts(b, ", \"example\": ");
    json_str_or_null(b, o->example);
    sim_buf_printf(b, ", \"required\": %s, \"help\": ", o->required ? "true" : "false");
    json_str_or_null(b, o->help);
    sim_buf_puts(b, "}");
}

/* "  --bfc-gc=on|off  help (default: ...)" */
static void option_text(sim_buf *b, const strategy_option *o)
{
    char head[96];
    snprintf(head, sizeof head, "--%s=%s", o->cli, cli_option_metavar(o));
    if (o->required)
        sim_buf_printf(b, "           %-32s %s (required, e.g. %s)\n", head, o->help, o->example);
    else
        sim_buf_printf(b, "           %-32s %s (default: %s)\n", head, o->help, o->default_text);
}

static void strategies_help(void)
{
    cli_catalog_help("strategies", "Lists the allocator models --strategy accepts, each with the options it takes\n"
                                   "(text: one line per model, its options indented below it).");
}

static const cli_command STRATEGIES = {"strategies", CLI_CATALOG_OPTS, strategies_help, CLI_USES_FORMAT, NULL};

static void strategy_json(sim_buf *b, size_t i)
{
    const strategy_ops *ops = registry_get(i);
    sim_buf_json_str(b, ops->name);
    sim_buf_puts(b, ", \"summary\": ");
    sim_buf_json_str(b, ops->summary);
    sim_buf_puts(b, ", \"options\": [");
    for (uint32_t k = 0; k < ops->n_opts; k++) {
        sim_buf_puts(b, k ? ",\n    " : "\n    ");
        option_json(b, &ops->opts[k]);
    }
    sim_buf_puts(b, ops->n_opts ? "\n  ]}" : "]}");
}

static void strategy_text(sim_buf *b, size_t i)
{
    const strategy_ops *ops = registry_get(i);
    sim_buf_printf(b, "%-8s %s\n", ops->name, ops->summary);
    for (uint32_t k = 0; k < ops->n_opts; k++)
        option_text(b, &ops->opts[k]);
}

static const cli_catalog STRATEGIES_CATALOG = {&STRATEGIES, registry_count, strategy_json, strategy_text, NULL, NULL};

int cmd_strategies(int argc, char **argv)
{
    return cli_catalog_run(&STRATEGIES_CATALOG, argc, argv);
}
