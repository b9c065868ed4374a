/* timeline.h — a bounded record of the memory curve: one row per event until the
 * row budget is reached, then neighbouring rows are merged in pairs, keeping each
 * column's maximum (and the first time of the pair), so peaks survive any amount
 * of downsampling. Memory: at most 2 × max_rows rows, whatever the trace length. */
#ifndef GPUSIM_TIMELINE_H
#define GPUSIM_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct timeline_row {
    uint64_t t;
    uint64_t event;        /* the first event index the row covers */
    uint64_t requested;
    uint64_t allocated;
    uint64_t reserved;
    double fragmentation;
    uint64_t count;        /* events merged into this row (set by timeline_add) */
} timeline_row;

typedef struct timeline {
    timeline_row *rows;
    uint64_t n, max_rows;  /* n ≤ 2 × max_rows */
    uint64_t per_row;      /* events a full row covers */
} timeline;

bool timeline_init(timeline *tl, uint64_t max_rows);
void timeline_release(timeline *tl);
void timeline_add(timeline *tl, const timeline_row *r);
/* The final rows: merged down to at most max_rows. */
void timeline_finish(timeline *tl);

#endif
