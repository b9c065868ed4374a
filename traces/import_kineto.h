/* import_kineto.h — PyTorch profiler / Kineto Chrome traces (`*.pt.trace.json[.gz]`,
 * reference/trace-formats.md §1.12 and §4): the `[memory]` instant events of one CUDA
 * device become allocs and frees. */

/* With "Addr" (PyTorch ≥ ~1.13), a free pairs with the live block at its address;
 * without it (2021-era files), with the most recent live allocation of the same size,
 * and a warning says so. Frees of blocks the trace never saw allocated become
 * allocations live at the start. "Total Allocated" / "Total Reserved" become the
 * recorded reference curves. */
#ifndef GPUSIM_IMPORT_KINETO_H
#define GPUSIM_IMPORT_KINETO_H

#include "traces/import_common.h"

/* root: the parsed document (an object with "traceEvents", or a bare event array).
 * Fills d (events in time order, header, recorded curves); errors go to d->err. */
sim_status import_kineto(const json_value *root, const input_options *opt, imp_doc *d);

#endif
