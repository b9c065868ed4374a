/* clock.h — the one monotonic clock gpusim reads for elapsed times (progress rates,
 * sweep durations, MPI heartbeats): seconds as a double, from an arbitrary origin.
 * Never part of a result: outputs do not depend on it.
 * Thread-safe. */
#ifndef GPUSIM_CLOCK_H
#define GPUSIM_CLOCK_H

#include <time.h>

static inline double sim_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
