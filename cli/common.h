/* common.h — what the subcommands share above the option parser: the argument-side
 * helpers for recorded inputs (--from, --device, import warnings), the strategy list
 * and --jobs, and the command prelude (cli_session), so that each command keeps only
 * its own logic. */

/* The prelude takes, in turn: parse, --help, --format, --on-oom, the strategies,
 * --jobs, the traces, the device and the strategy options, each a usage error or an
 * I/O or trace error as the one sim_status convention of cli_exit. */
#ifndef GPUSIM_CLI_COMMON_H
#define GPUSIM_CLI_COMMON_H

#include "answers/batch.h"
#include "cli.h"
#include "sim/buf.h"
#include "traces/input.h"

/* Where a command's trace and output come and go when a program runs it (cli/api.h)
 * rather than a shell; a session without one (NULL) reads files and prints. */
typedef struct cli_io {
    const char *mem_name;  /* a positional argument spelt so reads mem[0..mem_len) (NULL: none) */
    const void *mem;
    size_t mem_len;
    sim_buf *out;          /* the command's result, instead of --output or stdout */
    sim_buf *notes;        /* its warnings and notes, one a line without "gpusim: " (NULL: stderr) */
    sim_error err;         /* how the command ended (cli_session_end), instead of printed */
} cli_io;


/* The --from/--device help lines, for option tables (--from's lists the formats there
 * are, cli_from_help). */
#define CLI_INPUT_OPTS                                                                                                 \
    CLI_OPT("from", cli_from_help),                                                                                    \
    CLI_OPT("device", "N: the CUDA device to import from a recording, or an XLA dump's heap trace (default: the "      \
                      "one with most events)")

/* The device, the strategies' options and the import options, in that order: the
 * option lines of a command that replays recorded traces (compare, plan, tune, check). */
#define CLI_REPLAY_OPTS CLI_DEVICE_OPTS, CLI_STRATEGY_OPTS, CLI_INPUT_OPTS

/* Help lines that several commands share, for option tables: --format and --output of
 * a command that writes a result, --jobs of one that runs replays in parallel, --on-oom
 * of one that replays, --from-empty of one that replays a recording made mid-run, and
 * --x of an HTML report. */
#define CLI_FORMAT_OPT CLI_OPT("format", "text|json: output for people or machines (default text)")
#define CLI_OUTPUT_OPT CLI_OPT("output", "FILE: write the result there instead of stdout")
#define CLI_JOBS_OPT \
    CLI_OPT("jobs", "N: replays run in parallel (default: the CPUs, at most 8); output does not depend on it")
#define CLI_ON_OOM_OPT \
    CLI_OPT("on-oom", "stop|skip: an OOM ends the process (default), or the allocation is dropped")
#define CLI_FROM_EMPTY_OPT                                                                                             \
    CLI_FLAG("from-empty", "a snapshot recorded mid-run starts from an empty allocator, its live blocks allocated "    \
                           "first, instead of from its rebuilt state")
#define CLI_X_OPT \
    CLI_OPT("x", "event|time: the report's x axis, events in replay order or the trace's time (default event)")

/* --device=N into opt (device -1 when absent); SIM_EUSAGE on a bad value. */
sim_status cli_input_options(const cli_args *a, input_options *opt, sim_error *err);

/* --strategies, or the default list (the registry's strategies in their usual order,
 * without a strategy whose required option is not given: limit only with --limit).
 * SIM_EUSAGE on an unknown or repeated name. */
sim_status cli_pick_strategies(const cli_args *a, const strategy_ops **out, uint32_t *n, sim_error *err);
/* --strategy=NAME (default dflt); SIM_EUSAGE naming the strategies there are. */
sim_status cli_pick_strategy(const cli_args *a, const char *dflt, const strategy_ops **out, sim_error *err);
/* --jobs (default: the CPUs, at most 8); SIM_EUSAGE outside 1..256. */
sim_status cli_jobs(const cli_args *a, unsigned *jobs, sim_error *err);
/* jobs for `tasks` tasks: no more threads than tasks. */
unsigned cli_jobs_for(unsigned jobs, size_t tasks);

/* What a command takes from the prelude (cli_command.uses, cli_session_prepare). */
enum {
    CLI_USES_FORMAT = 1u << 0,     /* --format=text|json into json */
    CLI_USES_ON_OOM = 1u << 1,     /* --on-oom=stop|skip into skip_oom */
    CLI_USES_STRATEGY = 1u << 2,   /* one --strategy (cli_command.default_strategy) into ops[0] */
    CLI_USES_STRATEGIES = 1u << 3, /* --strategies into ops[0..n_ops) */
    CLI_USES_JOBS = 1u << 4,       /* --jobs into jobs */
    CLI_USES_TRACES = 1u << 5,     /* the positional traces read into memory (t) */
    CLI_USES_INPUTS = 1u << 6,     /* the positional traces opened as streams (in, src) */
    CLI_USES_DEVICE = 1u << 7,     /* the device from the options and the traces' header (dev) */
    CLI_USES_KV = 1u << 8,         /* the strategy options (kv) */
};

typedef struct cli_command {
    const char *name;              /* "compare": for messages */
    const cli_opt *opts;
    void (*help)(void);            /* prints the --help text on stdout */
    unsigned uses;                 /* CLI_USES_* for cli_session_open */
    const char *default_strategy;  /* CLI_USES_STRATEGY without --strategy */
} cli_command;

/* One command's parsed arguments and what the prelude made of them. Owned by the
 * caller (on its stack); cli_session_close releases what it opened. */
typedef struct cli_session {
    const cli_command *cmd;
    cli_io *io;                    /* NULL from the shell */
    cli_args a;
    sim_error err;                 /* the failure a step returned, for cli_exit */
    bool json, skip_oom;
    const strategy_ops *ops[CLI_MAX_STRATEGIES];
    uint32_t n_ops;
    unsigned jobs;                 /* not yet capped: cli_jobs_for */
    input_options iopt;
    batch_traces t;                /* CLI_USES_TRACES */
    trace_input *in[CLI_MAX_ARGS]; /* CLI_USES_INPUTS */
    sim_event_source src[CLI_MAX_ARGS];
    uint32_t n_in;
    /* the device the traces name ("" and 0 if none); a command may change them
     * before the CLI_USES_DEVICE step (check uses its baseline's) */
    cli_hdr_device hdr;          /* the first trace's device (or the baseline's) */
    cli_device dev;
    sim_kv kv[CLI_MAX_KV + 1];
    uint32_t n_kv;
    char *spool[CLI_MAX_ARGS];     /* cli_spool_pipes: the temporary copy of trace i, or NULL */
    /* the traces are the ranks of one job: two or more, each of a format that records
     * one process on one GPU (input_format.one_rank: PyTorch snapshots), or the traces
     * of a job directory (jobdir.h) */
    bool ranks;
    bool job;                      /* a job directory was expanded into its traces */
    char *owned[CLI_MAX_ARGS];     /* the paths a directory of snapshots expanded into */
    uint32_t n_owned;
} cli_session;

/* Copy every positional trace that is not a regular file ("-", a FIFO, <(zcat f.gz))
 * to a temporary file, raw, so that a command may read it more than once (replay's
 * --report and what-if); messages and results keep the name given. SIM_EIO.
 * cli_session_close removes the copies. */
sim_status cli_spool_pipes(cli_session *s);

/* What the ranks of the job are, for messages: "traces of the job directory" when a job
 * directory was expanded (cli_session.job), else "PyTorch snapshots" (pytorch true) or
 * "snapshots". */
const char *cli_session_ranks_what(const cli_session *s, bool pytorch);
/* --x=event|time of --report: *time true for time; SIM_EUSAGE for another value. */
sim_status cli_report_x(const cli_args *a, bool *time, sim_error *err);
/* The file trace i is read from: its copy, or the path given. */
const char *cli_input_path(const cli_session *s, int i);
/* Open positional trace i, named as given: s->io's in-memory trace when the argument is
 * its mem_name, else the file cli_input_path names (input_open_named, errors as its). */
sim_status cli_input_open(const cli_session *s, int i, const char *from, const input_options *opt,
                          trace_input **out, sim_error *err);

/* Parse argv against cmd's options: SIM_END (the command is done, exit 0) after
 * printing --help, SIM_EUSAGE on a bad command line. s is ready for cli_session_close whatever it returns.
 * For a command that reads traces (CLI_USES_TRACES or CLI_USES_INPUTS), a positional
 * directory holding snapshot files (*.pickle, *.pkl: the ranks of one job,
 * rank0.pickle, rank1.pickle, ...) stands for those files, in natural order (rank2
 * before rank10); a directory without them stays one argument (an XLA dump). */
sim_status cli_session_parse(cli_session *s, const cli_command *cmd, int argc, char **argv);
/* The same for a command run through io (cli/api.h); io may be NULL. */
sim_status cli_session_parse_io(cli_session *s, const cli_command *cmd, cli_io *io, int argc, char **argv);
/* The steps of `uses` in a fixed order: format, on-oom, strategy or strategies,
 * jobs, traces or inputs (SIM_EUSAGE without a trace; import warnings printed),
 * device, strategy options (SIM_EUSAGE for one that belongs to none of the chosen
 * strategies; with one torch strategy and streams, a recording's own allocator
 * settings are the default --alloc-conf). Errors as the steps' helpers. */
sim_status cli_session_prepare(cli_session *s, unsigned uses);
/* cli_session_parse, then cli_session_prepare(cmd->uses). */
sim_status cli_session_open(cli_session *s, const cli_command *cmd, int argc, char **argv);
sim_status cli_session_open_io(cli_session *s, const cli_command *cmd, cli_io *io, int argc, char **argv);
/* The command's result: into s->io's buffer, else to --output or stdout. */
sim_status cli_session_write(cli_session *s, const sim_buf *out);
/* SIM_EUSAGE "unexpected argument" when there is a positional argument. */
sim_status cli_session_no_arguments(cli_session *s);
/* SIM_EUSAGE "no trace given" when there is no positional argument. */
sim_status cli_session_need_traces(cli_session *s);
/* A warning or note for the user: "gpusim: ..." on stderr, or a line of s->io's notes. */
void cli_session_note(cli_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An input's import warnings ("warning: FILE: ..."), through cli_session_note. */
void cli_session_input_warnings(cli_session *s, const trace_input *in);
/* Release what the prelude opened (the traces). */
void cli_session_close(cli_session *s);
/* cli_session_close, then the exit status of a command that ends with st
 * (cli_exit with s's error; through io: st and the error kept there, nothing
 * printed). */
int cli_session_end(cli_session *s, sim_status st);

#endif
