/* units.h — byte sizes: parsing "4096MiB"/"16GB"/"123", printing them for people,
 * and the overflow-checked rounding helpers every strategy uses.
 * Binary suffixes (KiB MiB GiB TiB) are powers of 1024, decimal ones (KB MB GB TB)
 * of 1000; a plain number is bytes. Fractions are allowed only when exact ("1.5GiB").
 * Thread-safe: results go to the caller's buffers. */
#ifndef GPUSIM_UNITS_H
#define GPUSIM_UNITS_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)
#define TiB ((uint64_t)1 << 40)

/* Parse a size; SIM_EUSAGE with a message in err on anything else. */
sim_status units_parse_size(const char *text, uint64_t *out, sim_error *err);
/* Parse a real number in [lo, hi]; SIM_EUSAGE otherwise. */
sim_status units_parse_real(const char *text, double lo, double hi, double *out, sim_error *err);
/* Parse an unsigned integer (decimal); SIM_EUSAGE on garbage or overflow. */
sim_status units_parse_u64(const char *text, uint64_t *out, sim_error *err);

/* "12.00 MiB", "1.50 GiB", "512 B": for text output. Returns buf. */
char *units_format_size(uint64_t bytes, char *buf, uint64_t cap);
/* PyTorch's format_size (c10, the sizes of its out-of-memory messages, which its
 * caching allocator and its cudaMallocAsync backend print): "N bytes" up to 1 KiB,
 * then KiB, MiB, GiB with two decimals, each unit used up to and including its next
 * power ("1024 bytes" for 1 KiB, "1024.00 KiB" for 1 MiB). Returns buf. */
char *units_format_c10(uint64_t bytes, char *buf, uint64_t cap);

/* Round up to a multiple of align (any nonzero align). Saturates at UINT64_MAX
 * rounded down to align, so callers can compare without overflow. */
static inline uint64_t units_round_up(uint64_t n, uint64_t align)
{
    uint64_t r = n % align;
    if (r == 0)
        return n;
    if (n > UINT64_MAX - (align - r))
        return UINT64_MAX - UINT64_MAX % align;
    return n + (align - r);
}

static inline uint64_t units_round_down(uint64_t n, uint64_t align)
{
    return n - n % align;
}

static inline bool units_is_pow2(uint64_t n)
{
    return n != 0 && (n & (n - 1)) == 0;
}

/* floor(log2(n)) for n > 0. */
static inline unsigned units_log2(uint64_t n)
{
    return 63u - (unsigned)__builtin_clzll(n);
}

#endif
