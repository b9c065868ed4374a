/* cli.h — the option-parser library of the `gpusim` program (and of validate/'s
 * tools): a small parser (--name=value or --name value, unknown options are usage
 * errors), the device options (--gpu, --capacity, --context, --compute-capability),
 * the strategy options passed through to strategies as key/value pairs, and error
 * printing. The program's commands are cli/commands.h. */
#ifndef GPUSIM_CLI_H
#define GPUSIM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/device.h"
#include "sim/status.h"
#include "sim/strategy.h"

#define CLI_MAX_ARGS 256
#define CLI_MAX_KV 32

typedef struct cli_opt {
    const char *name;   /* without the leading dashes */
    int takes_value;    /* false, true, or CLI_OPTIONAL_VALUE */
    const char *help;   /* "" hides it from --help */
} cli_opt;

/* takes_value for an option given alone (its value then reads "") or as --name=value;
 * it never takes the next argument, which may be a trace. */
#define CLI_OPTIONAL_VALUE 2

/* The entries of an option table, one an option: CLI_OPT takes a value, CLI_FLAG none,
 * CLI_OPT_OPTIONAL an optional one (CLI_OPTIONAL_VALUE). */
#define CLI_OPT(name, help) {name, true, help}
#define CLI_FLAG(name, help) {name, false, help}
#define CLI_OPT_OPTIONAL(name, help) {name, CLI_OPTIONAL_VALUE, help}

typedef struct cli_args {
    const char *cmd;                 /* subcommand name, for messages */
    const char *positional[CLI_MAX_ARGS];
    int n_positional;
    const char *names[CLI_MAX_ARGS]; /* options seen, in order */
    const char *values[CLI_MAX_ARGS];
    int n_opts;
} cli_args;

/* Parse argv against the table. SIM_EUSAGE with err set on an unknown option or a
 * missing value; "--help" sets *help. */
sim_status cli_parse_args(const char *cmd, const cli_opt *table, int argc, char **argv, cli_args *out, bool *help,
                          sim_error *err);
/* The same, printing the usage error. */
sim_status cli_parse(const char *cmd, const cli_opt *table, int argc, char **argv, cli_args *out, bool *help);
/* Last value of an option, or NULL. */
const char *cli_get(const cli_args *a, const char *name);
bool cli_has(const cli_args *a, const char *name);

/* The items of a comma-separated option value in turn, from a copy of it (its first
 * 1023 characters): for (char *t = cli_list_first(&l, value); t; t = cli_list_next(&l)). */
typedef struct cli_list {
    char buf[1024];
    char *save;
} cli_list;
char *cli_list_first(cli_list *l, const char *value);
char *cli_list_next(cli_list *l);
void cli_print_options(FILE *f, const cli_opt *table);

/* --format=text|json (default text) into *json; SIM_EUSAGE on another value. */
sim_status cli_format_json(const cli_args *a, bool *json, sim_error *err);
/* --on-oom=stop|skip (default stop) into *skip; SIM_EUSAGE on another value. */
sim_status cli_on_oom_skip(const cli_args *a, bool *skip, sim_error *err);

/* Usage error: "gpusim CMD: message" on stderr; returns exit code 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a sim_error as "gpusim: file:line: message" and return its exit code. */
int cli_fail(const sim_error *err);
/* The one mapping from how a command ended to its exit status (design.md §6):
 * SIM_OK and SIM_END (e.g. --help) 0; SIM_EUSAGE err's message as a usage error of
 * cmd, 2; anything else err printed by cli_fail, 2 or 3. Exit status 1 (a check
 * failed, --fail-on-oom) is a command's verdict, not a status. */
int cli_exit(const char *cmd, sim_status st, const sim_error *err);

/* Device options shared by replay, compare, plan, check. */
#define CLI_DEVICE_OPTS                                                                                        \
    CLI_OPT("gpu", "NAME: a GPU from the catalog (gpusim gpus); default: the trace's device, else "            \
                   "H100-80GB"),                                                                               \
    CLI_OPT("capacity", "SIZE: device memory (what cudaMemGetInfo reports as total)"),                         \
    CLI_OPT("context", "SIZE: memory per process outside the allocator (CUDA context, library "                \
                       "handles); default: the published figure for the card and --cuda (gpusim gpus)"),       \
    CLI_OPT("cuda", "11|12|13: CUDA major version of the framework build, which picks the default "            \
                    "--context (default 12)"),                                                                 \
    CLI_OPT("compute-capability", "X.Y: for --capacity devices (TensorFlow's reserve depends on it)"),          \
    CLI_OPT("nccl", "SIZE: NCCL buffers per process, added to the context (default: a multi-rank trace's "      \
                    "meta.nccl_bytes; 0 leaves them out; an explicit --context already holds them)")

/* Strategy options shared by the same commands: one entry that stands for every
 * option of every strategy in the registry (strategies/registry.h), generated from
 * the strategies' own tables for parsing and --help. The parsed name is the option's
 * cli spelling. */
extern const char cli_strategy_options_mark[];
#define CLI_STRATEGY_OPTS {cli_strategy_options_mark, true, ""}
/* The help of --from (CLI_INPUT_OPTS), which --help writes after the names of the
 * formats from their table (traces/format.h): "auto|gpusim|...: the input's format". */
extern const char cli_from_help[];
/* How help writes a strategy option's value: SIZE, F, STR or the choices (tf|jax). */
const char *cli_option_metavar(const strategy_option *o);

typedef struct cli_device {
    device_info info;
    char name[64];
} cli_device;

/* The device a trace (or a baseline) says it was recorded on; "" / 0 where unknown. */
typedef struct cli_hdr_device {
    char name[128];
    uint64_t capacity;
    unsigned cc_major, cc_minor;
    uint64_t nccl_bytes; /* meta.nccl_bytes of a rank of a multi-rank job (synth --ranks); 0: none */
} cli_hdr_device;

/* The trace header's meta.nccl_bytes (the NCCL buffers one rank holds outside the
 * allocator) into hdr->nccl_bytes; 0 when absent; SIM_ETRACE naming path when it is
 * not a whole number of bytes. */
sim_status cli_hdr_nccl(const char *meta_json, const char *path, cli_hdr_device *hdr, sim_error *err);

/* Resolve the device from --gpu/--capacity/--context/--compute-capability, the
 * trace header's device (hdr, may be NULL) and the default. --gpu with --capacity
 * or --compute-capability is SIM_EUSAGE: a catalog GPU has its own, and one of the
 * two would be silently ignored. */
sim_status cli_resolve_device(const cli_args *a, const cli_hdr_device *hdr, cli_device *out, sim_error *err);
/* Collect the strategy options given, in order, as their sim_kv keys (the
 * strategies' option tables map each --spelling to its key). */
uint32_t cli_strategy_kv(const cli_args *a, sim_kv *kv, uint32_t cap);
/* SIM_OK when every strategy option given belongs to at least one of the n
 * strategies in ops, else SIM_EUSAGE with a message naming the strategies it belongs
 * to. One strategy (replay, check): its own options only; several (compare, plan):
 * an option applies when one of them takes it (docs/decisions.md). */
sim_status cli_strategy_opts_apply(const cli_args *a, const strategy_ops *const *ops, uint32_t n, sim_error *err);

#define CLI_MAX_STRATEGIES 32

#endif
