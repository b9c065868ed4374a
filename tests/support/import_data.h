/* import_data.h — what the importer suites share: the path of a recording under
 * tests/data/import/ (below $GPUSIM_SOURCE_DIR) or of a full one in
 * $GPUSIM_REALTRACES, a file or bytes opened as a trace with a device choice, and
 * whether an import warned. */
#ifndef GPUSIM_TEST_IMPORT_DATA_H
#define GPUSIM_TEST_IMPORT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/input.h"

/* "$GPUSIM_SOURCE_DIR/tests/data/import/SUB/NAME" (SUB "" for the folder itself) into
 * buf; returns buf. */
const char *import_data_path(char *buf, size_t cap, const char *sub, const char *name);
/* input_open_mem of bytes named name, with --from (NULL: detected) and --device
 * (-1: every device); *in NULL and err cleared first. */
sim_status import_open_mem(const char *name, const void *bytes, size_t len, const char *from, int64_t device,
                           trace_input **in, sim_error *err);
/* input_open of path with --from (NULL: detected) and --device (-1: every device),
 * asserting that it opens (the test fails naming the path and the error). */
trace_input *import_open_ok(const char *path, const char *from, int64_t device);
/* "$GPUSIM_REALTRACES/NAME" into buf, or NULL (logged as a skip of suite,
 * support/skip.h) when that variable is unset or the file is not there. */
const char *import_real_path(char *buf, size_t cap, const char *suite, const char *name);
/* Whether one of in's warnings contains needle. */
bool import_has_warning(const trace_input *in, const char *needle);

#endif
