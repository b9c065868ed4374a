/* import_tfprof_timeline.h — a TensorFlow memory profile's sampledTimelineSnapshots as
 * events: the fallback when memoryProfileSnapshots was pruned (XProf keeps there only the
 * allocations live at the peak) or is absent. Exact where consecutive points explain each
 * other; between samples, synthetic allocations and frees of the in-use difference, so the
 * replay's live bytes equal heap + stack at every point. Internal to import_tfprof.c. */
#ifndef GPUSIM_IMPORT_TFPROF_TIMELINE_H
#define GPUSIM_IMPORT_TFPROF_TIMELINE_H

#include "traces/import_common.h"

/* points: the non-empty sampledTimelineSnapshots array; where: its name in messages;
 * pruned: the number of memoryProfileSnapshots (UINT64_MAX: the key is absent), for the
 * warning. Fills d's events and recorded allocated column; the caller finishes d. */
sim_status tfprof_timeline_import(imp_doc *d, const json_value *points, const char *where, uint64_t pruned);
/* meta's "memoryActivity" (a name or a number) into *out: 1 ALLOCATION, 2 DEALLOCATION,
 * another number for the others, 0 when absent. */
sim_status tfprof_activity(imp_doc *d, const json_value *meta, const imp_loc *l, int *out);

#endif
