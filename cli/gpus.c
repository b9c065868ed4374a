/* gpusim gpus : the built-in GPU catalog. */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "commands.h"
#include "sim/buf.h"
#include "sim/gpus.h"
#include "sim/units.h"

static void gpus_help(void)
{
    cli_catalog_help("gpus", "The GPUs --gpu accepts, with the memory the allocators see and where each figure "
                             "comes from.");
}

static const cli_command GPUS = {"gpus", CLI_CATALOG_OPTS, gpus_help, CLI_USES_FORMAT, NULL};

static void gpu_json(jsonw *w, size_t i)
{
    const gpu_model *g = gpus_get(i);
    char cc[24];
    snprintf(cc, sizeof cc, "%u.%u", g->cc_major, g->cc_minor);
    jsonw_object_inline(w);
    jsonw_key_str(w, "name", g->name);
    jsonw_key_str(w, "aliases", g->aliases);
    jsonw_key_u64(w, "capacity_bytes", g->capacity_bytes);
    jsonw_key_str(w, "compute_capability", cc);
    jsonw_key_str(w, "source", g->source);
    jsonw_end(w);
}

static void gpu_text(sim_buf *b, size_t i)
{
    const gpu_model *g = gpus_get(i);
    char sz[32];
    sim_buf_printf(b, "%-11s %16llu %11s  %u.%u  %s\n", g->name, (unsigned long long)g->capacity_bytes,
                   units_format_size(g->capacity_bytes, sz, sizeof sz), g->cc_major, g->cc_minor, g->source);
}

/* The header is "%-11s %16s %11s  %-4s %s\n" of name, capacity_bytes, "", cc, source. */
static const cli_catalog GPUS_CATALOG = {
    &GPUS, gpus_count, gpu_json, gpu_text,
    "name          capacity_bytes              cc   source\n",
    "\ndefault device (no --gpu/--capacity and none in the trace): " GPUS_DEFAULT "\n",
};

int cmd_gpus(int argc, char **argv)
{
    return cli_catalog_run(&GPUS_CATALOG, argc, argv);
}
