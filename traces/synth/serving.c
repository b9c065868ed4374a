/* Inference-server trace generator.
 *
 * Memory model (e = bytes per element, H hidden, L layers, I ffn, A heads, V vocab):
 *  1. The model's weights, one allocation per parameter tensor (transformer.h's
 *     list), at start; freed at the end unless keep_live.
 *  2. Requests arrive as a Poisson process: inter-arrival times are exponential
 *     with mean 1/rate (gsl_ran_exponential). Each request draws a prompt length p
 *     and an output length o: lognormal (gsl_ran_lognormal, given as a median and
 *     σ) or uniformly from the empirical pairs of --lengths; both at least 1 and
 *     p + o ≤ max_len (o is cut first, then p).
 *  3. Continuous batching: before every decode iteration, waiting requests join
 *     (FIFO) while fewer than max_batch are active. Joining = the KV cache
 *     "kv:req N" is allocated — 2·L·H·e bytes per token, for p + o tokens
 *     (prealloc) or for p rounded up to the chunk (grow) — then the prefill runs:
 *     a temporary of p·(3H + I)·e + A·p²·e bytes (the largest layer working set:
 *     q, k, v, MLP inner activations, attention scores) is allocated and freed.
 *  4. Each iteration decodes one token for every active request: temporaries for
 *     the batch's hidden states b·(3H + I)·e and logits b·V·e, allocated and
 *     freed. With grow, a request whose cache is full gets a new cache one chunk
 *     longer (allocated, then the old one freed: the torch.cat pattern).
 *  5. A request that produced o tokens frees its KV cache.
 *  6. --kv=paged (vLLM, Kwon et al. 2023): after the weights, one allocation
 *     "kv:pool" of N blocks of block_size tokens, N = (gpu_util · capacity −
 *     weights − reserve) / block bytes, the reserve being what vLLM's profiling
 *     forward measures: the prefill working set of max_len tokens plus max_batch
 *     rows of decode activations and logits. Requests take blocks from the pool, no
 *     allocations: one joins while the free blocks cover its prompt and one more
 *     token; a decode step that crosses a block boundary takes a block, and when
 *     none is free the most recently admitted request is preempted (its blocks
 *     freed, back to the front of the queue, recomputed from its prompt when
 *     readmitted: vLLM's scheduler pops the victim off the end of its running
 *     queue and preempts a single sequence by recomputation; vllm/core/scheduler.py,
 *     Scheduler._schedule_running and _preempt, vllm-project/vllm 0dce2b29). With
 *     --prefix=N every prompt starts with the same N tokens, whose full blocks are
 *     held once and shared (prefix caching).
 * Time: a prefill takes 50 µs per prompt token, an iteration 15 ms + 0.5 ms per
 * active request, each with lognormal jitter (σ 0.1); when nothing is active the
 * clock jumps to the next arrival. A mark "served N" every 100 completions. */
#include "serving.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

void serving_defaults(serving_config *c)
{
    memset(c, 0, sizeof *c);
    transformer_defaults(&c->model);
    transformer_preset("gpt2-medium", &c->model);
    c->model.dtype = SYNTH_FP16;
    c->model.inference = true;
    c->rate = 2.0;
    c->requests = 1000;
    c->max_batch = 16;
    c->prompt_median = 256;
    c->prompt_sigma = 1.0;
    c->output_median = 128;
    c->output_sigma = 0.8;
    c->max_len = 1024;
    c->kv = SERVING_KV_PREALLOC;
    c->kv_chunk = 128;
    c->seed = 1;
    c->block_size = 16;
    c->gpu_util = 0.9;
}

void serving_config_release(serving_config *c)
{
    free(c->lengths);
    c->lengths = NULL;
    c->n_lengths = 0;
}

static bool parse_len(const char **p, uint64_t *out)
{
    while (**p == ' ' || **p == '\t' || **p == ',')
        (*p)++;
    if (!isdigit((unsigned char)**p))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(*p, &end, 10);
    if (errno != 0 || v == 0 || v > (1u << 24))
        return false;
    *p = end;
    *out = v;
    return true;
}

sim_status serving_load_lengths(serving_config *c, const char *path, sim_error *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    char line[512];
    uint64_t lineno = 0, cap = 0;
    sim_status st = SIM_OK;
    serving_config_release(c);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        uint64_t prompt, output = 0;
        if (!parse_len(&p, &prompt)) {
            st = sim_error_set(err, SIM_EUSAGE, path, lineno, 0,
                               "expected a prompt length (a whole number of tokens, 1 to 16777216)");
            break;
        }
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p != '\n' && *p != '\r' && *p != '\0' && !parse_len(&p, &output)) {
            st = sim_error_set(err, SIM_EUSAGE, path, lineno, 0,
                               "expected an output length after the prompt length");
            break;
        }
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (*p != '\0') {
            st = sim_error_set(err, SIM_EUSAGE, path, lineno, 0, "unexpected text after the lengths");
            break;
        }
        /* two numbers per request: cap counts numbers */
        if (!SIM_GROW(c->lengths, 2 * (c->n_lengths + 1), cap)) {
            st = sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
            break;
        }
        c->lengths[2 * c->n_lengths] = prompt;
        c->lengths[2 * c->n_lengths + 1] = output;
        c->n_lengths++;
    }
    if (st == SIM_OK && ferror(f))
        st = sim_error_set(err, SIM_EIO, path, 0, 0, "read failed");
    if (st == SIM_OK && c->n_lengths == 0)
        st = sim_error_set(err, SIM_EUSAGE, path, 0, 0, "no lengths in the file");
    fclose(f);
    if (st != SIM_OK)
        serving_config_release(c);
    return st;
}

sim_status serving_validate(const serving_config *c, sim_error *err)
{
    sim_status st = transformer_validate(&c->model, err);
    if (st != SIM_OK)
        return st;
    if (!(c->rate > 0.0) || c->rate > 1e6)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--rate must be between 0 and 1e6 requests per second");
    if (c->requests == 0 || c->requests > 100000000)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--requests must be between 1 and 100000000");
    if (c->max_batch == 0 || c->max_batch > 65536)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--max-batch must be between 1 and 65536");
    if (c->max_len < 2 || c->max_len > (1u << 24))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--max-len must be between 2 and 16777216");
    if (!(c->prompt_median >= 1.0) || !(c->output_median >= 1.0) || !(c->prompt_sigma >= 0.0) ||
        !(c->output_sigma >= 0.0) || c->prompt_sigma > 10.0 || c->output_sigma > 10.0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "length medians must be ≥ 1 and sigmas in [0, 10]");
    if (c->kv_chunk == 0 || c->kv_chunk > c->max_len)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--kv-chunk must be between 1 and --max-len");
    if (c->startup && c->kv != SERVING_KV_PAGED)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--gpu-memory-utilization and --cuda-graphs model vLLM, whose KV cache is paged "
                             "(--kv=paged)");
    if (!c->startup && c->n_graphs)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "CUDA graphs are captured by the vLLM start-up only");
    if (c->graph_warmups > 16)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--graph-warmups must be between 0 and 16");
    if (c->kv != SERVING_KV_PAGED && c->prefix)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--prefix (shared prompt blocks) needs --kv=paged");
    if (c->kv == SERVING_KV_PAGED) {
        if (c->capacity == 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--kv=paged sizes its pool from the device: give --gpu or --capacity");
        if (c->block_size == 0 || c->block_size > 1024)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--block-size must be between 1 and 1024 tokens");
        if (!(c->gpu_util > 0.0) || c->gpu_util > 1.0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--gpu-util must be in (0, 1]");
        if (c->prefix >= c->max_len - 1)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--prefix must be shorter than --max-len - 1");
    }
    return SIM_OK;
}

uint64_t serving_kv_bytes_per_token(const serving_config *c)
{
    const transformer_config *m = &c->model;
    const uint64_t hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    const uint64_t kv_width = (m->kv_heads ? m->kv_heads : m->heads) * hd;
    return 2 * m->layers * kv_width * synth_dtype_bytes(m->dtype);
}

typedef struct request {
    uint64_t n;          /* 1-based request number */
    uint64_t prompt, output, done;
    uint64_t kv_tokens;  /* tokens the cache holds room for */
    uint64_t kv_id;
    uint64_t blocks;     /* paged: private blocks held */
    uint64_t admitted;   /* paged: admission order, for preemption */
    bool evicted;
} request;

typedef struct server {
    const serving_config *c;
    synth_out *o;
    synth_rng *rng;
    uint64_t e, kv_per_token;
    request *queue;      /* ring of waiting requests */
    uint64_t q_head, q_len, q_cap;
    request *active;
    uint64_t n_active;
    /* paged */
    uint64_t block_bytes, blocks, used, shared, admissions;
    serving_report *report;
    serving_startup_state *startup; /* the vLLM start-up's graphs and KV (NULL without it) */
} server;

static uint64_t draw_len(synth_rng *r, double median, double sigma)
{
    double v = synth_rng_lognormal(r, log(median), sigma);
    if (!(v >= 1.0))
        return 1;
    if (v > 16777216.0)
        return 16777216;
    return (uint64_t)llround(v);
}

static void draw_request(server *s, request *q)
{
    const serving_config *c = s->c;
    uint64_t p, o = 0;
    if (c->lengths) {
        uint64_t k = synth_rng_uniform_int(s->rng, c->n_lengths);
        p = c->lengths[2 * k];
        o = c->lengths[2 * k + 1];
    } else {
        p = draw_len(s->rng, c->prompt_median, c->prompt_sigma);
    }
    if (o == 0)
        o = draw_len(s->rng, c->output_median, c->output_sigma);
    if (p > c->max_len - 1)
        p = c->max_len - 1;
    if (p + o > c->max_len)
        o = c->max_len - p;
    if (c->prefix) { /* the shared prefix comes first */
        p = p + c->prefix > c->max_len - 1 ? c->max_len - 1 : p + c->prefix;
        if (p + o > c->max_len)
            o = c->max_len - p;
    }
    q->prompt = p;
    q->output = o;
}

static bool enqueue(server *s, const request *r)
{
    if (s->q_len == s->q_cap) {
        uint64_t cap = s->q_cap ? s->q_cap * 2 : 64;
        request *q = malloc(cap * sizeof *q);
        if (q == NULL)
            return false;
        for (uint64_t i = 0; i < s->q_len; i++)
            q[i] = s->queue[(s->q_head + i) % s->q_cap];
        free(s->queue);
        s->queue = q;
        s->q_cap = cap;
        s->q_head = 0;
    }
    s->queue[(s->q_head + s->q_len) % s->q_cap] = *r;
    s->q_len++;
    return true;
}

static uint64_t round_up(uint64_t n, uint64_t m)
{
    return (n + m - 1) / m * m;
}

/* the prefill's largest layer working set for p tokens (no p² scores with flash attention) */
static uint64_t prefill_bytes(const server *s, uint64_t p)
{
    const transformer_config *m = &s->c->model;
    return p * (3 * m->hidden + m->ffn) * s->e + (m->flash ? 0 : m->heads * p * p * s->e);
}

/* paged: private blocks a request of t tokens holds */
static uint64_t blocks_for(const server *s, uint64_t tokens)
{
    uint64_t n = (tokens + s->c->block_size - 1) / s->c->block_size;
    return n > s->shared ? n - s->shared : 0;
}

static void admit(server *s, request *r)
{
    const bool paged = s->c->kv == SERVING_KV_PAGED;
    r->kv_tokens = s->c->kv == SERVING_KV_PREALLOC ? r->prompt + r->output
                                                   : round_up(r->prompt, paged ? s->c->block_size : s->c->kv_chunk);
    if (r->kv_tokens > s->c->max_len)
        r->kv_tokens = s->c->max_len;
    synth_advance(s->o, synth_rng_jitter(s->rng, 20000, 0.1));
    if (paged) {
        r->blocks = blocks_for(s, r->prompt + 1);
        s->used += r->blocks;
        r->admitted = ++s->admissions;
        r->done = 0;
        if (s->used > s->report->peak_blocks_used)
            s->report->peak_blocks_used = s->used;
    } else {
        r->kv_id = synth_allocf(s->o, r->kv_tokens * s->kv_per_token, "kv:req %llu", (unsigned long long)r->n);
    }
    const uint64_t p = r->prompt;
    synth_advance(s->o, synth_rng_jitter(s->rng, 5000, 0.1));
    if (s->startup) { /* the eager forward pass, in chunks of max_num_batched_tokens */
        const uint64_t chunk = s->c->max_num_batched_tokens ? s->c->max_num_batched_tokens : s->c->max_len;
        for (uint64_t done = 0; done < p; done += chunk)
            serving_forward(s->o, s->c, p - done < chunk ? p - done : chunk, 0, false, true, "act", NULL);
        synth_advance(s->o, synth_rng_jitter(s->rng, 50000 * p, 0.1));
    } else {
        uint64_t id = synth_alloc(s->o, prefill_bytes(s, p), "tmp:prefill");
        synth_advance(s->o, synth_rng_jitter(s->rng, 50000 * p, 0.1));
        synth_free(s->o, id);
    }
    r->done = 1; /* the prefill produces the first token */
}

static void iterate(server *s)
{
    const transformer_config *m = &s->c->model;
    const uint64_t b = s->n_active;
    synth_advance(s->o, synth_rng_jitter(s->rng, 5000, 0.1));
    if (s->startup) { /* a replay of the smallest graph that holds the batch, else eager */
        const serving_graph *g = serving_startup_graph_for(s->startup, b);
        if (g) {
            char name[48];
            snprintf(name, sizeof name, "decode b=%llu", (unsigned long long)g->batch);
            synth_graph_replay(s->o, g->pool, name);
            s->report->graph_replays++;
        } else {
            serving_forward(s->o, s->c, b, 0, false, false, "act", NULL);
            s->report->eager_decodes++;
        }
        synth_advance(s->o, synth_rng_jitter(s->rng, 15000000 + 500000 * b, 0.1));
        uint64_t logits = synth_alloc(s->o, b * m->vocab * s->e, "tmp:logits");
        synth_advance(s->o, synth_rng_jitter(s->rng, 100000, 0.1));
        synth_free(s->o, logits);
    } else {
        uint64_t act = synth_alloc(s->o, b * (3 * m->hidden + m->ffn) * s->e, "tmp:decode");
        synth_advance(s->o, synth_rng_jitter(s->rng, 15000000 + 500000 * b, 0.1));
        uint64_t logits = synth_alloc(s->o, b * m->vocab * s->e, "tmp:logits");
        synth_advance(s->o, synth_rng_jitter(s->rng, 100000, 0.1));
        synth_free(s->o, act);
        synth_free(s->o, logits);
    }
    for (uint64_t i = 0; i < s->n_active; i++) {
        request *r = &s->active[i];
        if (r->done >= r->output)
            continue;
        r->done++;
        if (s->c->kv == SERVING_KV_GROW && r->prompt + r->done > r->kv_tokens && r->done < r->output) {
            uint64_t tokens = r->kv_tokens + s->c->kv_chunk;
            if (tokens > s->c->max_len)
                tokens = s->c->max_len;
            uint64_t id = synth_allocf(s->o, tokens * s->kv_per_token, "kv:req %llu", (unsigned long long)r->n);
            synth_advance(s->o, synth_rng_jitter(s->rng, 10000, 0.1));
            synth_free(s->o, r->kv_id);
            r->kv_id = id;
            r->kv_tokens = tokens;
        }
    }
}

/* paged: the latest-admitted active request that is not evicted yet */
static request *victim(server *s)
{
    request *v = NULL;
    for (uint64_t i = 0; i < s->n_active; i++)
        if (!s->active[i].evicted && (v == NULL || s->active[i].admitted > v->admitted))
            v = &s->active[i];
    return v;
}

/* paged: the front of the queue gets r back (preempted: recomputed when readmitted) */
static bool requeue_front(server *s, const request *r)
{
    if (!enqueue(s, r)) /* makes room; then rotate it to the front */
        return false;
    s->q_head = (s->q_head + s->q_cap - 1) % s->q_cap;
    s->queue[s->q_head] = s->queue[(s->q_head + s->q_len) % s->q_cap];
    return true;
}

/* paged, after a decode step: every request whose next token starts a new block takes
 * one; with none free the most recently admitted request is preempted */
static bool paged_blocks(server *s)
{
    const uint64_t free_blocks_total = s->blocks - s->shared;
    for (uint64_t i = 0; i < s->n_active; i++) {
        request *r = &s->active[i];
        if (r->evicted || r->done >= r->output)
            continue;
        uint64_t need = blocks_for(s, r->prompt + r->done + 1);
        while (need > r->blocks && !r->evicted) {
            if (s->used < free_blocks_total) {
                r->blocks++;
                s->used++;
                continue;
            }
            request *v = victim(s);
            v->evicted = true;
            s->used -= v->blocks;
            v->blocks = 0;
            s->report->preemptions++;
        }
    }
    if (s->used > s->report->peak_blocks_used)
        s->report->peak_blocks_used = s->used;
    /* the evicted go back to the front of the queue, the first evicted first */
    for (uint64_t i = s->n_active; i-- > 0;) {
        if (!s->active[i].evicted)
            continue;
        request r = s->active[i];
        r.evicted = false;
        r.done = 0;
        s->active[i] = s->active[--s->n_active];
        if (!requeue_front(s, &r))
            return false;
    }
    return true;
}

/* paged: the pool after the weights, and the shared prefix's blocks */
static sim_status paged_pool(server *s, uint64_t weight_bytes, uint64_t *pool_id, sim_error *err)
{
    const serving_config *c = s->c;
    const transformer_config *m = &c->model;
    serving_report *rep = s->report;
    rep->block_bytes = s->block_bytes = c->block_size * s->kv_per_token;
    rep->reserve_bytes = prefill_bytes(s, c->max_len) + c->max_batch * (3 * m->hidden + m->ffn + m->vocab) * s->e;
    const double budget = c->gpu_util * (double)c->capacity - (double)weight_bytes - (double)rep->reserve_bytes;
    s->blocks = budget > 0 ? (uint64_t)(budget / (double)s->block_bytes) : 0;
    s->shared = c->prefix / c->block_size;
    const uint64_t one_request = (c->max_len + c->block_size - 1) / c->block_size;
    if (s->blocks < one_request + s->shared)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--kv=paged: %.3g of the device leaves room for %llu KV blocks, fewer than one request "
                             "of --max-len=%llu needs (%llu); raise --gpu-util or use a larger device",
                             c->gpu_util, (unsigned long long)s->blocks, (unsigned long long)c->max_len,
                             (unsigned long long)(one_request + s->shared));
    rep->blocks = s->blocks;
    rep->pool_bytes = s->blocks * s->block_bytes;
    rep->shared_blocks = s->shared;
    synth_advance(s->o, synth_rng_jitter(s->rng, 2000 + rep->pool_bytes / 1000, 0.1));
    *pool_id = synth_allocf(s->o, rep->pool_bytes, "kv:pool %llu blocks of %llu tokens", (unsigned long long)s->blocks,
                            (unsigned long long)c->block_size);
    return SIM_OK;
}

sim_status serving_generate(const serving_config *c, synth_out *o, sim_error *err)
{
    serving_report r;
    return serving_generate_report(c, o, &r, err);
}

sim_status serving_generate_report(const serving_config *c, synth_out *o, serving_report *report, sim_error *err)
{
    memset(report, 0, sizeof *report);
    sim_status st = serving_validate(c, err);
    if (st != SIM_OK)
        return st;
    server s = {.c = c, .o = o, .e = synth_dtype_bytes(c->model.dtype), .report = report};
    serving_startup_state startup;
    memset(&startup, 0, sizeof startup);
    const bool paged = c->kv == SERVING_KV_PAGED;
    uint64_t pool_id = 0, weight_bytes = 0;
    s.kv_per_token = serving_kv_bytes_per_token(c);
    uint32_t n_params = 0;
    graph_param *params = transformer_params(&c->model, &n_params);
    uint64_t *w_ids = params ? calloc(n_params, sizeof *w_ids) : NULL;
    s.rng = synth_rng_new(c->seed);
    s.active = calloc(c->max_batch, sizeof *s.active);
    if (params == NULL || w_ids == NULL || s.rng == NULL || s.active == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto done;
    }
    synth_mark(o, "load weights");
    for (uint32_t p = 0; p < n_params; p++) {
        synth_advance(o, synth_rng_jitter(s.rng, 2000 + params[p].numel * s.e / 1000, 0.1));
        w_ids[p] = synth_allocf(o, params[p].numel * s.e, "weight:%s", params[p].name);
        /* the start-up counts them as allocated_bytes does: each rounded up to 512 B */
        weight_bytes += c->startup ? (params[p].numel * s.e + 511) / 512 * 512 : params[p].numel * s.e;
    }
    if (c->startup) {
        if ((st = serving_startup(c, o, s.rng, weight_bytes, &startup, report, err)) != SIM_OK)
            goto done;
        s.startup = &startup;
        s.blocks = report->blocks;
        s.block_bytes = report->block_bytes;
        s.shared = report->shared_blocks;
    } else if (paged && (st = paged_pool(&s, weight_bytes, &pool_id, err)) != SIM_OK) {
        goto done;
    }
    synth_mark(o, "serving");
    const uint64_t t_start = synth_now(o);
    double next_arrival = (double)t_start + synth_rng_exponential(s.rng, 1e9 / c->rate);
    uint64_t arrived = 0, completed = 0;
    while (completed < c->requests && synth_ok(o)) {
        while (arrived < c->requests && next_arrival <= (double)synth_now(o)) {
            request r = {.n = ++arrived};
            draw_request(&s, &r);
            if (!enqueue(&s, &r)) {
                st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                goto done;
            }
            next_arrival += synth_rng_exponential(s.rng, 1e9 / c->rate);
        }
        if (s.n_active == 0 && s.q_len == 0) {
            uint64_t now = synth_now(o);
            if (next_arrival > (double)now)
                synth_advance(o, (uint64_t)ceil(next_arrival - (double)now));
            continue;
        }
        while (s.n_active < c->max_batch && s.q_len > 0 &&
               (!paged || blocks_for(&s, s.queue[s.q_head].prompt + 1) <= s.blocks - s.shared - s.used)) {
            request *r = &s.active[s.n_active++];
            *r = s.queue[s.q_head];
            s.q_head = (s.q_head + 1) % s.q_cap;
            s.q_len--;
            admit(&s, r);
        }
        if (s.n_active > report->peak_active)
            report->peak_active = s.n_active;
        iterate(&s);
        if (paged && !paged_blocks(&s)) {
            st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto done;
        }
        for (uint64_t i = 0; i < s.n_active;) {
            if (s.active[i].done >= s.active[i].output) {
                synth_advance(o, synth_rng_jitter(s.rng, 1000, 0.1));
                synth_free(o, s.active[i].kv_id);
                s.used -= s.active[i].blocks;
                s.active[i] = s.active[--s.n_active];
                completed++;
                if (completed % 100 == 0)
                    synth_markf(o, "served %llu", (unsigned long long)completed);
            } else {
                i++;
            }
        }
    }
    if (c->startup)
        serving_startup_end(&startup, o, !c->keep_live);
    if (!c->keep_live) {
        if (!c->startup)
            synth_mark(o, "release");
        synth_free(o, pool_id);
        for (uint32_t p = 0; p < n_params; p++)
            synth_free(o, w_ids[p]);
    }
done:
    serving_startup_end(&startup, o, false);
    synth_rng_free(s.rng);
    free(s.active);
    free(s.queue);
    free(w_ids);
    free(params);
    return st;
}
