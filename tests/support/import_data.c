#include "support/import_data.h"

#include <stdio.h>
#include <stdlib.h>

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
