/* The argument-side helpers for recorded inputs. */
#include "common.h"

#include "sim/units.h"

sim_status cli_input_options(const cli_args *a, input_options *opt, sim_error *err)
{
    opt->device = -1;
    const char *v = cli_get(a, "device");
    if (v == NULL)
        return SIM_OK;
    uint64_t d = 0;
    if (units_parse_u64(v, &d, err) != SIM_OK || d > 1u << 20)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--device: expected a device ordinal (0, 1, ...), not '%s'",
                             v);
    opt->device = (int64_t)d;
    return SIM_OK;
}

void cli_input_warnings(const trace_input *in)
{
    const trace_header *h = input_header(in);
    for (uint32_t i = 0; i < input_warning_count(in); i++)
        fprintf(stderr, "gpusim: warning: %s: %s\n", h->name[0] ? h->name : "trace", input_warning(in, i));
}
