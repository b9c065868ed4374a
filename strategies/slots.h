/* slots.h — a growable table of fixed-size records addressed by uint32_t handles,
 * with a free list of released handles. Side-table storage for strategies (blocks,
 * allocations) so that links are integers and a growing array never invalidates
 * them. Amortized O(1) take/put; no allocation once the high-water mark is reached. */
#ifndef GPUSIM_SLOTS_H
#define GPUSIM_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLOTS_NONE UINT32_MAX

typedef struct slots {
    unsigned char *data;  /* n_cap records of rec_size bytes */
    uint32_t *next_free;  /* free-list link per record; SLOTS_NONE terminates */
    bool *in_use;
    size_t rec_size;
    size_t align;         /* records' alignment (slots_init_aligned); 0: malloc's */
    uint32_t n_used_hw;   /* records ever used (high-water mark) */
    uint32_t n_cap;
    uint32_t free_head;
    uint32_t live;
} slots;

void slots_init(slots *t, size_t rec_size);
/* slots_init for records that should each sit in one cache line: the table starts at
 * a multiple of align (a power of two and a multiple of sizeof(void *)), so records of
 * align bytes never straddle two lines. */
void slots_init_aligned(slots *t, size_t rec_size, size_t align);
void slots_release(slots *t);
/* A zeroed record's handle, or SLOTS_NONE when out of host memory. */
uint32_t slots_take(slots *t);
/* slots_take without the zeroing, for a caller that writes the whole record at once. */
uint32_t slots_take_uninit(slots *t);
void slots_put(slots *t, uint32_t h);
static inline void *slots_get(const slots *t, uint32_t h)
{
    return t->data + (size_t)h * t->rec_size;
}
static inline bool slots_valid(const slots *t, uint32_t h)
{
    return h < t->n_used_hw && t->in_use[h];
}

#endif
