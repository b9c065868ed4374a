/* seed.h — the state an allocator starts from, as plain data: the segments it
 * already holds (address, size, stream, pool, expandable) and the blocks that tile
 * each of them (offset, size, requested bytes, used or free or unmapped), handed to
 * a strategy's `seed` entry before the first event.
 * Thread safety: plain data; read-only once built, so any thread may read it. */

/* An importer rebuilds it from a recording made mid-run (a PyTorch snapshot's
 * `segments` with its trace undone back to the first entry, traces/IMPORT.md), so the
 * replay continues from the real state instead of from an empty cache. Every used
 * block carries the trace id its later free names. Nothing here is specific to one
 * allocator: a strategy takes what it can model and refuses the rest (SIM_EUSAGE). */
#ifndef GPUSIM_SEED_H
#define GPUSIM_SEED_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

/* An address range (a segment a recording's cudaMalloc returned). */
typedef struct sim_range {
    uint64_t addr;
    uint64_t bytes;
} sim_range;

typedef enum sim_seed_state {
    SIM_SEED_USED = 0,      /* live at the start: the program holds it (or its free is pending) */
    SIM_SEED_FREE = 1,      /* cached, reusable */
    SIM_SEED_UNMAPPED = 2   /* address space without memory (expandable segments) */
} sim_seed_state;

typedef struct sim_seed_block {
    uint64_t offset;          /* from the segment's address */
    uint64_t size_bytes;      /* as the allocator holds it (rounded) */
    uint64_t requested_bytes; /* used blocks: what the program asked for (0 otherwise) */
    uint64_t id;              /* used blocks: the trace id that frees it later */
    sim_seed_state state;
} sim_seed_block;

typedef struct sim_seed_segment {
    uint64_t addr;            /* where the allocator placed it (kept as recorded) */
    uint64_t size_bytes;      /* reserved from the device (for an expandable segment: mapped) */
    uint32_t stream;          /* the native stream number that owns it */
    bool small_pool;          /* PyTorch's small pool (requests ≤ 1 MiB), else large */
    bool expandable;
    uint64_t pool_id;         /* private memory pool (CUDA graphs, MemPool); 0 = the default pool */
    uint32_t first_block;     /* its blocks are blocks[first_block .. first_block + n_blocks) */
    uint32_t n_blocks;
} sim_seed_segment;

typedef struct sim_seed {
    const sim_seed_segment *segs;   /* in address order */
    uint32_t n_segs;
    const sim_seed_block *blocks;   /* per segment, in address order */
    uint32_t n_blocks;
    /* The segments the recording's cudaMalloc made during the trace, in order (its
     * segment_alloc entries): a strategy hands them to the device (device_plan_va)
     * so that new segments sit where the real ones did and address-ordered choices
     * (best fit among equal sizes) are the real ones. May be the whole seed (a
     * recording made from an empty allocator has no segments at the start). */
    const sim_range *planned;
    uint32_t n_planned;
} sim_seed;

/* Check that a seed is well formed: segments in increasing address order without
 * overlap, each tiled exactly by its blocks (nonzero sizes, in order), used blocks
 * with requested ≤ size, the others with requested and id 0. SIM_ETRACE naming the
 * segment and block otherwise (file names the recording). */
sim_status sim_seed_check(const sim_seed *seed, const char *file, sim_error *err);
/* Bytes the seed holds from the device (sum of segment sizes) and in used blocks. */
uint64_t sim_seed_reserved(const sim_seed *seed);
uint64_t sim_seed_allocated(const sim_seed *seed);
/* Used blocks. */
uint32_t sim_seed_used_count(const sim_seed *seed);
/* A copy of seed in one allocation that owns its arrays (free it with free()), for
 * a caller that keeps the state after the input it came from is closed (answers/batch.h);
 * NULL without memory. */
sim_seed *sim_seed_dup(const sim_seed *seed);

#endif
