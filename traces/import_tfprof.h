/* import_tfprof.h — TensorFlow / XProf memory profile JSON (memory_profile.proto as
 * protobuf JSON: camelCase keys, int64 as decimal strings, times in ps, maybe wrapped
 * in a one-element array; reference/trace-formats.md §2). */

/* It is sampled, not a full trace: the snapshots of one allocator (`--device=N` picks
 * "GPU_N_bfc" or "N"; default the allocator with most snapshots) are replayed as they
 * are, ALLOCATION/DEALLOCATION paired by address, and a warning says what is missing.
 * heapAllocatedBytes (+ stackReservedBytes) is the recorded allocated curve,
 * profileSummary's peakBytesInUse and memoryCapacity the recorded references. */
#ifndef GPUSIM_IMPORT_TFPROF_H
#define GPUSIM_IMPORT_TFPROF_H

#include "traces/import_common.h"

sim_status import_tfprof(const json_value *root, const input_options *opt, imp_doc *d);

#endif
