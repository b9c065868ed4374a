#include "slurp.h"

#include <check.h>

#include "sim/buf.h"

char *test_slurp(const char *path, size_t *len)
{
    char *text = NULL;
    sim_error err;
    sim_error_clear(&err);
    /* 1 GiB: far above any test file, and a bound on a runaway one */
    sim_status st = sim_read_file(path, (uint64_t)1 << 30, &text, len, &err);
    ck_assert_msg(st == SIM_OK, "%s: %s", path, err.msg);
    return text;
}
