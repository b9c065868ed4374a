#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/gpus.h"
#include "sim/units.h"

static const cli_opt *find_opt(const cli_opt *table, const char *name, size_t n)
{
    for (const cli_opt *o = table; o->name; o++)
        if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
            return o;
    return NULL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    fprintf(stderr, "gpusim %s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'gpusim %s --help')\n", cmd);
    return 2;
}

sim_status cli_parse(const char *cmd, const cli_opt *table, int argc, char **argv, cli_args *out, bool *help)
{
    sim_error err;
    sim_error_clear(&err);
    sim_status st = cli_parse_args(cmd, table, argc, argv, out, help, &err);
    if (st != SIM_OK)
        cli_usage_error(cmd, "%s", err.msg);
    return st;
}

sim_status cli_parse_args(const char *cmd, const cli_opt *table, int argc, char **argv, cli_args *out, bool *help,
                          sim_error *err)
{
    memset(out, 0, sizeof *out);
    out->cmd = cmd;
    *help = false;
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (out->n_positional == CLI_MAX_ARGS)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "too many arguments");
            out->positional[out->n_positional++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = true;
            continue;
        }
        if (arg[1] != '-')
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "unknown option '%s' (options are spelled --name=value)",
                                 arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        const cli_opt *o = find_opt(table, name, n);
        if (o == NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "unknown option '--%.*s'", (int)n, name);
        const char *value = NULL;
        if (o->takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "option '--%s' needs a value", o->name);
        } else if (eq) {
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "option '--%s' takes no value", o->name);
        }
        if (out->n_opts == CLI_MAX_ARGS)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "too many options");
        out->names[out->n_opts] = o->name;
        out->values[out->n_opts] = value;
        out->n_opts++;
    }
    return SIM_OK;
}

const char *cli_get(const cli_args *a, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < a->n_opts; i++)
        if (strcmp(a->names[i], name) == 0)
            v = a->values[i];
    return v;
}

bool cli_has(const cli_args *a, const char *name)
{
    for (int i = 0; i < a->n_opts; i++)
        if (strcmp(a->names[i], name) == 0)
            return true;
    return false;
}

void cli_print_options(FILE *f, const cli_opt *table)
{
    for (const cli_opt *o = table; o->name; o++) {
        if (!o->help[0])
            continue;
        char head[64];
        snprintf(head, sizeof head, "--%s%s", o->name, o->takes_value ? "=..." : "");
        fprintf(f, "  %-30s %s\n", head, o->help);
    }
}

sim_status cli_format_json(const cli_args *a, bool *json, sim_error *err)
{
    const char *format = cli_get(a, "format");
    *json = format != NULL && strcmp(format, "json") == 0;
    if (format != NULL && !*json && strcmp(format, "text") != 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--format: expected text or json, not '%s'", format);
    return SIM_OK;
}

sim_status cli_on_oom_skip(const cli_args *a, bool *skip, sim_error *err)
{
    const char *on_oom = cli_get(a, "on-oom");
    *skip = on_oom != NULL && strcmp(on_oom, "skip") == 0;
    if (on_oom != NULL && !*skip && strcmp(on_oom, "stop") != 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--on-oom: expected stop or skip, not '%s'", on_oom);
    return SIM_OK;
}

int cli_fail(const sim_error *err)
{
    char buf[1600];
    sim_error_format(err, buf, sizeof buf);
    fprintf(stderr, "gpusim: %s\n", buf);
    return sim_status_exit_code(err->status);
}

int cli_exit(const char *cmd, sim_status st, const sim_error *err)
{
    if (st == SIM_OK || st == SIM_END)
        return 0;
    if (st == SIM_EUSAGE)
        return cli_usage_error(cmd, "%s", err->msg);
    return cli_fail(err);
}

/* "OPTION: message" (the message is copied first: source and target overlap). */
static sim_status prefix_error(sim_error *err, sim_status st, const char *option)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return sim_error_set(err, st, NULL, 0, 0, "%s: %s", option, msg);
}

sim_status cli_resolve_device(const cli_args *a, const cli_hdr_device *hdr, cli_device *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    const char *hdr_name = hdr ? hdr->name : NULL;
    uint64_t hdr_capacity = hdr ? hdr->capacity : 0;
    const gpu_model *g = NULL;
    const char *gpu = cli_get(a, "gpu");
    if (gpu) {
        g = gpus_find(gpu);
        if (g == NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--gpu: unknown GPU '%s' (see 'gpusim gpus' for the catalog, or use --capacity)",
                                 gpu);
    } else if (!cli_has(a, "capacity")) {
        if (hdr_capacity == 0 && hdr_name && hdr_name[0])
            g = gpus_find(hdr_name);
        if (hdr_capacity == 0 && g == NULL)
            g = gpus_find(GPUS_DEFAULT);
    }
    if (g) {
        snprintf(out->name, sizeof out->name, "%s", g->name);
        out->info = gpus_device_info(g);
    } else if (!cli_has(a, "capacity")) {
        /* the trace's own device */
        const gpu_model *known = hdr_name && hdr_name[0] ? gpus_find(hdr_name) : NULL;
        snprintf(out->name, sizeof out->name, "%s", hdr_name && hdr_name[0] ? hdr_name : "trace device");
        out->info.capacity_bytes = hdr_capacity;
        if (hdr && hdr->cc_major) { /* what the recording says wins over the catalog's entry */
            out->info.cc_major = hdr->cc_major;
            out->info.cc_minor = hdr->cc_minor;
        } else if (known) {
            out->info.cc_major = known->cc_major;
            out->info.cc_minor = known->cc_minor;
        }
    } else {
        snprintf(out->name, sizeof out->name, "custom");
    }
    const char *v;
    sim_status st;
    if ((v = cli_get(a, "capacity")) != NULL) {
        if ((st = units_parse_size(v, &out->info.capacity_bytes, err)) != SIM_OK)
            return prefix_error(err, st, "--capacity");
        if (out->info.capacity_bytes == 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--capacity: must be more than 0 bytes");
    }
    if ((v = cli_get(a, "context")) != NULL) {
        if ((st = units_parse_size(v, &out->info.context_bytes, err)) != SIM_OK)
            return prefix_error(err, st, "--context");
    }
    if ((v = cli_get(a, "compute-capability")) != NULL) {
        if (!gpus_parse_cc(v, &out->info.cc_major, &out->info.cc_minor))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--compute-capability: '%s' is not of the form X.Y (e.g. 8.0)", v);
    }
    out->info.name = out->name;
    return SIM_OK;
}

uint32_t cli_strategy_kv(const cli_args *a, sim_kv *kv, uint32_t cap)
{
    static const char *const MAP[][2] = {
        {"limit", "limit"},
        {"alloc-conf", "alloc_conf"},
        {"memory-fraction", "memory_fraction"},
        {"mem-fraction", "mem_fraction"},
        {"bfc-preset", "bfc_preset"},
        {"bfc-gc", "bfc_gc"},
        {"bfc-fragmentation-fraction", "bfc_fragmentation_fraction"},
    };
    uint32_t n = 0;
    for (int i = 0; i < a->n_opts && n < cap; i++)
        for (size_t k = 0; k < sizeof MAP / sizeof MAP[0]; k++)
            if (strcmp(a->names[i], MAP[k][0]) == 0)
                kv[n++] = (sim_kv){MAP[k][1], a->values[i]};
    return n;
}
