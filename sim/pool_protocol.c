#include "pool_protocol.h"

#include <stdio.h>
#include <stdlib.h>

#include "grow.h"

/* One pool the process's trace has used. */
typedef struct pool_use {
    uint64_t id;
    uint32_t uses;  /* pool_begins not yet released (PyTorch's use_count) */
    uint32_t flags; /* its options (SIM_POOL_OPTIONS), from its first pool_begin */
    bool routed;    /* between a pool_begin and its pool_end */
    bool replayed;  /* a graph_replay of it came already */
} pool_use;

struct pool_protocol {
    pool_use *pools; /* in order of first use; a handful, searched linearly */
    uint32_t n, cap;
};

static pool_use *find(pool_protocol *p, uint64_t id)
{
    for (uint32_t i = 0; p != NULL && i < p->n; i++)
        if (p->pools[i].id == id)
            return &p->pools[i];
    return NULL;
}

/* Refuse the event: its problem into msg. */
#define REFUSE(...) return (snprintf(msg, n, __VA_ARGS__), SIM_ETRACE)

sim_status pool_protocol_apply(pool_protocol **pp, const sim_event *ev, pool_step *step, char *msg, size_t n)
{
    *step = (pool_step){0};
    const char *op = sim_op_name(ev->op);
    unsigned long long id = (unsigned long long)ev->pool;
    if (ev->pool == 0)
        REFUSE("%s of pool %llu (the default pool is not a private pool; pool ids start at 1)", op, id);
    pool_use *pu = find(*pp, ev->pool);
    switch (ev->op) {
    case SIM_OP_POOL_BEGIN: {
        uint32_t options = ev->pool_flags & SIM_POOL_OPTIONS;
        if (pu != NULL && pu->routed)
            REFUSE("%s of pool %llu, which is already being allocated to (pool_end it first)", op, id);
        if (pu != NULL && pu->uses == 0)
            REFUSE("%s of pool %llu after its last use was released (a released pool is not used again; "
                   "give the new graph or MemPool a new id)",
                   op, id);
        if (pu != NULL && options != 0 && options != pu->flags)
            REFUSE("%s of pool %llu with options (use_on_oom, no_split) other than its first pool_begin "
                   "gave",
                   op, id);
        if (pu == NULL) {
            if (*pp == NULL && (*pp = calloc(1, sizeof **pp)) == NULL)
                return SIM_ENOMEM;
            pool_protocol *p = *pp;
            if (!SIM_GROW(p->pools, p->n + 1, p->cap))
                return SIM_ENOMEM;
            pu = &p->pools[p->n++];
            *pu = (pool_use){.id = ev->pool, .flags = options};
        }
        pu->uses++;
        pu->routed = true;
        break;
    }
    case SIM_OP_POOL_END:
        if (pu == NULL || !pu->routed)
            REFUSE("%s of pool %llu, which is not being allocated to (no pool_begin before it)", op, id);
        pu->routed = false;
        break;
    case SIM_OP_POOL_RELEASE:
        if (pu == NULL || pu->uses == 0)
            REFUSE("%s of pool %llu, which has no use left to release (%s)", op, id,
                   pu == NULL ? "never begun" : "every pool_begin already released");
        if (pu->routed && pu->uses == 1)
            REFUSE("%s of pool %llu while it is still being allocated to (pool_end it first)", op, id);
        pu->uses--;
        break;
    case SIM_OP_GRAPH_REPLAY:
        if (pu == NULL)
            REFUSE("%s of pool %llu, which no pool_begin made", op, id);
        step->first_replay = !pu->replayed;
        pu->replayed = true;
        break;
    case SIM_OP_ALLOC: /* not pool events */
    case SIM_OP_FREE:
    case SIM_OP_EMPTY_CACHE:
    case SIM_OP_MARK: REFUSE("%s is not a pool event (pool %llu)", op, id);
    }
    step->options = pu->flags;
    return SIM_OK;
}

void pool_protocol_free(pool_protocol *p)
{
    if (p == NULL)
        return;
    free(p->pools);
    free(p);
}
