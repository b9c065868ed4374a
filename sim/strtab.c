/* A set of strings kept once (strtab.h): FNV-1a (sim/hash.h), linear probing. */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"

struct strtab {
    char *pool;         /* the strings, each NUL-terminated */
    uint64_t len, cap;
    uint64_t *at;       /* number k - 1 -> its offset in pool */
    uint32_t n, cap_at;
    uint32_t *slots;    /* 0 empty, else a number */
    uint32_t n_slots;   /* a power of two, at least twice n */
};

strtab *strtab_new(void)
{
    return calloc(1, sizeof(strtab));
}

void strtab_free(strtab *t)
{
    if (t == NULL)
        return;
    free(t->pool);
    free(t->at);
    free(t->slots);
    free(t);
}

static uint32_t hash(const char *s)
{
    return (uint32_t)sim_fnv1a64(s, strlen(s));
}

static void place(uint32_t *slots, uint32_t n_slots, uint32_t h, uint32_t k)
{
    uint32_t i = h & (n_slots - 1);
    while (slots[i] != 0)
        i = (i + 1) & (n_slots - 1);
    slots[i] = k;
}

static int rehash(strtab *t)
{
    uint32_t n = t->n_slots ? t->n_slots * 2 : 64;
    uint32_t *s = calloc(n, sizeof *s);
    if (s == NULL)
        return 0;
    for (uint32_t k = 1; k <= t->n; k++)
        place(s, n, hash(t->pool + t->at[k - 1]), k);
    free(t->slots);
    t->slots = s;
    t->n_slots = n;
    return 1;
}

uint32_t strtab_intern(strtab *t, const char *s)
{
    uint32_t h = hash(s);
    if (t->n_slots > 0)
        for (uint32_t i = h & (t->n_slots - 1); t->slots[i] != 0; i = (i + 1) & (t->n_slots - 1))
            if (strcmp(t->pool + t->at[t->slots[i] - 1], s) == 0)
                return t->slots[i];
    if (t->n == UINT32_MAX - 1 || ((uint64_t)t->n + 1) * 2 > t->n_slots) {
        if (t->n == UINT32_MAX - 1 || !rehash(t))
            return 0;
    }
    size_t n = strlen(s) + 1;
    if (!SIM_GROW(t->pool, t->len + n, t->cap) || !SIM_GROW(t->at, (uint64_t)t->n + 1, t->cap_at))
        return 0;
    memcpy(t->pool + t->len, s, n);
    t->at[t->n++] = t->len;
    t->len += n;
    place(t->slots, t->n_slots, h, t->n);
    return t->n;
}

const char *strtab_get(const strtab *t, uint32_t k)
{
    return t->pool + t->at[k - 1];
}
