/* The live set of a planned arena (plan_live.h): a segment tree over the
 * non-empty buffers in offset order. An empty node has first == NONE. */
#include "plan_live.h"

#include <stdlib.h>

#include "plan.h"

#define NONE UINT64_MAX

typedef struct live_node {
    uint64_t first, last, gap;
} live_node;

struct plan_live {
    uint32_t n, places, leaves;
    uint32_t *pos;      /* buffer -> place, PLAN_NONE for a zero-byte buffer */
    uint32_t *id;       /* place -> buffer */
    uint64_t *off, *size; /* per place */
    bool *live;         /* per place */
    live_node *t;       /* 2 * leaves, root at 1 */
};

typedef struct place_keys {
    const uint64_t *off, *size;
} place_keys;

/* Offset order; at one offset (buffers that share memory, live at once) the smaller
 * first, so that no subtree's gap lies under a larger buffer of another subtree: a
 * gap is measured from the end of the largest buffer at its offset. */
static bool offset_less(const void *ctx, uint32_t a, uint32_t b)
{
    const place_keys *k = ctx;
    if (k->off[a] != k->off[b])
        return k->off[a] < k->off[b];
    return k->size[a] < k->size[b];
}

static live_node join(live_node l, live_node r)
{
    if (l.first == NONE)
        return r;
    if (r.first == NONE)
        return l;
    uint64_t hole = r.first > l.last ? r.first - l.last : 0;
    uint64_t gap = l.gap > r.gap ? l.gap : r.gap;
    return (live_node){.first = l.first, .last = l.last > r.last ? l.last : r.last,
                       .gap = hole > gap ? hole : gap};
}

plan_live *plan_live_new(const uint64_t *off, const uint64_t *size, uint32_t n)
{
    plan_live *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    size_t nn = n ? n : 1;
    l->n = n;
    l->pos = malloc(nn * sizeof *l->pos);
    l->id = malloc(nn * sizeof *l->id);
    if (l->pos == NULL || l->id == NULL) {
        plan_live_free(l);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        l->pos[i] = PLAN_NONE;
        if (size[i] > 0)
            l->id[l->places++] = i;
    }
    place_keys keys = {off, size};
    if (plan_sort(l->id, l->places, offset_less, &keys) != SIM_OK) {
        plan_live_free(l);
        return NULL;
    }
    l->leaves = 1;
    while (l->leaves < l->places)
        l->leaves *= 2;
    size_t np = l->places ? l->places : 1;
    l->off = malloc(np * sizeof *l->off);
    l->size = malloc(np * sizeof *l->size);
    l->live = calloc(np, sizeof *l->live);
    l->t = malloc((size_t)l->leaves * 2 * sizeof *l->t);
    if (l->off == NULL || l->size == NULL || l->live == NULL || l->t == NULL) {
        plan_live_free(l);
        return NULL;
    }
    for (uint32_t p = 0; p < l->places; p++) {
        l->pos[l->id[p]] = p;
        l->off[p] = off[l->id[p]];
        l->size[p] = size[l->id[p]];
    }
    for (uint32_t i = 0; i < 2 * l->leaves; i++)
        l->t[i] = (live_node){.first = NONE};
    return l;
}

void plan_live_free(plan_live *l)
{
    if (l == NULL)
        return;
    free(l->pos);
    free(l->id);
    free(l->off);
    free(l->size);
    free(l->live);
    free(l->t);
    free(l);
}

void plan_live_set(plan_live *l, uint32_t i, bool live)
{
    uint32_t p = l->pos[i];
    if (p == PLAN_NONE || l->live[p] == live)
        return;
    l->live[p] = live;
    uint32_t k = l->leaves + p;
    l->t[k] = live ? (live_node){.first = l->off[p], .last = l->off[p] + l->size[p], .gap = 0}
                   : (live_node){.first = NONE};
    for (k /= 2; k >= 1; k /= 2)
        l->t[k] = join(l->t[2 * k], l->t[2 * k + 1]);
}

bool plan_live_is(const plan_live *l, uint32_t i)
{
    return l->pos[i] != PLAN_NONE && l->live[l->pos[i]];
}

uint64_t plan_live_largest_hole(const plan_live *l, uint64_t arena)
{
    const live_node *r = &l->t[1];
    if (r->first == NONE)
        return arena;
    uint64_t best = r->gap;
    if (r->first > best)
        best = r->first;
    if (arena > r->last && arena - r->last > best)
        best = arena - r->last;
    return best;
}

uint32_t plan_live_next(const plan_live *l, uint32_t *cursor)
{
    for (uint32_t p = *cursor; p < l->places; p++) {
        if (l->live[p]) {
            *cursor = p + 1;
            return l->id[p];
        }
    }
    *cursor = l->places;
    return PLAN_LIVE_END;
}

int plan_live_verify(const plan_live *l)
{
    for (uint32_t k = l->leaves; k < 2 * l->leaves; k++) {
        uint32_t p = k - l->leaves;
        bool live = p < l->places && l->live[p];
        live_node want = live ? (live_node){.first = l->off[p], .last = l->off[p] + l->size[p], .gap = 0}
                              : (live_node){.first = NONE};
        if (l->t[k].first != want.first || (live && (l->t[k].last != want.last || l->t[k].gap != 0)))
            return 1;
    }
    for (uint32_t k = l->leaves - 1; k >= 1; k--) {
        live_node want = join(l->t[2 * k], l->t[2 * k + 1]);
        if (l->t[k].first != want.first ||
            (want.first != NONE && (l->t[k].last != want.last || l->t[k].gap != want.gap)))
            return 1;
    }
    return 0;
}
