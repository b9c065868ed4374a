/* synth.h — what the synthetic workload generators share: an output that hands out
 * fresh allocation ids, keeps the clock, tracks live bytes and writes every event
 * through the native trace writer (traces/trace.h, temp file + rename), the seeded GSL
 * random number generator each generator instance owns, and the element types and
 * optimizers the model generators understand. */

/* Errors are sticky: after the first failed write every call is a no-op and close
 * reports it. */
#ifndef GPUSIM_SYNTH_H
#define GPUSIM_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/evbuf.h"
#include "sim/status.h"
#include "traces/trace.h"

typedef struct synth_out synth_out;

/* What live bytes are, by the tag's prefix (the text before ':'): the terms of the
 * closed forms, so that a trace's peak can be set beside them term by term. */
typedef enum synth_cat {
    SYNTH_CAT_WEIGHT = 0,  /* weight:, weight_shard:, buffer:, qweight:, qconst: (model parameters) */
    SYNTH_CAT_GRAD,        /* grad:, grad_shard:, fsdp_rs: (FSDP2's reduce-scatter input), fsdp_rs_out: (its
                            * output, the gradient shards), te_dummy_wgrad: (TE's cached placeholders) */
    SYNTH_CAT_OPTIMIZER,   /* adam_m:, adam_v:, momentum:, master:, adafactor_*: */
    SYNTH_CAT_ACT,         /* act: (saved for backward), agrad: (activation gradients) */
    SYNTH_CAT_TMP,         /* tmp: (temporaries: foreach denominators, logits, dequantized weights) */
    SYNTH_CAT_GATHER,      /* gather: (ZeRO-3/FSDP all-gathered parameters), fsdp_ag:, unsharded: (FSDP2's),
                            * p2p: (pipeline buffers) */
    SYNTH_CAT_KV,          /* kv: (KV caches, the paged pool) */
    SYNTH_CAT_OTHER,
    SYNTH_CAT_N
} synth_cat;
const char *synth_cat_name(synth_cat c);
/* The category of a tag ("weight:x" -> SYNTH_CAT_WEIGHT); NULL -> OTHER. */
synth_cat synth_cat_of(const char *tag);

/* What a generator wrote, for tests, the CLI's summary and the README figures. */
typedef struct synth_stats {
    uint64_t events, allocs, frees, marks;
    uint64_t pool_events;       /* pool_begin, pool_end, pool_release, graph_replay */
    uint64_t peak_live_bytes;   /* max over time of the live requested bytes (= ideal peak) */
    uint64_t final_live_bytes;  /* bytes still allocated when the trace ends */
    uint64_t final_live_count;
    uint64_t t_end_ns;
    uint64_t peak_by_cat[SYNTH_CAT_N]; /* live bytes by category at the (first) peak */
    char peak_mark[64];                /* the last mark before the peak ("optimizer 1"), "" if none */
} synth_stats;

/* Open path for writing (container from the extension: .jsonl = JSON Lines).
 * t0_ns is the time of the first event; proc, if not NULL, is written on every
 * event (copied). */
sim_status synth_out_open(const char *path, const trace_header *h, uint64_t t0_ns, const char *proc,
                          synth_out **out, sim_error *err);
/* The same, writing to memory only (no file): events are counted, not kept.
 * Used to measure a workload (closed-form comparisons) without writing it. */
synth_out *synth_out_new_null(void);
/* Every later event is also pushed into b (borrowed, until close): a generator's
 * prefix held in memory, to be replayed before the rest is written. */
void synth_out_tee(synth_out *o, evbuf *b);
/* Make the output fail with SIM_ENOMEM and msg (a generator out of host memory). */
void synth_fail(synth_out *o, const char *msg);
/* Events written so far (the next event is number synth_events() + 1). */
uint64_t synth_events(const synth_out *o);
/* Finish: commit=true renames the file into place (if the sticky status is OK),
 * false discards it. Fills stats if not NULL. Frees o. Returns the sticky error
 * or the close error. */
sim_status synth_out_close(synth_out *o, bool commit, synth_stats *stats, sim_error *err);

/* Allocate size bytes now; returns the new id (ids are 1, 2, 3 ... never reused). */
uint64_t synth_alloc(synth_out *o, uint64_t size, const char *tag);
uint64_t synth_alloc_stream(synth_out *o, uint64_t size, uint32_t stream, const char *tag);
/* tag built from a printf format (at most 127 characters are kept). */
uint64_t synth_allocf(synth_out *o, uint64_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Free id now (id 0 is ignored, so "free if allocated" needs no test). */
void synth_free(synth_out *o, uint64_t id);
void synth_mark(synth_out *o, const char *name);
void synth_markf(synth_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void synth_empty_cache(synth_out *o);
/* Private pools (trace v1's pool events, design.md §2): a CUDA graph capture on
 * `stream` into pool (> 0) begins (torch.cuda.graph: allocations on that stream go to
 * the pool) and ends; one use of the pool is released (the graph destroyed); a replay
 * of a graph captured into pool (a mark; name may be NULL). */
void synth_capture_begin(synth_out *o, uint64_t pool, uint32_t stream);
void synth_capture_end(synth_out *o, uint64_t pool);
void synth_pool_release(synth_out *o, uint64_t pool);
void synth_graph_replay(synth_out *o, uint64_t pool, const char *name);
void synth_advance(synth_out *o, uint64_t dt_ns);
uint64_t synth_now(const synth_out *o);
uint64_t synth_live_bytes(const synth_out *o);
/* false once a write failed: generators stop early. */
bool synth_ok(const synth_out *o);

/* ---- shared vocabulary of the model generators ---- */

typedef enum synth_dtype { SYNTH_FP32 = 0, SYNTH_FP16 = 1, SYNTH_BF16 = 2 } synth_dtype;
uint64_t synth_dtype_bytes(synth_dtype d);
const char *synth_dtype_name(synth_dtype d);
/* "fp32"/"float32", "fp16"/"float16"/"half", "bf16"/"bfloat16"; false if unknown. */
bool synth_dtype_parse(const char *text, synth_dtype *out);

/* sgd: no state; momentum: one buffer per parameter; adam (and adamw, the same
 * states): exp_avg and exp_avg_sq; adafactor: a factored second moment (a row and a
 * column vector per matrix, the full tensor for vectors) and no first moment
 * (Shazeer & Stern 2018, beta1 = None as in the Hugging Face default). */
typedef enum synth_optimizer { SYNTH_SGD = 0, SYNTH_MOMENTUM = 1, SYNTH_ADAM = 2, SYNTH_ADAFACTOR = 3 } synth_optimizer;
/* Optimizer-state tensors per parameter tensor: 0, 1 or 2 (adafactor: 1, factored). */
uint64_t synth_optimizer_states(synth_optimizer o);
const char *synth_optimizer_name(synth_optimizer o);
bool synth_optimizer_parse(const char *text, synth_optimizer *out);

/* ---- randomness: only GSL, seeded explicitly, owned by the generator ---- */
typedef struct synth_rng synth_rng;
/* gsl_rng_mt19937 seeded with seed (seed 0 is mapped by GSL to its default 4357,
 * so seeds are offset by one internally to keep 0 distinct). NULL if no memory. */
synth_rng *synth_rng_new(uint64_t seed);
void synth_rng_free(synth_rng *r);
double synth_rng_uniform(synth_rng *r);                 /* [0, 1) */
uint64_t synth_rng_uniform_int(synth_rng *r, uint64_t n); /* [0, n), n ≥ 1 */
double synth_rng_exponential(synth_rng *r, double mean);
double synth_rng_lognormal(synth_rng *r, double mu, double sigma);
double synth_rng_gamma(synth_rng *r, double shape, double scale);
/* A duration of about nominal_ns with multiplicative lognormal jitter (sigma). */
uint64_t synth_rng_jitter(synth_rng *r, uint64_t nominal_ns, double sigma);

#endif
