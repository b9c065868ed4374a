/* gpusim_answers_bench — the questions users wait for, on recordings
 * (./scripts/bench): `gpusim plan`, `compare` and `tune` (--jobs=2) on a mid-run
 * PyTorch snapshot (--trace), on a generated Llama 3 8B LoRA training trace (~16k
 * events, `gpusim synth`), and on a ~16k-event mid-run snapshot of a longer run of
 * it (six steps replayed under torch, exported from step 2 on with `--window`, so
 * that it starts with the weights and optimizer state live: 676 blocks in 419
 * segments), wall and CPU seconds (best of --reps), plan's time
 * relative to compare's (issue 38's target: at most 3x), and the replays plan
 * made for each strategy (its minimum search's, from --format=json, plus one per
 * GPU of the grid). Prints figures, asserts nothing. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_TRACES 8
#define MAX_GENERATED 2 /* the LoRA trace and the snapshot of the longer run */

typedef struct run_res {
    double secs, cpu_s;
} run_res;

/* Runs argv (argv[0] a path) with stdout and stderr to /dev/null; exits on failure. */
static run_res run(char *const *argv)
{
    fflush(stdout); /* the child must not print what this process buffered */
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("answers_bench: fork");
        exit(2);
    }
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL || freopen("/dev/null", "w", stderr) == NULL)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) > 1) {
        fprintf(stderr, "answers_bench: failed:");
        for (int i = 0; argv[i]; i++)
            fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
        exit(2);
    }
    run_res r = {bench_now() - t0, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                                       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6};
    return r;
}

static run_res best_of(char *const *argv, int reps)
{
    run_res best = {1e30, 0};
    for (int i = 0; i < reps; i++) {
        run_res r = run(argv);
        if (r.secs < best.secs)
            best = r;
    }
    return best;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s != NULL)
        s[n] = 0;
    fclose(f);
    return s;
}

/* One line per strategy: the replays of its minimum search and of the grid's cells. */
static void print_replays(const char *json_path)
{
    char *text = slurp(json_path);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
    const cJSON *rows =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "minimum_capacity"), "rows");
    if (!cJSON_IsArray(gpus) || !cJSON_IsArray(rows)) {
        fprintf(stderr, "answers_bench: %s is not plan's JSON\n", json_path);
        exit(2);
    }
    printf("  plan's replays per strategy (minimum search + the grid's %d GPUs):", cJSON_GetArraySize(gpus));
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "strategy");
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(row, "replays");
        const cJSON *grid = cJSON_GetObjectItemCaseSensitive(row, "grid_replays");
        printf(" %s %d+%d", cJSON_IsString(name) ? name->valuestring : "?", cJSON_IsNumber(rep) ? rep->valueint : -1,
               cJSON_IsNumber(grid) ? grid->valueint : -1);
    }
    printf("\n");
    cJSON_Delete(doc);
}

static long events_of(const char *json_path)
{
    char *text = slurp(json_path);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "traces"), 0);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, "events");
    long n = cJSON_IsNumber(e) ? (long)e->valuedouble : -1;
    cJSON_Delete(doc);
    return n;
}

int main(int argc, char **argv)
{
    char *gpusim = NULL;
    char *traces[MAX_TRACES];
    int n_traces = 0, reps = 3;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--gpusim=", 9) == 0)
            gpusim = argv[i] + 9;
        else if (strncmp(argv[i], "--trace=", 8) == 0 && n_traces < MAX_TRACES - MAX_GENERATED)
            traces[n_traces++] = argv[i] + 8;
        else if (strncmp(argv[i], "--reps=", 7) == 0 && atoi(argv[i] + 7) > 0)
            reps = atoi(argv[i] + 7);
        else {
            fprintf(stderr, "usage: gpusim_answers_bench --gpusim=PATH [--trace=FILE]... [--reps=N]\n");
            return 2;
        }
    }
    if (gpusim == NULL) {
        fprintf(stderr, "answers_bench: --gpusim=PATH is needed\n");
        return 2;
    }
    char dir[] = "/tmp/gpusim-answers-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("answers_bench: mkdtemp");
        return 2;
    }
    char lora_jsonl[64], lora[64], out[64], long_jsonl[64], snap[64];
    snprintf(lora_jsonl, sizeof lora_jsonl, "%s/lora.jsonl", dir);
    snprintf(long_jsonl, sizeof long_jsonl, "%s/lora6.jsonl", dir);
    snprintf(snap, sizeof snap, "%s/lora6-from-step2.pickle", dir);
    snprintf(lora, sizeof lora, "%s/lora.gtrace", dir);
    snprintf(out, sizeof out, "%s/plan.json", dir);
    char *synth[] = {gpusim,      "synth",     "transformer", "--preset=llama3-8b", "--lora=16", "--steps=5",
                     "--seq=512", "--batch=1", "-o",          lora_jsonl,           NULL};
    run(synth);
    char *convert[] = {gpusim, "convert", lora_jsonl, "-o", lora, NULL};
    run(convert);
    /* the same run for six steps; step 2 begins at 28.05 ms of its modelled time */
    char *synth6[] = {gpusim,      "synth",     "transformer", "--preset=llama3-8b", "--lora=16", "--steps=6",
                      "--seq=512", "--batch=1", "-o",          long_jsonl,           NULL};
    run(synth6);
    char snap_arg[96];
    snprintf(snap_arg, sizeof snap_arg, "--export-snapshot=%s", snap);
    char *export[] = {gpusim, "replay", long_jsonl, "--strategy=torch", snap_arg, "--window=28.05ms:", NULL};
    run(export);
    traces[n_traces++] = snap;
    traces[n_traces++] = lora;
    printf("\n== plan, compare and tune on recordings (--jobs=2, best of %d; target: plan <= 3x compare) ==\n"
           "%-44s %8s %9s %9s %9s %9s %9s %8s\n",
           reps, "trace", "events", "plan s", "plan cpu", "compare s", "cmp cpu", "tune s", "plan/cmp");
    for (int t = 0; t < n_traces; t++) {
        char out_arg[80];
        snprintf(out_arg, sizeof out_arg, "--output=%s", out);
        char *plan[] = {gpusim, "plan", traces[t], "--jobs=2", "--format=json", out_arg, NULL};
        char *compare[] = {gpusim, "compare", traces[t], "--jobs=2", "--output=/dev/null", NULL};
        char *tune[] = {gpusim, "tune", traces[t], "--jobs=2", "--output=/dev/null", NULL};
        run_res p = best_of(plan, reps), c = best_of(compare, reps), u = best_of(tune, reps);
        const char *name = strrchr(traces[t], '/') ? strrchr(traces[t], '/') + 1 : traces[t];
        printf("%-44.44s %8ld %9.3f %9.3f %9.3f %9.3f %9.3f %7.2fx\n",
               t == n_traces - 1   ? "llama3-8b LoRA r16, 5 steps (synth)"
               : t == n_traces - 2 ? "mid-run snapshot of 6 steps, from step 2"
                                   : name,
               events_of(out), p.secs, p.cpu_s,
               c.secs, c.cpu_s, u.secs, c.secs > 0 ? p.secs / c.secs : 0.0);
        print_replays(out);
        fflush(stdout);
    }
    unlink(lora_jsonl);
    unlink(lora);
    unlink(long_jsonl);
    unlink(snap);
    unlink(out);
    rmdir(dir);
    return 0;
}
