/* The table of the program's commands (commands.h): the one place that lists them. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const commands_entry COMMANDS[] = {
    {"replay", "replay traces through an allocator model", NULL, cli_replay_io},
    {"compare", "the same trace under several allocator models, side by side", NULL, cli_compare_io},
    {"plan", "which GPUs a trace fits on, and the smallest capacity for each model", NULL, cli_plan_io},
    {"tune", "search the framework's allocator settings for the smallest, fitting or OOM-free run", NULL, cli_tune_io},
    {"check", "regression check against a baseline (for CI)", cmd_check, NULL},
    {"sweep", "replay many traces x devices x strategies x options, on threads, MPI ranks or job array shards",
     NULL, cli_sweep_io},
    {"convert", "convert a trace to the native format (.json, .jsonl or binary .gtrace)", cmd_convert, NULL},
    {"synth", "generate a synthetic trace (transformer, cnn, serving, churn)", cmd_synth, NULL},
    {"gpus", "list the built-in GPU catalog", cmd_gpus, NULL},
    {"strategies", "list the allocator models and their options", cmd_strategies, NULL},
    {"validate-report", "predicted vs measured for validate/'s real-GPU measurements", cmd_validate_report, NULL},
};

#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

size_t commands_count(void)
{
    return N_COMMANDS;
}

const commands_entry *commands_get(size_t i)
{
    return i < N_COMMANDS ? &COMMANDS[i] : NULL;
}

const commands_entry *commands_find(const char *name)
{
    for (size_t i = 0; name && i < N_COMMANDS; i++)
        if (strcmp(name, COMMANDS[i].name) == 0)
            return &COMMANDS[i];
    return NULL;
}

int commands_run(const commands_entry *c, int argc, char **argv)
{
    return c->run != NULL ? c->run(argc, argv) : c->io(NULL, argc, argv);
}

char *commands_io_names(char *buf, size_t cap)
{
    size_t n = 0, at = 0;
    for (size_t i = 0; i < N_COMMANDS; i++)
        n += COMMANDS[i].io != NULL;
    if (cap > 0)
        buf[0] = '\0';
    for (size_t i = 0, k = 0; i < N_COMMANDS && at < cap; i++) {
        if (COMMANDS[i].io == NULL)
            continue;
        int w = snprintf(buf + at, cap - at, "%s%s", k == 0 ? "" : k + 1 == n ? " or " : ", ", COMMANDS[i].name);
        if (w < 0)
            break;
        at += (size_t)w;
        k++;
    }
    return buf;
}
