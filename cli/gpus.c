/* gpusim gpus : the built-in GPU catalog. */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "commands.h"
#include "sim/buf.h"
#include "sim/gpu_context.h"
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
    /* the default --context under CUDA GPU_CONTEXT_CUDA_DEFAULT (none for a card without CUDA) */
    const gpu_context *c = g->cc_major ? gpu_context_find(g->cc_major, GPU_CONTEXT_CUDA_DEFAULT) : NULL;
    jsonw_key_u64(w, "context_bytes", c ? c->bytes : 0);
    if (c) {
        char why[256];
        jsonw_key_str(w, "context_source", gpu_context_describe(c, g->cc_major, why, sizeof why));
    } else {
        jsonw_key(w, "context_source");
        jsonw_null(w);
    }
    jsonw_end(w);
}

static void gpu_text(sim_buf *b, size_t i)
{
    const gpu_model *g = gpus_get(i);
    char sz[32];
    sim_buf_printf(b, "%-11s %16llu %11s  %u.%u  %s\n", g->name, (unsigned long long)g->capacity_bytes,
                   units_format_size(g->capacity_bytes, sz, sizeof sz), g->cc_major, g->cc_minor, g->source);
    const gpu_context *c = g->cc_major ? gpu_context_find(g->cc_major, GPU_CONTEXT_CUDA_DEFAULT) : NULL;
    char why[256];
    if (c)
        sim_buf_printf(b, "%-11s context %s per process: %s\n", "", units_format_size(c->bytes, sz, sizeof sz),
                       gpu_context_describe(c, g->cc_major, why, sizeof why));
    else
        sim_buf_printf(b, "%-11s context 0 B per process: no published figure for a card without CUDA\n", "");
}

/* The published context figures behind the default --context, one per CUDA major. */
static void contexts_text(sim_buf *b)
{
    char sz[32], sp[32];
    sim_buf_printf(b,
                   "\ncontext per process outside the allocator (default --context; --cuda=MAJOR picks the "
                   "row, default %u; the figures spread %s):\n",
                   GPU_CONTEXT_CUDA_DEFAULT, units_format_size(gpu_context_spread(), sp, sizeof sp));
    for (size_t i = 0; i < gpu_context_count(); i++) {
        const gpu_context *c = gpu_context_get(i);
        sim_buf_printf(b, "  CUDA %-2u %10s  %s; %s\n", c->cuda_major, units_format_size(c->bytes, sz, sizeof sz),
                       c->measured_on, c->source);
    }
}

/* The header is "%-11s %16s %11s  %-4s %s\n" of name, capacity_bytes, "", cc, source. */
static const cli_catalog GPUS_CATALOG = {
    &GPUS,
    gpus_count,
    gpu_json,
    gpu_text,
    "name          capacity_bytes              cc   source\n",
    "\ndefault device (no --gpu/--capacity and none in the trace): " GPUS_DEFAULT "\n",
    contexts_text,
};

int cmd_gpus(int argc, char **argv)
{
    return cli_catalog_run(&GPUS_CATALOG, argc, argv);
}
