#include "idmap.h"

#include <stdlib.h>
#include <string.h>

#include "units.h"

#define IDMAP_MIN_CAP 64u

/* Fibonacci hashing: multiply by 2^64/phi and keep the top bits. One multiply,
 * and sequential ids (the usual case) land evenly spread. */
static inline uint64_t idmap_home(const idmap *m, uint64_t id)
{
    return (id * 0x9E3779B97F4A7C15ull) >> m->shift;
}

static inline bool used(const idmap_entry *e)
{
    return (e->flags & IDMAP_USED) != 0;
}

static bool idmap_alloc_table(idmap *m, uint64_t cap)
{
    m->slots = calloc((size_t)cap, sizeof *m->slots);
    if (m->slots == NULL)
        return false;
    m->mask = cap - 1;
    m->shift = 64u - units_log2(cap);
    return true;
}

bool idmap_init(idmap *m)
{
    memset(m, 0, sizeof *m);
    return idmap_alloc_table(m, IDMAP_MIN_CAP);
}

void idmap_release(idmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

idmap_entry *idmap_find(const idmap *m, uint64_t id)
{
    uint64_t i = idmap_home(m, id);
    while (used(&m->slots[i])) {
        if (m->slots[i].id == id)
            return &m->slots[i];
        i = (i + 1) & m->mask;
    }
    return NULL;
}

static idmap_entry *idmap_place(idmap *m, uint64_t id)
{
    uint64_t i = idmap_home(m, id);
    while (used(&m->slots[i]))
        i = (i + 1) & m->mask;
    m->slots[i] = (idmap_entry){.id = id, .flags = IDMAP_USED};
    m->count++;
    return &m->slots[i];
}

static bool idmap_grow(idmap *m)
{
    idmap old = *m;
    if (!idmap_alloc_table(m, (old.mask + 1) * 2)) {
        *m = old;
        return false;
    }
    m->count = 0;
    for (uint64_t i = 0; i <= old.mask; i++)
        if (used(&old.slots[i]))
            *idmap_place(m, old.slots[i].id) = old.slots[i];
    free(old.slots);
    return true;
}

idmap_entry *idmap_insert(idmap *m, uint64_t id)
{
    if ((m->count + 1) * 2 > m->mask + 1 && !idmap_grow(m))
        return NULL;
    return idmap_place(m, id);
}

idmap_entry *idmap_find_or_insert(idmap *m, uint64_t id, bool *found)
{
    if ((m->count + 1) * 2 > m->mask + 1 && !idmap_grow(m))
        return NULL;
    uint64_t i = idmap_home(m, id);
    while (used(&m->slots[i])) {
        if (m->slots[i].id == id) {
            *found = true;
            return &m->slots[i];
        }
        i = (i + 1) & m->mask;
    }
    *found = false;
    m->slots[i] = (idmap_entry){.id = id, .flags = IDMAP_USED};
    m->count++;
    return &m->slots[i];
}

void idmap_remove(idmap *m, idmap_entry *e)
{
    uint64_t i = (uint64_t)(e - m->slots);
    m->slots[i].flags = 0;
    m->count--;
    /* backward-shift: move later members of the cluster into the hole when
     * their home slot is not strictly between the hole and their position */
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & m->mask;
        if (!used(&m->slots[j]))
            return;
        uint64_t home = idmap_home(m, m->slots[j].id);
        bool stays = (j > i) ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        m->slots[i] = m->slots[j];
        m->slots[j].flags = 0;
        i = j;
    }
}
