/* gpusim strategies : the allocator models this build knows and the options each
 * takes, printed from the strategies' own option tables (strategies/registry.h). */
#include <string.h>

#include "catalog.h"
#include "commands.h"
#include "sim/buf.h"
#include "strategies/registry.h"

static void key_str_or_null(jsonw *w, const char *key, const char *s)
{
    jsonw_key(w, key);
    if (s)
        jsonw_str(w, s);
    else
        jsonw_null(w);
}

static void option_json(jsonw *w, const strategy_option *o)
{
    jsonw_object_inline(w);
    jsonw_key_str(w, "key", o->key);
    jsonw_key_str(w, "cli", o->cli);
    jsonw_key_str(w, "kind", strategy_option_kind_name(o->kind));
    key_str_or_null(w, "choices", o->choices);
    key_str_or_null(w, "default", o->default_text);
    key_str_or_null(w, "example", o->example);
    jsonw_key_bool(w, "required", o->required);
    key_str_or_null(w, "help", o->help);
    jsonw_end(w);
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

static void strategy_json(jsonw *w, size_t i)
{
    const strategy_ops *ops = registry_get(i);
    jsonw_object_inline(w);
    jsonw_key_str(w, "name", ops->name);
    jsonw_key_str(w, "summary", ops->summary);
    jsonw_key(w, "options");
    jsonw_array(w);
    for (uint32_t k = 0; k < ops->n_opts; k++)
        option_json(w, &ops->opts[k]);
    jsonw_end(w);
    jsonw_end(w);
}

static void strategy_text(sim_buf *b, size_t i)
{
    const strategy_ops *ops = registry_get(i);
    sim_buf_printf(b, "%-8s %s\n", ops->name, ops->summary);
    for (uint32_t k = 0; k < ops->n_opts; k++)
        option_text(b, &ops->opts[k]);
}

static const cli_catalog STRATEGIES_CATALOG = {&STRATEGIES, registry_count, strategy_json, strategy_text,
                                               NULL,        NULL,           NULL};

int cmd_strategies(int argc, char **argv)
{
    return cli_catalog_run(&STRATEGIES_CATALOG, argc, argv);
}
