/* snapshot_export.h — what the simulated allocator did, written as a PyTorch CUDA
 * memory snapshot: the pickle torch.cuda.memory._dump_snapshot writes, which
 * pytorch.org/memory_viz opens and gpusim reads back (traces/IMPORT.md). It is written
 * as the replay runs, through an engine observer (sim/engine.h), to a temporary file
 * that snapshot_export_finish renames into place (none is left on error). */

/* What it holds:
 *   - device_traces[0]: one entry per thing that happened, in replay order, with
 *     time_us = t / 1000: "alloc" (the block's simulated address, the requested size,
 *     the stream), "free_requested" at the program's free and "free_completed" when
 *     the memory came back (at once, or at ready_t for a deferred free), "oom" (the
 *     request and the device's free bytes), and "segment_alloc"/"segment_free" (or,
 *     for PyTorch's expandable segments, "segment_map"/"segment_unmap" of the mapped
 *     ranges) for what the allocator took from and gave back to the device: the
 *     strategy's regions (BFC regions, PyTorch segments, pool chunks, raw
 *     allocations, the planned arena) shown as segments;
 *   - segments: the allocator's state at the end (with --on-oom=stop after an OOM:
 *     at the OOM), each segment with its blocks in address order;
 *   - allocator_settings: PyTorch's keys; under torch its effective alloc-conf;
 *   - frames, what the viewer shows for a block: on each allocation's alloc, free
 *     and completion entries and on its block in the end state, one frame
 *     {filename: the trace's file name, line: the alloc's event number, name: its
 *     tag, else "alloc of id N"}; "live at the start (id N)", line 0, for a block of
 *     a recorded start state; [] for free blocks (segment entries carry none).
 * Zero-byte allocations hold no block and leave no entry (as in PyTorch).
 * Cost: O(1) per event (the allocation's block from ops->locate), plus, at an event
 * where what the strategy holds from the device changed, O(segments) when it took
 * exactly one region and gave nothing back, or gave exactly one back at a free
 * (raw's own allocation), else one walk of its blocks (garbage collection, trims,
 * empty_cache, expandable segments). Nothing is allocated per event but amortized
 * array growth.
 * One process only (a snapshot is one program's allocator); a strategy without
 * `locate` (`ideal`, which places nothing at stable addresses) cannot be exported.
 *
 * A part of a long replay, for a viewer that cannot open it all (PyTorch's own
 * stops near 1 GB): a window [from_ns, to_ns] of the replay's time keeps the
 * entries of the ticks in it and of the first tick after it (an observer sees
 * the state after a tick's event), and `segments` is the state after that one;
 * what was live at the window's start is what a
 * recording whose ring buffer began there shows (blocks without an alloc). A
 * minimum size keeps the entries of allocations of at least that many bytes
 * only (the decimated view: every segment and block is still in `segments`); a
 * smaller one made in the window and still live at its end gets its alloc entry
 * at the window's end, so that the viewer's undoing never finds two blocks at
 * once at one address. */
#ifndef GPUSIM_REPORTS_SNAPSHOT_EXPORT_H
#define GPUSIM_REPORTS_SNAPSHOT_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/seed.h"
#include "sim/status.h"
#include "sim/strategy.h"

typedef struct snapshot_export snapshot_export;

typedef struct snapshot_export_config {
    const char *path;          /* the .pickle to write (not "-") */
    const strategy_ops *ops;   /* the replay's strategy */
    const sim_seed *seed;      /* the recorded start state the replay starts from, or NULL */
    uint64_t from_ns, to_ns;   /* the window of replay time written (0, UINT64_MAX: all) */
    uint64_t min_size;         /* entries only for allocations of at least this many bytes (0: all) */
} snapshot_export_config;

/* Why ops cannot be exported (a sentence, written into buf of n bytes, and buf
 * returned), or NULL when it can. */
const char *snapshot_export_unsupported(const strategy_ops *ops, char *buf, size_t n);

/* Open the temporary file. SIM_EUSAGE for a strategy that cannot be exported or the
 * path "-", SIM_EIO when the file cannot be created, SIM_ENOMEM. */
sim_status snapshot_export_open(const snapshot_export_config *cfg, snapshot_export **out, sim_error *err);
/* The engine_observer: add it to engine_config.observers with the exporter as its context. */
void snapshot_export_observe(void *ctx, const engine_tick *t);
/* After engine_run succeeded: write the segments and settings, commit the file and
 * free x. SIM_EUSAGE when the replay had several processes, SIM_EIO, SIM_ENOMEM
 * (then no file is left). */
sim_status snapshot_export_finish(snapshot_export *x, const sim_run *run, sim_error *err);
/* The run failed: remove the temporary file and free x (NULL is fine). */
void snapshot_export_discard(snapshot_export *x);

#endif
