/* The min/max curve (timeline.h): rows merged in pairs, per_row doubling. */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

bool timeline_init(timeline *tl, uint64_t max_rows)
{
    memset(tl, 0, sizeof *tl);
    if (max_rows == 0)
        max_rows = 1;
    tl->max_rows = max_rows;
    tl->per_row = 1;
    tl->rows = malloc((size_t)(2 * max_rows) * sizeof *tl->rows);
    return tl->rows != NULL;
}

void timeline_release(timeline *tl)
{
    free(tl->rows);
    memset(tl, 0, sizeof *tl);
}

static void merge_into(timeline_row *a, const timeline_row *b)
{
    /* a is earlier: keep its t and event; keep every column's minimum and maximum */
#define HI(f) if (b->f > a->f) a->f = b->f
#define LO(f) if (b->f < a->f) a->f = b->f
    HI(requested); LO(requested_min);
    HI(allocated); LO(allocated_min);
    HI(reserved); LO(reserved_min);
    HI(fragmentation); LO(fragmentation_min);
#undef HI
#undef LO
    a->count += b->count;
}

static void halve(timeline *tl)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < tl->n; i += 2) {
        timeline_row r = tl->rows[i];
        if (i + 1 < tl->n)
            merge_into(&r, &tl->rows[i + 1]);
        tl->rows[k++] = r;
    }
    tl->n = k;
    tl->per_row *= 2;
}

/* Sample r into row a (a's t and event stay). */
static inline void sample_into(timeline_row *a, const timeline_row *r)
{
#define HI(f, v) if (r->v > a->f) a->f = r->v
#define LO(f, v) if (r->v < a->f) a->f = r->v
    HI(requested, requested); LO(requested_min, requested);
    HI(allocated, allocated); LO(allocated_min, allocated);
    HI(reserved, reserved); LO(reserved_min, reserved);
    HI(fragmentation, fragmentation); LO(fragmentation_min, fragmentation);
#undef HI
#undef LO
    a->count++;
}

void timeline_add(timeline *tl, const timeline_row *r)
{
    if (tl->rows == NULL)
        return;
    if (tl->n > 0 && tl->rows[tl->n - 1].count < tl->per_row) {
        sample_into(&tl->rows[tl->n - 1], r);
        return;
    }
    if (tl->n == 2 * tl->max_rows) {
        halve(tl);
        if (tl->rows[tl->n - 1].count < tl->per_row) {
            sample_into(&tl->rows[tl->n - 1], r);
            return;
        }
    }
    timeline_row *row = &tl->rows[tl->n++];
    *row = (timeline_row){.t = r->t, .event = r->event, .requested = r->requested, .allocated = r->allocated,
                          .reserved = r->reserved, .fragmentation = r->fragmentation, .count = 1,
                          .requested_min = r->requested, .allocated_min = r->allocated,
                          .reserved_min = r->reserved, .fragmentation_min = r->fragmentation};
}

void timeline_finish(timeline *tl)
{
    while (tl->n > tl->max_rows)
        halve(tl);
}
