/* gpusim gpus : the built-in GPU catalog. */
#include <string.h>

#include "common.h"
#include "sim/buf.h"
#include "sim/gpus.h"
#include "sim/units.h"

static const cli_opt GPUS_OPTS[] = {
    {"format", true, "text|json (default text)"},
    {NULL, false, NULL},
};

static void gpus_help(void)
{
    printf("usage: gpusim gpus [--format=text|json]\n\nThe GPUs --gpu accepts, with the memory the "
           "allocators see and where each figure comes from.\n\n");
    cli_print_options(stdout, GPUS_OPTS);
}

static const cli_command GPUS = {"gpus", GPUS_OPTS, gpus_help, CLI_USES_FORMAT, NULL};

int cmd_gpus(int argc, char **argv)
{
    cli_session s;
    sim_status st = cli_session_parse(&s, &GPUS, argc, argv);
    if (st == SIM_OK)
        st = cli_session_no_arguments(&s);
    if (st == SIM_OK)
        st = cli_session_prepare(&s, GPUS.uses);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    const bool json = s.json;
    sim_buf b;
    sim_buf_init(&b);
    if (json)
        sim_buf_puts(&b, "[");
    else
        sim_buf_printf(&b, "%-11s %16s %11s  %-4s %s\n", "name", "capacity_bytes", "", "cc", "source");
    for (size_t i = 0; i < gpus_count(); i++) {
        const gpu_model *g = gpus_get(i);
        if (json) {
            sim_buf_puts(&b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
            sim_buf_json_str(&b, g->name);
            sim_buf_puts(&b, ", \"aliases\": ");
            sim_buf_json_str(&b, g->aliases);
            sim_buf_printf(&b, ", \"capacity_bytes\": %llu, \"compute_capability\": \"%u.%u\", \"source\": ",
                           (unsigned long long)g->capacity_bytes, g->cc_major, g->cc_minor);
            sim_buf_json_str(&b, g->source);
            sim_buf_puts(&b, "}");
        } else {
            char sz[32];
            sim_buf_printf(&b, "%-11s %16llu %11s  %u.%u  %s\n", g->name, (unsigned long long)g->capacity_bytes,
                           units_format_size(g->capacity_bytes, sz, sizeof sz), g->cc_major, g->cc_minor,
                           g->source);
        }
    }
    if (json)
        sim_buf_puts(&b, "\n]\n");
    else
        sim_buf_printf(&b, "\ndefault device (no --gpu/--capacity and none in the trace): %s\n", GPUS_DEFAULT);
    st = sim_buf_write_file(&b, "-", &s.err);
    sim_buf_release(&b);
    return cli_session_end(&s, st);
}
