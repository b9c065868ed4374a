/* gpusim — entry point: dispatches to one subcommand per file in cli/. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command COMMANDS[] = {
    {"replay", cmd_replay, "replay traces through an allocator model"},
    {"compare", cmd_compare, "the same trace under several allocator models, side by side"},
    {"plan", cmd_plan, "which GPUs a trace fits on, and the smallest capacity for each model"},
    {"tune", cmd_tune, "search the framework's allocator settings for the smallest, fitting or OOM-free run"},
    {"check", cmd_check, "regression check against a baseline (for CI)"},
    {"sweep", cmd_sweep, "replay many traces x devices x strategies x options, on threads or MPI ranks"},
    {"convert", cmd_convert, "convert a trace to the native format (.json, .jsonl or binary .gtrace)"},
    {"synth", cmd_synth, "generate a synthetic trace (transformer, cnn, serving, churn)"},
    {"gpus", cmd_gpus, "list the built-in GPU catalog"},
    {"strategies", cmd_strategies, "list the allocator models and their options"},
    {"validate-report", cmd_validate_report, "predicted vs measured for validate/'s real-GPU measurements"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: gpusim COMMAND [options]   (gpusim COMMAND --help for its options)\n\n"
               "gpusim replays GPU memory allocation traces through faithful models of the real\n"
               "allocators (TensorFlow/XLA BFC, PyTorch's caching allocator, cudaMalloc) and predicts\n"
               "peak memory, fragmentation and out-of-memory errors byte for byte.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-12s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(f, "\nexit status: 0 ran, 1 a check failed (check, --fail-on-oom), 2 usage or I/O error, 3 invalid trace\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("gpusim %s\n", GPUSIM_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(cmd, COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 2, argv + 2);
    fprintf(stderr, "gpusim: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
