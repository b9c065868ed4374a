/* planned_types.h — private to the planned strategy (planned.c): the planner kinds
 * and the instance, in a header so that tests can break the state on purpose
 * (tests/support/corrupt_planned.c) as they do async's; no other product file includes it. */
#ifndef GPUSIM_PLANNED_TYPES_H
#define GPUSIM_PLANNED_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "plan_live.h"
#include "sim/device.h"
#include "sim/strategy.h"

typedef enum planner_kind {
    PLANNER_XLA = 0,
    PLANNER_XLA_SPATIAL,
    PLANNER_XLA_TEMPORAL,
    PLANNER_TFLITE,
    PLANNER_TFLITE_GPU,
    PLANNER_COUNT
} planner_kind;

struct strategy {
    device *dev;
    uint32_t proc;
    planner_kind planner;
    uint64_t alignment;
    uint64_t heap_limit;   /* xla planners only; 0 = none */
    /* the plan */
    bool planned;
    uint32_t n;            /* buffers */
    uint64_t *off, *size;
    /* Shared buffers (xla planners, the trace's "share") sit at their group's offset,
     * and the members live at once are one block, of the largest live member's size.
     * slot[i] is buffer i's group (its root, plan_xla_roots), NULL when none shares;
     * per root: grp_member[grp_first[r] .. grp_first[r + 1]) its other members, slot_count its
     * live members, slot_max the largest live size and slot_at_max how many live
     * members have it; mlive[i] whether buffer i is live. */
    uint32_t *slot;
    uint32_t *grp_first, *grp_member;
    uint32_t *slot_count, *slot_at_max;
    uint64_t *slot_max;
    bool *mlive;
    uint64_t *first, *last; /* TFLite-clock lifetimes, for pictures */
    uint64_t n_events;
    uint64_t heap;
    uint64_t peak;         /* no-fragmentation peak */
    uint32_t heaps;
    const char *order;
    plan_live *live;
    /* the replay */
    uint32_t next;         /* the next alloc() is buffer `next` */
    bool arena_taken;
    uint64_t live_bytes;
    uint32_t live_count;
};

#endif
