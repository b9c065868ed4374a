/* seed.h — the seed of a randomized test: GPUSIM_SEED from the environment if set
 * (to replay a failure), else derived from the time; printed either way. */
#ifndef GPUSIM_TEST_SEED_H
#define GPUSIM_TEST_SEED_H

#include <stdint.h>

uint64_t test_seed(const char *test_name);
/* xorshift64* step: a tiny deterministic generator for tests. */
uint64_t test_rand(uint64_t *state);

#endif
