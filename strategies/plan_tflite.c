/* TFLite's arena planner and the GPU delegate's greedy-by-size assignment
 * (plan_tflite.h for the rules and their source). Both walk the placed buffers
 * that share a time with the one being placed, in offset order; plan_index finds
 * those, and a sort by (offset, placement number) gives the order the upstream
 * sorted vectors keep. */
#include "plan_tflite.h"

#include <stdlib.h>

#include "plan_index.h"

typedef struct tfl_work {
    const plan_buffer *b;
    plan_index *index;
    uint32_t n_placed; /* the chunks' seq: equal offsets keep placement order */
} tfl_work;

/* The placed buffers meeting b[id]'s interval, in offset then placement order
 * (touching resident ones merged, which changes no gap for a positive size). */
static sim_status gather(tfl_work *w, uint32_t id, plan_chunk **c, uint32_t *k)
{
    if (w->b[id].size == 0) /* the GPU planner's zero-byte tensors take even an empty gap */
        return plan_index_query_all(w->index, w->b[id].start, w->b[id].end, c, k);
    return plan_index_query(w->index, w->b[id].start, w->b[id].end, c, k);
}

static void record(tfl_work *w, uint32_t id, uint64_t off)
{
    plan_index_commit(w->index, id, off, w->n_placed++);
}

/* SimpleMemoryArena::Allocate's offset for size bytes among the placed chunks
 * hits[0..k) that meet its interval, or UINT64_MAX when an offset overflows (the
 * source's CheckedAdd fails). */
static uint64_t arena_offset(const plan_chunk *hits, uint32_t k, uint64_t size, uint64_t align)
{
    bool found = false;
    uint64_t best = 0, best_fit = UINT64_MAX, current = 0;
    for (uint32_t i = 0; i < k; i++) {
        const plan_chunk *a = &hits[i];
        uint64_t cand = plan_align_up(current, align);
        if (cand > UINT64_MAX - size)
            return UINT64_MAX;
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
    return found ? best : plan_align_up(current, align);
}

/* GreedyBySizeAssignment's offset for size bytes among the same chunks. */
static uint64_t gpu_offset(const plan_chunk *hits, uint32_t k, uint64_t size, uint64_t align)
{
    bool found = false;
    uint64_t best = 0, best_diff = UINT64_MAX, prev = 0;
    for (uint32_t i = 0; i < k; i++) {
        const plan_chunk *a = &hits[i];
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
    return found ? best : prev;
}

/* Place b[id] by the arena's rule (gpu false; a zero-byte tensor takes no place) or
 * the GPU delegate's: SIM_EUSAGE when its end would pass UINT64_MAX; else at its
 * offset, *high raised to its end, the placement recorded. */
static sim_status place(tfl_work *w, uint32_t id, bool gpu, uint64_t align, uint64_t *offsets, uint64_t *high)
{
    uint64_t size = w->b[id].size;
    if (size == 0 && !gpu) {
        offsets[id] = 0;
        return SIM_OK;
    }
    plan_chunk *hits;
    uint32_t k;
    sim_status st = gather(w, id, &hits, &k);
    if (st != SIM_OK)
        return st;
    uint64_t off = gpu ? gpu_offset(hits, k, size, align) : arena_offset(hits, k, size, align);
    if (off == UINT64_MAX || off > UINT64_MAX - size)
        return SIM_EUSAGE;
    offsets[id] = off;
    if (off + size > *high)
        *high = off + size;
    record(w, id, off);
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
    tfl_work w = {.b = b, .index = plan_index_new(b, n)};
    uint32_t *order = malloc(nn * sizeof *order);
    sim_status st = SIM_ENOMEM;
    if (w.index == NULL || order == NULL)
        goto done;
    plan_index_set_alignment(w.index, align); /* both rules place at aligned offsets (or 0) */
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    st = SIM_OK;
    if (kind == TFL_ARENA_SORTED)
        st = plan_sort(order, n, arena_less, b);
    else if (kind == TFL_GPU)
        st = plan_sort(order, n, size_less, b);
    uint64_t high = 0;
    for (uint32_t i = 0; i < n && st == SIM_OK; i++)
        st = place(&w, order[i], kind == TFL_GPU, align, offsets, &high);
    *res = (plan_result){.heap_size = high, .n_heaps = 1,
                         .order = kind == TFL_GPU ? "greedy_by_size" : "arena"};
done:
    free(order);
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
