/* TFLite's arena planner and the GPU delegate's greedy-by-size assignment
 * (plan_tflite.h for the rules and their source). Both walk the placed buffers
 * that share a time with the one being placed, in offset order; plan_index finds
 * those, and a sort by (offset, placement number) gives the order the upstream
 * sorted vectors keep. */
#include "plan_tflite.h"

#include <stdlib.h>

#include "plan_index.h"

typedef struct placed {
    uint64_t off, size;
    uint32_t seq; /* placement number: equal offsets keep insertion order */
} placed;

typedef struct tfl_work {
    const plan_buffer *b;
    plan_index *index;
    uint32_t *seq;     /* per buffer */
    uint32_t n_placed;
    placed *hits;
    uint32_t cap_hits;
} tfl_work;

static int placed_cmp(const void *pa, const void *pb)
{
    const placed *a = pa, *b = pb;
    if (a->off != b->off)
        return a->off < b->off ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The placed buffers meeting b[id]'s interval, sorted; *k their number. */
static sim_status gather(tfl_work *w, uint32_t id, const uint64_t *offsets, uint32_t *k)
{
    const uint32_t *ids;
    sim_status st = plan_index_query(w->index, w->b[id].start, w->b[id].end, &ids, k);
    if (st != SIM_OK)
        return st;
    if (*k > w->cap_hits) {
        uint32_t cap = w->cap_hits ? w->cap_hits : 256;
        while (cap < *k)
            cap *= 2;
        placed *p = realloc(w->hits, (size_t)cap * sizeof *p);
        if (p == NULL)
            return SIM_ENOMEM;
        w->hits = p;
        w->cap_hits = cap;
    }
    for (uint32_t i = 0; i < *k; i++)
        w->hits[i] = (placed){.off = offsets[ids[i]], .size = w->b[ids[i]].size, .seq = w->seq[ids[i]]};
    qsort(w->hits, *k, sizeof *w->hits, placed_cmp);
    return SIM_OK;
}

static void record(tfl_work *w, uint32_t id)
{
    w->seq[id] = w->n_placed++;
    plan_index_commit(w->index, id);
}

/* SimpleMemoryArena::Allocate for b[id]. */
static sim_status arena_place(tfl_work *w, uint32_t id, uint64_t align, uint64_t *offsets, uint64_t *high)
{
    uint64_t size = w->b[id].size;
    if (size == 0) {
        offsets[id] = 0;
        return SIM_OK;
    }
    uint32_t k;
    sim_status st = gather(w, id, offsets, &k);
    if (st != SIM_OK)
        return st;
    bool found = false;
    uint64_t best = 0, best_fit = UINT64_MAX, current = 0;
    for (uint32_t i = 0; i < k; i++) {
        const placed *a = &w->hits[i];
        uint64_t cand = plan_align_up(current, align);
        if (cand > UINT64_MAX - size)
            return SIM_EUSAGE; /* the source's CheckedAdd fails */
        if (cand + size <= a->off && a->off - cand < best_fit) {
            best = cand;
            best_fit = a->off - current; /* unaligned, as the source stores it */
            found = true;
        }
        uint64_t end = a->off + a->size;
        if (end > current)
            current = end;
        if (best_fit == 0)
            break;
    }
    if (!found)
        best = plan_align_up(current, align);
    if (best == UINT64_MAX || best > UINT64_MAX - size)
        return SIM_EUSAGE;
    offsets[id] = best;
    if (best + size > *high)
        *high = best + size;
    record(w, id);
    return SIM_OK;
}

/* GreedyBySizeAssignment's placement of b[id]. */
static sim_status gpu_place(tfl_work *w, uint32_t id, uint64_t align, uint64_t *offsets, uint64_t *total)
{
    uint64_t size = w->b[id].size;
    uint32_t k;
    sim_status st = gather(w, id, offsets, &k);
    if (st != SIM_OK)
        return st;
    bool found = false;
    uint64_t best = 0, best_diff = UINT64_MAX, prev = 0;
    for (uint32_t i = 0; i < k; i++) {
        const placed *a = &w->hits[i];
        if (a->off >= prev) {
            uint64_t diff = a->off - prev;
            if (diff >= size && diff < best_diff) {
                best_diff = diff;
                best = prev;
                found = true;
            }
        }
        uint64_t end = plan_align_up(a->off + a->size, align);
        if (end > prev)
            prev = end;
    }
    if (!found)
        best = prev;
    if (best == UINT64_MAX || best > UINT64_MAX - size)
        return SIM_EUSAGE;
    offsets[id] = best;
    if (best + size > *total)
        *total = best + size;
    record(w, id);
    return SIM_OK;
}

static bool whole_run(const plan_buffer *b)
{
    return b->start == 0 && b->end == PLAN_FOREVER;
}

static bool arena_less(const void *ctx, uint32_t x, uint32_t y)
{
    const plan_buffer *b = ctx;
    bool wx = whole_run(&b[x]), wy = whole_run(&b[y]);
    if (wx || wy)
        return wx && wy ? x < y : wx;
    if (b[x].size != b[y].size)
        return b[x].size > b[y].size;
    if (b[x].start != b[y].start)
        return b[x].start < b[y].start;
    return x < y;
}

static bool size_less(const void *ctx, uint32_t x, uint32_t y)
{
    const plan_buffer *b = ctx;
    return b[x].size > b[y].size;
}

typedef enum tfl_kind { TFL_ARENA_SORTED, TFL_ARENA_IN_ORDER, TFL_GPU } tfl_kind;

static sim_status run(const plan_buffer *b, uint32_t n, uint64_t align, tfl_kind kind, uint64_t *offsets,
                      plan_result *res)
{
    if (align == 0)
        return SIM_EINTERNAL;
    size_t nn = n ? n : 1;
    tfl_work w = {.b = b, .index = plan_index_new(b, n), .seq = malloc(nn * sizeof(uint32_t))};
    uint32_t *order = malloc(nn * sizeof *order);
    sim_status st = SIM_ENOMEM;
    if (w.index == NULL || w.seq == NULL || order == NULL)
        goto done;
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    st = SIM_OK;
    if (kind == TFL_ARENA_SORTED)
        st = plan_sort(order, n, arena_less, b);
    else if (kind == TFL_GPU)
        st = plan_sort(order, n, size_less, b);
    uint64_t high = 0;
    for (uint32_t i = 0; i < n && st == SIM_OK; i++) {
        if (kind == TFL_GPU)
            st = gpu_place(&w, order[i], align, offsets, &high);
        else
            st = arena_place(&w, order[i], align, offsets, &high);
    }
    *res = (plan_result){.heap_size = high, .n_heaps = 1,
                         .order = kind == TFL_GPU ? "greedy_by_size" : "arena"};
done:
    free(order);
    free(w.seq);
    free(w.hits);
    plan_index_free(w.index);
    return st;
}

sim_status plan_tflite(const plan_buffer *b, uint32_t n, uint64_t alignment, uint64_t *offsets,
                       plan_result *res)
{
    return run(b, n, alignment, TFL_ARENA_SORTED, offsets, res);
}

sim_status plan_tflite_gpu(const plan_buffer *b, uint32_t n, uint64_t alignment, uint64_t *offsets,
                           plan_result *res)
{
    return run(b, n, alignment, TFL_GPU, offsets, res);
}

sim_status plan_tflite_arena_in_order(const plan_buffer *b, uint32_t n, uint64_t alignment,
                                      uint64_t *offsets, plan_result *res)
{
    return run(b, n, alignment, TFL_ARENA_IN_ORDER, offsets, res);
}
