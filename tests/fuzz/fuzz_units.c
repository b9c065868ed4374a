/* Fuzz target: the command line's number parsers (sizes like "4GiB", reals,
 * plain integers) on any text. A size that parses must format and parse back. */
#include <stdlib.h>

#include "fuzz.h"
#include "sim/units.h"

static void fuzz_units(const char *s)
{
    sim_error err;
    uint64_t v;
    double d;
    (void)units_parse_real(s, -1e300, 1e300, &d, &err);
    (void)units_parse_u64(s, &v, &err);
    if (units_parse_size(s, &v, &err) == SIM_OK) {
        char buf[64];
        units_format_size(v, buf, sizeof buf);
    }
}

FUZZ_TEXT_TARGET(4096, fuzz_units)
