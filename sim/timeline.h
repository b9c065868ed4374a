/* timeline.h — a bounded record of the memory curve: one row per sample until the
 * row budget is reached, then neighbouring rows are merged in pairs, keeping each
 * column's minimum and maximum, so peaks and troughs survive any downsampling.
 * Memory: at most 2 × max_rows rows, whatever the trace length.
 * Thread safety: a timeline is not thread-safe; separate ones may run on separate threads. */

/* A merged row keeps the first time and event of its pair: a sawtooth stays a band from
 * its lows to its highs instead of a flat line at its tops. The engine keeps one for
 * --timeline (it prints the maxima); the HTML report's capture keeps one per replay (it
 * draws both). */
#ifndef GPUSIM_TIMELINE_H
#define GPUSIM_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct timeline_row {
    uint64_t t;
    uint64_t event;        /* the first event index the row covers */
    /* maxima over the row (for timeline_add: the sample itself) */
    uint64_t requested;
    uint64_t allocated;
    uint64_t reserved;
    double fragmentation;
    uint64_t count;        /* samples merged into this row (set by timeline_add) */
    /* minima over the row (set by timeline_add from the sample) */
    uint64_t requested_min;
    uint64_t allocated_min;
    uint64_t reserved_min;
    double fragmentation_min;
} timeline_row;

typedef struct timeline {
    timeline_row *rows;
    uint64_t n, max_rows;  /* n ≤ 2 × max_rows */
    uint64_t per_row;      /* samples a full row covers */
} timeline;

/* max_rows 0 counts as 1. False when out of host memory (then tl->rows is NULL
 * and timeline_add does nothing). */
bool timeline_init(timeline *tl, uint64_t max_rows);
void timeline_release(timeline *tl);
/* One sample: r's t, event and maxima (its minima and count are ignored). */
void timeline_add(timeline *tl, const timeline_row *r);
/* The final rows: merged down to at most max_rows. */
void timeline_finish(timeline *tl);

#endif
