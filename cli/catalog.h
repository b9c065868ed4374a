/* catalog.h — the shared body of the listing commands (gpusim gpus, gpusim
 * strategies): a command that takes no arguments and only --format, and prints one
 * row per catalog entry, as text lines or as a JSON array of objects that start with
 * "name". */
#ifndef GPUSIM_CLI_CATALOG_H
#define GPUSIM_CLI_CATALOG_H

#include <stddef.h>

#include "common.h"
#include "sim/buf.h"
#include "sim/jsonw.h"

/* The one option a listing command takes: --format. */
extern const cli_opt CLI_CATALOG_OPTS[];

/* A listing command's --help: "usage: gpusim NAME [--format=text|json]", the text
 * about (a paragraph), and CLI_CATALOG_OPTS. A listing command's cli_command takes
 * CLI_CATALOG_OPTS and CLI_USES_FORMAT, and its help function calls this. */
void cli_catalog_help(const char *name, const char *about);

typedef struct cli_catalog {
    const cli_command *cmd;
    size_t (*count)(void);
    /* Entry i's JSON object, one line ({"name": ..., ...}), as a value of w. */
    void (*row_json)(jsonw *w, size_t i);
    /* Entry i as text, each line ending in '\n'. */
    void (*row_text)(sim_buf *b, size_t i);
    const char *text_header; /* printed before the text rows; NULL for none */
    const char *text_footer; /* printed after them; NULL for none */
    void (*text_tail)(sim_buf *b); /* prints more after the footer; NULL for none */
} cli_catalog;

/* Parse argv for c->cmd, print the catalog on stdout, return the exit code. */
int cli_catalog_run(const cli_catalog *c, int argc, char **argv);

#endif
