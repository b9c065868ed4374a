/* plan_random.h — seeded random buffers for the planner tests: sizes with many
 * ties and empty buffers, lifetimes short and long, and sets in which about half
 * the buffers are resident (live from an early start past every other start). The
 * state is test_rand's (support/seed.h). */
#ifndef GPUSIM_TEST_PLAN_RANDOM_H
#define GPUSIM_TEST_PLAN_RANDOM_H

#include <stdbool.h>
#include <stdint.h>

#include "strategies/plan.h"

/* A buffer size: 0 one time in six, small, a multiple of 256 (equal sizes, for the
 * tie-breaks) or anything up to 5000 bytes. */
uint64_t plan_random_size(uint64_t *st);

/* n buffers with random sizes and lifetimes over a random span; some start at 0,
 * and with forever some never end (PLAN_FOREVER). */
void plan_random_buffers(uint64_t *st, plan_buffer *b, uint32_t n, bool forever);

/* n buffers of which about half are resident, sized in multiples of align or not
 * (one coin for the set); with forever, half the resident ones never end. */
void plan_random_resident(uint64_t *st, plan_buffer *b, uint32_t n, uint64_t align, bool forever);

#endif
