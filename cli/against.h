/* against.h — `gpusim replay --against-recorded`: replay a recording under the
 * allocator that made it (answers/against.h) and print predicted vs recorded
 * (reports/against.h). */
#ifndef GPUSIM_CLI_AGAINST_H
#define GPUSIM_CLI_AGAINST_H

#include "cli.h"

/* gpusim replay TRACE --against-recorded [options]: the whole command (a is the parsed
 * replay command line). Returns the exit status. */
int against_run(const cli_args *a);

#endif
