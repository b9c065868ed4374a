/* capture.h — what a picture of one replay needs, gathered through the engine's
 * observers (engine.h: engine_tick): the device's memory curve as per-column minima
 * and maxima (sim/timeline.h), the live allocations and memory map where reserved
 * memory first peaked, and the same at the first OOM. Drives replays and renders
 * nothing (reports/html.h draws it). */

/* In passes: (1) the whole replay, keeping the curve, the marks and empty_caches with
 * their process; (2) a replay stopped at the event where reserved memory first peaked,
 * with the live allocations up to there (trace id, size, tag), then walked for the
 * memory map (each used block named by its allocation where that is known); and (3)
 * when the run ran out of memory, the same stopped at its first OOM. The first pass's
 * result is exactly a plain replay's: the observer only watches. */
#ifndef GPUSIM_CAPTURE_H
#define GPUSIM_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/timeline.h"

/* Fresh sources from the start of every trace, once per pass. */
typedef struct capture_sources {
    uint32_t n;
    sim_status (*open)(void *ctx, sim_event_source *srcs, sim_error *err);
    void (*close)(void *ctx);
    void *ctx;
} capture_sources;

typedef struct capture_block {
    strategy_block b; /* pool points to a static string or is NULL */
    uint32_t proc;
    /* a used or pending block whose allocation is known (the strategy located it,
     * ops->locate: every block of a live allocation of the trace's; without locate,
     * it is the only live allocation of the block's process, stream and requested
     * size, in the only such block): that allocation's trace id and tag (NULL if
     * none; owned by the capture) */
    bool known;
    uint64_t id;
    const char *tag;
    uint32_t alike;  /* not known, without locate: the live allocations of that process,
                      * stream and size (0 under a strategy with locate) */
} capture_block;

/* A mark or empty_cache of the trace, on the curve's axis. */
typedef struct capture_mark {
    uint64_t event; /* the curve's event number (1..events) */
    uint64_t t;
    uint32_t process; /* index into run->procs */
    bool empty_cache; /* an empty_cache event, else a mark */
    char name[64];    /* the mark's name ("" for empty_cache) */
} capture_mark;

#define CAPTURE_MAX_MARKS 4096u

typedef struct capture_alloc {
    uint64_t id;
    uint64_t size;
    uint32_t source;
    uint32_t stream;
    bool pending;     /* freed by the program, memory back at ready_t (after the peak) */
    char tag[120];
} capture_alloc;

#define CAPTURE_TOP 20u
#define CAPTURE_PLAN_RECTS 4000u /* the largest buffers of a plan drawn */

/* One buffer of an offline plan (strategy planned): offset × lifetime. */
typedef struct capture_rect {
    uint64_t off, size;
    uint64_t first, last; /* the process's alloc/free events (0-based) it is live at */
} capture_rect;

/* The allocator's state at one moment: its blocks and the largest live allocations.
 * The pointers are owned by the capture. */
typedef struct capture_view {
    uint64_t event;            /* the engine's global event number it was taken after */
    uint64_t t;
    const char *what;          /* "the peak" or "the OOM" */
    const capture_block *blocks;
    uint64_t n_blocks;
    bool blocks_truncated;
    const capture_alloc *top;  /* largest first */
    uint32_t n_top;
    uint64_t live_count, live_bytes;
    uint64_t request;          /* at an OOM: the failing request as the allocator saw it; else 0 */
} capture_view;

/* Everything here is owned by the capture (capture_free). */
typedef struct capture {
    sim_run *run;              /* the first pass: the replay's result */
    /* the curve over measured events: rows[i].event numbers them 1..events (the
     * observer's count, so events of a process an OOM ended take no column) */
    timeline curve;
    uint64_t events;           /* measured events (observer ticks) */
    /* with several processes, each one's own curve (its requested, allocated and
     * reserved at its ticks, numbered as curve's); n_proc_curves is 0 for one process */
    timeline *proc_curves;
    uint32_t n_proc_curves;
    uint64_t oom_event;        /* that number for the first OOM, 0 if none */
    uint32_t oom_process;      /* the process of the first OOM */
    /* the first CAPTURE_MAX_MARKS marks and empty_caches of every process, in order */
    capture_mark *marks;
    uint32_t n_marks;
    uint64_t marks_dropped; /* those past CAPTURE_MAX_MARKS */
    /* the memory map at the peak (second pass) */
    capture_block *blocks;
    uint64_t n_blocks;
    bool blocks_truncated;
    char *tags;                     /* the blocks' tags */
    capture_alloc top[CAPTURE_TOP]; /* largest live allocations at the peak, largest first */
    uint32_t n_top;
    uint64_t live_count, live_bytes;
    /* the plan of the first process when the strategy plans offline (planned):
     * its largest CAPTURE_PLAN_RECTS buffers, largest first; n_rects = 0 otherwise */
    capture_rect *rects;
    uint32_t n_rects, plan_buffers;
    uint64_t plan_heap, plan_events;
    /* the same at the first OOM (third pass), when there was one (oom_view.n_top and
     * n_blocks are 0 otherwise); oom_view's arrays are oom_blocks and oom_top */
    bool has_oom_view;
    capture_view oom_view;
    capture_block *oom_blocks;
    char *oom_tags;
    capture_alloc oom_top[CAPTURE_TOP];
} capture;

/* The view at the peak (the capture's own fields; valid while c lives). */
capture_view capture_peak_view(const capture *c);

/* Replay cfg over src twice (see above) keeping at most `buckets` curve rows.
 * cfg->progress and cfg->observers (called as in a plain replay, after the capture's
 * own) are used for the first pass only. On success *out owns the run. Errors: engine_run's. */
sim_status capture_run(const engine_config *cfg, const capture_sources *src, uint32_t buckets, capture **out,
                       sim_error *err);
void capture_free(capture *c);

#endif
