/* tune.h — `gpusim tune`: which allocator settings of the framework a user runs make
 * the workload smallest (--goal=min-reserved), fit a card (fit) or run without an
 * out-of-memory (no-oom). The settings are the framework's own knobs, each mapped to a
 * strategy and its options, plus `ideal` and `planned` (when built) as lower bounds.
 * The tables are reports/tune.h. */

/* The knobs. PyTorch: expandable_segments, max_split_size_mb over a grid refined
 * around its best value, roundup_power2_divisions, garbage_collection_threshold with a
 * memory fraction, the cudaMallocAsync backend when this build has the `async`
 * strategy; TensorFlow: growth, greedy, the smallest memory_limit that runs, garbage
 * collection, cuda_malloc_async; JAX: preallocation, the smallest
 * XLA_PYTHON_CLIENT_MEM_FRACTION, the platform allocator. The traces are parsed once
 * (answers/batch.h), every stage's replays run in parallel, and the answer does not
 * depend on the number of threads: the stages and their candidates are fixed by the
 * results of the stages before, never by timing. */
#ifndef GPUSIM_ANSWERS_TUNE_H
#define GPUSIM_ANSWERS_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#include "answers/batch.h"
#include "sim/engine.h"
#include "sim/status.h"
#include "sim/strategy.h"

typedef enum tune_goal { TUNE_GOAL_MIN_RESERVED = 0, TUNE_GOAL_FIT, TUNE_GOAL_NO_OOM } tune_goal;
typedef enum tune_framework { TUNE_TORCH = 0, TUNE_TF, TUNE_JAX } tune_framework;

/* "min-reserved", "fit", "no-oom"; "torch", "tf", "jax". */
const char *tune_goal_name(tune_goal g);
const char *tune_framework_name(tune_framework f);
/* true and *out set when text names one. */
bool tune_goal_parse(const char *text, tune_goal *out);
bool tune_framework_parse(const char *text, tune_framework *out);

#define TUNE_MAX_CANDIDATES 160
#define TUNE_MAX_OWN 4      /* options a candidate sets on top of the user's */
#define TUNE_MAX_USER 32    /* the user's options carried into every candidate */
#define TUNE_TEXT 320

/* One setting tried (or a lower bound) and what its replay measured. */
typedef struct tune_candidate {
    const strategy_ops *ops;
    const char *family;        /* "max_split_size_mb", "expandable_segments", "memory_limit", ... */
    char key[TUNE_MAX_OWN][32];   /* the options this setting sets (sim_kv keys) ... */
    char value[TUNE_MAX_OWN][TUNE_TEXT]; /* ... and their values */
    uint32_t n_own;
    char setting[TUNE_TEXT];   /* in the framework's words: "max_split_size_mb:20" */
    char env[TUNE_TEXT];       /* the environment line to paste, or "" */
    char code[TUNE_TEXT];      /* the line of program code to add, or "" */
    bool current;              /* the setting the user runs now */
    bool bound;                /* a lower bound (ideal, planned), not a setting to paste */
    /* the replay */
    sim_status st;             /* SIM_EUSAGE: the setting cannot hold here (a limit above the card) */
    sim_error err;
    bool completed;            /* no OOM ended a process */
    uint64_t peak_requested, peak_reserved, peak_device, ooms;
    sim_oom_cause cause;       /* of the first OOM */
    uint64_t limit_bytes;      /* the allocator's effective limit under this setting (answers/limit.h) */
    char limit_source[160];    /* ... and where it comes from ("--limit", "0.5 x 14.75 GiB, --memory-fraction") */
} tune_candidate;

/* What is asked. Everything is borrowed. */
typedef struct tune_question {
    const batch_traces *t;
    engine_config base;        /* device and --on-oom; ops and options are set per candidate */
    tune_framework framework;
    tune_goal goal;            /* no-oom replays with --on-oom=skip, so that every OOM counts */
    const strategy_ops *current; /* the allocator the user runs (torch, greedy, ...) */
    const sim_kv *user;        /* the user's strategy options: the current setting, kept in every candidate */
    uint32_t n_user;
    unsigned jobs;             /* threads for each stage */
    /* optional: called after every replay with the replays done so far (any thread) */
    void (*progress)(void *ctx, uint64_t runs_done);
    void *progress_ctx;
} tune_question;

typedef struct tune_answer {
    tune_candidate *c;         /* in the order they were tried; c[0] is the current setting */
    uint32_t n;
    uint32_t rank[TUNE_MAX_CANDIDATES]; /* the settings that ran (no bounds), best first */
    uint32_t n_ranked;
    uint32_t current;          /* index of the current setting in c */
} tune_answer;

/* About how many replays a tune of q takes (the progress line's estimate; later stages
 * depend on earlier results). */
uint32_t tune_estimate_runs(const tune_question *q);
/* Search. SIM_OK with *a filled (tune_answer_release frees), or the first error of a
 * replay other than a setting that cannot hold (SIM_ETRACE, SIM_ENOMEM, ...; the
 * current setting's SIM_EUSAGE too: the user's own options are wrong). */
sim_status tune_run(const tune_question *q, tune_answer *a, sim_error *err);
void tune_answer_release(tune_answer *a);

/* Whether candidate c meets q's goal (ran without an OOM). */
bool tune_candidate_ok(const tune_candidate *c);

#endif
