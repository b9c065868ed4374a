/* import_data.h — what the importer suites share: the path of a recording under
 * tests/data/import/ (below $GPUSIM_SOURCE_DIR), and bytes opened as a trace with a
 * device choice, the error cleared first. */
#ifndef GPUSIM_TEST_IMPORT_DATA_H
#define GPUSIM_TEST_IMPORT_DATA_H

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

#endif
