/* array_source.c — see array_source.h. */
#include "support/array_source.h"

sim_status array_source_next(void *ctx, sim_event *ev, sim_error *err)
{
    (void)err;
    array_source *a = ctx;
    if (a->i == a->n)
        return SIM_END;
    *ev = a->ev[a->i++];
    ev->index = a->i;
    if (ev->ready_t < ev->t)
        ev->ready_t = ev->t;
    return SIM_OK;
}
