/* strategy.h — the interface every allocator model implements (design.md §4).
 * A strategy owns its block metadata and placement decisions, takes device memory
 * only through device.h, and never sees trace ids, files or JSON: the engine maps
 * trace ids to the handles a strategy returns. Each strategy file exports exactly
 * one getter of a `const strategy_ops` table (registry: strategies/registry.h). */
/* Thread safety: an ops table is read-only and shared by every thread; an instance
 * (strategy *) is not thread-safe, and separate instances may run on separate threads
 * (compare, tune and sweep do): a model keeps all its state in the instance. */
#ifndef GPUSIM_STRATEGY_H
#define GPUSIM_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "device.h"
#include "seed.h"
#include "status.h"

typedef struct strategy strategy; /* one allocator instance for one process */
typedef uint32_t strategy_handle; /* names one live allocation of an instance */
#define STRATEGY_HANDLE_NONE UINT32_MAX

/* One option as given on the command line, e.g. {"limit", "4096MiB"}. */
typedef struct sim_kv {
    const char *key;
    const char *value;
} sim_kv;

typedef struct strategy_config {
    device *dev;         /* borrowed; where device memory comes from */
    uint32_t proc;       /* this instance's process on dev (device_proc_start) */
    const sim_kv *opts;  /* borrowed for the duration of create() only */
    uint32_t n_opts;     /* a strategy ignores keys that are not its own */
    void *app_data;      /* engine_config.app_data: a decorator's own state (as sqlite's
                          * pAppData); the models ignore it; borrowed for the run */
    struct sim_memo *memo; /* engine_config.memo, or NULL: work the replays of one command
                            * share (sim/memo.h; planned's plans); borrowed for the run */
} strategy_config;

/* The value of key in cfg (the last occurrence wins, as on a command line), or NULL
 * when key is absent or its value is "": an empty value means "unset", so that what
 * options() writes for an unset option reads back as unset. */
const char *strategy_config_get(const strategy_config *cfg, const char *key);

/* How an option's value is written. */
typedef enum strategy_option_kind {
    STRATEGY_OPTION_SIZE = 0, /* bytes with an optional unit, as units_parse_size reads: 4096MiB */
    STRATEGY_OPTION_REAL = 1, /* a real number: 0.5 */
    STRATEGY_OPTION_ENUM = 2, /* one of `choices` */
    STRATEGY_OPTION_TEXT = 3  /* text the strategy parses itself (PYTORCH_CUDA_ALLOC_CONF) */
} strategy_option_kind;

/* "size", "real", "enum" or "text". */
const char *strategy_option_kind_name(strategy_option_kind k);

/* A bad option value, for create(): SIM_EUSAGE with "FLAG=VALUE: expected EXPECTED",
 * followed by " (INNER)" when inner (the parser's own complaint) is not NULL; value
 * NULL reads as "". Returns SIM_EUSAGE. */
sim_status strategy_option_error(sim_error *err, const char *flag, const char *value, const char *expected,
                                 const sim_error *inner);

/* One option a strategy takes, described once: the command line, its --help, check's
 * baseline reader, sweep's spec keys and `gpusim strategies` are all generated from
 * the strategies' tables (strategies/registry.h). Strategies that share an option
 * (greedy, growth and limit) share its key, spelling and meaning. */
typedef struct strategy_option {
    const char *key;          /* the sim_kv key create() reads and options() writes: "bfc_gc" */
    const char *cli;          /* the command-line spelling without the dashes: "bfc-gc" */
    strategy_option_kind kind;
    const char *choices;      /* STRATEGY_OPTION_ENUM: the values, '|'-separated ("on|off"); else NULL */
    const char *default_text; /* what applies when the option is not given, in words */
    const char *example;      /* a valid value unlike the default (help text, the round-trip test) */
    const char *help;         /* one line: what the option models */
    bool required;            /* create() fails without it */
} strategy_option;

/* One entry of a strategy's option table, by kind: key, cli, [choices,] default_text,
 * example and help as above; the REQUIRED form has no default. */
#define STRATEGY_OPT_ENTRY(kind_, key_, cli_, choices_, default_, example_, help_, required_)                      \
    {.key = key_, .cli = cli_, .kind = kind_, .choices = choices_, .default_text = default_, .example = example_, \
     .help = help_, .required = required_}
#define STRATEGY_OPT_SIZE(key_, cli_, default_, example_, help_) \
    STRATEGY_OPT_ENTRY(STRATEGY_OPTION_SIZE, key_, cli_, NULL, default_, example_, help_, false)
#define STRATEGY_OPT_REAL(key_, cli_, default_, example_, help_) \
    STRATEGY_OPT_ENTRY(STRATEGY_OPTION_REAL, key_, cli_, NULL, default_, example_, help_, false)
#define STRATEGY_OPT_TEXT(key_, cli_, default_, example_, help_) \
    STRATEGY_OPT_ENTRY(STRATEGY_OPTION_TEXT, key_, cli_, NULL, default_, example_, help_, false)
#define STRATEGY_OPT_ENUM(key_, cli_, choices_, default_, example_, help_) \
    STRATEGY_OPT_ENTRY(STRATEGY_OPTION_ENUM, key_, cli_, choices_, default_, example_, help_, false)
#define STRATEGY_OPT_REQUIRED_SIZE(key_, cli_, example_, help_) \
    STRATEGY_OPT_ENTRY(STRATEGY_OPTION_SIZE, key_, cli_, NULL, NULL, example_, help_, true)

/* What the user should change after an OOM (design.md §3 "OOM cause"). The engine
 * decides it from the process's live bytes, the strategy's usable_bytes and the other
 * processes; a strategy never classifies its own failures. */
typedef enum sim_oom_cause {
    SIM_OOM_CAPACITY = 0,        /* live + request exceed what the process may use: a bigger card, a smaller batch */
    SIM_OOM_FRAGMENTATION = 1,   /* it would fit: the allocator left no usable piece (allocator settings) */
    SIM_OOM_OTHER_PROCESSES = 2  /* it would fit, but other processes on the device hold the memory */
} sim_oom_cause;
const char *sim_oom_cause_name(sim_oom_cause c);

/* Why an allocation failed, read after the allocator's own recovery steps ran. */
typedef struct strategy_oom {
    uint64_t size_bytes;         /* the request as the allocator saw it (rounded) */
    uint64_t free_bytes;         /* free inside what the allocator holds */
    uint64_t largest_free_bytes; /* largest free block it holds */
    uint64_t reserved_bytes;     /* what it holds from the device */
    uint64_t device_free_bytes;  /* device_free_bytes() at the failure */
    uint64_t usable_bytes;       /* what this process may use (BFC: its limit; PyTorch: min(capacity −
                                  * context, fraction cap)); 0: capacity − context, the engine's default */
    char detail[1024];           /* the allocator's own words (PyTorch's message, ...) or "" */
} strategy_oom;

/* O(1) snapshot taken after every event for the metrics. */
typedef struct strategy_sample {
    uint64_t allocated_bytes;    /* handed out as blocks, rounding and slack included */
    uint64_t reserved_bytes;     /* held from the device */
    uint64_t free_bytes;         /* inside reserved, free for reuse now */
    uint64_t largest_free_bytes; /* the largest of those free blocks */
    uint64_t num_device_allocs;
    uint64_t num_device_frees;
    /* The allocator's own running maxima of reserved_bytes and allocated_bytes
     * since it was created (PyTorch's max_memory_reserved/allocated), 0 where it
     * keeps none: memory taken and given back within one operation (pages mapped
     * for a request, then unmapped by its out-of-memory ladder) raises them
     * although no sample shows it. The engine's peak_* results include them. */
    uint64_t peak_reserved_bytes;
    uint64_t peak_allocated_bytes;
} strategy_sample;

typedef enum strategy_block_state {
    BLOCK_USED = 0,     /* handed out */
    BLOCK_FREE = 1,     /* cached, reusable */
    BLOCK_PENDING = 2,  /* freed by the program, waiting for ready_t */
    BLOCK_UNMAPPED = 3  /* reserved address space without memory (expandable) */
} strategy_block_state;

/* What the walker shows of one block. */
typedef struct strategy_block {
    uint64_t addr;
    uint64_t size_bytes;
    uint64_t requested_bytes;   /* 0 unless used or pending */
    uint64_t region_addr;       /* base of the region/segment it belongs to */
    uint32_t region;            /* region/segment number, in creation order */
    uint32_t stream;
    strategy_block_state state;
    const char *pool;           /* "small", "large" or NULL */
    uint64_t pool_id;           /* the private pool (design.md §3 "Pools") its segment belongs to; 0: the default */
} strategy_block;

/* Return nonzero to stop the walk. */
typedef int (*strategy_visitor)(void *ctx, const strategy_block *b);

/* Receives named statistics (stats) or effective options (options); real values for
 * ratios, integers for bytes/counts. A callback may be NULL when the caller wants no values
 * of that kind, so a strategy emits through strategy_emit_*() below, never through the
 * members directly. A text value is valid only during its call. */
typedef struct strategy_stat_sink {
    void (*u64)(void *ctx, const char *key, uint64_t value);
    void (*real)(void *ctx, const char *key, double value);
    void (*text)(void *ctx, const char *key, const char *value);
    void *ctx;
} strategy_stat_sink;

static inline void strategy_emit_u64(const strategy_stat_sink *sink, const char *key, uint64_t value)
{
    if (sink->u64)
        sink->u64(sink->ctx, key, value);
}

static inline void strategy_emit_real(const strategy_stat_sink *sink, const char *key, double value)
{
    if (sink->real)
        sink->real(sink->ctx, key, value);
}

static inline void strategy_emit_text(const strategy_stat_sink *sink, const char *key, const char *value)
{
    if (sink->text)
        sink->text(sink->ctx, key, value);
}

/* The whole alloc/free sequence of one process, for a strategy that plans offline
 * (strategy_ops.plan). Buffer k is the process's k-th alloc event (0-based, file
 * order; the k-th alloc() call the instance will receive); events[] lists the
 * process's alloc and free events in file order: STRATEGY_PLAN_ALLOC for an alloc
 * (of the next buffer), else the number of the buffer the event frees. Buffers
 * never freed do not appear a second time. Times, ready_t and streams are not
 * part of it: they do not change a plan; shares do. */
#define STRATEGY_PLAN_ALLOC UINT32_MAX
#define STRATEGY_PLAN_NO_SHARE UINT32_MAX
typedef struct strategy_lifetimes {
    const uint32_t *events;
    uint64_t n_events;
    const uint64_t *sizes; /* per buffer */
    /* per buffer, NULL when no alloc of the process shares: the earlier buffer whose
     * memory it shares (its alloc's "share" names that buffer's id; design.md §2), or
     * STRATEGY_PLAN_NO_SHARE */
    const uint32_t *shares;
    uint32_t n_buffers;
} strategy_lifetimes;

/* A scope in which allocations go to a private pool (the trace's pool_begin;
 * design.md §3 "Pools"): PyTorch's beginAllocateToPool with its stream filter. */
typedef struct strategy_pool_scope {
    uint64_t pool;     /* the pool's id (> 0) */
    uint32_t stream;   /* the stream whose allocations go to the pool, unless all_streams */
    bool all_streams;  /* every stream's (torch.cuda.use_mem_pool) */
    bool capture;      /* a CUDA graph capture (torch.cuda.graph), else a use_mem_pool scope */
    bool use_on_oom;   /* the pool's options, as its first pool_begin gave them */
    bool no_split;
} strategy_pool_scope;

/* One private pool as a model with pools holds it now (strategy_ops.pools). */
typedef struct strategy_pool_info {
    uint64_t pool;                 /* its id, as the trace's pool events name it */
    uint64_t reserved_bytes;       /* its segments' bytes held from the device */
    uint64_t peak_reserved_bytes;  /* the most it held at once */
    uint64_t allocated_bytes;      /* in its blocks handed out */
    uint64_t peak_allocated_bytes;
    uint64_t segments;             /* its segments now (PyTorch's cudaMalloc_count) */
    uint32_t uses;                 /* pool_begins not released (use_count) */
    bool routed;                   /* allocations go to it now (between pool_begin and pool_end) */
    bool use_on_oom, no_split;     /* its options */
} strategy_pool_info;
typedef int (*strategy_pool_visitor)(void *ctx, const strategy_pool_info *p);

/* The allocator family a model belongs to. Code outside strategies/ asks the table's
 * traits below (family, framework, advice ...) and never a strategy's name: the
 * reports, the what-if replays, the node's start rule and the recorded settings
 * follow a new model from its table. */
typedef enum strategy_family {
    STRATEGY_FAMILY_BFC = 0,     /* TensorFlow/XLA's best-fit with coalescing: greedy, growth, limit */
    STRATEGY_FAMILY_TORCH = 1,   /* PyTorch's CUDA caching allocator: torch */
    STRATEGY_FAMILY_ASYNC = 2,   /* CUDA's stream-ordered pool (cudaMallocAsync): async */
    STRATEGY_FAMILY_BOUND = 3,   /* a bound, not a caching allocator: raw, ideal */
    STRATEGY_FAMILY_PLANNED = 4  /* offsets planned offline for a compiled graph: planned */
} strategy_family;

typedef struct strategy_ops {
    const char *name;     /* "greedy", "torch", ... */
    const char *summary;  /* one line for `gpusim strategies` */
    /* The options create() reads, each under its key; no two entries share a key. */
    const strategy_option *opts;
    uint32_t n_opts;

    /* Traits: what the rest of the program knows of the model, as data. */
    strategy_family family; /* its statistics' vocabulary too: --summary's framework view */
    const char *framework;  /* the framework whose allocator it models ("torch", "tf", "jax"), or NULL */
    /* One line: the settings to try when an OOM is fragmentation, in the user's terms; NULL:
     * the reports' general advice. */
    const char *advice;
    /* The strategies (by name, NULL-terminated) whose replay after an OOM answers "would
     * this set-up have fit?" (answers/whatif.h), or NULL for none. */
    const char *const *whatif_strategies;
    /* The first allocation takes the whole region (allow_growth=false), so a framework that
     * starts on a device the job does not use holds it (answers/node.h). */
    bool takes_region_at_start;
    /* The replay does not depend on the device's capacity until an allocation fails,
     * and one fails exactly when the device's use would pass the capacity (no region
     * sized from the capacity, no release-and-retry): the run fits every capacity at
     * or above the device's peak of one complete replay. `plan` takes its smallest
     * capacity from that peak (answers/plan.c; raw, ideal, planned). */
    bool fits_by_peak;
    /* Optional: true when this instance reads the device's capacity and compute
     * capability only through device allocations that fail (no limit, threshold or
     * fraction derived from them; what it does after a failure may differ). A run in
     * which no device allocation failed is then the same run on every device with at
     * least its peak free, so `plan` answers those capacities from it without a
     * replay (sim_run_capacity_blind, answers/plan.c). NULL: no. */
    bool (*capacity_blind)(const strategy *s);
    /* The option a recording's own allocator settings feed by default (PyTorch snapshots'
     * allocator_settings: "alloc_conf"), or NULL. */
    const char *recorded_conf_key;
    /* A model without private pools (pools NULL): why, in one clause after its name, and
     * where a pool scope's allocations went, for the reports of a trace with pool events
     * ("private pools are not modelled (...); the pools' allocations were replayed in the
     * default pool"); NULL: the reports' general sentence. */
    const char *no_pools_note;

    /* Create an instance; SIM_EUSAGE with a message for a bad option value. */
    sim_status (*create)(const strategy_config *cfg, strategy **out, sim_error *err);
    void (*destroy)(strategy *s);

    /* Allocate size bytes on stream at the program's request. SIM_OK and *h set,
     * or SIM_OOM with every field of *oom filled and nothing allocated (*oom is not
     * cleared by the caller: it is on the hot path). size may be 0. */
    sim_status (*alloc)(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h,
                        strategy_oom *oom);
    /* The program frees h. With deferred, the memory returns at a later
     * free_ready(h) (ready_t); h stays valid and is not reused until then, even if
     * the strategy completed the free early (a synchronizing allocator), in which
     * case free_ready is a no-op for it. */
    void (*free)(strategy *s, strategy_handle h, bool deferred);
    void (*free_ready)(strategy *s, strategy_handle h);
    /* Optional: right after free(h, deferred = true) of a free that names the stream
     * its event is recorded on (sim_event.ready_stream; design.md §3): PyTorch polls
     * the events of one stream in record order. Without the call, the free waits for
     * nothing but its own free_ready. NULL where streams do not order completions. */
    void (*free_wait)(strategy *s, strategy_handle h, uint32_t stream);
    /* torch.cuda.empty_cache(): release cached memory; a no-op where meaningless. */
    void (*empty_cache)(strategy *s);
    /* Optional, all three or none (NULL: the model has no private pools, and the
     * allocations of a pool scope go where any other would; the engine counts the
     * pool events, sim_run_source.pool_events, and the reports say so). The engine
     * checks the protocol first (design.md §3 "Pools"): pool_begin never names a pool
     * routed now or one whose uses were all released; pool_end names a routed pool;
     * pool_release a pool with a use left, never its last use while it is routed.
     * pool_begin: allocations matching the scope go to its pool (created at its first
     * begin) until pool_end; each begin adds a use. pool_release: a use ends (a graph
     * destroyed, a MemPool deleted); at none, the pool's cached segments may go back
     * to the device. */
    void (*pool_begin)(strategy *s, const strategy_pool_scope *scope);
    void (*pool_end)(strategy *s, uint64_t pool);
    void (*pool_release)(strategy *s, uint64_t pool);
    /* Optional (with the three above): visit each private pool the instance still
     * keeps, in the order they were made; returns the visitor's nonzero or 0. A pool
     * whose uses were all released and whose segments all went back is gone. */
    int (*pools)(const strategy *s, strategy_pool_visitor v, void *ctx);

    void (*sample)(const strategy *s, strategy_sample *out);
    /* Framework-named statistics for result.stats. */
    void (*stats)(const strategy *s, const strategy_stat_sink *sink);
    /* The effective options, for result.strategy.options, as text values: every entry
     * of opts under exactly its key, with a value that create() given back builds the
     * same instance from ("" for an option left unset whose default has no value of
     * its own). It may add derived keys that are not in opts (allow_growth,
     * limit_bytes); those are informational and never read back. */
    void (*options)(const strategy *s, const strategy_stat_sink *sink);

    /* Optional (NULL for an allocator that decides online, as all but `planned` do).
     * When set, the engine reads every source once before the replay (it spools
     * them in memory, sim/evbuf.h) and calls plan() on each instance right after
     * create(), before its first alloc(), with its process's whole sequence
     * (sim/lifetimes.h); lt is valid during the call only. SIM_EUSAGE with a
     * message when the plan cannot be made (a size beyond the planner's range). */
    sim_status (*plan)(strategy *s, const strategy_lifetimes *lt, sim_error *err);

    /* Full invariant check; appends violations to r, never aborts. */
    void (*check)(const strategy *s, sim_report *r);
    /* Visit every block in address order; returns the visitor's nonzero or 0. */
    int (*walk)(const strategy *s, strategy_visitor v, void *ctx);

    /* Optional (NULL: the strategy can only start empty). Called by the engine
     * once, right after create and before any other call, when the trace starts
     * from a recorded state (sim/seed.h): take its segments at their addresses,
     * each with its blocks at their offsets, and set handles[i] for every block i
     * of seed->blocks in state SIM_SEED_USED (others untouched); the engine maps
     * those blocks' ids to the handles, so their later frees find them, and counts
     * their requested bytes as live. SIM_EUSAGE with a message when the state is
     * one the strategy cannot hold (e.g. segments of a private pool), SIM_OOM
     * when the device has no room for it. */
    sim_status (*seed)(strategy *s, const sim_seed *seed, strategy_handle *handles, sim_error *err);
    /* Optional (NULL for a strategy without stable addresses: ideal): the block
     * holding allocation h now, every field as walk() shows that block (address,
     * size, requested bytes, its segment's base and number, stream, state, pool).
     * h is live, or freed deferred before its free_ready: then its pending block, or
     * false once its memory came back early (a synchronize) or went whole to a
     * same-stream reuse. false when h holds no block (zero bytes). O(1) or O(log n)
     * from the strategy's own records, allocating nothing: the snapshot export calls
     * it at every allocation and the report's memory map for every live allocation
     * (answers/capture.c), placement checks against a recording use it, and tests
     * hold it to the walker after every operation (tests/support/harness.h). */
    bool (*locate)(const strategy *s, strategy_handle h, strategy_block *out);
    /* Optional: the memory limit the instance works under, and in source (at most n
     * bytes, NUL-terminated) where it comes from in the user's words, as derived at
     * create(): "0.5 x 16.00 GiB, --mem-fraction". NULL: the reports derive it from
     * the memory_fraction option, else capacity − context (reports/result.h). */
    uint64_t (*limit)(const strategy *s, char *source, size_t n);
} strategy_ops;

/* For a strategy's ops table: opts and n_opts from its option array. Each table names
 * its functions in full (.alloc = torch_alloc), so that a grep finds every use. */
#define STRATEGY_OPTS_OF(table) .opts = (table), .n_opts = sizeof(table) / sizeof((table)[0])

/* One value found by strategy_stat_find / strategy_option_find. */
typedef enum strategy_stat_kind { STRATEGY_STAT_U64 = 0, STRATEGY_STAT_REAL, STRATEGY_STAT_TEXT } strategy_stat_kind;
typedef struct strategy_stat_value {
    strategy_stat_kind kind;
    uint64_t u64;    /* when kind is STRATEGY_STAT_U64 */
    double real;     /* when kind is STRATEGY_STAT_REAL */
    char text[512];  /* when kind is STRATEGY_STAT_TEXT; truncated, always NUL-terminated */
} strategy_stat_value;

/* The statistic key of instance s (ops->stats), whatever its kind: true and *value set
 * (if s emits key twice, the last value), or false with *value zeroed. O(number of stats). */
bool strategy_stat_find(const strategy_ops *ops, const strategy *s, const char *key, strategy_stat_value *value);
/* The same over the effective options (ops->options). */
bool strategy_option_find(const strategy_ops *ops, const strategy *s, const char *key, strategy_stat_value *value);

#endif
