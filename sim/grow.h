/* grow.h — SIM_GROW, how gpusim grows a realloc'd array: make room for n elements,
 * doubling (first capacity 16, or n if larger), with the byte count checked for
 * overflow before realloc. The idea is git's ALLOC_GROW (git cache.h, with st_mult
 * guarding the multiplication); this is our own macro. */

/* Every doubling array in sim/, answers/ and reports/ grows through it. What remains
 * there is not a doubling: arrays that grow by one per process (capture's curves),
 * and evbuf's lazy columns, grown together to the capacity their buffer chose. Some
 * strategies (slots.c, plan.c, plan_index.c) still double by hand.
 * Thread safety: as the array's; SIM_GROW itself keeps no state. */
#ifndef GPUSIM_GROW_H
#define GPUSIM_GROW_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The largest value the unsigned capacity variable can hold; a signed or other type is a
 * compile error on purpose (a capacity is never negative). */
#define SIM_GROW_CAP_MAX_(cap)                                                                                        \
    _Generic((cap), unsigned int: (uint64_t)UINT_MAX, unsigned long: (uint64_t)ULONG_MAX,                             \
             unsigned long long: (uint64_t)ULLONG_MAX)

/* Implementation of SIM_GROW: pp is the address of the array pointer, capp of the capacity
 * (cap_size bytes wide). True with both updated, or false with both unchanged and the old
 * array still valid (out of memory, or n elements would not fit in size_t or the capacity). */
static inline bool sim_grow_(void *pp, size_t elem, uint64_t n, void *capp, size_t cap_size, uint64_t cap_max)
{
    uint64_t cap;
    if (cap_size == sizeof(uint32_t)) {
        uint32_t c32;
        memcpy(&c32, capp, sizeof c32);
        cap = c32;
    } else {
        memcpy(&cap, capp, sizeof cap);
    }
    uint64_t max = (uint64_t)SIZE_MAX / elem;
    if (cap_max < max)
        max = cap_max;
    if (n > max)
        return false;
    uint64_t next = cap < 8 ? 16 : cap > max / 2 ? max : cap * 2;
    if (next < n)
        next = n;
    if (next > max)
        next = max;
    void *old;
    memcpy(&old, pp, sizeof old);
    void *q = realloc(old, (size_t)(next * elem));
    if (q == NULL)
        return false;
    memcpy(pp, &q, sizeof q);
    if (cap_size == sizeof(uint32_t)) {
        uint32_t c32 = (uint32_t)next;
        memcpy(capp, &c32, sizeof c32);
    } else {
        memcpy(capp, &next, sizeof next);
    }
    return true;
}

/* Make the array ptr (NULL or from malloc/realloc) hold at least n elements, where cap
 * (an unsigned integer lvalue) is its capacity in elements. Evaluates to true when it
 * does (cap updated, ptr possibly moved), false when the memory could not be had (ptr
 * and cap unchanged, so the caller reports SIM_ENOMEM and still frees ptr). The new
 * elements are not initialised. ptr and cap are evaluated more than once. */
#define SIM_GROW(ptr, n, cap)                                                                                         \
    ((uint64_t)(n) <= (uint64_t)(cap) ||                                                                              \
     sim_grow_(&(ptr), sizeof *(ptr), (uint64_t)(n), &(cap), sizeof(cap), SIM_GROW_CAP_MAX_(cap)))

#endif
