/* The start-up of a vLLM-style server (synth serving --gpu-memory-utilization,
 * --cuda-graphs), modelled on vLLM's V1 worker as of vllm-project/vllm 35d5cda
 * (vllm/v1/worker/gpu_worker.py, the release line before the CUDA graphs' memory was
 * profiled). After the weights:
 *  1. Profiling (Worker.determine_available_memory): empty_cache, then profile_run,
 *     a dummy forward pass of max_num_batched_tokens tokens and the sampler's logits
 *     for max_num_seqs (--max-batch) rows; every temporary freed. Its peak above what
 *     was allocated before it is vLLM's torch_peak_increase (allocated_bytes.all.peak,
 *     which counts each block rounded up to 512 B, as here). memory_profiling then
 *     collects and empties the cache again (an empty_cache).
 *  2. KV sizing: requested = gpu_memory_utilization × the card's total memory
 *     (Worker.init_device); available = requested − (weights + torch_peak_increase +
 *     non_torch_increase) (determine_available_memory: non_kv_cache_memory). The
 *     trace has no memory outside the allocator, so non_torch_increase is 0, and the
 *     CUDA context, taken before vLLM's first snapshot, is in no term (gpusim adds it
 *     with --context). The CUDA graphs are captured later and counted nowhere: the
 *     rule of this release line (its compile_or_warm_up_model says memory_profiling
 *     does not consider CUDA graph memory; later releases estimate it, vLLM PR
 *     #30515). blocks = available / (block_size × KV bytes per token) (vLLM divides
 *     by the page size and the layers); one KV tensor of blocks × the layer's page per
 *     layer (GPUModelRunner.initialize_kv_cache_tensors).
 *  3. Capture (GPUModelRunner.capture_model): the batch sizes largest first, as vLLM
 *     sorts them so that the smaller captures reuse the larger ones' blocks (or as
 *     --capture-order says), all on one side stream (1: vLLM's graph_capture context
 *     opens a stream and CUDAGraphWrapper captures on the current one). Per size:
 *     graph_warmups eager forward passes (cudagraph_num_of_warmups, which VllmConfig
 *     sets to 1 for the V1 engine), then torch.cuda.graph's __enter__ empties the
 *     cache (torch/cuda/graphs.py) and the capture runs the forward pass with its
 *     allocations in the private pool: the shared pool of graph_pool_handle() (pool 1
 *     for every capture), or a pool of its own (--graph-pool=separate, pool k for the
 *     k-th capture). The temporaries are freed inside the capture (reusable by it and
 *     by later captures into the same pool). The output too: vLLM's CUDAGraphWrapper
 *     (vllm/compilation/cuda_graph.py) keeps only a weak reference to it
 *     (weak_ref_tensors, "released to save memory"), so it goes back to the pool inside
 *     the capture and the replays write into memory later captures may share;
 *     --graph-outputs=kept keeps it live, owned by the graph, as a program that holds
 *     its graphs' static outputs does.
 *  4. After capture, compile_or_warm_up_model runs one eager forward pass of
 *     max_num_seqs rows and the sampler (the logits buffer), freed.
 * The forward pass of T tokens (e bytes per element, H hidden, W = KV heads × head
 * size, I the MLP's inner size, doubled for LLaMA's fused gate and up projection):
 * the embedding's output T·H·e, then per layer qkv T·(H + 2W)·e, [scores A·T²·e,
 * freed, for a prefill without flash attention], attention output T·H·e (qkv freed),
 * o_proj T·H·e (attention output and the layer input freed), the MLP's up projection
 * T·I·e (×2 for LLaMA), its activation T·I·e (up freed), down projection T·H·e (the
 * activation and o_proj freed: the layer's output), and the final norm's T·H·e. */
#include "serving_startup.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving.h"

static bool parse_size_list(const char *p, uint64_t *v, uint32_t *n, bool *dots, char *msg, size_t msg_len)
{
    *n = 0;
    while (*p) {
        if (*n >= SERVING_MAX_GRAPHS) {
            snprintf(msg, msg_len, "more than %u batch sizes", SERVING_MAX_GRAPHS);
            return false;
        }
        if (strncmp(p, "...", 3) == 0) {
            dots[*n] = true;
            v[(*n)++] = 0;
            p += 3;
        } else {
            if (!isdigit((unsigned char)*p)) {
                snprintf(msg, msg_len, "expected batch sizes separated by commas (e.g. 1,2,4,...,512), not '%s'", p);
                return false;
            }
            errno = 0;
            char *end;
            unsigned long long x = strtoull(p, &end, 10);
            if (errno != 0 || x == 0 || x > 65536) {
                snprintf(msg, msg_len, "a batch size must be between 1 and 65536");
                return false;
            }
            dots[*n] = false;
            v[(*n)++] = x;
            p = end;
        }
        if (*p == ',')
            p++;
        else if (*p != '\0') {
            snprintf(msg, msg_len, "expected a comma after a batch size, not '%s'", p);
            return false;
        }
    }
    return true;
}

bool serving_graph_sizes_parse(const char *text, uint64_t *sizes, uint32_t *n, char *msg, size_t msg_len)
{
    uint64_t v[SERVING_MAX_GRAPHS];
    bool dots[SERVING_MAX_GRAPHS];
    uint32_t m = 0;
    if (!parse_size_list(text, v, &m, dots, msg, msg_len))
        return false;
    if (m == 0) {
        snprintf(msg, msg_len, "no batch sizes");
        return false;
    }
    *n = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (!dots[i]) {
            if (*n >= SERVING_MAX_GRAPHS) {
                snprintf(msg, msg_len, "more than %u batch sizes", SERVING_MAX_GRAPHS);
                return false;
            }
            sizes[(*n)++] = v[i];
            continue;
        }
        /* "...": three sizes before it, one after */
        if (*n < 3 || i + 1 >= m || dots[i + 1]) {
            snprintf(msg, msg_len, "'...' needs three batch sizes before it and one after (1,2,4,...,512)");
            return false;
        }
        uint64_t a = sizes[*n - 3], b = sizes[*n - 2], c = sizes[*n - 1], last = v[i + 1];
        bool geometric = a < b && b % a == 0 && c == b / a * b;
        bool arithmetic = a < b && c - b == b - a && c > b;
        if (!geometric && !arithmetic) {
            snprintf(msg, msg_len,
                     "'...' continues a constant ratio (1,2,4) or step (8,16,24): %llu,%llu,%llu is "
                     "neither",
                     (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
            return false;
        }
        for (uint64_t x = geometric ? c * (b / a) : c + (b - a); x < last; x = geometric ? x * (b / a) : x + (b - a)) {
            if (*n >= SERVING_MAX_GRAPHS) {
                snprintf(msg, msg_len, "more than %u batch sizes", SERVING_MAX_GRAPHS);
                return false;
            }
            sizes[(*n)++] = x;
        }
    }
    for (uint32_t i = 0; i < *n; i++)
        for (uint32_t j = 0; j < i; j++)
            if (sizes[i] == sizes[j]) {
                snprintf(msg, msg_len, "batch size %llu is given twice", (unsigned long long)sizes[i]);
                return false;
            }
    return true;
}

bool serving_graph_pool_parse(const char *text, serving_graph_pool *out)
{
    if (strcmp(text, "shared") == 0)
        *out = SERVING_POOL_SHARED;
    else if (strcmp(text, "separate") == 0)
        *out = SERVING_POOL_SEPARATE;
    else
        return false;
    return true;
}

bool serving_capture_order_parse(const char *text, serving_capture_order *out)
{
    if (strcmp(text, "descending") == 0)
        *out = SERVING_ORDER_DESCENDING;
    else if (strcmp(text, "ascending") == 0)
        *out = SERVING_ORDER_ASCENDING;
    else if (strcmp(text, "recorded") == 0)
        *out = SERVING_ORDER_RECORDED;
    else
        return false;
    return true;
}

bool serving_graph_memory_parse(const char *text, serving_graph_memory *out)
{
    if (strcmp(text, "uncounted") == 0)
        *out = SERVING_GRAPHS_UNCOUNTED;
    else if (strcmp(text, "profiled") == 0)
        *out = SERVING_GRAPHS_PROFILED;
    else
        return false;
    return true;
}

const char *serving_graph_memory_name(serving_graph_memory m)
{
    return m == SERVING_GRAPHS_PROFILED ? "profiled" : "uncounted";
}

const char *serving_graph_pool_name(serving_graph_pool p)
{
    return p == SERVING_POOL_SEPARATE ? "separate" : "shared";
}

const char *serving_capture_order_name(serving_capture_order o)
{
    return o == SERVING_ORDER_ASCENDING ? "ascending" : o == SERVING_ORDER_RECORDED ? "recorded" : "descending";
}

/* ---------------------------------------------------------------- the forward pass */

/* PyTorch's allocated_bytes counts a block rounded up to 512 B (round_size's kMinBlockSize) */
static uint64_t counted(uint64_t size)
{
    return size < 512 ? 512 : (size + 511) / 512 * 512;
}

typedef struct pass {
    synth_out *o;
    uint32_t stream;
    const char *prefix;
    uint64_t cur, peak; /* counted bytes held by the pass */
} pass;

static uint64_t pass_alloc(pass *p, uint64_t size, uint64_t layer, const char *what)
{
    char tag[96];
    if (layer)
        snprintf(tag, sizeof tag, "%s:L%llu.%s", p->prefix, (unsigned long long)(layer - 1), what);
    else
        snprintf(tag, sizeof tag, "%s:%s", p->prefix, what);
    p->cur += counted(size);
    if (p->cur > p->peak)
        p->peak = p->cur;
    synth_advance(p->o, 1000);
    return synth_alloc_stream(p->o, size, p->stream, tag);
}

static void pass_free(pass *p, uint64_t id, uint64_t size)
{
    p->cur -= counted(size);
    synth_free(p->o, id);
}

uint64_t serving_forward(synth_out *o, const serving_config *c, uint64_t tokens, uint32_t stream, bool keep,
                         bool scores, const char *prefix, uint64_t *peak)
{
    const transformer_config *m = &c->model;
    const uint64_t e = synth_dtype_bytes(m->dtype), T = tokens, H = m->hidden;
    const uint64_t hd = m->head_dim ? m->head_dim : m->hidden / m->heads;
    const uint64_t W = (m->kv_heads ? m->kv_heads : m->heads) * hd;
    const uint64_t up_w = (m->arch == TRANSFORMER_LLAMA ? 2 : 1) * m->ffn;
    pass p = {.o = o, .stream = stream, .prefix = prefix};
    uint64_t h = pass_alloc(&p, T * H * e, 0, "embed");
    uint64_t h_size = T * H * e;
    for (uint64_t l = 1; l <= m->layers; l++) {
        uint64_t qkv = pass_alloc(&p, T * (H + 2 * W) * e, l, "qkv");
        if (scores && !m->flash)
            pass_free(&p, pass_alloc(&p, m->heads * T * T * e, l, "scores"), m->heads * T * T * e);
        uint64_t attn = pass_alloc(&p, T * H * e, l, "attn");
        pass_free(&p, qkv, T * (H + 2 * W) * e);
        uint64_t proj = pass_alloc(&p, T * H * e, l, "o_proj");
        pass_free(&p, attn, T * H * e);
        pass_free(&p, h, h_size);
        uint64_t up = pass_alloc(&p, T * up_w * e, l, "up");
        uint64_t act = pass_alloc(&p, T * m->ffn * e, l, "act");
        pass_free(&p, up, T * up_w * e);
        uint64_t down = pass_alloc(&p, T * H * e, l, "down");
        pass_free(&p, act, T * m->ffn * e);
        pass_free(&p, proj, T * H * e);
        h = down;
        h_size = T * H * e;
    }
    uint64_t out = pass_alloc(&p, T * H * e, 0, "norm");
    pass_free(&p, h, h_size);
    if (!keep) {
        pass_free(&p, out, T * H * e);
        out = 0;
    }
    if (peak)
        *peak = p.peak;
    return out;
}

/* the sampler's logits for rows requests (freed); their counted bytes */
static uint64_t logits(synth_out *o, const serving_config *c, uint64_t rows, uint32_t stream)
{
    uint64_t size = rows * c->model.vocab * synth_dtype_bytes(c->model.dtype);
    synth_free(o, synth_alloc_stream(o, size, stream, "tmp:logits"));
    return counted(size);
}

/* ---------------------------------------------------------------- the start-up */

/* the profiling pass (step 1): the peak of the forward pass and the sampler's logits */
static uint64_t profile(synth_out *o, const serving_config *c)
{
    const uint64_t tokens = c->max_num_batched_tokens ? c->max_num_batched_tokens : c->max_len;
    uint64_t peak = 0;
    serving_forward(o, c, tokens, 0, false, true, "profile", &peak);
    uint64_t lg = logits(o, c, c->max_batch, 0);
    return peak > lg ? peak : lg;
}

void serving_startup_estimate(const serving_config *c, uint64_t *weights, uint64_t *activations)
{
    *weights = 0;
    uint32_t n = 0;
    graph_param *params = transformer_params(&c->model, &n);
    for (uint32_t p = 0; params != NULL && p < n; p++)
        *weights += counted(params[p].numel * synth_dtype_bytes(c->model.dtype));
    free(params);
    synth_out *o = synth_out_new_null();
    *activations = o ? profile(o, c) : 0;
    if (o)
        synth_out_close(o, false, NULL, NULL);
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_asc(const void *a, const void *b)
{
    return -cmp_desc(a, b);
}

/* the batch sizes in capture order */
static void capture_order(const serving_config *c, uint64_t *order)
{
    memcpy(order, c->graph_sizes, c->n_graphs * sizeof order[0]);
    if (c->capture_order == SERVING_ORDER_DESCENDING)
        qsort(order, c->n_graphs, sizeof order[0], cmp_desc);
    else if (c->capture_order == SERVING_ORDER_ASCENDING)
        qsort(order, c->n_graphs, sizeof order[0], cmp_asc);
}

/* --graph-memory=profiled, before the KV cache is sized (vLLM's
 * GPUModelRunner.profile_cudagraph_memory, PR #30515): the smallest KV cache every graph
 * can be captured with (min(max_num_seqs, the largest capture size) blocks,
 * _init_minimal_kv_cache_for_profiling), the first two graphs of the capture order
 * warmed up and captured (the free memory measured before each warm-up and after each
 * capture), then all of it freed: the graphs destroyed, the cache emptied. vLLM
 * captures into its global graph pool; here a pool of its own (id: one above the
 * production captures'), released before the KV cache, so that empty_cache returns it. */
static void profile_graphs(synth_out *o, const serving_config *c, uint64_t before[2], uint64_t after[2], uint32_t *n)
{
    const transformer_config *m = &c->model;
    uint64_t order[SERVING_MAX_GRAPHS];
    capture_order(c, order);
    uint64_t largest = 0;
    for (uint32_t k = 0; k < c->n_graphs; k++)
        largest = order[k] > largest ? order[k] : largest;
    uint64_t min_blocks = c->max_batch < largest ? c->max_batch : largest;
    min_blocks = min_blocks ? min_blocks : 1;
    const uint64_t block_bytes = c->block_size * serving_kv_bytes_per_token(c);
    const uint64_t pool = c->graph_pool == SERVING_POOL_SHARED ? 2 : (uint64_t)c->n_graphs + 1;
    uint64_t outs[2] = {0};
    uint64_t *kv = calloc(m->layers, sizeof *kv);
    *n = 0;
    if (kv == NULL) {
        synth_fail(o, "out of memory");
        return;
    }
    synth_mark(o, "profile cuda graphs");
    for (uint64_t l = 0; l < m->layers; l++)
        kv[l] = synth_allocf(o, min_blocks * (block_bytes / m->layers), "tmp:profile kv L%llu", (unsigned long long)l);
    *n = c->n_graphs < 2 ? c->n_graphs : 2;
    for (uint32_t k = 0; k < *n; k++) {
        before[k] = synth_events(o);
        for (uint64_t w = 0; w < c->graph_warmups; w++)
            serving_forward(o, c, order[k], 1, false, false, "warmup", NULL);
        synth_empty_cache(o);
        synth_capture_begin(o, pool, 1);
        char prefix[48];
        snprintf(prefix, sizeof prefix, "profile graph b=%llu", (unsigned long long)order[k]);
        outs[k] = serving_forward(o, c, order[k], 1, true, false, prefix, NULL);
        if (!c->graph_outputs_kept) { /* a weak reference: freed inside the capture */
            synth_free(o, outs[k]);
            outs[k] = 0;
        }
        synth_capture_end(o, pool);
        after[k] = synth_events(o);
    }
    for (uint32_t k = 0; k < *n; k++)
        synth_free(o, outs[k]);
    for (uint32_t k = 0; k < *n; k++)
        synth_pool_release(o, pool);
    for (uint64_t l = 0; l < m->layers; l++)
        synth_free(o, kv[l]);
    free(kv);
    synth_empty_cache(o);
}

uint64_t serving_graph_estimate(const uint64_t *samples, uint32_t n_samples, uint32_t graphs)
{
    if (n_samples == 0 || graphs == 0)
        return 0;
    uint64_t per_graph = n_samples > 1 && samples[1] > ((uint64_t)1 << 20) ? samples[1] : (uint64_t)1 << 20;
    return samples[0] + (uint64_t)(graphs - 1) * per_graph;
}

sim_status serving_startup_profile_prefix(const serving_config *c, evbuf *b, uint64_t before[2], uint64_t after[2],
                                          uint32_t *n, sim_error *err)
{
    *n = 0;
    synth_out *o = synth_out_new_null();
    if (o == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    synth_out_tee(o, b);
    uint32_t n_params = 0;
    graph_param *params = transformer_params(&c->model, &n_params);
    for (uint32_t p = 0; params != NULL && p < n_params; p++) /* the weights, as serving.c allocates them */
        synth_alloc(o, params[p].numel * synth_dtype_bytes(c->model.dtype), "weight");
    free(params);
    synth_empty_cache(o);
    profile(o, c);
    synth_empty_cache(o);
    profile_graphs(o, c, before, after, n);
    return synth_out_close(o, false, NULL, err);
}

sim_status serving_startup(const serving_config *c, synth_out *o, synth_rng *rng, uint64_t weight_bytes,
                           serving_startup_state *st, serving_report *r, sim_error *err)
{
    memset(st, 0, sizeof *st);
    const transformer_config *m = &c->model;
    /* 1. profiling */
    synth_mark(o, "profile run");
    synth_empty_cache(o);
    r->activation_bytes = profile(o, c);
    synth_empty_cache(o);
    if (c->graph_memory == SERVING_GRAPHS_PROFILED && c->n_graphs) {
        uint64_t before[2], after[2];
        uint32_t n = 0;
        profile_graphs(o, c, before, after, &n);
        r->graph_estimate_bytes = c->graph_estimate_bytes;
    }
    /* 2. KV sizing */
    r->weight_bytes = weight_bytes;
    r->requested_bytes = (uint64_t)floor(c->gpu_util * (double)c->capacity);
    r->block_bytes = c->block_size * serving_kv_bytes_per_token(c);
    const uint64_t non_kv = weight_bytes + r->activation_bytes + r->graph_estimate_bytes;
    r->blocks = r->requested_bytes > non_kv ? (r->requested_bytes - non_kv) / r->block_bytes : 0;
    const uint64_t one_request = (c->max_len + c->block_size - 1) / c->block_size;
    if (r->blocks < one_request + c->prefix / c->block_size)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--gpu-memory-utilization=%.3g: %.3g x the device (%llu B) less the weights (%llu B), "
                             "the profiled activations (%llu B) and the graphs' estimate (%llu B) leaves room for %llu "
                             "KV blocks, fewer than one request of --max-len=%llu needs (%llu)",
                             c->gpu_util, c->gpu_util, (unsigned long long)c->capacity,
                             (unsigned long long)weight_bytes, (unsigned long long)r->activation_bytes,
                             (unsigned long long)r->graph_estimate_bytes, (unsigned long long)r->blocks,
                             (unsigned long long)c->max_len,
                             (unsigned long long)(one_request + c->prefix / c->block_size));
    r->pool_bytes = r->blocks * r->block_bytes;
    r->reserve_bytes = r->activation_bytes;
    r->shared_blocks = c->prefix / c->block_size;
    synth_mark(o, "kv cache");
    st->kv_ids = calloc(m->layers, sizeof *st->kv_ids);
    if (st->kv_ids == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    st->n_kv = m->layers;
    const uint64_t per_layer = r->pool_bytes / m->layers;
    for (uint64_t l = 0; l < m->layers; l++) {
        synth_advance(o, synth_rng_jitter(rng, 2000 + per_layer / 100000, 0.1));
        st->kv_ids[l] = synth_allocf(o, per_layer, "kv:L%llu", (unsigned long long)l);
    }
    /* 3. capture */
    uint64_t order[SERVING_MAX_GRAPHS];
    capture_order(c, order);
    if (c->n_graphs)
        synth_mark(o, "capture cuda graphs");
    for (uint32_t k = 0; k < c->n_graphs; k++) {
        const uint64_t b = order[k];
        char prefix[48];
        for (uint64_t w = 0; w < c->graph_warmups; w++)
            serving_forward(o, c, b, 1, false, false, "warmup", NULL);
        synth_empty_cache(o);
        serving_graph *g = &st->graphs[st->n_graphs++];
        g->batch = b;
        g->pool = c->graph_pool == SERVING_POOL_SHARED ? 1 : k + 1;
        synth_advance(o, synth_rng_jitter(rng, 100000, 0.1));
        synth_capture_begin(o, g->pool, 1);
        snprintf(prefix, sizeof prefix, "graph b=%llu", (unsigned long long)b);
        g->output = serving_forward(o, c, b, 1, true, false, prefix, NULL);
        if (!c->graph_outputs_kept) { /* a weak reference: freed inside the capture */
            synth_free(o, g->output);
            g->output = 0;
        }
        synth_capture_end(o, g->pool);
        r->graph_output_bytes += b * m->hidden * synth_dtype_bytes(m->dtype);
    }
    r->graphs = st->n_graphs;
    /* 4. the sampler's warm-up after capture */
    serving_forward(o, c, c->max_batch, 0, false, false, "act", NULL);
    logits(o, c, c->max_batch, 0);
    return SIM_OK;
}

const serving_graph *serving_startup_graph_for(const serving_startup_state *st, uint64_t b)
{
    const serving_graph *best = NULL;
    for (uint32_t k = 0; k < st->n_graphs; k++)
        if (st->graphs[k].batch >= b && (best == NULL || st->graphs[k].batch < best->batch))
            best = &st->graphs[k];
    return best;
}

void serving_startup_end(serving_startup_state *st, synth_out *o, bool free_memory)
{
    if (free_memory) {
        synth_mark(o, "release");
        for (uint32_t k = 0; k < st->n_graphs; k++) /* every graph destroyed: its output, its pool's use */
            synth_free(o, st->graphs[k].output);
        for (uint32_t k = 0; k < st->n_graphs; k++)
            synth_pool_release(o, st->graphs[k].pool);
        for (uint64_t l = 0; l < st->n_kv; l++)
            synth_free(o, st->kv_ids[l]);
    }
    free(st->kv_ids);
    st->kv_ids = NULL;
    st->n_kv = 0;
}
