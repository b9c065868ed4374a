/* The listing commands' shared prelude and JSON/text framing (catalog.h). */
#include "catalog.h"

#include <stdio.h>

const cli_opt CLI_CATALOG_OPTS[] = {
    CLI_OPT("format", "text|json (default text)"),
    {NULL, false, NULL},
};

void cli_catalog_help(const char *name, const char *about)
{
    printf("usage: gpusim %s [--format=text|json]\n\n%s\n\n", name, about);
    cli_print_options(stdout, CLI_CATALOG_OPTS);
}

int cli_catalog_run(const cli_catalog *c, int argc, char **argv)
{
    cli_session s;
    sim_status st = cli_session_parse(&s, c->cmd, argc, argv);
    if (st == SIM_OK)
        st = cli_session_no_arguments(&s);
    if (st == SIM_OK)
        st = cli_session_prepare(&s, c->cmd->uses);
    if (st != SIM_OK)
        return cli_session_end(&s, st);
    const bool json = s.json;
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    if (json)
        jsonw_array(&w); /* a catalog is never empty */
    else if (c->text_header)
        sim_buf_puts(&b, c->text_header);
    const size_t n = c->count();
    for (size_t i = 0; i < n; i++) {
        if (json)
            c->row_json(&w, i);
        else
            c->row_text(&b, i);
    }
    if (json) {
        jsonw_end(&w);
        sim_buf_puts(&b, "\n");
    } else {
        if (c->text_footer)
            sim_buf_puts(&b, c->text_footer);
        if (c->text_tail)
            c->text_tail(&b);
    }
    st = sim_buf_write_file(&b, "-", &s.err);
    sim_buf_release(&b);
    return cli_session_end(&s, st);
}
