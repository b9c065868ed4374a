/* workload.h — the small in-memory workload that the answers suites (plan, tune)
 * question: id 1 (3 MiB + 100 B) and id 2 (2 MiB) live together, then id 3 (1 MiB)
 * beside id 2 only; so the peak live bytes are 3 MiB + 100 B + 2 MiB = 5 MiB + 100 B. */
#ifndef GPUSIM_TEST_WORKLOAD_H
#define GPUSIM_TEST_WORKLOAD_H

#include "answers/batch.h"
#include "sim/units.h"

#define WORKLOAD_PEAK_BYTES (5 * MiB + 100)

/* Fill t with that workload as one trace named name, at path "mem://name"; the test
 * releases it with batch_traces_release. */
void workload_small(batch_traces *t, const char *name);

#endif
