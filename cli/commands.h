/* commands.h — the one table of the `gpusim` program's commands, in the order `gpusim
 * --help` lists them: each one's name, its one-line summary and how it runs, from the
 * shell (main.c) and, for those a program may run, through a cli_io (api.c, the Python
 * module). --help's command list, and from it the man page and the shell completion
 * (scripts/gpusim-man.sh, gpusim-completion.bash), follow from the table. */

/* Adding a command: write cli/NAME.c (the build takes every .c of the folder) with int
 * cmd_NAME(int argc, char **argv), or, when programs may run it too, int
 * cli_NAME_io(cli_io *io, int argc, char **argv) (cli_session_parse_io, common.h);
 * declare it below and add its row to COMMANDS in commands.c at its place in --help's
 * order. */
#ifndef GPUSIM_CLI_COMMANDS_H
#define GPUSIM_CLI_COMMANDS_H

#include <stddef.h>

#include "common.h"

typedef struct commands_entry {
    const char *name;     /* "replay": `gpusim replay` */
    const char *summary;  /* its line in `gpusim --help` */
    /* How the shell runs it: run, or io with no cli_io when run is NULL. */
    int (*run)(int argc, char **argv);
    /* How a program runs it (cli/api.h): the exit status as the command's, the
     * result in io->out, the failure in io->err; NULL when only the shell may. */
    int (*io)(cli_io *io, int argc, char **argv);
} commands_entry;

size_t commands_count(void);
/* The i-th command, i < commands_count(), in --help's order. */
const commands_entry *commands_get(size_t i);
/* The command called name, or NULL. */
const commands_entry *commands_find(const char *name);
/* Run c from the shell on its arguments (after the command's name); the exit status. */
int commands_run(const commands_entry *c, int argc, char **argv);
/* The names of the commands a program may run (io set), separated by ", " and the
 * last two by " or ", into buf (always NUL-terminated); returns buf. */
char *commands_io_names(char *buf, size_t cap);

/* The commands, each in cli/NAME.c. */
int cli_replay_io(cli_io *io, int argc, char **argv);
int cli_compare_io(cli_io *io, int argc, char **argv);
int cli_plan_io(cli_io *io, int argc, char **argv);
int cli_tune_io(cli_io *io, int argc, char **argv);
int cmd_check(int argc, char **argv);
int cli_sweep_io(cli_io *io, int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_strategies(int argc, char **argv);
int cmd_validate_report(int argc, char **argv);

#endif
