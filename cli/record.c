/* gpusim record -o OUT [--steps=N] [--gpu=NAME] [--ranks=N] -- PYTHON SCRIPT [ARGS...] : run an
 * unmodified PyTorch script on the CPU under the Python module's recorder
 * (python/gpusim/record_run.py: shape-only tensors, CUDA answering as the chosen card)
 * and write the allocation trace the CUDA build would make. This file resolves the
 * card from the catalog, finds the module and runs PYTHON -m gpusim.record_run; the
 * recording itself is Python's. --ranks=N records a distributed program (FSDP2, DDP,
 * tensor parallelism) rank by rank on torch.distributed's fake process group into the
 * directory OUT, laid out as `synth --ranks` writes one (python/gpusim/record_dist.py). Exit status: 0 written, 2 usage error, a script that
 * failed (its traceback on stderr) or an interpreter that could not run; no partial
 * trace is ever left. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "sim/gpus.h"
#include "traces/synth/nccl.h"

static const cli_opt RECORD_OPTS[] = {
    CLI_OPT("output", "FILE: the trace to write (JSON Lines); also -o"),
    CLI_OPT("o", ""),
    CLI_OPT("steps", "N: stop after N optimizer steps (default 0: run the script to its end)"),
    CLI_OPT("gpu", "NAME: the card CUDA answers as, from the catalog (gpusim gpus; default " GPUS_DEFAULT ")"),
    CLI_OPT("compute-capability", "X.Y: override the card's (cuBLAS workspace size, attention backend)"),
    CLI_OPT("ranks", "N: a distributed program's N ranks on torch.distributed's fake process group, one trace each, "
                     "into the directory OUT (rank-00000.jsonl ..., job.json; default 1)"),
    CLI_OPT("nccl-channels", "N: NCCL channels per communicator for the traces' nccl_bytes (default 24, as synth)"),
    {NULL, false, NULL},
};

static void record_help(void)
{
    printf("usage: gpusim record -o OUT.jsonl [--steps=N] [--gpu=NAME] -- PYTHON SCRIPT [ARGS...]\n"
           "       gpusim record -o DIR --ranks=N [--steps=N] [--gpu=NAME] -- PYTHON SCRIPT [ARGS...]\n\n"
           "Runs SCRIPT with PYTHON (which must import torch) on the CPU with shape-only tensors, CUDA\n"
           "appearing available as the chosen card, and writes every device allocation and free the CUDA\n"
           "build of PyTorch would make, as a trace (traces/FORMAT.md). gpusim.mark(name, stop=True) in\n"
           "the script also ends the recording. What cannot work without data (.item(), ops whose output\n"
           "size depends on values, CUDA extensions without meta kernels) fails with a message naming\n"
           "the op. The module is found in the source tree or install beside this program, else it\n"
           "must be importable by PYTHON (pip install ./python); GPUSIM_PYTHON_DIR overrides.\n\n"
           "--ranks=N runs SCRIPT once per rank, each in its own process, on torch.distributed's fake\n"
           "process group (whatever backend init_process_group names): FSDP2, DDP and tensor-parallel\n"
           "programs take their rank's shapes, collectives do nothing, their buffers are recorded. DIR\n"
           "gets one trace per rank and job.json, as synth --ranks writes it; gpusim replay DIR and plan\n"
           "DIR take them as the ranks of one job. NCCL's own buffers are in each header's nccl_bytes.\n\n");
    cli_print_options(stdout, RECORD_OPTS);
    printf("\nexit status: 0 written, 2 usage error or the script failed (no trace written)\n");
}

/* The folder holding the gpusim package (DIR/gpusim/record_run.py) beside the program:
 * PREFIX/python (a build in the source tree) or PREFIX/share/gpusim/python (installed),
 * PREFIX the program's folder's parent. false when neither has it. */
static bool record_package_dir(char *out, size_t cap)
{
    const char *env = getenv("GPUSIM_PYTHON_DIR");
    if (env != NULL && env[0] != '\0') {
        int w = snprintf(out, cap, "%s", env);
        return w > 0 && (size_t)w < cap;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (slash == NULL)
            return false;
        *slash = '\0';
    }
    static const char *const WHERE[] = {"python", "share/gpusim/python"};
    for (size_t i = 0; i < sizeof WHERE / sizeof WHERE[0]; i++) {
        char probe[PATH_MAX + 64];
        struct stat st;
        snprintf(probe, sizeof probe, "%s/%s/gpusim/record_run.py", exe, WHERE[i]);
        if (stat(probe, &st) == 0) {
            int w = snprintf(out, cap, "%s/%s", exe, WHERE[i]);
            return w > 0 && (size_t)w < cap;
        }
    }
    return false;
}

/* Runs argv (NULL-terminated) with dir first on PYTHONPATH; the command's exit status. */
static int record_spawn(char **argv, const char *dir)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gpusim record: cannot start %s: %s\n", argv[0], strerror(errno));
        return 2;
    }
    if (pid == 0) {
        if (dir[0] != '\0') {
            const char *old = getenv("PYTHONPATH");
            size_t len = strlen(dir) + (old ? strlen(old) + 1 : 0) + 1;
            char *path = malloc(len);
            if (path == NULL)
                _exit(127);
            snprintf(path, len, "%s%s%s", dir, old && old[0] ? ":" : "", old && old[0] ? old : "");
            setenv("PYTHONPATH", path, 1);
            free(path);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "gpusim record: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 2;
    if (WIFEXITED(status))
        return WEXITSTATUS(status) == 0 ? 0 : 2;
    fprintf(stderr, "gpusim record: %s ended by signal %d: no trace written\n", argv[0], WTERMSIG(status));
    return 2;
}

int cmd_record(int argc, char **argv)
{
    int dash = -1;
    for (int i = 0; i < argc && dash < 0; i++)
        if (strcmp(argv[i], "--") == 0)
            dash = i;
    char *args[CLI_MAX_ARGS];
    int n = 0;
    for (int i = 0; i < (dash < 0 ? argc : dash) && n < CLI_MAX_ARGS; i++)
        args[n++] = strcmp(argv[i], "-o") == 0 ? "--output" : argv[i];
    cli_args a;
    bool help;
    if (cli_parse("record", RECORD_OPTS, n, args, &a, &help) != SIM_OK)
        return 2;
    if (help) {
        record_help();
        return 0;
    }
    if (a.n_positional > 0)
        return cli_usage_error("record", "unexpected argument '%s' (the command goes after --)", a.positional[0]);
    const char *out = cli_get(&a, "output");
    if (out == NULL || out[0] == '\0')
        return cli_usage_error("record", "no output file (-o OUT.jsonl)");
    if (dash < 0 || argc - dash < 3)
        return cli_usage_error("record", "expected -- PYTHON SCRIPT [ARGS...] after the options");
    const char *steps = cli_get(&a, "steps");
    char *end = NULL;
    unsigned long long nsteps = 0;
    if (steps != NULL) {
        errno = 0;
        nsteps = strtoull(steps, &end, 10);
        if (steps[0] < '0' || steps[0] > '9' || *end != '\0' || errno != 0 || nsteps > 1000000000ULL)
            return cli_usage_error("record", "--steps: expected a number of optimizer steps, not '%s'", steps);
    }
    const char *gpu = cli_get(&a, "gpu");
    const gpu_model *g = gpus_find(gpu != NULL ? gpu : GPUS_DEFAULT);
    if (g == NULL)
        return cli_usage_error("record", "--gpu: unknown GPU '%s' (gpusim gpus lists them)", gpu);
    unsigned long long nranks = 1, nchannels = NCCL_CHANNELS_DEFAULT;
    const char *ranks = cli_get(&a, "ranks"), *channels = cli_get(&a, "nccl-channels");
    if (ranks != NULL) {
        errno = 0;
        nranks = strtoull(ranks, &end, 10);
        if (ranks[0] < '1' || ranks[0] > '9' || *end != '\0' || errno != 0 || nranks > 65536)
            return cli_usage_error("record", "--ranks: expected a number of ranks from 1 to 65536, not '%s'", ranks);
    }
    if (channels != NULL) {
        errno = 0;
        nchannels = strtoull(channels, &end, 10);
        if (channels[0] < '0' || channels[0] > '9' || *end != '\0' || errno != 0 || nchannels > 1024)
            return cli_usage_error("record", "--nccl-channels: expected a number of channels from 0 to 1024, not '%s'",
                                   channels);
        if (nranks <= 1)
            return cli_usage_error("record", "--nccl-channels needs --ranks=N with N > 1");
    }
    unsigned major = g->cc_major, minor = g->cc_minor;
    const char *cc = cli_get(&a, "compute-capability");
    if (cc != NULL && !gpus_parse_cc(cc, &major, &minor))
        return cli_usage_error("record", "--compute-capability: expected X.Y such as 8.0, not '%s'", cc);

    char dir[PATH_MAX];
    if (!record_package_dir(dir, sizeof dir))
        dir[0] = '\0'; /* the interpreter's own gpusim package (pip install ./python) */
    char o_output[PATH_MAX + 16], o_steps[48], o_device[160], o_cc[48], o_cap[64], o_ranks[48], o_channels[48];
    snprintf(o_output, sizeof o_output, "--output=%s", out);
    snprintf(o_steps, sizeof o_steps, "--steps=%llu", nsteps);
    snprintf(o_device, sizeof o_device, "--device=%s", g->name);
    snprintf(o_cc, sizeof o_cc, "--compute-capability=%u.%u", major, minor);
    snprintf(o_cap, sizeof o_cap, "--capacity-bytes=%llu", (unsigned long long)g->capacity_bytes);
    snprintf(o_ranks, sizeof o_ranks, "--ranks=%llu", nranks);
    snprintf(o_channels, sizeof o_channels, "--nccl-channels=%llu", nchannels);
    char *run[CLI_MAX_ARGS + 18];
    int k = 0;
    run[k++] = argv[dash + 1];
    run[k++] = "-m";
    run[k++] = "gpusim.record_run";
    run[k++] = o_output;
    run[k++] = o_steps;
    run[k++] = o_device;
    run[k++] = o_cc;
    run[k++] = o_cap;
    run[k++] = o_ranks;
    run[k++] = o_channels;
    run[k++] = "--";
    for (int i = dash + 2; i < argc && k < CLI_MAX_ARGS + 17; i++)
        run[k++] = argv[i];
    run[k] = NULL;
    return record_spawn(run, dir);
}
