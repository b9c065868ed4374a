/* Seeded random buffers for the planner tests (plan_random.h). */
#include "plan_random.h"

#include "support/seed.h"

uint64_t plan_random_size(uint64_t *st)
{
    switch (test_rand(st) % 6) {
    case 0: return 0;
    case 1: return 1 + test_rand(st) % 16;
    case 2: return 256 * (1 + test_rand(st) % 8); /* many equal sizes: tie-breaks */
    default: return 1 + test_rand(st) % 5000;
    }
}

void plan_random_buffers(uint64_t *st, plan_buffer *b, uint32_t n, bool forever)
{
    int64_t span = 1 + (int64_t)(test_rand(st) % (4 * n + 1));
    for (uint32_t i = 0; i < n; i++) {
        b[i].size = plan_random_size(st);
        b[i].start = (int64_t)(test_rand(st) % (uint64_t)span);
        if (test_rand(st) % 9 == 0)
            b[i].start = 0;
        b[i].end = b[i].start + (int64_t)(test_rand(st) % (uint64_t)(span / 3 + 1));
        if (forever && test_rand(st) % 7 == 0)
            b[i].end = PLAN_FOREVER;
    }
}

/* Buffers of which about half are resident (plan_index.h: live from an early
 * start past every other start), sized in multiples of the alignment or not, so
 * that the index merges their runs, touching or across a gap below the
 * alignment, and queries meet all of them or (ending early) only some. */
void plan_random_resident(uint64_t *st, plan_buffer *b, uint32_t n, uint64_t align, bool forever)
{
    int64_t span = 1 + (int64_t)(test_rand(st) % (4 * n + 1));
    bool aligned = test_rand(st) % 2;
    for (uint32_t i = 0; i < n; i++) {
        b[i].size = plan_random_size(st);
        if (aligned && b[i].size > 0)
            b[i].size = align * (1 + b[i].size % 8);
        if (test_rand(st) % 2) {
            b[i].start = (int64_t)(test_rand(st) % (uint64_t)(span / 8 + 1));
            b[i].end = forever && test_rand(st) % 2 ? PLAN_FOREVER : span + (int64_t)(test_rand(st) % 50);
        } else {
            b[i].start = (int64_t)(test_rand(st) % (uint64_t)span);
            b[i].end = b[i].start + (int64_t)(test_rand(st) % (uint64_t)(span / 3 + 1));
        }
    }
}
