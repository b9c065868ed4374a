/* The brute-force reference planners (plan_reference.h): a scan over every placed
 * buffer for every placement. */
#include "plan_reference.h"

#include <stdlib.h>
#include <string.h>

#include "support/check_main.h"

typedef struct ref_placed {
    uint32_t id;
    uint64_t off;
} ref_placed;

static void ref_sort(uint32_t *ids, uint32_t n, plan_less less, const void *ctx)
{
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: stable */
        uint32_t v = ids[i], j = i;
        while (j > 0 && less(ctx, v, ids[j - 1])) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = v;
    }
}

static uint64_t ref_len(const plan_buffer *b) { return (uint64_t)(b->end - b->start); }

/* x before y when its keys (major, then minor) are greater, then by index: a
 * descending lexicographic order, ties kept stable. */
static bool ref_before(uint64_t major_x, uint64_t minor_x, uint64_t major_y, uint64_t minor_y, uint32_t x,
                       uint32_t y)
{
    if (major_x != major_y)
        return major_x > major_y;
    if (minor_x != minor_y)
        return minor_x > minor_y;
    return x < y;
}

/* Spatial: size, then lifetime; temporal: lifetime, then size. */
static bool ref_spatial(const void *ctx, uint32_t x, uint32_t y)
{
    const plan_buffer *b = ctx;
    return ref_before(b[x].size, ref_len(&b[x]), b[y].size, ref_len(&b[y]), x, y);
}

static bool ref_temporal(const void *ctx, uint32_t x, uint32_t y)
{
    const plan_buffer *b = ctx;
    return ref_before(ref_len(&b[x]), b[x].size, ref_len(&b[y]), b[y].size, x, y);
}

static uint64_t up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* XLA, one order: for every buffer, the time-overlapping placed chunks sorted by
 * offset (insertion sort), merged into runs; the gaps (start, end) listed; the
 * smallest that fits at its aligned start chosen. */
static uint64_t ref_xla_order(const plan_buffer *b, uint32_t n, plan_less less, uint64_t align,
                              uint64_t limit, uint64_t *off, uint32_t *heaps)
{
    uint32_t *todo = malloc((n + 1) * sizeof *todo), nt = 0;
    ref_placed *pl = malloc((n + 1) * sizeof *pl);
    uint64_t (*ch)[2] = malloc((n + 1) * sizeof *ch);
    uint64_t (*gaps)[2] = malloc((n + 2) * sizeof *gaps);
    for (uint32_t i = 0; i < n; i++) {
        off[i] = 0;
        if (b[i].size)
            todo[nt++] = i;
    }
    ref_sort(todo, nt, less, b);
    uint64_t base = 0;
    *heaps = 0;
    do {
        uint32_t np = 0, left = 0;
        uint64_t heap = 0;
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t id = todo[t];
            uint32_t k = 0;
            for (uint32_t p = 0; p < np; p++) {
                if (!plan_overlap(&b[pl[p].id], &b[id]))
                    continue;
                uint64_t o = pl[p].off, e = o + b[pl[p].id].size;
                uint32_t j = k++;
                while (j > 0 && ch[j - 1][0] > o) {
                    ch[j][0] = ch[j - 1][0];
                    ch[j][1] = ch[j - 1][1];
                    j--;
                }
                ch[j][0] = o;
                ch[j][1] = e;
            }
            uint32_t ng = 0;
            uint64_t gap_start = 0;
            for (uint32_t i = 0; i < k;) {
                uint64_t ro = ch[i][0], re = ch[i][1];
                for (i++; i < k && ch[i][0] < re; i++)
                    re = ch[i][1] > re ? ch[i][1] : re;
                if (ro >= gap_start && ro - gap_start >= b[id].size) {
                    gaps[ng][0] = gap_start;
                    gaps[ng++][1] = ro;
                }
                if (up(re, align) > gap_start)
                    gap_start = up(re, align);
            }
            gaps[ng][0] = gap_start;
            gaps[ng++][1] = (uint64_t)INT64_MAX;
            uint64_t best = 0, best_size = 0;
            bool found = false;
            for (uint32_t g = 0; g < ng; g++) {
                uint64_t at = up(gaps[g][0], align);
                if (gaps[g][1] - b[id].size < at)
                    continue;
                if (!found || gaps[g][1] - gaps[g][0] < best_size) {
                    found = true;
                    best = at;
                    best_size = gaps[g][1] - gaps[g][0];
                }
            }
            if (best + b[id].size <= limit || heap == 0) {
                off[id] = best;
                pl[np++] = (ref_placed){id, best};
                if (best + b[id].size > heap)
                    heap = best + b[id].size;
            } else {
                todo[left++] = id;
            }
        }
        for (uint32_t p = 0; p < np; p++)
            off[pl[p].id] += base;
        base += heap;
        (*heaps)++;
        nt = left;
    } while (nt > 0);
    free(todo);
    free(pl);
    free(ch);
    free(gaps);
    return base;
}

uint64_t plan_ref_xla(const plan_buffer *b, uint32_t n, plan_xla_order order, uint64_t align, uint64_t limit,
                      uint64_t *off, const char **won)
{
    uint64_t lim = limit ? limit : UINT64_MAX;
    uint32_t heaps;
    if (order == PLAN_XLA_TEMPORAL) {
        *won = "temporal";
        return ref_xla_order(b, n, ref_temporal, align, lim, off, &heaps);
    }
    uint64_t s = ref_xla_order(b, n, ref_spatial, align, lim, off, &heaps);
    *won = "spatial";
    if (order == PLAN_XLA_SPATIAL)
        return s;
    uint64_t *o2 = malloc((n + 1) * sizeof *o2);
    uint64_t t = ref_xla_order(b, n, ref_temporal, align, lim, o2, &heaps);
    if (t < s) {
        memcpy(off, o2, n * sizeof *off);
        s = t;
        *won = "temporal";
    }
    free(o2);
    return s;
}

/* TFLite: the placed list kept in offset order, a new one inserted after those at
 * its offset, walked whole for every placement. gpu selects the delegate's rules. */
uint64_t plan_ref_tflite(const plan_buffer *b, uint32_t n, uint64_t align, bool gpu, uint64_t *off)
{
    uint32_t *ord = malloc((n + 1) * sizeof *ord);
    ref_placed *pl = malloc((n + 1) * sizeof *pl);
    uint32_t np = 0;
    for (uint32_t i = 0; i < n; i++)
        ord[i] = i;
    for (uint32_t i = 1; i < n; i++) { /* insertion sort with the planner's order */
        uint32_t v = ord[i], j = i;
        for (; j > 0; j--) {
            uint32_t u = ord[j - 1];
            bool before;
            if (gpu) {
                before = b[v].size > b[u].size;
            } else {
                bool wv = b[v].start == 0 && b[v].end == PLAN_FOREVER;
                bool wu = b[u].start == 0 && b[u].end == PLAN_FOREVER;
                if (wv != wu)
                    before = wv;
                else if (wv)
                    before = v < u;
                else if (b[v].size != b[u].size)
                    before = b[v].size > b[u].size;
                else
                    before = b[v].start < b[u].start || (b[v].start == b[u].start && v < u);
            }
            if (!before)
                break;
            ord[j] = u;
        }
        ord[j] = v;
    }
    uint64_t high = 0;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t id = ord[t];
        uint64_t size = b[id].size;
        if (!gpu && size == 0) {
            off[id] = 0;
            continue;
        }
        uint64_t best = UINT64_MAX, fit = UINT64_MAX, cur = 0;
        for (uint32_t p = 0; p < np; p++) {
            const plan_buffer *o = &b[pl[p].id];
            if (o->end < b[id].start || o->start > b[id].end)
                continue;
            uint64_t po = pl[p].off;
            if (gpu) {
                if (po >= cur && po - cur >= size && po - cur < fit) {
                    fit = po - cur;
                    best = cur;
                }
                cur = up(po + o->size, align) > cur ? up(po + o->size, align) : cur;
            } else {
                uint64_t a = up(cur, align);
                if (a + size <= po && po - a < fit) {
                    best = a;
                    fit = po - cur;
                }
                cur = po + o->size > cur ? po + o->size : cur;
                if (fit == 0)
                    break;
            }
        }
        if (best == UINT64_MAX)
            best = gpu ? cur : up(cur, align);
        off[id] = best;
        high = best + size > high ? best + size : high;
        uint32_t j = np++;
        while (j > 0 && pl[j - 1].off > best) {
            pl[j] = pl[j - 1];
            j--;
        }
        pl[j] = (ref_placed){id, best};
    }
    free(ord);
    free(pl);
    return high;
}

/* No two buffers that share a time share a byte. */
void plan_ref_check_disjoint(const plan_buffer *b, uint32_t n, const uint64_t *off, uint64_t heap)
{
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].size == 0)
            continue;
        EXPECT(off[i] + b[i].size <= heap);
        for (uint32_t j = i + 1; j < n; j++) {
            if (b[j].size == 0 || !plan_overlap(&b[i], &b[j]))
                continue;
            EXPECT_MSG(off[i] + b[i].size <= off[j] || off[j] + b[j].size <= off[i],
                       "buffers %u and %u overlap in time and space", i, j);
        }
    }
}

/* XLA with shares (plan_xla.h rule 7), one order, brute force: the groups by a scan of
 * share[]; a root's placed neighbours are those live at any member's time, its gaps
 * must hold the group's largest member, and every member is committed at its offset.
 * The temporal order sorts copies of the roots whose end is their group's last. */
uint64_t plan_ref_xla_shared(const plan_buffer *b, uint32_t n, const uint32_t *root, bool temporal, uint64_t align,
                             uint64_t limit, uint64_t *off)
{
    plan_buffer *keys = calloc(n + 1, sizeof *keys);
    uint64_t *need = malloc((n + 1) * sizeof *need);
    uint32_t *todo = malloc((n + 1) * sizeof *todo), nt = 0;
    ref_placed *pl = malloc((n + 1) * sizeof *pl);
    uint64_t(*ch)[2] = malloc((n + 1) * sizeof *ch);
    for (uint32_t i = 0; i < n; i++) {
        keys[i] = b[i];
        need[i] = b[i].size;
    }
    for (uint32_t i = 0; i < n; i++) {
        off[i] = 0;
        uint32_t r = root[i];
        if (r != i) {
            keys[r].end = b[i].end > keys[r].end ? b[i].end : keys[r].end;
            need[r] = b[i].size > need[r] ? b[i].size : need[r];
        } else if (b[i].size) {
            todo[nt++] = i;
        }
    }
    ref_sort(todo, nt, temporal ? ref_temporal : ref_spatial, temporal ? keys : b);
    uint64_t base = 0;
    do {
        uint32_t np = 0, left = 0;
        uint64_t heap = 0;
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t id = todo[t], k = 0;
            for (uint32_t p = 0; p < np; p++) {
                bool live = false;
                for (uint32_t m = 0; m < n && !live; m++)
                    live = root[m] == id && plan_overlap(&b[pl[p].id], &b[m]);
                if (!live)
                    continue;
                uint64_t o = pl[p].off, e = o + b[pl[p].id].size;
                uint32_t j = k++;
                while (j > 0 && ch[j - 1][0] > o) {
                    ch[j][0] = ch[j - 1][0];
                    ch[j][1] = ch[j - 1][1];
                    j--;
                }
                ch[j][0] = o;
                ch[j][1] = e;
            }
            /* the gaps between merged runs, then after the last; the smallest that holds
             * need[id] from its (aligned) start, the first of equal ones */
            uint64_t gap_start = 0, best = 0, best_size = 0;
            bool found = false;
            for (uint32_t i = 0; i <= k;) {
                uint64_t ro = (uint64_t)INT64_MAX, re = 0;
                if (i < k) {
                    ro = ch[i][0];
                    re = ch[i][1];
                    for (i++; i < k && ch[i][0] < re; i++)
                        re = ch[i][1] > re ? ch[i][1] : re;
                } else {
                    i++;
                }
                if (ro >= gap_start && ro - gap_start >= need[id] && (!found || ro - gap_start < best_size)) {
                    found = true;
                    best = gap_start;
                    best_size = ro - gap_start;
                }
                if (up(re, align) > gap_start)
                    gap_start = up(re, align);
            }
            if (best + b[id].size <= limit || heap == 0) {
                for (uint32_t m = 0; m < n; m++) {
                    if (root[m] != id || b[m].size == 0)
                        continue;
                    off[m] = best;
                    pl[np++] = (ref_placed){m, best};
                    heap = best + b[m].size > heap ? best + b[m].size : heap;
                }
            } else {
                todo[left++] = id;
            }
        }
        for (uint32_t p = 0; p < np; p++)
            off[pl[p].id] += base;
        base += heap;
        nt = left;
    } while (nt > 0);
    free(keys);
    free(need);
    free(todo);
    free(pl);
    free(ch);
    return base;
}

/* Buffers of different groups that share a time share no byte; a group's members
 * all sit at its root's offset. */
void plan_ref_check_disjoint_groups(const plan_buffer *b, uint32_t n, const uint32_t *root, const uint64_t *off,
                                    uint64_t heap)
{
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].size == 0)
            continue;
        EXPECT(off[i] + b[i].size <= heap);
        EXPECT_MSG(off[i] == off[root[i]], "buffer %u is not at its group's offset", i);
        for (uint32_t j = i + 1; j < n; j++) {
            if (b[j].size == 0 || root[i] == root[j] || !plan_overlap(&b[i], &b[j]))
                continue;
            EXPECT_MSG(off[i] + b[i].size <= off[j] || off[j] + b[j].size <= off[i],
                       "buffers %u and %u of two groups overlap in time and space", i, j);
        }
    }
}
