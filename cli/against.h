/* against.h — what `replay` and `convert` share for recorded inputs (traces/input.h):
 * the --from/--device options and the import warnings, and `replay
 * --against-recorded`: replay a recording under the allocator that made it and
 * print predicted vs recorded (allocated, reserved), at the peak and over time. */
#ifndef GPUSIM_CLI_AGAINST_H
#define GPUSIM_CLI_AGAINST_H

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

/* The strategy that reproduces the recording's allocator: "torch" for PyTorch
 * snapshots and profiler traces, "greedy" for TensorFlow profiles, NULL for native. */
const char *against_default_strategy(input_format f);

/* gpusim replay TRACE --against-recorded [options]: the whole command (a is the parsed
 * replay command line). Returns the exit status. */
int against_run(const cli_args *a);

#endif
