/* common.h — the argument-side helpers the subcommands share for recorded inputs
 * (traces/input.h): the --from/--device options and the import warnings. */
#ifndef GPUSIM_CLI_COMMON_H
#define GPUSIM_CLI_COMMON_H

#include "cli.h"
#include "traces/input.h"

/* The --from/--device help lines, for option tables. */
#define CLI_INPUT_OPTS                                                                                  \
    {"from", true, "auto|gpusim|torch-snapshot|kineto|tf-profile: the input's format (default: detected)"}, \
    {"device", true, "N: the CUDA device to import from a recording (default: the one with most events)"}

/* --device=N into opt (device -1 when absent); SIM_EUSAGE on a bad value. */
sim_status cli_input_options(const cli_args *a, input_options *opt, sim_error *err);
/* Print an input's import warnings on stderr ("gpusim: warning: FILE: ..."). */
void cli_input_warnings(const trace_input *in);

#endif
