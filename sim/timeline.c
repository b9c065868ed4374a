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
    /* a is earlier: keep its t and event; keep every column's maximum */
    if (b->requested > a->requested)
        a->requested = b->requested;
    if (b->allocated > a->allocated)
        a->allocated = b->allocated;
    if (b->reserved > a->reserved)
        a->reserved = b->reserved;
    if (b->fragmentation > a->fragmentation)
        a->fragmentation = b->fragmentation;
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

void timeline_add(timeline *tl, const timeline_row *r)
{
    if (tl->rows == NULL)
        return;
    timeline_row row = *r;
    row.count = 1;
    if (tl->n > 0 && tl->rows[tl->n - 1].count < tl->per_row) {
        merge_into(&tl->rows[tl->n - 1], &row);
        return;
    }
    if (tl->n == 2 * tl->max_rows) {
        halve(tl);
        if (tl->rows[tl->n - 1].count < tl->per_row) {
            merge_into(&tl->rows[tl->n - 1], &row);
            return;
        }
    }
    tl->rows[tl->n++] = row;
}

void timeline_finish(timeline *tl)
{
    while (tl->n > tl->max_rows)
        halve(tl);
}
