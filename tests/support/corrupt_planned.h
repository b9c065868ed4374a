/* corrupt_planned.h — test-only breaches of the planned strategy's state, one
 * invariant each, so that a test shows the checker (planned.c) catches it. They
 * reach the instance through strategies/planned_types.h; nothing of the product
 * calls them. */
#ifndef GPUSIM_TEST_CORRUPT_PLANNED_H
#define GPUSIM_TEST_CORRUPT_PLANNED_H

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
bool corrupt_planned(strategy *s, planned_corruption kind);

#endif
