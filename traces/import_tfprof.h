/* import_tfprof.h — TensorFlow / XProf memory profile JSON (memory_profile.proto as
 * protobuf JSON: camelCase keys, int64 as decimal strings, times in ps, maybe wrapped
 * in a one-element array; reference/trace-formats.md §2). */

/* It is sampled, not a full trace. One allocator (`--device=N` picks "GPU_N_bfc" or "N";
 * default the GPU allocator with most snapshots or timeline points). Its
 * sampledTimelineSnapshots, when present, are replayed (import_tfprof_timeline.h: XProf
 * prunes memoryProfileSnapshots to the allocations live at the peak); otherwise its
 * memoryProfileSnapshots as they are, ALLOCATION/DEALLOCATION paired by address. A warning
 * says what is missing. heap + stack is the recorded allocated curve, profileSummary's
 * peakStats (heap + stack) the recorded peak and memoryCapacity the capacity. */
#ifndef GPUSIM_IMPORT_TFPROF_H
#define GPUSIM_IMPORT_TFPROF_H

#include "traces/import_common.h"

sim_status import_tfprof(const json_value *root, const input_options *opt, imp_doc *d);

#endif
