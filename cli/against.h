/* against.h — `gpusim replay --against-recorded`: replay a recording under the
 * allocator that made it (answers/against.h) and print predicted vs recorded
 * (reports/against.h). */
#ifndef GPUSIM_CLI_AGAINST_H
#define GPUSIM_CLI_AGAINST_H

#include "common.h"

/* gpusim replay TRACE --against-recorded [options]: the rest of the command once s
 * holds the parsed replay command line. Closes s; returns the exit status. */
int against_run(cli_session *s);

#endif
