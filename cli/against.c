/* gpusim replay TRACE --against-recorded: predicted vs what the real allocator recorded. */
#include "against.h"

#include <stdio.h>
#include <string.h>

#include "answers/against.h"
#include "common.h"
#include "reports/against.h"
#include "sim/buf.h"
#include "strategies/registry.h"

int against_run(const cli_args *a)
{
    if (a->n_positional != 1)
        return cli_usage_error("replay", "--against-recorded compares one recording at a time");
    sim_error err;
    sim_error_clear(&err);
    input_options iopt;
    if (cli_input_options(a, &iopt, &err) != SIM_OK)
        return cli_usage_error("replay", "%s", err.msg);
    bool json = false;
    int frc = cli_format_json(a, &json);
    if (frc)
        return frc;
    bool skip_oom = false;
    int orc = cli_on_oom_skip(a, &skip_oom);
    if (orc)
        return orc;
    trace_input *in = NULL;
    if (input_open(a->positional[0], cli_get(a, "from"), &iopt, &in, &err) != SIM_OK)
        return err.status == SIM_EUSAGE ? cli_usage_error("replay", "%s", err.msg) : cli_fail(&err);
    int rc = 2;
    sim_buf out;
    sim_buf_init(&out);
    cli_input_warnings(in);
    if (!against_has_recorded(in)) {
        rc = cli_usage_error("replay", "--against-recorded: %s holds no numbers from the real allocator (it needs a "
                             "PyTorch snapshot with segments, a profiler trace with \"Total Allocated\", or a "
                             "TensorFlow memory profile)", a->positional[0]);
        goto done;
    }
    const char *sname = cli_get(a, "strategy");
    if (sname == NULL)
        sname = against_default_strategy(input_get_format(in));
    const strategy_ops *ops = sname ? registry_find(sname) : NULL;
    if (ops == NULL) {
        rc = cli_usage_error("replay",
                             "--against-recorded: this %s recording is replayed under the '%s' strategy, which this "
                             "build does not have; pick another with --strategy=NAME (gpusim strategies lists them; "
                             "'ideal' reproduces an allocated curve when every size is already rounded)",
                             input_format_name(input_get_format(in)), sname ? sname : "?");
        goto done;
    }
    const trace_header *h = input_header(in);
    cli_device dev;
    if (cli_resolve_device(a, h->device_name, h->device_capacity, &dev, &err) != SIM_OK) {
        rc = cli_usage_error("replay", "%s", err.msg);
        goto done;
    }
    sim_kv kv[CLI_MAX_KV + 1];
    uint32_t n_kv = cli_strategy_kv(a, kv, CLI_MAX_KV);
    const char *conf = input_alloc_conf(in);
    if (conf && !cli_has(a, "alloc-conf") && strcmp(ops->name, "torch") == 0)
        kv[n_kv++] = (sim_kv){"alloc_conf", conf};
    engine_config cfg = {
        .device = dev.info,
        .ops = ops,
        .opts = kv,
        .n_opts = n_kv,
        .on_oom_skip = skip_oom,
        .paranoid = cli_has(a, "paranoid"),
    };
    against_result r;
    sim_status st = against_compare(in, &cfg, &r, &err);
    if (st != SIM_OK) {
        rc = st == SIM_EUSAGE ? cli_usage_error("replay", "%s", err.msg) : cli_fail(&err);
        goto done;
    }
    if (json)
        report_against_json(&r, a->positional[0], &out);
    else
        report_against_text(&r, a->positional[0], dev.name, &out);
    const char *outpath = cli_get(a, "output");
    if (sim_buf_write_file(&out, outpath ? outpath : "-", &err) != SIM_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    rc = (cli_has(a, "fail-on-oom") && r.predicted_ooms > 0) ? 1 : 0;
done:
    sim_buf_release(&out);
    input_close(in);
    return rc;
}
