#include "support/import_data.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/skip.h"

const char *import_data_path(char *buf, size_t cap, const char *sub, const char *name)
{
    const char *src = getenv("GPUSIM_SOURCE_DIR");
    snprintf(buf, cap, "%s/tests/data/import/%s%s%s", src ? src : ".", sub, sub[0] ? "/" : "", name);
    return buf;
}

sim_status import_open_mem(const char *name, const void *bytes, size_t len, const char *from, int64_t device,
                           trace_input **in, sim_error *err)
{
    input_options o = {.device = device};
    *in = NULL;
    sim_error_clear(err);
    return input_open_mem(name, bytes, len, from, &o, in, err);
}

trace_input *import_open_ok(const char *path, const char *from, int64_t device)
{
    input_options o = {.device = device};
    trace_input *in = NULL;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = input_open(path, from, &o, &in, &err);
    ck_assert_msg(st == SIM_OK, "%s: %s", path, err.msg);
    return in;
}

const char *import_real_path(char *buf, size_t cap, const char *suite, const char *name)
{
    const char *dir = getenv("GPUSIM_REALTRACES");
    if (dir == NULL || dir[0] == '\0') {
        test_skip(suite, "%s (set GPUSIM_REALTRACES to the directory of the full recordings)", name);
        return NULL;
    }
    snprintf(buf, cap, "%s/%s", dir, name);
    if (access(buf, R_OK) != 0) {
        test_skip(suite, "%s is not here", buf);
        return NULL;
    }
    return buf;
}

bool import_has_warning(const trace_input *in, const char *needle)
{
    for (uint32_t i = 0; i < input_warning_count(in); i++)
        if (strstr(input_warning(in, i), needle) != NULL)
            return true;
    return false;
}
