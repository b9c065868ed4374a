#include "slots.h"

#include <stdlib.h>
#include <string.h>

void slots_init(slots *t, size_t rec_size)
{
    memset(t, 0, sizeof *t);
    t->rec_size = rec_size;
    t->free_head = SLOTS_NONE;
}

void slots_init_aligned(slots *t, size_t rec_size, size_t align)
{
    slots_init(t, rec_size);
    t->align = align;
}

void slots_release(slots *t)
{
    size_t align = t->align;
    free(t->data);
    free(t->next_free);
    free(t->in_use);
    slots_init_aligned(t, t->rec_size, align);
}

/* realloc, or for an aligned table a fresh aligned block and a copy (the table
 * doubles: amortized O(1) per record either way). NULL leaves the old one. */
static unsigned char *grow_data(const slots *t, size_t bytes)
{
    if (t->align == 0)
        return realloc(t->data, bytes);
    bytes = (bytes + t->align - 1) / t->align * t->align; /* aligned_alloc wants a multiple */
    unsigned char *d = aligned_alloc(t->align, bytes);
    if (d == NULL)
        return NULL;
    if (t->data != NULL)
        memcpy(d, t->data, (size_t)t->n_cap * t->rec_size);
    free(t->data);
    return d;
}

static bool slots_grow(slots *t)
{
    uint32_t cap = t->n_cap ? t->n_cap * 2 : 64;
    if (cap <= t->n_cap)
        return false;
    unsigned char *d = grow_data(t, (size_t)cap * t->rec_size);
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
