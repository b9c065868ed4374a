/* strtab.h — a set of strings, each kept once: interning returns a small number
 * that names the string for as long as the table lives (the snapshot export keeps
 * each allocation's tag this way, whatever buffer the tag came from).
 * Cost: O(length) per lookup (a hash table that doubles); memory is one pool of the
 * distinct strings and 8 bytes a slot. Nothing is allocated for a string seen before.
 * Thread safety: one table per thread. */
#ifndef GPUSIM_STRTAB_H
#define GPUSIM_STRTAB_H

#include <stdint.h>

typedef struct strtab strtab;

/* An empty table, or NULL without memory. */
strtab *strtab_new(void);
void strtab_free(strtab *t);
/* The number of s (1, 2, ...; equal strings get equal numbers), or 0 without memory. */
uint32_t strtab_intern(strtab *t, const char *s);
/* The string of number k (from strtab_intern), valid until the next intern or free. */
const char *strtab_get(const strtab *t, uint32_t k);

#endif
