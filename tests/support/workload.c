/* workload.c — see workload.h. */
#include "support/workload.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static void push(evbuf *b, sim_op op, uint64_t id, uint64_t size, uint64_t t)
{
    sim_event ev = {.op = op, .id = id, .size = size, .t = t, .ready_t = t};
    ck_assert_int_eq(evbuf_push(b, &ev), SIM_OK);
}

void workload_small(batch_traces *t, const char *name)
{
    memset(t, 0, sizeof *t);
    char path[64];
    snprintf(path, sizeof path, "mem://%s", name);
    evbuf *b = evbuf_new(path, name);
    ck_assert_ptr_nonnull(b);
    push(b, SIM_OP_ALLOC, 1, 3 * MiB + 100, 1);
    push(b, SIM_OP_ALLOC, 2, 2 * MiB, 2);
    push(b, SIM_OP_FREE, 1, 0, 3);
    push(b, SIM_OP_ALLOC, 3, 1 * MiB, 4);
    push(b, SIM_OP_FREE, 2, 0, 5);
    push(b, SIM_OP_FREE, 3, 0, 6);
    t->b[t->n++] = b;
    t->events = evbuf_count(b);
}
