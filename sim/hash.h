/* hash.h — FNV-1a 64, the one non-cryptographic hash gpusim uses: to tie a measurement
 * to its trace file, to fingerprint a sweep spec, and to place strings in hash tables.
 * Offset basis and prime as published by Fowler, Noll and Vo (isthe.com/chongo/tech/comp/fnv).
 * Thread-safe (pure functions). */
#ifndef GPUSIM_HASH_H
#define GPUSIM_HASH_H

#include <stddef.h>
#include <stdint.h>

#define SIM_FNV1A64_INIT UINT64_C(0xcbf29ce484222325) /* the offset basis */
#define SIM_FNV1A64_PRIME UINT64_C(0x100000001b3)

/* Continue hash h (SIM_FNV1A64_INIT to start) over len bytes of data, so that a file can
 * be hashed chunk by chunk: more(more(INIT, a), b) equals the hash of a followed by b. */
static inline uint64_t sim_fnv1a64_more(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= SIM_FNV1A64_PRIME;
    }
    return h;
}

/* FNV-1a 64 of len bytes of data. */
static inline uint64_t sim_fnv1a64(const void *data, size_t len)
{
    return sim_fnv1a64_more(SIM_FNV1A64_INIT, data, len);
}

#endif
