/* Deliberate breaches of the planned strategy's state (corrupt_planned.h), made
 * from the test side through its private types, as the async tests do. */
#include "corrupt_planned.h"

#include "strategies/plan_live.h"
#include "strategies/planned_types.h"

bool corrupt_planned(strategy *s, planned_corruption kind)
{
    switch (kind) {
    case PLANNED_CORRUPT_LIVE_BYTES:
        s->live_bytes += 1;
        return true;
    case PLANNED_CORRUPT_PEAK:
        s->peak = s->heap + 1;
        return true;
    case PLANNED_CORRUPT_OVERLAP: {
        uint32_t cursor = 0;
        uint32_t a = s->live ? plan_live_next(s->live, &cursor) : PLAN_LIVE_END;
        uint32_t b = a != PLAN_LIVE_END ? plan_live_next(s->live, &cursor) : PLAN_LIVE_END;
        if (b == PLAN_LIVE_END)
            return false;
        s->off[b] = s->off[a];
        return true;
    }
    }
    return false;
}
