/* import_snapshot.h — PyTorch CUDA caching-allocator snapshots
 * (torch.cuda.memory._snapshot(), reference/trace-formats.md §1), parsed from JSON or
 * from the pickle _dump_snapshot writes (import_pickle.h gives the same DOM). */

/* One device's trace (`device_traces[N]`) becomes native events: `alloc` pairs with the
 * `free_requested` / `free_completed` of the live block at the same address (addresses
 * are reused); a free that was requested before it completed becomes t → ready_t.
 * Blocks the ring buffer lost (freed but never seen allocated, or live in `segments` at
 * the end without an alloc in the trace) become allocations at the start. `segment_*`
 * events give the recorded reserved curve, `oom` events are counted and kept as marks,
 * `allocator_settings` give PYTORCH_CUDA_ALLOC_CONF. Private pools (segment_pool_id,
 * an entry's pool_id) become pool events around the allocations made in them
 * (import_snapshot_pools.h). */
#ifndef GPUSIM_IMPORT_SNAPSHOT_H
#define GPUSIM_IMPORT_SNAPSHOT_H

#include "traces/import_common.h"

/* root: the snapshot dict (or a bare list of segments, as memory_snapshot() returns). */
sim_status import_snapshot(const json_value *root, const input_options *opt, imp_doc *d);

#endif
