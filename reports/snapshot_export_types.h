/* snapshot_export_types.h — private to the snapshot export (snapshot_export.c: the
 * records and the replay's entries; snapshot_export_segments.c: what the allocator
 * holds from the device, and its segment entries; snapshot_export_end.c: the end
 * state and the settings): the records, the segment list, the export's state, and
 * the helpers the three files share. */
#ifndef GPUSIM_REPORTS_SNAPSHOT_EXPORT_TYPES_H
#define GPUSIM_REPORTS_SNAPSHOT_EXPORT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pickle_write.h"
#include "sim/buf.h"
#include "sim/idmap.h"
#include "sim/strtab.h"
#include "snapshot_export.h"

#define XF_ZERO 2u /* idmap flag: a zero-byte allocation, no block, no entries */
#define X_NONE UINT32_MAX
#define X_NO_ADDR UINT64_MAX

typedef struct xrec {      /* one live allocation (or one whose free is pending) */
    uint64_t addr, size;   /* its block's address; the requested bytes */
    uint64_t id, event;    /* its trace id, and its alloc's event (1, 2, ...; 0: live at the start) */
    uint64_t pool;         /* its block's private pool (strategy_block.pool_id), 0: the default */
    uint32_t tag;          /* its tag in x->tags, 0 for none */
    uint32_t stream;
    uint32_t pend;         /* its index in x->pending + 1 while its free is pending, else 0 */
    bool done;             /* its free was completed early: the deferred tick writes nothing */
    bool live;             /* in use (not on the free list) */
    bool omitted;          /* under the minimum size: no entries */
    bool in_window;        /* made while entries were written */
    /* planned's shared buffers (design.md §3): the members of a group live at once are
     * one block, whose entries its owner (the member that made it) writes */
    bool joined;           /* a member that joined another's block: no entries of its own */
    uint32_t owner;        /* a joined member's owner; an owner: itself */
    uint32_t members;      /* an owner: the live ids in its block */
    uint32_t head;         /* an owner: a live member (ring by nxt, prv) */
    uint32_t nxt, prv;     /* the ring of a block's live members */
    strategy_handle sh;    /* the strategy's handle (locate) */
} xrec;

typedef struct xseg {      /* a segment, or for expandable segments a mapped range */
    uint64_t addr, size;    /* addr first: sx_lower_u64's key */
    uint64_t first, count;  /* its blocks, as the walk visited them */
    uint64_t allocated, active, requested; /* the end state's sums (sx_write_segments) */
    uint64_t pool;          /* the private pool it belongs to (strategy_block.pool_id), 0: the default */
    uint32_t stream;
    bool small;
} xseg;

typedef struct xlive {     /* a live record and its address (sx_index_live) */
    uint64_t addr;
    uint32_t r;
} xlive;

typedef struct xsegs {
    xseg *v;
    uint32_t n, cap;
} xsegs;

struct snapshot_export {
    sim_outfile out;
    pickle_writer pw;
    const strategy_ops *ops;
    bool started, expandable, is_torch;
    idmap ids;              /* trace id -> rec (entry.handle) */
    idmap blocks;           /* planned: a live block's address -> its owner rec (entry.handle) */
    bool is_planned;
    xrec *recs;
    uint32_t n_recs, cap_recs;
    uint32_t *free_recs;
    uint32_t n_free, cap_free;
    uint32_t *by_handle;    /* deferred frees: strategy handle -> rec + 1 */
    uint32_t cap_handles;
    uint32_t *pending;      /* recs whose free is requested, not completed */
    uint32_t n_pending, cap_pending;
    uint32_t *due;          /* torch: pending recs past their ready_t, completed at the next poll */
    uint32_t n_due, cap_due;
    xsegs segs, next_segs;  /* what the allocator held at the last walk, and now */
    uint64_t last_reserved, last_dev_allocs, last_dev_frees;
    uint32_t procs;         /* the most processes a tick saw */
    sim_status st;          /* the first failure, SIM_OK while none */
    const char *why;
    uint64_t from_ns, to_ns, min_size; /* snapshot_export_config */
    bool writing;           /* the tick is in the window: its entries are written */
    bool closed;            /* the window ended: the trace and segments are written */
    uint64_t last_us;
    strtab *tags;           /* the allocations' tags, each kept once */
    char trace[512];        /* the trace's file name, the frames' filename */
    xlive *by_addr;         /* at the end: the live records by address (rec_at) */
    uint32_t n_by_addr;
};

/* Builds the segment list from blocks in address order: a segment per region, or
 * per run of mapped blocks of an expandable one. */
typedef struct sx_seg_builder {
    snapshot_export *x;
    xsegs *out;
    uint32_t region;
    uint64_t region_addr, end;
    uint64_t index;        /* blocks visited so far */
    bool open;
} sx_seg_builder;

/* snapshot_export.c */
/* Keep the first failure (x->st, x->why). */
void sx_fail(snapshot_export *x, sim_status st, const char *why);
/* The index of the first of n records (stride bytes apart, each led by a uint64_t
 * key, sorted by it) whose key is at least key. */
uint32_t sx_lower_u64(const void *base, size_t stride, uint32_t n, uint64_t key);
void sx_write_u64s(pickle_writer *w, const char *const *keys, const uint64_t *vals, size_t n);
void sx_write_frames(snapshot_export *x, uint32_t r);
/* A trace entry without frames (a segment's), of private pool `pool` (0: the default;
 * written as pool_id, as PyTorch 2.8 and later write it, when not 0). */
void sx_entry(snapshot_export *x, const char *action, uint64_t addr, uint64_t size, uint32_t stream, uint64_t us,
              uint64_t pool);
void sx_complete_inside(snapshot_export *x, uint64_t addr, uint64_t size, uint64_t us);
/* The pool_id key of an entry, or a segment's segment_pool_id: the tuple of
 * traces/pool_id.h. */
void sx_write_pool(pickle_writer *w, const char *key, uint64_t pool);

/* snapshot_export_segments.c */
int sx_seg_visit(void *ctx, const strategy_block *b);
/* Address order (a walk visits segments in creation order). */
void sx_segs_sort(xsegs *l);
void sx_segments_update(snapshot_export *x, const strategy *s, uint64_t us);
bool sx_segs_add_region(snapshot_export *x, const strategy_block *b, uint64_t bytes, uint64_t us);
bool sx_segs_drop_region(snapshot_export *x, uint64_t addr, uint64_t bytes, uint64_t us);

/* snapshot_export_end.c */
void sx_index_live(snapshot_export *x);
void sx_write_segments(snapshot_export *x, const strategy *s);
void sx_write_settings(snapshot_export *x, const strategy *s);

#endif
