/* The spooled alloc/free sequence and the two clocks of plan.h. An event is one
 * uint32_t: an alloc is PLAN_EV_ALLOC (its buffer is the next number), a free is
 * the freed buffer's number. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

#define PLAN_EV_ALLOC UINT32_MAX
#define PLAN_MAX_EVENTS (UINT64_C(1) << 31)

struct plan_trace {
    uint32_t *ev;
    uint64_t n_ev, cap_ev;
    uint64_t *size;  /* per buffer */
    uint8_t *freed;  /* per buffer */
    uint32_t n_buf, cap_buf;
};

plan_trace *plan_trace_new(void)
{
    return calloc(1, sizeof(plan_trace));
}

void plan_trace_free(plan_trace *t)
{
    if (t == NULL)
        return;
    free(t->ev);
    free(t->size);
    free(t->freed);
    free(t);
}

static sim_status push_event(plan_trace *t, uint32_t e)
{
    if (t->n_ev >= PLAN_MAX_EVENTS)
        return SIM_ENOMEM;
    if (!SIM_GROW(t->ev, t->n_ev + 1, t->cap_ev))
        return SIM_ENOMEM;
    t->ev[t->n_ev++] = e;
    return SIM_OK;
}

sim_status plan_trace_alloc(plan_trace *t, uint64_t size, uint32_t *id)
{
    if (t->n_buf == t->cap_buf) {
        uint32_t cap = t->cap_buf ? t->cap_buf * 2 : 512;
        uint64_t *s = realloc(t->size, (size_t)cap * sizeof *s);
        if (s == NULL)
            return SIM_ENOMEM;
        t->size = s;
        uint8_t *f = realloc(t->freed, cap);
        if (f == NULL)
            return SIM_ENOMEM;
        t->freed = f;
        t->cap_buf = cap;
    }
    sim_status st = push_event(t, PLAN_EV_ALLOC);
    if (st != SIM_OK)
        return st;
    t->size[t->n_buf] = size;
    t->freed[t->n_buf] = 0;
    *id = t->n_buf++;
    return SIM_OK;
}

sim_status plan_trace_release(plan_trace *t, uint32_t id)
{
    if (id >= t->n_buf || t->freed[id])
        return SIM_EINTERNAL;
    sim_status st = push_event(t, id);
    if (st == SIM_OK)
        t->freed[id] = 1;
    return st;
}

uint32_t plan_trace_buffers(const plan_trace *t) { return t->n_buf; }
uint64_t plan_trace_events(const plan_trace *t) { return t->n_ev; }
uint64_t plan_trace_size(const plan_trace *t, uint32_t id) { return t->size[id]; }
bool plan_trace_freed(const plan_trace *t, uint32_t id) { return t->freed[id] != 0; }

uint64_t plan_trace_peak(const plan_trace *t)
{
    uint64_t live = 0, peak = 0;
    uint32_t next = 0;
    for (uint64_t i = 0; i < t->n_ev; i++) {
        if (t->ev[i] == PLAN_EV_ALLOC) {
            live += t->size[next++];
            if (live > peak)
                peak = live;
        } else {
            live -= t->size[t->ev[i]];
        }
    }
    return peak;
}

void plan_lifetimes(const plan_trace *t, plan_clock clock, plan_buffer *out)
{
    uint32_t next = 0;
    int64_t now = 0;
    for (uint64_t i = 0; i < t->n_ev; i++) {
        uint32_t e = t->ev[i];
        uint32_t b = e == PLAN_EV_ALLOC ? next++ : e;
        plan_buffer *p = &out[b];
        if (clock == PLAN_CLOCK_TFLITE) {
            if (e == PLAN_EV_ALLOC)
                *p = (plan_buffer){.size = t->size[b], .start = (int64_t)i, .end = PLAN_FOREVER};
            else
                p->end = (int64_t)i;
            continue;
        }
        /* XLA: zero-byte buffers take no clock tick (GlobalDecreasingSizeBestFitHeap::
         * Alloc and ::Free return early for size 0). */
        if (e == PLAN_EV_ALLOC) {
            *p = (plan_buffer){.size = t->size[b], .start = now, .end = now};
            if (p->size > 0)
                now++;
        } else if (p->size > 0) {
            p->end = now++;
        }
    }
    if (clock == PLAN_CLOCK_XLA) {
        for (uint32_t b = 0; b < t->n_buf; b++) {
            if (!t->freed[b] && out[b].size > 0)
                out[b].end = now++;
        }
    }
}

uint64_t plan_align_up(uint64_t x, uint64_t align)
{
    uint64_t r = (align & (align - 1)) == 0 ? x & (align - 1) : x % align;
    if (r == 0)
        return x;
    if (x > UINT64_MAX - (align - r))
        return UINT64_MAX;
    return x + (align - r);
}

sim_status plan_sort(uint32_t *ids, uint32_t n, plan_less less, const void *ctx)
{
    if (n < 2)
        return SIM_OK;
    uint32_t *tmp = malloc((size_t)n * sizeof *tmp);
    if (tmp == NULL)
        return SIM_ENOMEM;
    uint32_t *src = ids, *dst = tmp;
    for (uint32_t width = 1; width < n; width = width > n / 2 ? n : width * 2) {
        for (uint32_t lo = 0; lo < n; lo = n - lo > 2 * width ? lo + 2 * width : n) {
            uint32_t mid = n - lo > width ? lo + width : n;
            uint32_t hi = n - mid > width ? mid + width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = less(ctx, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != ids)
        memcpy(ids, src, (size_t)n * sizeof *ids);
    free(tmp);
    return SIM_OK;
}

static inline bool chunk_before(const plan_chunk *a, const plan_chunk *b)
{
    return a->off < b->off || (a->off == b->off && a->seq < b->seq);
}

static void insertion_sort(plan_chunk *c, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        plan_chunk v = c[i];
        uint32_t j = i;
        while (j > 0 && chunk_before(&v, &c[j - 1])) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = v;
    }
}

/* LSD radix sort of c[0 .. n) by one key (the offset, or else seq), stable, bytes
 * whose digit is the same everywhere skipped; the result ends up in c. */
static void radix_by(plan_chunk *c, plan_chunk *tmp, uint32_t n, bool by_seq)
{
    uint64_t all = 0;
    for (uint32_t i = 0; i < n; i++)
        all |= by_seq ? c[i].seq : c[i].off;
    plan_chunk *src = c, *dst = tmp;
    for (unsigned shift = 0; shift < 64 && (all >> shift) != 0; shift += 8) {
        uint32_t count[256] = {0};
        for (uint32_t i = 0; i < n; i++)
            count[((by_seq ? src[i].seq : src[i].off) >> shift) & 0xFF]++;
        if (count[((by_seq ? src[0].seq : src[0].off) >> shift) & 0xFF] == n)
            continue; /* one digit everywhere: the pass would not move anything */
        uint32_t sum = 0;
        for (unsigned d = 0; d < 256; d++) {
            uint32_t k = count[d];
            count[d] = sum;
            sum += k;
        }
        for (uint32_t i = 0; i < n; i++)
            dst[count[((by_seq ? src[i].seq : src[i].off) >> shift) & 0xFF]++] = src[i];
        plan_chunk *t = src;
        src = dst;
        dst = t;
    }
    if (src != c)
        memcpy(c, src, (size_t)n * sizeof *c);
}

void plan_sort_chunks(plan_chunk *c, plan_chunk *tmp, uint32_t n)
{
    if (n <= 32) {
        insertion_sort(c, n);
        return;
    }
    radix_by(c, tmp, n, false);
    for (uint32_t i = 0; i < n;) { /* runs of one offset, by seq: a buffer that lives
                                     * forever meets thousands placed at one offset */
        uint32_t j = i + 1;
        while (j < n && c[j].off == c[i].off)
            j++;
        if (j - i > 32)
            radix_by(c + i, tmp, j - i, true);
        else if (j - i > 1)
            insertion_sort(c + i, j - i);
        i = j;
    }
}
