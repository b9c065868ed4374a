#include "slots.h"

#include <stdlib.h>
#include <string.h>

void slots_init(slots *t, size_t rec_size)
{
    memset(t, 0, sizeof *t);
    t->rec_size = rec_size;
    t->free_head = SLOTS_NONE;
}

void slots_release(slots *t)
{
    free(t->data);
    free(t->next_free);
    free(t->in_use);
    slots_init(t, t->rec_size);
}

static bool slots_grow(slots *t)
{
    uint32_t cap = t->n_cap ? t->n_cap * 2 : 64;
    if (cap <= t->n_cap)
        return false;
    unsigned char *d = realloc(t->data, (size_t)cap * t->rec_size);
    if (d == NULL)
        return false;
    t->data = d;
    uint32_t *nf = realloc(t->next_free, (size_t)cap * sizeof *nf);
    if (nf == NULL)
        return false;
    t->next_free = nf;
    bool *iu = realloc(t->in_use, (size_t)cap * sizeof *iu);
    if (iu == NULL)
        return false;
    t->in_use = iu;
    t->n_cap = cap;
    return true;
}

uint32_t slots_take_uninit(slots *t)
{
    uint32_t h;
    if (t->free_head != SLOTS_NONE) {
        h = t->free_head;
        t->free_head = t->next_free[h];
    } else {
        if (t->n_used_hw == t->n_cap && !slots_grow(t))
            return SLOTS_NONE;
        h = t->n_used_hw++;
    }
    t->in_use[h] = true;
    t->live++;
    return h;
}

uint32_t slots_take(slots *t)
{
    uint32_t h = slots_take_uninit(t);
    if (h != SLOTS_NONE)
        memset(slots_get(t, h), 0, t->rec_size);
    return h;
}

void slots_put(slots *t, uint32_t h)
{
    t->in_use[h] = false;
    t->next_free[h] = t->free_head;
    t->free_head = h;
    t->live--;
}
