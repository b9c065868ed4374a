/* spec_load.h — the loading state of a sweep spec and the helpers below every file
 * that loads one (spec.c, spec_traces.c, spec_options.c): reading the file, errors
 * that name the spec, copies, a JSON value as option text, paths relative to the
 * spec. Not part of the sweep API. */
#ifndef GPUSIM_SWEEP_SPEC_LOAD_H
#define GPUSIM_SWEEP_SPEC_LOAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/status.h"
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

/* Byte offset → 1-based line of text. */
uint64_t spec_line_of(const char *text, size_t off);
/* The spec file's text (NUL-terminated, *len bytes); SIM_EIO naming it, SIM_ENOMEM. */
sim_status spec_read(const char *path, char **text, size_t *len, sim_error *err);

#endif
