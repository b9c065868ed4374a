/* gpusim replay TRACE --against-recorded: predicted vs what the real allocator recorded. */
#include "against.h"

#include <stdio.h>
#include <string.h>

#include "answers/against.h"
#include "reports/against.h"
#include "sim/buf.h"
#include "strategies/registry.h"

static sim_status against(cli_session *s, int *verdict)
{
    const cli_args *a = &s->a;
    sim_error *err = &s->err;
    if (a->n_positional != 1)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--against-recorded compares one recording at a time");
    /* --device is judged before --format and --on-oom here, as this command always did */
    sim_status st = cli_input_options(a, &s->iopt, err);
    if (st == SIM_OK)
        st = cli_session_prepare(s, CLI_USES_FORMAT | CLI_USES_ON_OOM | CLI_USES_INPUTS);
    if (st != SIM_OK)
        return st;
    trace_input *in = s->in[0];
    char recorded[512];
    /* the command line is right, the file lacks what it asks for: a trace error (3), not usage (2) */
    if (!against_has_recorded(in))
        return sim_error_set(err, SIM_ETRACE, a->positional[0], 0, 0,
                             "--against-recorded: this %s file holds no numbers from the real allocator to compare "
                             "with (that needs %s); replay it without --against-recorded for the prediction alone",
                             input_format_name(input_get_format(in)),
                             input_format_join(INPUT_FORMAT_RECORDED, ", ", ", or ", recorded, sizeof recorded));
    const char *sname = cli_get(a, "strategy");
    if (sname == NULL)
        sname = against_default_strategy(input_get_format(in));
    const strategy_ops *ops = sname ? registry_find(sname) : NULL;
    if (ops == NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--against-recorded: this %s recording is replayed under the '%s' strategy, which this "
                             "build does not have; pick another with --strategy=NAME (gpusim strategies lists them; "
                             "'ideal' reproduces an allocated curve when every size is already rounded)",
                             input_format_name(input_get_format(in)), sname ? sname : "?");
    s->ops[0] = ops;
    s->n_ops = 1;
    if ((st = cli_session_prepare(s, CLI_USES_DEVICE | CLI_USES_KV)) != SIM_OK)
        return st;
    engine_config cfg = {
        .device = s->dev.info,
        .ops = ops,
        .opts = s->kv,
        .n_opts = s->n_kv,
        .on_oom_skip = s->skip_oom,
        .paranoid = cli_has(a, "paranoid"),
    };
    against_result r;
    against_options o = {.from_empty = cli_has(a, "from-empty"), .alloc_conf_option = cli_has(a, "alloc-conf")};
    if ((st = against_compare(in, &cfg, &o, &r, err)) != SIM_OK)
        return st;
    sim_buf out;
    sim_buf_init(&out);
    if (s->json)
        report_against_json(&r, a->positional[0], &out);
    else
        report_against_text(&r, a->positional[0], s->dev.name, &out);
    st = cli_session_write(s, &out);
    sim_buf_release(&out);
    *verdict = (cli_has(a, "fail-on-oom") && r.predicted_ooms > 0) ? 1 : 0;
    return st;
}

int against_run(cli_session *s)
{
    int verdict = 0;
    sim_status st = against(s, &verdict);
    if (st != SIM_OK)
        return cli_session_end(s, st);
    cli_session_close(s);
    return verdict;
}
