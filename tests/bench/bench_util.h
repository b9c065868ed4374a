/* bench_util.h — what the benchmarks share: a monotonic clock and the process's CPU
 * clock in seconds, and the xorshift64* step their synthetic workloads draw from.
 * Header-only (static inline): each benchmark is one source file. */
#ifndef GPUSIM_BENCH_UTIL_H
#define GPUSIM_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

static inline double bench_clock(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline double bench_now(void)
{
    return bench_clock(CLOCK_MONOTONIC);
}

/* CPU seconds of the whole process (all threads). */
static inline double bench_cpu_now(void)
{
    return bench_clock(CLOCK_PROCESS_CPUTIME_ID);
}

/* xorshift64* (the state must not be 0). */
static inline uint64_t bench_rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

#endif
