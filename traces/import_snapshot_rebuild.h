/* import_snapshot_rebuild.h — the allocator state at a snapshot's first trace entry,
 * rebuilt the way pytorch.org/memory_viz does it: start from the final `segments` and
 * undo the trace backwards. */

/* Undoing a segment_alloc removes the segment, undoing a segment_free puts it back
 * (segment_map / segment_unmap grow and shrink expandable ranges); the blocks live at
 * the start are those the trace frees without allocating them and those active at the
 * end that it never allocated; everything else in a segment was free, merged as the
 * caching allocator always merges free neighbours. The sizes of blocks known only from
 * their free are the recording's own rounding of the request (512 B,
 * roundup_power2_divisions), with the remainder a large-pool block keeps when it is not
 * split: all of the gap after it when that gap is too small to be a free block, else up
 * to where the first allocation the trace makes in that gap before the block's free
 * landed (an allocation takes the low end of a free block, so that address is where the
 * free block began). A segment keeps its private pool (segment_pool_id); one put back
 * by undoing a segment_free (or segment_unmap) gets the pool its entry names (pool_id,
 * PyTorch 2.8 and later), else the default pool. The result is a sim_seed (sim/seed.h)
 * for the torch strategy, or a reason why not. */
#ifndef GPUSIM_IMPORT_SNAPSHOT_REBUILD_H
#define GPUSIM_IMPORT_SNAPSHOT_REBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/seed.h"

typedef struct rb_block {      /* a block of a final segment */
    uint64_t addr, size, requested;
    bool active;               /* active_allocated / active_pending_free */
    bool pending_free;         /* active_pending_free (or active_awaiting_free) */
} rb_block;

typedef struct rb_segment {    /* a final segment, or one the undo puts back */
    uint64_t addr, size;
    uint32_t stream;
    bool small_pool, expandable;
    uint64_t pool_id;
    size_t first_block, n_blocks;  /* into the final blocks (0 blocks for one put back) */
} rb_segment;

typedef enum rb_action { RB_SEG_ALLOC, RB_SEG_FREE, RB_SEG_MAP, RB_SEG_UNMAP } rb_action;

typedef struct rb_seg_event {  /* one segment_* entry of the trace, in trace order */
    rb_action action;
    uint64_t addr, size;
    uint32_t stream;
    uint64_t entry;            /* index in device_traces[N] */
    size_t next_event;         /* the importer's events before it */
    uint64_t pool_id;          /* the entry's pool_id (traces/pool_id.h), when has_pool */
    bool has_pool;             /* the entry names its pool (PyTorch 2.8 and later) */
} rb_seg_event;

typedef struct rb_live {       /* a block live at the first entry (an allocation at the start) */
    uint64_t addr, requested;
    uint64_t size;             /* exact (from segments), or 0: infer from requested */
    uint64_t id;
    uint32_t stream;
    uint64_t freed_at;         /* size 0: the importer's event that frees it (UINT64_MAX: none) */
} rb_live;

typedef struct rb_addr {       /* where the trace's allocations landed: the evidence for sizes */
    uint64_t addr;
    uint64_t at;               /* the importer's event index */
} rb_addr;

typedef struct rb_settings {
    uint32_t divisions[16];    /* roundup_power2_divisions per interval from 1 MiB */
    uint64_t max_split_size;   /* UINT64_MAX: unlimited */
} rb_settings;

typedef struct rb_input {
    const rb_segment *segs;    /* the device's final segments (any order) */
    size_t n_segs;
    const rb_block *blocks;
    size_t n_blocks;
    const rb_seg_event *events;
    size_t n_events;
    const rb_live *live;
    size_t n_live;
    const rb_addr *allocs;     /* every alloc of the trace, sorted by (addr, at) */
    size_t n_allocs;
    rb_settings settings;
} rb_input;

typedef struct rb_result {
    sim_seed seed;             /* points into segs/blocks below */
    sim_seed_segment *segs;
    sim_seed_block *blocks;
    sim_range *planned;
    uint32_t inferred;         /* live blocks whose size was inferred from the request */
    uint32_t by_address;       /* of those, sized by a later allocation's recorded address */
    uint32_t undetermined;     /* of those, a large-pool block with room for an unsplit
                                * remainder after it that nothing later tells about */
    uint32_t contradicted;     /* of those, a later address contradicts the rules (kept as rounded) */
    char why[320];             /* when no seed could be built: the reason */
} rb_result;

/* Rebuild; true with *out filled (release with rb_result_release), or false with
 * out->why set (nothing to release) — or false with why empty when out of memory. */
bool rb_rebuild(const rb_input *in, rb_result *out);
void rb_result_release(rb_result *r);
/* The recording's rounding of a request (c10 CUDACachingAllocator round_size). */
uint64_t rb_round_size(const rb_settings *s, uint64_t size);

#endif
