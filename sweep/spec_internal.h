/* spec_internal.h — what the files that load a sweep spec share (spec.c: the document,
 * devices and checks; spec_traces.c: the traces; spec_options.c: the strategies and
 * their option sets): the loading state and its error and allocation helpers. Not
 * part of the sweep API. */
#ifndef GPUSIM_SWEEP_SPEC_INTERNAL_H
#define GPUSIM_SWEEP_SPEC_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "spec.h"

typedef struct loader {
    sweep_spec *s;
    const char *spec_path;
    char dir[1024];     /* the spec's directory, "" when it is the current one */
    sim_error *err;
    uint32_t cap_traces, cap_devices, cap_optsets;
} loader;

/* Sets *l->err to st with the message, naming the spec; returns st. */
sim_status spec_error(loader *l, sim_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* SIM_ENOMEM with "out of memory". */
sim_status spec_nomem(sim_error *err);
/* A malloc'd copy of s, or NULL. */
char *spec_strdup(const char *s);
/* A JSON value as option text: strings as they are, numbers as written (%.15g),
 * booleans as on/off; false for anything else. */
bool spec_value_text(const cJSON *v, char *buf, size_t cap);

/* p joined to the spec's directory (p itself when absolute or the spec is here). */
void spec_join_dir(const loader *l, const char *p, char *out, size_t cap);

/* "traces": files, globs and directories; sorted, without duplicates. */
sim_status spec_load_traces(loader *l, const cJSON *traces);
/* "strategies": names from the registry, or "all". */
sim_status spec_load_strategies(loader *l, const cJSON *strategies);
/* "options": option sets (and templates that expand into several); needs the
 * strategies loaded. NULL gives the one set "default". */
sim_status spec_load_optsets(loader *l, const cJSON *options);
void spec_optset_release(sweep_optset *o);

#endif
