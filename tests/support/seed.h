/* seed.h — the one random generator of the tests, and the seed of a randomized test:
 * GPUSIM_SEED from the environment if set (to replay a failure), else derived from the
 * time; printed either way. Fixed-seed tests call test_rand on their own constant. */
#ifndef GPUSIM_TEST_SEED_H
#define GPUSIM_TEST_SEED_H

#include <stdint.h>

uint64_t test_seed(const char *test_name);
/* xorshift64* step: a tiny deterministic generator for tests. Any state works (0 is
 * replaced by a fixed nonzero one, which xorshift needs). */
uint64_t test_rand(uint64_t *state);

#endif
