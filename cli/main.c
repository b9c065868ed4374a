/* gpusim — entry point: dispatches to one subcommand per file in cli/. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpusim COMMAND [options]   (gpusim COMMAND --help for its options)\n\n"
               "gpusim replays GPU memory allocation traces through faithful models of the real\n"
               "allocators (TensorFlow/XLA BFC, PyTorch's caching allocator, cudaMalloc) and predicts\n"
               "peak memory, fragmentation and out-of-memory errors byte for byte.\n\ncommands:\n");
    for (size_t i = 0; i < commands_count(); i++)
        fprintf(f, "  %-12s %s\n", commands_get(i)->name, commands_get(i)->summary);
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
    const commands_entry *c = commands_find(cmd);
    if (c != NULL)
        return commands_run(c, argc - 2, argv + 2);
    fprintf(stderr, "gpusim: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
