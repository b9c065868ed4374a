/* replay_cuda — replays a v1 trace on a real GPU and writes what it measured
 * (validate/README.md). Modes: cuda-raw (cudaMalloc/cudaFree per allocation),
 * cuda-async (cudaMallocAsync on the default pool, release threshold UINT64_MAX),
 * mirror (one of gpusim's own models, its regions/segments backed by real
 * cudaMalloc); --probe measures the driver's granularity instead of a trace.
 * --backend=mock runs everything on a host-memory stand-in (dry runs, tests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buf.h"
#include "cli/cli.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "validate/vgpu.h"
#include "validate/vrun.h"

static const cli_opt OPTS[] = {
    CLI_OPT("mode", "raw|async|mirror: the allocator to measure (default raw)"),
    CLI_OPT("strategy",
            "S: the gpusim model that mirror mode backs with real memory (greedy, growth, limit, torch...)"),
    CLI_STRATEGY_OPTS,
    CLI_OPT("every", "N: one curve row every N events (peaks stay exact; default 1)"),
    CLI_FLAG("no-curve", "write no per-event curve"),
    CLI_OPT("device", "N: the CUDA device (default 0)"),
    CLI_OPT("backend", "cuda|mock: the real GPU (default) or a host-memory stand-in (no GPU; dry runs)"),
    CLI_OPT("mock-capacity", "SIZE: the mock's total memory (default 16GiB)"),
    CLI_OPT("mock-context", "SIZE: the mock's context (default 300MiB)"),
    CLI_FLAG("probe", "measure the driver (granularity, packing, addresses, pool growth); no trace"),
    CLI_OPT("output", "FILE: where the measured JSON goes (default stdout)"),
    {NULL, false, NULL},
};

static void help(void)
{
    printf("usage: replay_cuda TRACE [--mode=raw|async|mirror] [--strategy=S] [options] [--output=FILE]\n"
           "       replay_cuda --probe [--output=FILE]\n\n"
           "Replays a gpusim v1 trace on a real GPU and writes a measured JSON for\n"
           "'gpusim validate-report'. An out-of-memory is recorded as data.\n\n");
    cli_print_options(stdout, OPTS);
    printf("\nexit status: 0 measured, 1 a CUDA error stopped the measurement (the JSON says which),\n"
           "2 usage, I/O or device error, 3 invalid trace\n");
}

static int open_backend(const cli_args *a, vgpu *g)
{
    char err[512] = "";
    const char *backend = cli_get(a, "backend");
    if (backend == NULL || strcmp(backend, "cuda") == 0) {
        uint64_t dev = 0;
        sim_error e;
        const char *d = cli_get(a, "device");
        if (d && (units_parse_u64(d, &dev, &e) != SIM_OK || dev > 64))
            return cli_usage_error("replay_cuda", "--device: expected a device number, not '%s'", d);
#ifdef GPUSIM_HAVE_CUDA
        if (vgpu_cuda_open((int)dev, g, err, sizeof err) != VGPU_OK) {
            fprintf(stderr, "replay_cuda: %s\n", err);
            return 2;
        }
        return 0;
#else
        fprintf(stderr, "replay_cuda: built without CUDA; use --backend=mock\n");
        return 2;
#endif
    }
    if (strcmp(backend, "mock") != 0)
        return cli_usage_error("replay_cuda", "--backend: expected cuda or mock, not '%s'", backend);
    vgpu_mock_config mc = {.capacity_bytes = 16 * GiB, .context_bytes = 300 * MiB};
    sim_error e;
    const char *v = cli_get(a, "mock-capacity");
    if (v && units_parse_size(v, &mc.capacity_bytes, &e) != SIM_OK)
        return cli_usage_error("replay_cuda", "--mock-capacity: %s", e.msg);
    v = cli_get(a, "mock-context");
    if (v && units_parse_size(v, &mc.context_bytes, &e) != SIM_OK)
        return cli_usage_error("replay_cuda", "--mock-context: %s", e.msg);
    if (vgpu_mock_open(&mc, g, err, sizeof err) != VGPU_OK) {
        fprintf(stderr, "replay_cuda: %s\n", err);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    cli_args a;
    bool want_help;
    if (cli_parse("replay_cuda", OPTS, argc - 1, argv + 1, &a, &want_help) != SIM_OK)
        return 2;
    if (want_help) {
        help();
        return 0;
    }
    const char *out_path = cli_get(&a, "output");
    if (out_path == NULL)
        out_path = "-";
    sim_error err;
    sim_error_clear(&err);
    bool probe = cli_has(&a, "probe");
    if (probe && a.n_positional != 0)
        return cli_usage_error("replay_cuda", "--probe takes no trace");
    if (!probe && a.n_positional != 1)
        return cli_usage_error("replay_cuda", "expected one trace (usage: replay_cuda TRACE [options])");

    const char *mode_s = cli_get(&a, "mode");
    vrun_mode mode = VRUN_RAW;
    if (mode_s == NULL || strcmp(mode_s, "raw") == 0)
        mode = VRUN_RAW;
    else if (strcmp(mode_s, "async") == 0)
        mode = VRUN_ASYNC;
    else if (strcmp(mode_s, "mirror") == 0)
        mode = VRUN_MIRROR;
    else
        return cli_usage_error("replay_cuda", "--mode: expected raw, async or mirror, not '%s'", mode_s);
    const strategy_ops *inner = NULL;
    const char *sname = cli_get(&a, "strategy");
    if (mode == VRUN_MIRROR) {
        if (sname == NULL)
            return cli_usage_error("replay_cuda", "--mode=mirror needs --strategy=S");
        inner = registry_find(sname);
        if (inner == NULL)
            return cli_usage_error("replay_cuda", "--strategy: gpusim has no model '%s'", sname);
        if (cli_strategy_opts_apply(&a, &inner, 1, &err) != SIM_OK)
            return cli_usage_error("replay_cuda", "%s", err.msg);
    } else if (sname != NULL) {
        return cli_usage_error("replay_cuda", "--strategy is for --mode=mirror");
    }
    uint64_t every = 1;
    const char *ev = cli_get(&a, "every");
    if (ev && (units_parse_u64(ev, &every, &err) != SIM_OK || every == 0))
        return cli_usage_error("replay_cuda", "--every: expected a positive integer, not '%s'", ev);

    vgpu g;
    int rc = open_backend(&a, &g);
    if (rc != 0)
        return rc;
    const char *backend = g.ops->name;
    sim_buf out;
    sim_buf_init(&out);
    if (probe) {
        vrun_probes(g, &out);
        rc = sim_buf_write_file(&out, out_path, &err) == SIM_OK ? 0 : cli_fail(&err);
        sim_buf_release(&out);
        g.ops->close(g.ctx);
        return rc;
    }

    sim_kv kv[CLI_MAX_KV];
    uint32_t n_kv = cli_strategy_kv(&a, kv, CLI_MAX_KV);
    if (mode != VRUN_MIRROR && n_kv > 0) {
        g.ops->close(g.ctx);
        return cli_usage_error("replay_cuda", "model options (--%s...) are for --mode=mirror",
                               registry_option_by_key(kv[0].key)->cli);
    }
    vrun *v = calloc(1, sizeof *v);
    char msg[512];
    if (v == NULL || !vrun_init(v, g, mode, inner, every, !cli_has(&a, "no-curve"), msg, sizeof msg)) {
        fprintf(stderr, "replay_cuda: %s\n", v ? msg : "out of memory");
        free(v);
        g.ops->close(g.ctx);
        return 2;
    }
    sim_run *run = NULL;
    sim_status st = vrun_replay(v, a.positional[0], kv, n_kv, &run, &err);
    if (st != SIM_OK) {
        rc = st == SIM_EUSAGE ? cli_usage_error("replay_cuda", "%s", err.msg) : cli_fail(&err);
    } else {
        vrun_finish(v);
        char allocator[96];
        snprintf(allocator, sizeof allocator, "%s%s%s", mode == VRUN_MIRROR ? "mirror-" : vrun_mode_name(mode),
                 mode == VRUN_MIRROR ? sname : "", "");
        /* the async run's wiring is PyTorch's (threshold UINT64_MAX, empty_cache = trim
         * to 0): the async model predicts it under that preset */
        static const sim_kv ASYNC_PREDICT[] = {{"async_preset", "pytorch"}};
        bool async_mode = mode == VRUN_ASYNC;
        vrun_meta meta = {
            .trace_path = a.positional[0],
            .allocator = allocator,
            .predict_strategy = mode == VRUN_RAW ? "raw" : async_mode ? "async" : sname,
            .predict_opts = async_mode ? ASYNC_PREDICT : kv,
            .n_predict_opts = async_mode ? 1 : n_kv,
            .backend = backend,
        };
        vrun_json(v, run, &meta, &out);
        rc = v->fatal ? 1 : 0;
        if (v->fatal)
            fprintf(stderr, "replay_cuda: %s: stopped by a CUDA error: %s\n", a.positional[0], v->fatal_msg);
        if (sim_buf_write_file(&out, out_path, &err) != SIM_OK)
            rc = cli_fail(&err);
    }
    sim_run_free(run);
    vrun_release(v);
    free(v);
    sim_buf_release(&out);
    g.ops->close(g.ctx);
    return rc;
}
