/* engine.h — the discrete-event replay (design.md §3): merges the events of one or
 * more traces (one process per trace, or per "proc" name inside a trace) with the
 * deferred frees due at ready_t, in (t, sequence) order, drives one strategy instance
 * per process on a shared device, records out-of-memory events as data, and measures
 * every metric of design.md §5 after each event. The result is plain data (sim_run). */

/* It also checks the trace's semantics (ids). Whatever watches a run (the HTML
 * report's capture, a mirror) adds an observer that sees each measured event with its
 * outcome and the device totals (engine_tick), instead of wrapping the strategy.
 * Thread safety: one engine_run is one replay with its own state; separate runs may go
 * on separate threads (compare, tune, plan and sweep do), and observers are called on
 * the thread of their run. A finished sim_run is read-only data several threads may read. */
#ifndef GPUSIM_ENGINE_H
#define GPUSIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "event.h"
#include "status.h"
#include "strategy.h"
#include "timeline.h"

/* What became of a measured event (engine_tick.outcome). */
typedef enum engine_outcome {
    ENGINE_DONE = 0,     /* it took effect: alloc, free, a deferred free coming due, empty_cache, mark */
    ENGINE_IGNORED,      /* the free of an allocation --on-oom=skip dropped: nothing happened */
    ENGINE_OOM_DROPPED,  /* an alloc failed; --on-oom=skip dropped it and the process goes on */
    ENGINE_OOM_ENDED     /* an alloc failed and ended its process (--on-oom=stop): its last tick */
} engine_outcome;

struct sim_run;

/* One measured event as an observer sees it (engine_config.observers). */
typedef struct engine_tick {
    const sim_event *ev;       /* the trace event, or NULL for a deferred free coming due */
    uint64_t deferred_size;    /* ev == NULL: the requested bytes that came back; else 0 */
    uint32_t source;           /* index of the trace */
    uint32_t process;          /* index into run->procs */
    uint64_t event;            /* global event number (sim_run.events, peak_reserved_event) */
    uint64_t t;                /* ns: ev->t, or the deferred free's ready_t */
    engine_outcome outcome;
    /* an alloc that took effect: the strategy's handle for it (ops->locate tells
     * where it put the block); STRATEGY_HANDLE_NONE for every other tick */
    strategy_handle handle;
    /* a free that took effect (ev a free, outcome ENGINE_DONE) or a deferred free
     * coming due (ev NULL): the handle it frees (a deferred one stays valid until it
     * comes due); STRATEGY_HANDLE_NONE for every other tick */
    strategy_handle freed;
    const struct sim_run *run; /* the run so far: run->procs[process].s is the instance */
    /* the process after the event */
    strategy_sample proc;      /* its sample, as the engine measured it */
    uint64_t proc_requested;   /* live bytes it asked for */
    uint64_t proc_device_bytes; /* proc.reserved_bytes + the device's context */
    /* the device after the event, over the processes still running (an ending one
     * included: this is its last tick); what sim_run.total and the timeline record */
    strategy_sample total;     /* sums over processes; largest_free_bytes is the largest */
    uint64_t requested;
    uint64_t device_bytes;     /* device_used_bytes(): every process's memory and context */
    double fragmentation;      /* sim_fragmentation(total.free_bytes, total.largest_free_bytes) */
} engine_tick;

/* The observer's contract. It is called exactly once per measured event: every
 * trace event of a process that is still running and every deferred free coming
 * due, in replay order (events of a process an OOM already ended are counted in
 * sim_run.events but not measured, so tick.event can skip numbers). It is called
 * after the engine sampled the process and updated the metrics and the timeline
 * for the event, and before --paranoid's check of it (so a broken invariant ends
 * the run after the observer saw the event), before an ending process is taken
 * off the device, and before stop_after_event ends the run. The tick and
 * everything it points to are valid only during the call (ev's strings until the
 * source's next(), run->procs until a new process appears); the observer must not
 * change the run or call into the strategy except through its const ops
 * (sample, stats, options, walk, locate). Several observers see each tick in the order
 * they were added. No observer: no cost but one test per event. */
typedef void (*engine_observer)(void *ctx, const engine_tick *t);

/* The most observers one run takes: the features that watch a replay at once (the HTML
 * report's capture, --summary's moment, the snapshot export) and one to spare. */
#define ENGINE_MAX_OBSERVERS 4

/* An observer and its context (engine_config.observers). */
typedef struct engine_watch {
    engine_observer fn;
    void *ctx;
} engine_watch;

typedef struct engine_config {
    device_info device;
    const strategy_ops *ops;
    const sim_kv *opts;       /* strategy options, borrowed for the run */
    uint32_t n_opts;
    bool on_oom_skip;         /* --on-oom=skip: drop the failed allocation and go on */
    bool paranoid;            /* run the full invariant checker after every event */
    uint64_t timeline_rows;   /* 0: no timeline */
    /* 0, or stop once this many events (sim_run.events numbering) were processed:
     * a second pass to a chosen moment (the peak) to look at the allocator's state
     * there through ops->walk on sim_run.procs[i].s */
    uint64_t stop_after_event;
    /* end the whole run once the first OOM was measured (dropped or ending its
     * process): for a question that only asks whether the trace runs (plan's
     * search). sim_run then holds the run up to there; completed is false. */
    bool end_at_first_oom;
    /* optional progress callback, called every 65536 events */
    void (*progress)(void *ctx, uint64_t events_done);
    void *progress_ctx;
    /* per-event observers (see engine_observer above), called in this order; add them
     * with engine_config_observe */
    engine_watch observers[ENGINE_MAX_OBSERVERS];
    uint32_t n_observers;
    /* handed to every create() as strategy_config.app_data (a decorator's state) */
    void *app_data;
    /* optional, borrowed: what the replays of one command share (sim/memo.h), handed
     * to every create() as strategy_config.memo: `planned` plans a trace once in it */
    struct sim_memo *memo;
} engine_config;

#define SIM_OOM_LARGEST_LIVE 5u

/* One live allocation at an OOM (sim_oom_record.largest_live). */
typedef struct sim_oom_live {
    uint64_t id;
    uint64_t size;            /* requested bytes */
} sim_oom_live;

typedef struct sim_oom_record {
    bool happened;
    uint32_t source;          /* index of the trace */
    uint32_t process;         /* index into sim_run.procs */
    uint64_t event;           /* 1-based index of the event in its trace */
    uint64_t line;            /* its line (JSONL/JSON) or 0 */
    uint64_t t;               /* ns */
    uint64_t id;
    uint64_t size;            /* bytes the trace asked for */
    strategy_oom info;        /* the allocator's view, after its recovery steps */
    /* design.md §3 "OOM cause": L = live_requested_bytes, S = size, U = usable_bytes */
    sim_oom_cause cause;
    uint64_t live_requested_bytes; /* L: the process's live requested bytes before this request,
                                    * pending deferred frees included */
    uint64_t peak_demand_bytes; /* D: the process's peak live requested bytes over its whole trace
                                 * had every allocation been served (≥ L + S); the verdict is on D */
    uint64_t usable_bytes;    /* U: what the process may use (info.usable_bytes, else capacity − context) */
    uint64_t other_processes_bytes; /* what the other running processes hold, their contexts excluded */
    uint32_t other_processes; /* how many other processes were running */
    uint64_t contexts_bytes;  /* the contexts of every running process, this one included */
    uint64_t capacity_bytes;  /* the device's */
    char tag[128];            /* the failing allocation's tag (truncated), "" if none */
    /* filled for the first OOM of each process only (the one the reports show); 0 otherwise */
    uint64_t free_pieces;     /* free blocks inside what the allocator holds (ops->walk) */
    uint32_t n_largest_live;  /* the largest live allocations of the process, largest first */
    sim_oom_live largest_live[SIM_OOM_LARGEST_LIVE];
} sim_oom_record;

typedef struct sim_metrics {
    bool completed;
    uint64_t peak_requested_bytes;
    uint64_t peak_allocated_bytes;
    uint64_t peak_reserved_bytes;
    uint64_t peak_device_bytes;
    uint64_t final_requested_bytes;
    uint64_t final_allocated_bytes;
    uint64_t final_reserved_bytes;
    double fragmentation_at_peak;
    double fragmentation_max;
    uint64_t reserved_unallocated_at_peak_bytes;
    uint64_t peak_reserved_event;   /* global event number where reserved first peaked */
    uint64_t peak_reserved_t;
    uint64_t num_device_allocs;
    uint64_t num_device_frees;
    uint64_t ooms;
    sim_oom_record first_oom;
} sim_metrics;

typedef struct sim_run_source {
    char path[512];
    char name[256];
    uint64_t events, allocs, frees, empty_caches, marks;
    uint64_t pool_events;     /* pool_begin, pool_end, pool_release, graph_replay */
} sim_run_source;

typedef struct sim_run_proc {
    char name[256];           /* the "proc" value, or the trace's name/path */
    uint32_t source;
    strategy *s;              /* kept alive for stats, walks and reports */
    sim_metrics m;
} sim_run_proc;

typedef struct sim_run_mark {
    uint64_t t;
    uint64_t event;           /* global event number */
    char name[64];
} sim_run_mark;

typedef struct sim_run {
    device *dev;
    const strategy_ops *ops;
    uint32_t n_sources;
    sim_run_source *sources;
    uint32_t n_procs;
    sim_run_proc *procs;
    sim_metrics total;        /* the device as a whole (== procs[0].m for one process) */
    uint64_t events;          /* trace events + deferred frees processed */
    bool has_timeline;
    timeline tl;              /* device-wide curve, if asked for */
    uint32_t n_marks;
    sim_run_mark *marks;      /* the first SIM_RUN_MAX_MARKS marks */
} sim_run;

#define SIM_RUN_MAX_MARKS 4096u

/* Add observer fn with its context after those cfg has. SIM_EUSAGE with a message
 * when cfg already has ENGINE_MAX_OBSERVERS (cfg unchanged). */
sim_status engine_config_observe(engine_config *cfg, engine_observer fn, void *ctx, sim_error *err);

/* cfg for a replay of its own that a command makes besides the one it reports (a
 * what-if, a rewrite): no timeline, no --paranoid checker, no observers and no
 * progress callback; everything else as in cfg. */
engine_config engine_config_plain(const engine_config *cfg);

/* Replay the sources on one device. On success *out is the result (free with
 * sim_run_free). Errors: SIM_ETRACE (the trace is invalid: unknown id, ...),
 * SIM_EUSAGE (strategy options), SIM_EIO, SIM_ENOMEM, SIM_EINTERNAL (the
 * --paranoid checker found a broken invariant; its report is in err). */
sim_status engine_run(const engine_config *cfg, const sim_event_source *sources, uint32_t n_sources,
                      sim_run **out, sim_error *err);
void sim_run_free(sim_run *run);
/* Whether the run would be the same on any device with at least its peak on the
 * device free (same context): it completed, no device allocation failed, and every
 * process's allocator says it reads the capacity only through such failures
 * (strategy_ops.capacity_blind). */
bool sim_run_capacity_blind(const sim_run *run);

/* Fragmentation as TensorFlow defines it: 1 − largest free / free (0 when free is 0). */
double sim_fragmentation(uint64_t free_bytes, uint64_t largest_free_bytes);

#endif
