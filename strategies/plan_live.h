/* plan_live.h — which planned buffers are live now, in offset order, with the
 * arena's largest hole: what `planned` reports after every event. */

/* Every buffer's offset is fixed before the replay, so the set is static: a
 * segment tree over the non-empty buffers sorted by offset (at one offset, the
 * smaller first: buffers that share memory may be live at once there, and no other
 * live buffers overlap), each node keeping the
 * first live offset, the last live end and the largest hole between live buffers
 * below it. Marking a buffer live or dead is O(log n); the largest hole of the
 * whole arena (before the first, between, after the last live buffer) is O(1). */
#ifndef GPUSIM_PLAN_LIVE_H
#define GPUSIM_PLAN_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/status.h"

typedef struct plan_live plan_live;

/* Over n buffers with offsets off[] and sizes size[] (copied); none live. */
plan_live *plan_live_new(const uint64_t *off, const uint64_t *size, uint32_t n);
void plan_live_free(plan_live *l);
/* Buffer i becomes live (live = true) or dead. Zero-byte buffers are ignored. */
void plan_live_set(plan_live *l, uint32_t i, bool live);
bool plan_live_is(const plan_live *l, uint32_t i);
/* The largest stretch of [0, arena) that no live buffer covers. */
uint64_t plan_live_largest_hole(const plan_live *l, uint64_t arena);

/* Live buffers in offset order: the first at or after place *cursor (start at
 * 0); PLAN_LIVE_END when none remain. */
#define PLAN_LIVE_END UINT32_MAX
uint32_t plan_live_next(const plan_live *l, uint32_t *cursor);

/* Recomputes every node from the leaves and compares: 0 when consistent. */
int plan_live_verify(const plan_live *l);

#endif
