/* bfc_internal.h — test-only hooks into the BFC strategy: break one invariant of a
 * live instance on purpose, so that a test can prove the checker catches it.
 * Never called by the simulator itself. */
#ifndef GPUSIM_BFC_INTERNAL_H
#define GPUSIM_BFC_INTERNAL_H

#include <stdbool.h>

#include "sim/strategy.h"

typedef enum bfc_corruption {
    BFC_CORRUPT_GAP,           /* shrink a chunk: the region is no longer tiled */
    BFC_CORRUPT_ADJACENT_FREE, /* a used chunk next to a free one turns free, uncoalesced */
    BFC_CORRUPT_WRONG_BIN,     /* a free chunk moves into a bin its size does not map to */
    BFC_CORRUPT_NOT_IN_BIN,    /* a free chunk leaves its bin */
    BFC_CORRUPT_BIN_ORDER,     /* a bin's (size, address) order is broken */
    BFC_CORRUPT_BITMAP,        /* the occupancy bit of an empty bin is set */
    BFC_CORRUPT_BYTES_IN_USE,  /* bytes_in_use drifts from the sum of used chunks */
    BFC_CORRUPT_POOL_BYTES,    /* pool_bytes drifts from the sum of regions (and the device) */
    BFC_CORRUPT_PEAK_IN_USE,   /* peak_bytes_in_use below bytes_in_use */
    BFC_CORRUPT_PEAK_POOL,     /* peak_pool_bytes below pool_bytes */
    BFC_CORRUPT_REGION_COUNT,  /* the live-region counter is off by one */
    BFC_CORRUPT_BIN_CACHE,     /* a bin's cached largest chunk is not its largest */
    BFC_CORRUPT_LARGEST,       /* the bins' kept largest size drifts from their largest chunk */
    BFC_CORRUPT_SPARE,         /* a chunk in a region is also the spare record (a leak count) */
    BFC_CORRUPT_SECOND_GAP,    /* a lower hole is tagged central gap: two gaps (spatial) */
    BFC_CORRUPT_GAP_AS_HOLE    /* the central gap is binned as a lower hole (spatial) */
} bfc_corruption;

/* Apply kind to s (an instance of any bfc_strategy() table). Returns false, changing
 * nothing, when the state has no place to apply it (e.g. no free chunk yet). */
bool bfc_debug_corrupt(strategy *s, bfc_corruption kind);

#endif
