/* planned_internal.h — test-only hooks into the planned strategy: break one
 * invariant of a live instance on purpose, so that a test can prove the checker
 * catches it. Never called by the simulator itself. */
#ifndef GPUSIM_PLANNED_INTERNAL_H
#define GPUSIM_PLANNED_INTERNAL_H

#include <stdbool.h>

#include "sim/strategy.h"

typedef enum planned_corruption {
    PLANNED_CORRUPT_LIVE_BYTES, /* the live byte count drifts from the live buffers */
    PLANNED_CORRUPT_OVERLAP,    /* a live buffer moves onto the offset of another live one */
    PLANNED_CORRUPT_PEAK        /* the no-fragmentation peak rises above the heap */
} planned_corruption;

/* Apply kind to s (an instance of planned_strategy(), planned). Returns false,
 * changing nothing, when the state has no place for it (fewer than two live
 * buffers for an overlap). */
bool planned_debug_corrupt(strategy *s, planned_corruption kind);

#endif
