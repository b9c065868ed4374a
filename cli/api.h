/* api.h — gpusim as a library (libgpusim.so) for programs rather than a shell: the
 * Python module (python/gpusim) calls it through ctypes. */

/* One call runs one command (replay, compare, plan, tune) on an argument vector exactly
 * as the command line does, where one positional trace may be bytes in memory (a
 * snapshot serialised by the caller, no file in between), and keeps the command's
 * output and, when it failed, what kind of failure and the message the command line
 * would have printed. */
#ifndef GPUSIM_CLI_API_H
#define GPUSIM_CLI_API_H

#include <stddef.h>

typedef struct gpusim_api_call gpusim_api_call;

/* Run `gpusim COMMAND argv...`. A positional argument equal to mem_name (may be
 * NULL) reads mem[0..mem_len) in any format gpusim detects (the name appears in
 * messages and results). NULL only when the host is out of memory. */
gpusim_api_call *gpusim_api_run(const char *command, int argc, char **argv, const char *mem_name, const void *mem,
                                size_t mem_len);
/* The command's exit status (0 ran, 2 usage or I/O error, 3 invalid trace). */
int gpusim_api_exit_code(const gpusim_api_call *c);
/* "" when it ran, else "usage", "io", "trace", "memory" or "internal". */
const char *gpusim_api_error_kind(const gpusim_api_call *c);
/* The message the command line prints without its "gpusim CMD: " prefix ("" when
 * it ran): a usage error's text, or "FILE:LINE: what" for the others. */
const char *gpusim_api_error(const gpusim_api_call *c);
/* What the command wrote as its result (stdout or --output), NUL-terminated. */
const char *gpusim_api_output(const gpusim_api_call *c);
/* The warnings and notes the command line prints on stderr ("warning: FILE: ..."),
 * one a line, without the "gpusim: " prefix. */
const char *gpusim_api_notes(const gpusim_api_call *c);
void gpusim_api_free(gpusim_api_call *c);
/* The version the library was built as ("0.1.0"). */
const char *gpusim_api_version(void);

#endif
