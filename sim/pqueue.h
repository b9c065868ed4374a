/* pqueue.h — a binary min-heap of pending events ordered by (t, seq): the
 * engine's queue of deferred frees (ready_t). seq is the order in which entries
 * were pushed, so entries due at the same time come out in push order.
 * Thread safety: a queue is not thread-safe; separate queues may run on separate threads. */
#ifndef GPUSIM_PQUEUE_H
#define GPUSIM_PQUEUE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pq_entry {
    uint64_t t;
    uint64_t seq;
    uint64_t size;      /* requested bytes being freed */
    uint32_t proc;
    uint32_t handle;
} pq_entry;

typedef struct pqueue {
    pq_entry *heap;
    uint64_t n, cap;
    uint64_t next_seq;
} pqueue;

void pqueue_init(pqueue *q);
void pqueue_release(pqueue *q);
/* Push; e->seq is assigned. False when out of host memory. */
bool pqueue_push(pqueue *q, pq_entry e);
static inline const pq_entry *pqueue_top(const pqueue *q)
{
    return q->n ? &q->heap[0] : 0;
}
void pqueue_pop(pqueue *q);

#endif
