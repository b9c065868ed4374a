/* The `torch` strategy's deferred frees (docs/allocators.md §2.6, §2.16): a free with
 * stream uses (ready_t > t) keeps its block until PyTorch sees its events complete,
 * which it checks at the start of every malloc (process_events, in record order per
 * stream) or at a synchronize; during a capture such a free is parked until none is
 * underway (needs_events_deferred_until_no_capture). The records are torch_types.h's
 * tdefer queues; torch.c calls in at malloc, free and the release paths. */
#include <stdlib.h>

#include "sim/grow.h"
#include "torch_types.h"

/* The list of deferred frees that still own a block, in free order (PyTorch's
 * cuda_events, whatever stream). */
void torch_pending_push(strategy *s, uint32_t ah)
{
    tdefer *a = DF(s, ah);
    a->q_next = a->w_next = a->c_next = a->wait = T_NONE;
    a->seq = s->free_seq++;
    a->q_prev = s->q_tail;
    if (s->q_tail != T_NONE)
        DF(s, s->q_tail)->q_next = ah;
    else
        s->q_head = ah;
    s->q_tail = ah;
}

static void completable_push(strategy *s, uint32_t ah)
{
    DF(s, ah)->c_next = s->c_head;
    s->c_head = ah;
}

/* The event of ah completed and PyTorch noticed: its block returns to the pool. A
 * ready allocation is finished with; a pending one (completed by a synchronize)
 * waits for its free_ready. The next free recorded on its stream, if ready, may
 * complete next. */
static void pending_complete(strategy *s, uint32_t ah)
{
    talloc *al = AL(s, ah);
    const tdefer *d = DF(s, ah);
    if (d->q_prev != T_NONE)
        DF(s, d->q_prev)->q_next = d->q_next;
    else
        s->q_head = d->q_next;
    if (d->q_next != T_NONE)
        DF(s, d->q_next)->q_prev = d->q_prev;
    else
        s->q_tail = d->q_prev;
    if (d->wait != T_NONE) {
        /* record order: it heads its stream's queue */
        twait *w = &s->waits[d->wait];
        w->head = d->w_next;
        if (w->head == T_NONE)
            w->tail = T_NONE;
        else if (AL(s, w->head)->state == A_READY)
            completable_push(s, w->head);
    }
    uint32_t h = al->block;
    bool ready = al->state == A_READY;
    al->block = T_NONE;
    s->n_pending--;
    if (ready) {
        s->n_ready--;
        slots_put(&s->allocs, ah);
    } else {
        al->state = A_DONE;
    }
    torch_free_block(s, h);
}

/* The deferred free ah goes to the back of stream queue w (record order). */
static void wait_append(strategy *s, uint32_t w, uint32_t ah)
{
    twait *q = &s->waits[w];
    if (q->tail != T_NONE)
        DF(s, q->tail)->w_next = ah;
    else
        q->head = ah;
    q->tail = ah;
    DF(s, ah)->wait = w;
}

/* insert_events_deferred_until_no_capture (2.6 lines 3155-3174): the frees parked
 * during a capture get their events now. Stream uses recorded during a capture are
 * dropped first (remove_cudagraph_stream_uses): a trace does not say when a use
 * was recorded, so gpusim takes those of a block allocated while a pool was routed
 * as the capture's, which leaves it no event: its block returns at once. Any other
 * becomes an ordinary deferred free, behind the frees already recorded on its stream. */
static void unpark(strategy *s)
{
    for (uint32_t i = 0; i < s->n_parked; i++) {
        uint32_t ah = s->parked[i];
        talloc *a = AL(s, ah);
        bool ready = a->parked_ready;
        if (a->captured) {
            uint32_t h = a->block;
            a->block = T_NONE;
            if (ready)
                slots_put(&s->allocs, ah);
            else
                a->state = A_DONE; /* its free_ready is still to come */
            torch_free_block(s, h);
            continue;
        }
        uint32_t w = DF(s, ah)->wait;
        a->state = ready ? A_READY : A_PENDING;
        s->n_pending++;
        torch_pending_push(s, ah); /* clears a->wait */
        if (w != T_NONE)
            wait_append(s, w, ah);
        if (ready) {
            s->n_ready++;
            if (DF(s, ah)->wait == T_NONE || s->waits[DF(s, ah)->wait].head == ah)
                completable_push(s, ah);
        }
    }
    s->n_parked = 0;
}

static int due_cmp(const void *a, const void *b)
{
    const tdue *x = a, *y = b;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* process_events, at the start of every malloc: the deferred frees whose events
 * completed. PyTorch polls the events of each stream in record order and stops
 * at the first that is not ready; a free recorded on no stream gpusim knows waits
 * for nothing but its own ready_t. Those that complete at one poll go in free
 * order (PyTorch walks its streams in its hash map's order, which only the
 * inactive_split counters' peaks and totals can tell). */
void torch_process_events(strategy *s)
{
    if (s->n_parked > 0)
        unpark(s);
    while (s->c_head != T_NONE) {
        uint32_t n = 0;
        for (uint32_t a = s->c_head; a != T_NONE; a = DF(s, a)->c_next) {
            if (n == s->cap_due && !SIM_GROW(s->due, (size_t)n + 1, s->cap_due)) {
                s->host_oom = true;
                break;
            }
            s->due[n++] = (tdue){DF(s, a)->seq, a};
        }
        s->c_head = T_NONE;
        qsort(s->due, n, sizeof *s->due, due_cmp);
        for (uint32_t i = 0; i < n; i++)
            pending_complete(s, s->due[i].h); /* may stack the next of a stream */
    }
}

/* synchronize_and_free_events: every deferred free completes now. */
void torch_synchronize(strategy *s)
{
    s->st.num_sync_all_streams++;
    if (s->n_parked > 0)
        unpark(s);
    while (s->q_head != T_NONE)
        pending_complete(s, s->q_head);
    s->c_head = T_NONE;
}

/* ready_t: the work behind the free has finished, but PyTorch sees it only when
 * it next polls its events (process_events) or synchronizes. */
void torch_free_ready(strategy *s, strategy_handle h)
{
    talloc *a = AL(s, h);
    if (a->state == A_PARKED) {
        a->parked_ready = 1; /* seen once it is unparked */
        return;
    }
    if (a->block != T_NONE) {
        a->state = A_READY;
        s->n_ready++;
        if (DF(s, h)->wait == T_NONE || s->waits[DF(s, h)->wait].head == h)
            completable_push(s, h);
        return;
    }
    /* else: zero bytes, or a synchronize already completed it */
    slots_put(&s->allocs, h);
}

/* The deferred free h was recorded on stream (record_stream): it completes only
 * after the frees recorded on that stream before it. */
void torch_free_wait(strategy *s, strategy_handle h, uint32_t stream)
{
    talloc *a = AL(s, h);
    if (a->block == T_NONE || (a->state != A_PENDING && a->state != A_PARKED))
        return; /* zero bytes: nothing waits */
    uint32_t w = 0;
    while (w < s->n_waits && s->waits[w].stream != stream)
        w++;
    if (w == s->n_waits) {
        if (!SIM_GROW(s->waits, s->n_waits + 1, s->cap_waits)) {
            s->host_oom = true;
            return;
        }
        s->waits[s->n_waits++] = (twait){stream, T_NONE, T_NONE};
    }
    if (a->state == A_PARKED) {
        DF(s, h)->wait = w; /* queued when it is unparked */
        return;
    }
    wait_append(s, w, h);
}

