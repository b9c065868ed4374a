#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/gpu_context.h"
#include "sim/gpus.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/format.h"
#include "traces/json.h"

const char cli_strategy_options_mark[] = "strategy options";
const char cli_from_help[] = "the input's format (default: detected)";

static bool name_is(const char *want, const char *name, size_t n)
{
    return strlen(want) == n && strncmp(want, name, n) == 0;
}

/* The option of table spelt name[0..n), or a strategy option when the table holds
 * CLI_STRATEGY_OPTS: true with *spelling (static) and *takes_value set. */
static bool find_opt(const cli_opt *table, const char *name, size_t n, const char **spelling, int *takes_value)
{
    for (const cli_opt *o = table; o->name; o++) {
        if (o->name == cli_strategy_options_mark) {
            for (size_t i = 0; registry_option_get(i); i++)
                if (name_is(registry_option_get(i)->cli, name, n)) {
                    *spelling = registry_option_get(i)->cli;
                    *takes_value = true;
                    return true;
                }
        } else if (name_is(o->name, name, n)) {
            *spelling = o->name;
            *takes_value = o->takes_value;
            return true;
        }
    }
    return false;
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
        const char *spelling = NULL;
        int takes_value = false;
        if (!find_opt(table, name, n, &spelling, &takes_value))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "unknown option '--%.*s'", (int)n, name);
        const char *value = NULL;
        if (takes_value == CLI_OPTIONAL_VALUE) {
            value = eq ? eq + 1 : ""; /* never the next argument: that may be a trace */
        } else if (takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "option '--%s' needs a value", spelling);
        } else if (eq) {
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "option '--%s' takes no value", spelling);
        }
        if (out->n_opts == CLI_MAX_ARGS)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "too many options");
        out->names[out->n_opts] = spelling;
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

char *cli_list_first(cli_list *l, const char *value)
{
    snprintf(l->buf, sizeof l->buf, "%s", value);
    l->save = NULL;
    return strtok_r(l->buf, ",", &l->save);
}

char *cli_list_next(cli_list *l)
{
    return strtok_r(NULL, ",", &l->save);
}

const char *cli_option_metavar(const strategy_option *o)
{
    switch (o->kind) {
    case STRATEGY_OPTION_SIZE:
        return "SIZE";
    case STRATEGY_OPTION_REAL:
        return "F";
    case STRATEGY_OPTION_ENUM:
        return o->choices;
    case STRATEGY_OPTION_TEXT:
        return "STR";
    }
    return "STR";
}

/* "METAVAR: help (default: ...; for greedy, growth)", from the option's table entry. */
static void print_strategy_option(FILE *f, const strategy_option *o)
{
    char head[64], owners[256];
    snprintf(head, sizeof head, "--%s=...", o->cli);
    registry_option_owners(o->key, owners, sizeof owners);
    if (o->required)
        fprintf(f, "  %-30s %s: %s, e.g. %s (required; for %s)\n", head, cli_option_metavar(o), o->help, o->example,
                owners);
    else
        fprintf(f, "  %-30s %s: %s (default: %s; for %s)\n", head, cli_option_metavar(o), o->help, o->default_text,
                owners);
}

void cli_print_options(FILE *f, const cli_opt *table)
{
    for (const cli_opt *o = table; o->name; o++) {
        if (o->name == cli_strategy_options_mark) {
            for (size_t i = 0; registry_option_get(i); i++)
                print_strategy_option(f, registry_option_get(i));
            continue;
        }
        if (!o->help[0])
            continue;
        char head[64];
        snprintf(head, sizeof head, "--%s%s", o->name, o->takes_value == CLI_OPTIONAL_VALUE ? "[=...]" : o->takes_value ? "=..." : "");
        if (o->help == cli_from_help) {
            char names[256];
            fprintf(f, "  %-30s %s: %s\n", head, input_format_join(INPUT_FORMAT_NAMES, "|", "|", names, sizeof names),
                    o->help);
            continue;
        }
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
    /* a catalog GPU has its own capacity and compute capability */
    static const char *const CONFLICTS[] = {"capacity", "compute-capability"};
    for (size_t i = 0; gpu && i < sizeof CONFLICTS / sizeof CONFLICTS[0]; i++)
        if (cli_has(a, CONFLICTS[i]))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--gpu=%s and --%s conflict: the catalog GPU has its own %s (give one of the "
                                 "two; --capacity and --compute-capability describe a custom device)",
                                 gpu, CONFLICTS[i], CONFLICTS[i]);
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
        /* the header's name may be longer than a device name: cut, not a warning */
        snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof out->name - 1,
                 hdr_name && hdr_name[0] ? hdr_name : "trace device");
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
    if ((v = cli_get(a, "compute-capability")) != NULL) {
        if (!gpus_parse_cc(v, &out->info.cc_major, &out->info.cc_minor))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--compute-capability: '%s' is not of the form X.Y (e.g. 8.0)", v);
    }
    unsigned cuda = GPU_CONTEXT_CUDA_DEFAULT;
    if ((v = cli_get(a, "cuda")) != NULL) {
        char extra;
        if (sscanf(v, "%u%c", &cuda, &extra) != 1 || gpu_context_find(0, cuda) == NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--cuda: '%s' is not a CUDA major version with a published context figure "
                                 "(11, 12 or 13; see gpusim gpus)",
                                 v);
    }
    if ((v = cli_get(a, "context")) != NULL) {
        if ((st = units_parse_size(v, &out->info.context_bytes, err)) != SIM_OK)
            return prefix_error(err, st, "--context");
    } else if (g && g->cc_major != 0 && !cli_has(a, "capacity")) {
        /* a catalog card's published figure; a custom device (--capacity, or a trace's
         * own device the catalog does not know) and a card without CUDA (AMD) keep 0 B */
        out->info.context_default = gpu_context_find(out->info.cc_major, cuda);
        out->info.context_bytes = out->info.context_default->bytes;
    }
    /* NCCL's buffers: outside the allocator like the context; an explicit --context is the
     * whole footprint outside the allocator, so nothing is added to it */
    uint64_t nccl = hdr ? hdr->nccl_bytes : 0;
    if ((v = cli_get(a, "nccl")) != NULL) {
        if (cli_has(a, "context"))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--nccl and --context conflict: an explicit --context is everything outside the "
                                 "allocator, NCCL's buffers included (give one of the two)");
        if ((st = units_parse_size(v, &nccl, err)) != SIM_OK)
            return prefix_error(err, st, "--nccl");
        out->info.nccl_given = true;
    } else if (cli_has(a, "context")) {
        nccl = 0;
    }
    out->info.nccl_bytes = nccl;
    out->info.context_bytes += nccl;
    out->info.name = out->name;
    return SIM_OK;
}

sim_status cli_hdr_nccl(const char *meta_json, const char *path, cli_hdr_device *hdr, sim_error *err)
{
    hdr->nccl_bytes = 0;
    if (meta_json == NULL || strstr(meta_json, "\"nccl_bytes\"") == NULL)
        return SIM_OK;
    json_parser *p = json_parser_new();
    if (p == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    char why[160];
    const json_value *meta = json_parse(p, meta_json, strlen(meta_json), 1, why, sizeof why);
    const json_value *v = meta ? json_get(meta, "nccl_bytes") : NULL;
    json_int_status js = v ? json_to_u64(v, UINT64_C(1) << 50, &hdr->nccl_bytes) : JSON_INT_OK;
    json_parser_free(p);
    if (js != JSON_INT_OK)
        return sim_error_set(err, SIM_ETRACE, path, 1, 0,
                             "the header's meta.nccl_bytes %s: expected the bytes of NCCL's buffers on this rank",
                             json_int_status_text(js));
    return SIM_OK;
}

uint32_t cli_strategy_kv(const cli_args *a, sim_kv *kv, uint32_t cap)
{
    uint32_t n = 0;
    for (int i = 0; i < a->n_opts && n < cap; i++) {
        const strategy_option *o = registry_option_by_cli(a->names[i]);
        if (o)
            kv[n++] = (sim_kv){o->key, a->values[i]};
    }
    return n;
}

sim_status cli_strategy_opts_apply(const cli_args *a, const strategy_ops *const *ops, uint32_t n, sim_error *err)
{
    for (int i = 0; i < a->n_opts; i++) {
        const strategy_option *o = registry_option_by_cli(a->names[i]);
        if (o == NULL || registry_option_applies(o->key, ops, n))
            continue;
        char owners[256], chosen[512] = "";
        registry_option_owners(o->key, owners, sizeof owners);
        for (uint32_t k = 0; k < n; k++) {
            strncat(chosen, k ? ", " : "", sizeof chosen - strlen(chosen) - 1);
            strncat(chosen, ops[k]->name, sizeof chosen - strlen(chosen) - 1);
        }
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s is an option of %s, not of %s %s", o->cli, owners,
                             n == 1 ? "strategy" : "the strategies", chosen);
    }
    return SIM_OK;
}
