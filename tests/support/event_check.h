/* event_check.h — one assertion for two events that must be the same: every field,
 * and the strings by content (NULL only where the other is NULL). For the suites
 * that compare one reader with another (traces/prefetch, the JSONL fast path). */
#ifndef GPUSIM_TEST_EVENT_CHECK_H
#define GPUSIM_TEST_EVENT_CHECK_H

#include "sim/event.h"

void event_check_same(const sim_event *got, const sim_event *want);

#endif
