/* The sweep spec loader's helpers (spec_load.h): reading the file, errors naming the
 * spec, copies and option text. */
#include "spec_load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buf.h"

uint64_t spec_line_of(const char *text, size_t off)
{
    uint64_t line = 1;
    for (size_t i = 0; i < off && text[i]; i++)
        if (text[i] == '\n')
            line++;
    return line;
}

#define SPEC_MAX_BYTES ((uint64_t)64 << 20) /* a spec is a small hand-written file */

sim_status spec_read(const char *path, char **text, size_t *len, sim_error *err)
{
    sim_status st = sim_read_file(path, SPEC_MAX_BYTES, text, len, err);
    if (st == SIM_EIO) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        sim_error_set(err, SIM_EIO, path, 0, 0, "cannot read the sweep spec: %s", why);
    } else if (st == SIM_ENOMEM) {
        return spec_nomem(err);
    }
    return st;
}

sim_status spec_error(loader *l, sim_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sim_error_set(l->err, st, l->spec_path, 0, 0, "%s", msg);
}

char *spec_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

sim_status spec_nomem(sim_error *err)
{
    return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
}

bool spec_value_text(const cJSON *v, char *buf, size_t cap)
{
    if (cJSON_IsString(v)) {
        snprintf(buf, cap, "%s", v->valuestring);
        return true;
    }
    if (cJSON_IsNumber(v)) {
        snprintf(buf, cap, "%.15g", v->valuedouble);
        return true;
    }
    if (cJSON_IsBool(v)) {
        snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "on" : "off");
        return true;
    }
    return false;
}

void spec_join_dir(const loader *l, const char *p, char *out, size_t cap)
{
    if (p[0] == '/' || l->dir[0] == '\0')
        snprintf(out, cap, "%s", p);
    else
        snprintf(out, cap, "%s/%s", l->dir, p);
}
