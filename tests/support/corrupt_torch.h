/* corrupt_torch.h — test-only breaches of the `torch` strategy's state, one
 * invariant each, so that a test shows the checker (torch_check.c) catches it.
 * They reach the private records through strategies/torch_types.h; nothing of the
 * product calls them. */
#ifndef GPUSIM_TEST_CORRUPT_TORCH_H
#define GPUSIM_TEST_CORRUPT_TORCH_H

#include <stdbool.h>

#include "sim/strategy.h"

typedef enum torch_corruption {
    TORCH_CORRUPT_TILE_GAP = 0,       /* a block shrinks: its segment no longer tiles */
    TORCH_CORRUPT_UNMERGED_FREE,      /* a free block is cut in two adjacent free blocks */
    TORCH_CORRUPT_FREE_NOT_IN_SET,    /* a free block leaves its pool's set */
    TORCH_CORRUPT_USED_IN_SET,        /* a used block enters its pool's set */
    TORCH_CORRUPT_WRONG_POOL,         /* a segment claims the other pool */
    TORCH_CORRUPT_ALLOCATED_COUNTER,  /* allocated_bytes.large_pool.current (so .all) drifts */
    TORCH_CORRUPT_RESERVED_COUNTER,   /* reserved_bytes.large_pool.current (so .all) drifts */
    TORCH_CORRUPT_ACTIVE_COUNTER,     /* active_bytes.large_pool.current (so .all) drifts */
    TORCH_CORRUPT_REQUESTED_COUNTER,  /* requested_bytes.large_pool.current (so .all) drifts */
    TORCH_CORRUPT_INACTIVE_SPLIT,     /* inactive_split_bytes.large_pool.current (so .all) drifts */
    TORCH_CORRUPT_PEAK,               /* a peak falls below its current value */
    TORCH_CORRUPT_FREE_BYTES,         /* the free-bytes counter of sample() drifts */
    TORCH_CORRUPT_SET_ORDER,          /* a block's key changes while it sits in a set */
    TORCH_CORRUPT_HANDLE,             /* a live allocation's handle loses its block */
    TORCH_CORRUPT_WRONG_BIN,          /* a free block sits in another size bin */
    TORCH_CORRUPT_BIN_BITMAP,         /* a stream's bin bitmap loses or gains a bin */
    TORCH_CORRUPT_BIN_SUMMARY,        /* a stream's bitmap summary word drifts */
    TORCH_CORRUPT_STREAM_COUNT,       /* a stream's free-block count drifts */
    TORCH_CORRUPT_STREAM_ORDER,       /* two entries of a pool's stream index swap */
    TORCH_CORRUPT_STREAM_MISSING,     /* a stream with free blocks leaves the index */
    TORCH_CORRUPT_TREAP_PRIORITY,     /* a free block's kept treap priority drifts */
    TORCH_CORRUPT_DEFER_LINK,         /* the last deferred free's back link (tdefer) drifts */
    TORCH_CORRUPT_DEFER_WAIT,         /* a deferred free names a stream queue that does not exist */
    TORCH_CORRUPT_COUNT
} torch_corruption;

/* Apply one corruption to s (an instance of torch_strategy()); returns false when
 * the state has nothing to corrupt (e.g. no free block). The checker must then
 * report it. */
bool corrupt_torch(strategy *s, torch_corruption kind);

#endif
