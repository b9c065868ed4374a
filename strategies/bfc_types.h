/* bfc_types.h — private to the BFC strategy (bfc*.c): its constants, the chunk,
 * bin and region records, and struct strategy. The rules are in bfc.c's header;
 * the binned free set's operations in bfc_bins.h; the framework wiring that sets
 * the limit in bfc_limits.h. */
#ifndef GPUSIM_BFC_TYPES_H
#define GPUSIM_BFC_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "bfc.h"
#include "bfc_limits.h"
#include "sim/units.h"
#include "slots.h"

/* ==== constants (bfc_allocator.h, docs/allocators.md §1.1) ==== */

#define BFC_MIN_ALLOC ((uint64_t)256)   /* kMinAllocationSize */
#define BFC_NUM_BINS 21u                /* kNumBins */
#define BFC_SLICES 16u                  /* size-ordered slices per bin (ours, not TF's) */
#define BFC_NO_BIN 0xFFu
#define BFC_NONE SLOTS_NONE
#define BFC_INITIAL_GROWTH_REGION (2 * MiB)
#define BFC_DEFAULT_MAX_FRAG (128 * MiB)
#define BFC_BACKPEDAL 0.9f              /* kBackpedalFactor is a float in the source */

/* Which partition a chunk belongs to (ChunkTag, xla bfc_allocator.h since PR #43912,
 * 4b147ab4e2, 2026-06-15). Without spatial partitioning every chunk is LOWER and
 * the model is classic BFC; with it, the one free GAP chunk is the central gap,
 * never binned, and LOWER free chunks are the lower partition's holes. The upper
 * (collective, S(1)) partition is not modelled: traces carry default memory only. */
typedef enum bfc_tag {
    BFC_TAG_GAP = 0,  /* kCentralGap */
    BFC_TAG_LOWER = 1 /* kLower */
} bfc_tag;

typedef enum chunk_state {
    CHUNK_FREE = 0,    /* in exactly one bin */
    CHUNK_USED = 1,    /* handed out */
    CHUNK_PENDING = 2, /* freed by the program, still held until free_ready (ready_t) */
    CHUNK_ZERO = 3     /* a zero-byte allocation: a handle that holds no memory */
} chunk_state;

/* One chunk. Valid fields by state: all states have addr/size (0 for ZERO);
 * prev/next/region only for chunks inside a region (not ZERO); child/parent/bin only
 * for FREE chunks (bin = BFC_NO_BIN, links BFC_NONE otherwise); requested
 * and stream only for USED and PENDING. prio is the treap priority, fixed at birth. */
typedef struct bfc_chunk {
    uint64_t size;         /* the key fields and tree links first: one cache line */
    uint64_t addr;
    uint32_t child[2];     /* treap children inside the bin: lower keys, higher keys */
    uint32_t parent;       /* treap parent; BFC_NONE at the root */
    uint32_t prio;
    uint32_t prev, next;   /* physical neighbours inside the region */
    uint64_t requested;
    uint32_t region;       /* index in regions[] = creation order */
    uint32_t stream;
    uint8_t state;
    uint8_t bin;           /* TF bin, BFC_NO_BIN unless free */
    uint8_t slice;         /* slice inside the bin */
    uint8_t tag;           /* bfc_tag: LOWER unless spatial partitioning is on */
} bfc_chunk;
_Static_assert(sizeof(bfc_chunk) == 64, "a chunk record fills one cache line (bfc.c aligns the table to 64)");

/* One slice of one bin: a treap of free chunks (bfc_bins.h). */
typedef struct bfc_bin {
    uint32_t root;
    uint32_t min, max; /* first and last chunk in (size, address) order */
} bfc_bin;

/* The binned free set; its operations and their cost are in bfc_bins.h. TF's bin b
 * is slice[b][0..15]: slices of increasing sizes (bfc_slice_for), so the slices of a
 * bin, in order, are the bin in (size, address) order. */
typedef struct bfc_bins {
    bfc_bin slice[BFC_NUM_BINS][BFC_SLICES];
    uint32_t bitmap;                   /* bit b set iff TF bin b is non-empty */
    uint16_t slice_mask[BFC_NUM_BINS]; /* bit k set iff slice[b][k] is non-empty */
    uint64_t largest;                  /* the largest chunk's size, 0 when empty: kept, since
                                          the engine samples it after every event */
} bfc_bins;

/* A region (one Extend). Regions freed by garbage collection stay in the array with
 * live = false, so that indices, which the walker reports as region numbers, are the
 * creation order. first is the chunk at the base address: bfc.c moves it when an
 * allocation is cut from the base chunk's low end or the base chunk, freed, merges
 * into its upper neighbour (records change roles there; addresses never do). */
typedef struct bfc_region {
    uint64_t addr;
    uint64_t size;
    uint32_t first;
    bool live;
} bfc_region;

struct strategy {
    device *dev;
    uint32_t proc;
    bfc_mode mode;
    bool allow_growth;
    bfc_settings opt;            /* the parsed options (bfc_limits.h) */

    uint64_t limit;              /* memory_limit_ */
    uint64_t max_frag;           /* max_internal_fragmentation_bytes_ */
    uint64_t curr_region_bytes;  /* curr_region_allocation_bytes_ (C) */
    uint64_t alignment;          /* max(requested alignment, 256) (xla2026 only; else 256): a power of two */
    uint32_t gap;                /* central_gap_: the GAP chunk, BFC_NONE when there is none */
    bool spatial_abort;          /* this allocation's Extend would hit XLA's one-gap CHECK */
    uint64_t xla_aborts;         /* operations that would have hit it (bfc.c rule 10) */

    slots chunks;
    uint32_t spare_head;         /* records taken from chunks but unused, linked through
                                    their parent fields: merges give them back, splits take
                                    them (bfc.c chunk_new); BFC_NONE when there are none */
    uint32_t n_spares;
    bfc_bins bins;
    uint32_t rng;                /* xorshift32 state for treap priorities */

    bfc_region *regions;
    uint32_t n_regions, cap_regions; /* ever created; array capacity */
    uint32_t live_regions;

    /* TF's AllocatorStats names (docs/allocators.md §1.8) */
    uint64_t bytes_in_use, peak_bytes_in_use;
    uint64_t pool_bytes, peak_pool_bytes;
    uint64_t largest_alloc_size, num_allocs;
    uint64_t num_device_allocs, num_device_frees;
    uint64_t zero_live;          /* live zero-byte handles */
};

static inline bfc_chunk *bfc_chunk_table(const strategy *s)
{
    /* slots stores records of sizeof(bfc_chunk) contiguously: index it directly */
    return (bfc_chunk *)(void *)s->chunks.data;
}

/* The walker, locate and the invariant checker (bfc_check.c), for bfc.c's ops tables. */
int bfc_walk(const strategy *s, strategy_visitor v, void *ctx);
bool bfc_locate(const strategy *s, strategy_handle h, strategy_block *out);
void bfc_check(const strategy *s, sim_report *r);

#endif
