/* gpusim convert IN -o OUT : rewrite a trace in the native format (JSON, JSONL or
 * the binary gtrace container, chosen by OUT's extension or --to). IN is any
 * format traces/input.h reads. */
#include <string.h>

#include "against.h"
#include "cli.h"
#include "traces/input.h"
#include "traces/trace.h"

static const cli_opt CONVERT_OPTS[] = {
    {"output", true, "FILE: where to write (.jsonl = JSON Lines, .gtrace = binary, else a JSON document)"},
    {"o", true, ""},
    {"to", true, "json|jsonl|gtrace: the container, overriding the file name"},
    CLI_INPUT_OPTS,
    {NULL, false, NULL},
};

int cmd_convert(int argc, char **argv)
{
    /* accept the conventional "-o FILE" */
    char *args[CLI_MAX_ARGS];
    int n = 0;
    for (int i = 0; i < argc && n < CLI_MAX_ARGS; i++)
        args[n++] = strcmp(argv[i], "-o") == 0 ? "--output" : argv[i];
    cli_args a;
    bool help;
    if (cli_parse("convert", CONVERT_OPTS, n, args, &a, &help) != SIM_OK)
        return 2;
    if (help) {
        printf("usage: gpusim convert IN -o OUT [--to=json|jsonl|gtrace] [--from=FORMAT] [--device=N]\n\n");
        cli_print_options(stdout, CONVERT_OPTS);
        return 0;
    }
    if (a.n_positional != 1)
        return cli_usage_error("convert", "expected exactly one input trace");
    const char *out = cli_get(&a, "output");
    if (out == NULL)
        return cli_usage_error("convert", "no output file (-o OUT)");
    trace_container c = trace_container_for_path(out);
    const char *to = cli_get(&a, "to");
    if (to) {
        if (strcmp(to, "json") == 0)
            c = TRACE_JSON;
        else if (strcmp(to, "jsonl") == 0)
            c = TRACE_JSONL;
        else if (strcmp(to, "gtrace") == 0)
            c = TRACE_GTRACE;
        else
            return cli_usage_error("convert", "--to: expected json, jsonl or gtrace, not '%s'", to);
    }
    sim_error err;
    sim_error_clear(&err);
    input_options iopt;
    if (cli_input_options(&a, &iopt, &err) != SIM_OK)
        return cli_usage_error("convert", "%s", err.msg);
    trace_input *r = NULL;
    if (input_open(a.positional[0], cli_get(&a, "from"), &iopt, &r, &err) != SIM_OK)
        return err.status == SIM_EUSAGE ? cli_usage_error("convert", "%s", err.msg) : cli_fail(&err);
    cli_input_warnings(r);
    trace_writer *w = NULL;
    if (trace_writer_open(out, c, input_header(r), &w, &err) != SIM_OK) {
        input_close(r);
        return cli_fail(&err);
    }
    sim_event_source src = input_source(r);
    sim_event ev;
    sim_status st;
    while ((st = src.next(src.ctx, &ev, &err)) == SIM_OK)
        if ((st = trace_writer_event(w, &ev, &err)) != SIM_OK)
            break;
    bool ok = st == SIM_END;
    sim_error werr;
    sim_error_clear(&werr);
    sim_status cst = trace_writer_close(w, ok, &werr);
    input_close(r);
    if (!ok)
        return cli_fail(&err);
    if (cst != SIM_OK)
        return cli_fail(&werr);
    return 0;
}
