/* spec_internal.h — the loaders of a sweep spec's parts that spec.c (the document,
 * devices and checks) calls: spec_traces.c the traces, spec_options.c the strategies
 * and their option sets. They share the loading state and its helpers (spec_load.h).
 * Not part of the sweep API. */
#ifndef GPUSIM_SWEEP_SPEC_INTERNAL_H
#define GPUSIM_SWEEP_SPEC_INTERNAL_H

#include <cjson/cJSON.h>

#include "spec.h"
#include "spec_load.h"

/* "traces": files, globs and directories; sorted, without duplicates. */
sim_status spec_load_traces(loader *l, const cJSON *traces);
/* "strategies": names from the registry, or "all". */
sim_status spec_load_strategies(loader *l, const cJSON *strategies);
/* "options": option sets (and templates that expand into several); needs the
 * strategies loaded. NULL gives the one set "default". */
sim_status spec_load_optsets(loader *l, const cJSON *options);
void spec_optset_release(sweep_optset *o);

#endif
