#include "pqueue.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

void pqueue_init(pqueue *q)
{
    memset(q, 0, sizeof *q);
}

void pqueue_release(pqueue *q)
{
    free(q->heap);
    pqueue_init(q);
}

static inline bool before(const pq_entry *a, const pq_entry *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

bool pqueue_push(pqueue *q, pq_entry e)
{
    if (!SIM_GROW(q->heap, q->n + 1, q->cap))
        return false;
    e.seq = q->next_seq++;
    uint64_t i = q->n++;
    while (i > 0) {
        uint64_t parent = (i - 1) / 2;
        if (!before(&e, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
    return true;
}

void pqueue_pop(pqueue *q)
{
    if (q->n == 0)
        return;
    pq_entry last = q->heap[--q->n];
    uint64_t i = 0;
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && before(&q->heap[c + 1], &q->heap[c]))
            c++;
        if (!before(&q->heap[c], &last))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (q->n > 0)
        q->heap[i] = last;
}
