/* idmap.h — the engine's map from trace ids to live allocations: open addressing
 * with linear probing and backward-shift deletion (no tombstones), so lookups stay
 * short however many ids come and go. Grows by doubling at 50% load; never shrinks.
 * Memory is proportional to the peak number of live allocations, not to the trace.
 * Thread safety: a map is not thread-safe; separate maps may run on separate threads. */
#ifndef GPUSIM_IDMAP_H
#define GPUSIM_IDMAP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct idmap_entry {
    uint64_t id;
    uint64_t size;      /* requested bytes */
    uint32_t handle;    /* the strategy's handle */
    uint32_t flags;     /* IDMAP_* */
} idmap_entry;

#define IDMAP_DROPPED 1u  /* the allocation failed with --on-oom=skip: its free is ignored */
#define IDMAP_USED 0x80000000u /* internal: the slot holds an entry */

typedef struct idmap {
    idmap_entry *slots;  /* occupancy lives in flags, so a probe touches one cache line */
    uint64_t mask;      /* capacity − 1 (capacity is a power of two) */
    unsigned shift;     /* 64 − log2(capacity), for the hash */
    uint64_t count;
} idmap;

bool idmap_init(idmap *m);
void idmap_release(idmap *m);
/* The live entry for id, or NULL. */
idmap_entry *idmap_find(const idmap *m, uint64_t id);
/* Insert id (which must not be present); NULL when out of host memory. */
idmap_entry *idmap_insert(idmap *m, uint64_t id);
/* One probe for both: the entry for id, *found telling whether it already existed
 * (then nothing was inserted). NULL when out of host memory. */
idmap_entry *idmap_find_or_insert(idmap *m, uint64_t id, bool *found);
/* Remove the entry e points to (from idmap_find). */
void idmap_remove(idmap *m, idmap_entry *e);

#endif
