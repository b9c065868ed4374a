#include "seed.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t test_seed(const char *test_name)
{
    const char *env = getenv("GPUSIM_SEED");
    uint64_t seed;
    if (env && *env)
        seed = strtoull(env, NULL, 10);
    else
        seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    if (seed == 0)
        seed = 1;
    printf("%s: seed %llu (replay with GPUSIM_SEED=%llu)\n", test_name, (unsigned long long)seed,
           (unsigned long long)seed);
    fflush(stdout);
    return seed;
}

uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}
