/* import_snapshot_pools.h — a PyTorch snapshot's private memory pools (CUDA graphs,
 * torch.cuda.MemPool) as the native trace's pool events (traces/IMPORT.md "Private
 * pools"): the pool of each segment and allocation, and a pool_begin / pool_end
 * scope around each run of allocations that went to one pool. Private to the
 * snapshot importer (import_snapshot.c). */

/* What a snapshot says: each segment's `segment_pool_id` (every release since 2.1)
 * and, from 2.8, each trace entry's `pool_id`; (0, 0) is the default pool, and the
 * 2-tuple becomes one number by traces/pool_id.h. What it does not say is where a
 * capture or a use_mem_pool scope began and ended, nor which streams it covered, nor
 * when a graph was destroyed. So an allocation goes to the pool its entry names, or
 * (before 2.8) to the pool of the segment its address lies in at that moment; a run
 * of consecutive allocations (in trace order, whatever comes between that is not an
 * allocation) that went to one pool is wrapped in pool_begin just before its first
 * and pool_end just after its last: a capture on the stream when they are all on
 * one (`capture`), a use_mem_pool scope of every stream when they are not. No pool
 * is ever released (no pool_release): a snapshot records no graph's destruction. */
#ifndef GPUSIM_IMPORT_SNAPSHOT_POOLS_H
#define GPUSIM_IMPORT_SNAPSHOT_POOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/import_common.h"
#include "traces/import_snapshot_rebuild.h"

/* obj's pool tuple under key ("segment_pool_id", "pool_id"): *id (0 for (0, 0)) and
 * *present; absent or null leaves *present false and *id 0. SIM_ETRACE naming l when
 * it is not a pair of integers or has no id (traces/pool_id.h). */
sim_status snap_pool_get(imp_doc *d, const json_value *obj, const char *key, const imp_loc *l, uint64_t *id,
                         bool *present);

typedef struct snap_pool_count {
    uint64_t allocs;   /* allocations that went to a private pool */
    uint64_t inferred; /* of those, placed by their segment (the entry named no pool) */
    uint64_t scopes;   /* pool_begin / pool_end pairs inserted */
    uint32_t pools;    /* distinct private pools among them */
} snap_pool_count;

/* Give every alloc of d->ev its pool and insert the scopes into d->ev (so call it
 * after anything that holds indices into d->ev). start: the segments at the first
 * entry (the rebuilt seed's), or NULL when none could be rebuilt: then the final
 * segments that no segment entry touches count as there from the start. sev: the
 * segment entries in trace order; final: the snapshot's segments at the end. false
 * on ENOMEM. */
bool snap_pools_route(imp_doc *d, const sim_seed *start, const rb_seg_event *sev, size_t n_sev, const rb_segment *final,
                      size_t n_final, snap_pool_count *out);

#endif
