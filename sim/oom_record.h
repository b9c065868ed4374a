/* oom_record.h — one failed allocation as the reports show it (sim_oom_record): its
 * cause judged from the engine's own books (design.md §3 "OOM cause": the device's
 * room, the other processes, else fragmentation), the free pieces the allocator held
 * and the largest live allocations at that moment. The engine fills a record at each
 * OOM and judges the first one again at the end, on the demand the whole trace
 * reached. */
#ifndef GPUSIM_OOM_RECORD_H
#define GPUSIM_OOM_RECORD_H

#include <stdint.h>

#include "device.h"
#include "engine.h"
#include "idmap.h"
#include "strategy.h"

/* Fill the device's side of rec (rec->id, size and info set): the room the failing
 * process had (the strategy's usable_bytes, at most capacity less its context), what
 * the other live processes held, the contexts, its live requested bytes L and the
 * demand L + size; then judge it (oom_record_judge) and copy the event's tag (NULL:
 * none). proc is the failing process's device index. */
void oom_record_classify(sim_oom_record *rec, const device *dev, uint32_t proc, uint64_t context_bytes,
                         uint64_t live_requested, const char *tag);

/* The cause from rec's figures, on D = rec->peak_demand_bytes: capacity when D passes
 * the process's usable room, other processes when D and what they hold pass the room
 * the contexts leave, else fragmentation. */
void oom_record_judge(sim_oom_record *rec);

/* What the reports show of a first OOM: the free pieces the allocator s holds (one
 * walk) and the SIM_OOM_LARGEST_LIVE largest live allocations of ids (largest first,
 * ties by id), leaving out the failing allocation and those an OOM dropped. */
void oom_record_describe(sim_oom_record *rec, const strategy_ops *ops, const strategy *s, const idmap *ids);

#endif
