/* corrupt_bfc.h — test-only breaches of the BFC strategy's state, one invariant
 * each, so that a test shows the checker (bfc_check.c) catches it. They reach the
 * private records through strategies/bfc_types.h; nothing of the product calls them. */
#ifndef GPUSIM_TEST_CORRUPT_BFC_H
#define GPUSIM_TEST_CORRUPT_BFC_H

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
    BFC_CORRUPT_SPARE,         /* a chunk in a region is also a spare record (a leak count) */
    BFC_CORRUPT_SPARE_COUNT,   /* the spare count is one more than the spare list */
    BFC_CORRUPT_SECOND_GAP,    /* a lower hole is tagged central gap: two gaps (spatial) */
    BFC_CORRUPT_GAP_AS_HOLE    /* the central gap is binned as a lower hole (spatial) */
} bfc_corruption;

/* Apply kind to s (an instance of any bfc_strategy() table). Returns false, changing
 * nothing, when the state has no place to apply it (e.g. no free chunk yet). */
bool corrupt_bfc(strategy *s, bfc_corruption kind);

#endif
