/* gpusim convert IN -o OUT : rewrite a trace in the native format (JSON, JSONL or
 * the binary gtrace container, chosen by OUT's extension or --to). IN is any
 * format traces/input.h reads. */
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "common.h"
#include "traces/input.h"
#include "traces/trace.h"

static const cli_opt CONVERT_OPTS[] = {
    CLI_OPT("output", "FILE: where to write (.jsonl = JSON Lines, .gtrace = binary, else a JSON document)"),
    CLI_OPT("o", ""),
    CLI_OPT("to", "json|jsonl|gtrace: the container, overriding the file name"),
    CLI_INPUT_OPTS,
    {NULL, false, NULL},
};

static void convert_help(void)
{
    printf("usage: gpusim convert IN -o OUT [--to=json|jsonl|gtrace] [--from=FORMAT] [--device=N]\n\n");
    cli_print_options(stdout, CONVERT_OPTS);
}

static const cli_command CONVERT = {"convert", CONVERT_OPTS, convert_help, CLI_USES_INPUTS, NULL};

/* The options of convert itself: the output and its container. */
static sim_status convert_options(const cli_args *a, const char **out, trace_container *c, sim_error *err)
{
    if (a->n_positional != 1)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "expected exactly one input trace");
    *out = cli_get(a, "output");
    if (*out == NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "no output file (-o OUT)");
    *c = trace_container_for_path(*out);
    const char *to = cli_get(a, "to");
    if (to == NULL)
        return SIM_OK;
    if (strcmp(to, "json") == 0)
        *c = TRACE_JSON;
    else if (strcmp(to, "jsonl") == 0)
        *c = TRACE_JSONL;
    else if (strcmp(to, "gtrace") == 0)
        *c = TRACE_GTRACE;
    else
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--to: expected json, jsonl or gtrace, not '%s'", to);
    return SIM_OK;
}

int cmd_convert(int argc, char **argv)
{
    /* accept the conventional "-o FILE" */
    char *args[CLI_MAX_ARGS];
    int n = 0;
    for (int i = 0; i < argc && n < CLI_MAX_ARGS; i++)
        args[n++] = strcmp(argv[i], "-o") == 0 ? "--output" : argv[i];
    cli_session s;
    const char *out = NULL;
    trace_container c = TRACE_JSON;
    sim_status st = cli_session_parse(&s, &CONVERT, n, args);
    if (st == SIM_OK)
        st = convert_options(&s.a, &out, &c, &s.err);
    if (st == SIM_OK)
        st = cli_session_prepare(&s, CONVERT.uses);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    trace_input *r = s.in[0];
    sim_error err;
    sim_error_clear(&err);
    trace_writer *w = NULL;
    if (trace_writer_open(out, c, input_header(r), &w, &err) != SIM_OK) {
        cli_session_close(&s);
        return cli_fail(&err);
    }
    sim_event_source src = s.src[0];
    sim_event ev;
    while ((st = src.next(src.ctx, &ev, &err)) == SIM_OK)
        if ((st = trace_writer_event(w, &ev, &err)) != SIM_OK)
            break;
    bool ok = st == SIM_END;
    sim_error werr;
    sim_error_clear(&werr);
    sim_status cst = trace_writer_close(w, ok, &werr);
    cli_session_close(&s);
    if (!ok)
        return cli_fail(&err);
    if (cst != SIM_OK)
        return cli_fail(&werr);
    return 0;
}
