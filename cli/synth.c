/* gpusim synth KIND [options] -o FILE : write a synthetic trace (traces/synth/). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "answers/kvfit.h"
#include "sim/buf.h"
#include "sim/gpus.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "traces/synth/churn.h"
#include "traces/synth/cnn.h"
#include "traces/synth/serving.h"
#include "traces/synth/transformer.h"
#include "synth_llm.h"

#define SYNTH_COMMON_OPTS                                                                           \
    CLI_OPT("output", "FILE: where to write (.jsonl = JSON Lines, else a JSON document); also -o"), \
    CLI_OPT("o", ""),                                                                               \
    CLI_OPT("seed", "N: seed of the GSL mt19937 generator, 0 to 4294967294 (default 1)"),           \
    CLI_OPT("name", "STR: the trace's name (default: a description of the workload)"),              \
    CLI_OPT("gpu", "NAME: put this catalog GPU in the trace header (gpusim gpus)"),                 \
    CLI_OPT("capacity", "SIZE: put a device of this capacity in the header (with --device-name)"),  \
    CLI_OPT("device-name", "STR: the header device's name with --capacity (default \"custom\")"),   \
    CLI_OPT("start", "TIME: time of the first event, e.g. 0, 1500ms, 2s (default 0)"),              \
    CLI_OPT("proc", "NAME: write \"proc\": NAME on every event (several jobs in one file)"),        \
    CLI_FLAG("quiet", "print nothing on success")

#define SYNTH_MODEL_OPTS                                                                                   \
    CLI_OPT("batch", "N: batch size"),                                                                     \
    CLI_OPT("dtype", "fp32|fp16|bf16: element type of every tensor (default: the preset's)"),              \
    CLI_OPT("optimizer", "sgd|momentum|adam|adamw|adafactor: optimizer states (none, 1, 2, factored)"),    \
    CLI_OPT("steps", "N: training steps, or forward passes with --mode=inference (default 1)"),            \
    CLI_OPT("mode", "train|inference (default train)"),                                                    \
    CLI_FLAG("checkpointing", "activation checkpointing: keep layer outputs only, recompute in backward"), \
    CLI_FLAG("keep-live", "leave weights and optimizer states allocated at the end")

static const cli_opt TRANSFORMER_OPTS[] = {
    CLI_OPT("preset", "bert-base|bert-large|gpt2-small|gpt2-medium|llama-7b|llama2-7b|llama2-13b|llama2-70b|"
                      "llama3-8b|llama3-70b|mistral-7b|mixtral-8x7b|qwen2-0.5b|qwen2-1.5b|qwen2-7b|qwen2-72b|"
                      "qwen3-0.6b|qwen3-8b|qwen3-32b (default gpt2-small; sources in traces/synth/README.md)"),
    CLI_OPT("arch", "bert|gpt2|llama: the layer structure (default: the preset's)"),
    CLI_OPT("layers", "N: transformer layers"),
    CLI_OPT("hidden", "N: hidden size"),
    CLI_OPT("heads", "N: attention heads (must divide --hidden)"),
    CLI_OPT("ffn", "N: MLP inner size (default 4·hidden; LLaMA 256·ceil(8·hidden/3/256))"),
    CLI_OPT("seq", "N: sequence length"),
    CLI_OPT("vocab", "N: vocabulary size"),
    CLI_OPT("max-pos", "N: learned position table size (bert, gpt2)"),
    SYNTH_MODEL_OPTS,
    SYNTH_LLM_OPTS,
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

static const cli_opt CNN_OPTS[] = {
    CLI_OPT("preset", "resnet18|resnet34|resnet50|resnet101|resnet152 (default resnet50)"),
    CLI_OPT("image", "N: image height and width in pixels (default 224)"),
    CLI_OPT("classes", "N: output classes (default 1000)"),
    SYNTH_MODEL_OPTS,
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

static const cli_opt SERVING_OPTS[] = {
    CLI_OPT("model", "PRESET: the served transformer (transformer presets; default gpt2-medium)"),
    CLI_OPT("dtype", "fp32|fp16|bf16 (default fp16)"),
    CLI_OPT("rate", "R: mean request arrivals per second, Poisson (default 2)"),
    CLI_OPT("requests", "N: run until N requests completed (default 1000)"),
    CLI_OPT("max-batch", "N: requests decoded together at most (default 16)"),
    CLI_OPT("lengths", "FILE: empirical lengths, one request per line: PROMPT [OUTPUT]"),
    CLI_OPT("prompt-median", "N: median prompt length in tokens, lognormal (default 256)"),
    CLI_OPT("prompt-sigma", "S: sigma of log prompt length (default 1.0)"),
    CLI_OPT("output-median", "N: median output length in tokens, lognormal (default 128)"),
    CLI_OPT("output-sigma", "S: sigma of log output length (default 0.8)"),
    CLI_OPT("max-len", "N: prompt + output cap in tokens (default 1024)"),
    CLI_OPT("kv", "prealloc|grow|paged: KV cache for the whole length, grown by --kv-chunk, or vLLM's block pool"),
    CLI_OPT("kv-chunk", "N: tokens per KV growth step (default 128)"),
    CLI_OPT("block-size", "N: paged: tokens per KV block (default 16)"),
    CLI_OPT("gpu-util", "F: paged: fraction of the device for weights, activations and the pool (default 0.9)"),
    CLI_OPT("prefix", "N: paged: every prompt starts with the same N tokens, their blocks shared"),
    CLI_OPT("gpu-memory-utilization", "F: vLLM's start-up: profiling pass, KV cache sized from F x the device "
                                      "(vLLM's rule), paged (default 0.9 with --cuda-graphs)"),
    CLI_OPT("cuda-graphs", "LIST: with the vLLM start-up, capture a decode CUDA graph per batch size "
                           "(1,2,4,...,512) and replay them while serving"),
    CLI_OPT("graph-pool", "shared|separate: every capture in graph_pool_handle()'s one pool, or a pool each "
                          "(default shared)"),
    CLI_OPT("capture-order", "descending|ascending|recorded: largest batch first as vLLM, smallest first, or as "
                             "listed (default descending)"),
    CLI_OPT("max-num-batched-tokens", "N: the profiling pass's tokens and the prefill chunk (default --max-len)"),
    CLI_OPT("graph-warmups", "N: eager runs of each size before its capture (default 1, vLLM V1's)"),
    CLI_OPT("graph-memory", "uncounted|profiled: the KV rule counts no graph memory (vLLM 35d5cda's), or subtracts "
                            "the estimate of two profiling captures (later releases, PR #30515); default uncounted"),
    CLI_OPT("graph-outputs", "released|kept: a graph's output goes back to the pool in its capture (vLLM keeps a weak "
                             "reference) or stays live (default released)"),
    CLI_FLAG("keep-live", "leave the weights allocated at the end"),
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

static const cli_opt CHURN_OPTS[] = {
    CLI_OPT("events", "N: alloc/free events before the final drain (default 100000)"),
    CLI_OPT("live", "SIZE: live-set target (default 1GiB)"),
    CLI_OPT("dist", "uniform|lognormal|exponential|pow2|fixed: size distribution (default lognormal)"),
    CLI_OPT("min", "SIZE: smallest size (default 512)"),
    CLI_OPT("max", "SIZE: largest size (default 256MiB)"),
    CLI_OPT("median", "SIZE: lognormal median (default 1MiB)"),
    CLI_OPT("sigma", "S: lognormal sigma (default 1.5)"),
    CLI_OPT("mean", "SIZE: exponential mean (default 1MiB)"),
    CLI_OPT("streams", "N: spread allocations over N streams (default 1)"),
    CLI_FLAG("keep-live", "do not free what is live at the end"),
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

/* ---------------------------------------------------------------- option values */

/* One generator option: its --name, how its value is read, and where it goes. Each
 * kind lists its options in a table (parse_* below); opt_apply reads them in table
 * order and stops at the first bad value. */
typedef enum opt_kind {
    OPT_U64,       /* a whole number in [lo, hi] */
    OPT_SIZE,      /* a size ("4GiB") into uint64_t */
    OPT_SIZE_REAL, /* a size into double */
    OPT_REAL,      /* a number in [rlo, rhi] */
    OPT_CHOICE,    /* a word that parse accepts; else "expected EXPECTED" */
    OPT_FLAG       /* no value: true when given */
} opt_kind;

typedef struct synth_opt {
    const char *name;
    opt_kind kind;
    void *dst;
    uint64_t lo, hi;
    double rlo, rhi;
    bool (*parse)(const char *v, void *dst);
    const char *expected;
    bool given;    /* set by opt_apply */
} synth_opt;

#define OPT_U(n, p, l, h) {.name = (n), .kind = OPT_U64, .dst = (p), .lo = (l), .hi = (h)}
#define OPT_S(n, p) {.name = (n), .kind = OPT_SIZE, .dst = (p)}
#define OPT_SR(n, p) {.name = (n), .kind = OPT_SIZE_REAL, .dst = (p)}
#define OPT_R(n, p, l, h) {.name = (n), .kind = OPT_REAL, .dst = (p), .rlo = (l), .rhi = (h)}
#define OPT_C(n, p, fn, what) {.name = (n), .kind = OPT_CHOICE, .dst = (p), .parse = (fn), .expected = (what)}
#define OPT_F(n, p) {.name = (n), .kind = OPT_FLAG, .dst = (p)}
#define OPT_COUNT(t) (sizeof(t) / sizeof(t)[0])

static sim_status opt_one(const cli_args *a, synth_opt *o, sim_error *err)
{
    if (o->kind == OPT_FLAG) {
        *(bool *)o->dst = cli_has(a, o->name);
        return SIM_OK;
    }
    const char *v = cli_get(a, o->name);
    if (v == NULL)
        return SIM_OK;
    o->given = true;
    uint64_t x = 0;
    switch (o->kind) {
    case OPT_U64:
        if (units_parse_u64(v, &x, err) != SIM_OK || x < o->lo || x > o->hi)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s: expected a whole number from %llu to %llu, not '%s'",
                                 o->name, (unsigned long long)o->lo, (unsigned long long)o->hi, v);
        *(uint64_t *)o->dst = x;
        return SIM_OK;
    case OPT_SIZE:
    case OPT_SIZE_REAL:
        if (units_parse_size(v, &x, err) != SIM_OK) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s: %s", o->name, msg);
        }
        if (o->kind == OPT_SIZE)
            *(uint64_t *)o->dst = x;
        else
            *(double *)o->dst = (double)x;
        return SIM_OK;
    case OPT_REAL:
        if (units_parse_real(v, o->rlo, o->rhi, (double *)o->dst, err) != SIM_OK)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s: expected a number from %g to %g, not '%s'",
                                 o->name, o->rlo, o->rhi, v);
        return SIM_OK;
    case OPT_CHOICE:
        if (!o->parse(v, o->dst))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s: expected %s, not '%s'", o->name, o->expected, v);
        return SIM_OK;
    case OPT_FLAG: break;
    }
    return SIM_OK;
}

static sim_status opt_apply(const cli_args *a, synth_opt *t, size_t n, sim_error *err)
{
    for (size_t i = 0; i < n; i++) {
        sim_status st = opt_one(a, &t[i], err);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

static bool parse_dtype(const char *v, void *dst)
{
    return synth_dtype_parse(v, dst);
}

static bool parse_optimizer(const char *v, void *dst)
{
    return synth_optimizer_parse(v, dst);
}

static bool parse_mode(const char *v, void *dst)
{
    bool *inference = dst;
    if (strcmp(v, "train") == 0)
        *inference = false;
    else if (strcmp(v, "inference") == 0)
        *inference = true;
    else
        return false;
    return true;
}

static bool parse_kv(const char *v, void *dst)
{
    serving_kv *kv = dst;
    if (strcmp(v, "prealloc") == 0)
        *kv = SERVING_KV_PREALLOC;
    else if (strcmp(v, "grow") == 0)
        *kv = SERVING_KV_GROW;
    else if (strcmp(v, "paged") == 0)
        *kv = SERVING_KV_PAGED;
    else
        return false;
    return true;
}

static bool parse_graph_pool(const char *v, void *dst)
{
    return serving_graph_pool_parse(v, dst);
}

static bool parse_capture_order(const char *v, void *dst)
{
    return serving_capture_order_parse(v, dst);
}

static bool parse_graph_memory(const char *v, void *dst)
{
    return serving_graph_memory_parse(v, dst);
}

static bool parse_graph_outputs(const char *v, void *dst)
{
    bool *kept = dst;
    if (strcmp(v, "released") == 0)
        *kept = false;
    else if (strcmp(v, "kept") == 0)
        *kept = true;
    else
        return false;
    return true;
}

static bool parse_dist(const char *v, void *dst)
{
    return churn_dist_parse(v, dst);
}

#define DTYPE_WORDS "fp32, fp16 or bf16"

/* "0", "1500ms", "2s", "100us", "7ns", plain = ns */
static bool parse_duration(const char *v, uint64_t *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || !(x >= 0.0))
        return false;
    double mul = 1.0;
    if (*end == '\0' || strcmp(end, "ns") == 0)
        mul = 1.0;
    else if (strcmp(end, "us") == 0)
        mul = 1e3;
    else if (strcmp(end, "ms") == 0)
        mul = 1e6;
    else if (strcmp(end, "s") == 0)
        mul = 1e9;
    else
        return false;
    double ns = x * mul;
    if (ns > 9.0e15 || ns - floor(ns) > 0.0) /* not a whole number of ns */
        return false;
    *out = (uint64_t)ns;
    return true;
}

/* ---------------------------------------------------------------- per kind */

typedef struct job {
    const char *kind;
    char name[256];
    sim_buf meta;               /* more meta members, each after its comma (jsonw_init_members) */
    transformer_config tf;
    cnn_config cnn;
    serving_config sv;
    churn_config ch;
    serving_report sv_report;   /* of a paged run */
    uint64_t capacity;          /* of the header's device: the paged pool is sized from it */
    uint64_t seed;
    synth_stats stats;          /* of the written trace */
} job;

/* What transformer and cnn share: the training options, after the kind's own. */
typedef struct model_fields {
    synth_dtype *dtype;
    synth_optimizer *optimizer;
    uint64_t *steps, *batch;
    bool *inference, *checkpointing, *keep_live;
} model_fields;

#define MODEL_OPTS(m)                                                                                          \
    OPT_C("dtype", (m).dtype, parse_dtype, DTYPE_WORDS),                                                       \
        OPT_C("optimizer", (m).optimizer, parse_optimizer, "sgd, momentum, adam, adamw or adafactor"),         \
        OPT_U("steps", (m).steps, 1, 1000000), OPT_C("mode", (m).inference, parse_mode, "train or inference"), \
        OPT_U("batch", (m).batch, 1, 1u << 20), OPT_F("checkpointing", (m).checkpointing),                     \
        OPT_F("keep-live", (m).keep_live)

/* The table, then the rule both model kinds have. */
static sim_status model_apply(const cli_args *a, synth_opt *t, size_t n, const model_fields *m, sim_error *err)
{
    sim_status st = opt_apply(a, t, n, err);
    if (st == SIM_OK && *m->inference && *m->checkpointing)
        st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--checkpointing only applies to --mode=train");
    return st;
}

/* A generator's validate(): its message is a usage error. */
static sim_status usage_of(sim_status st, sim_error *err)
{
    if (st != SIM_OK)
        err->status = st = SIM_EUSAGE;
    return st;
}

static sim_status parse_transformer(const cli_args *a, job *j, sim_error *err)
{
    transformer_config *c = &j->tf;
    transformer_defaults(c);
    const char *preset = cli_get(a, "preset");
    if (preset == NULL)
        preset = "gpt2-small";
    if (!transformer_preset(preset, c))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--preset: unknown transformer '%s' (expected one of: %s)",
                             preset, transformer_preset_names());
    const char *arch = cli_get(a, "arch");
    if (arch && !transformer_arch_parse(arch, &c->arch))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--arch: expected bert, gpt2 or llama, not '%s'", arch);
    model_fields m = {&c->dtype, &c->optimizer, &c->steps, &c->batch, &c->inference, &c->checkpointing,
                      &c->keep_live};
    synth_opt t[] = {
        OPT_U("ffn", &c->ffn, 1, 1u << 22),       OPT_U("hidden", &c->hidden, 1, 1u << 20),
        OPT_U("layers", &c->layers, 1, 100000),   OPT_U("heads", &c->heads, 1, 1u << 20),
        OPT_U("seq", &c->seq, 1, 1u << 22),       OPT_U("vocab", &c->vocab, 1, 1u << 24),
        OPT_U("max-pos", &c->max_pos, 1, 1u << 24), MODEL_OPTS(m),
    };
    sim_status st = model_apply(a, t, OPT_COUNT(t), &m, err);
    if (st != SIM_OK)
        return st;
    if (t[1].given && !t[0].given) /* --hidden without --ffn: the architecture's own ffn */
        c->ffn = transformer_default_ffn(c->arch, c->hidden);
    if (c->arch == TRANSFORMER_BERT && c->type_vocab == 0)
        c->type_vocab = 2;
    if (c->arch != TRANSFORMER_BERT)
        c->type_vocab = 0;
    st = synth_llm_parse(a, c, err);
    if (st != SIM_OK)
        return st;
    c->seed = j->seed;
    snprintf(j->name, sizeof j->name, "%s %s %s b%llu s%llu %s", preset, c->inference ? "inference" : "train",
             synth_dtype_name(c->dtype), (unsigned long long)c->batch, (unsigned long long)c->seq,
             c->inference ? "" : synth_optimizer_name(c->optimizer));
    transformer_estimate est;
    transformer_estimate_closed_form(c, &est);
    jsonw w;
    jsonw_init_members(&w, &j->meta, JSONW_COMPACT);
    jsonw_key_str(&w, "preset", preset);
    jsonw_key_str(&w, "arch", transformer_arch_name(c->arch));
    jsonw_key_u64(&w, "layers", c->layers);
    jsonw_key_u64(&w, "hidden", c->hidden);
    jsonw_key_u64(&w, "heads", c->heads);
    jsonw_key_u64(&w, "ffn", c->ffn);
    jsonw_key_u64(&w, "seq", c->seq);
    jsonw_key_u64(&w, "batch", c->batch);
    jsonw_key_u64(&w, "vocab", c->vocab);
    jsonw_key_str(&w, "dtype", synth_dtype_name(c->dtype));
    jsonw_key_str(&w, "optimizer", synth_optimizer_name(c->optimizer));
    jsonw_key_str(&w, "mode", c->inference ? "inference" : "train");
    jsonw_key_bool(&w, "checkpointing", c->checkpointing);
    jsonw_key_u64(&w, "steps", c->steps);
    jsonw_key(&w, "closed_form");
    jsonw_object_inline(&w);
    jsonw_key_u64(&w, "params", est.params);
    jsonw_key_u64(&w, "weight_bytes", est.weight_bytes);
    jsonw_key_u64(&w, "grad_bytes", est.grad_bytes);
    jsonw_key_u64(&w, "optimizer_bytes", est.optimizer_bytes);
    jsonw_key_u64(&w, "activation_bytes", est.activation_bytes);
    jsonw_key_u64(&w, "total_bytes", est.total_bytes);
    jsonw_end(&w);
    if (c->graph_lifetimes)
        jsonw_key_str(&w, "lifetimes", "graph");
    if (!synth_llm_per_rank(a, c))
        synth_llm_meta(c, &w); /* per rank: each trace adds its own */
    return usage_of(transformer_validate(c, err), err);
}

static sim_status parse_cnn(const cli_args *a, job *j, sim_error *err)
{
    cnn_config *c = &j->cnn;
    cnn_defaults(c);
    const char *preset = cli_get(a, "preset");
    if (preset == NULL)
        preset = "resnet50";
    if (!cnn_preset(preset, c))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--preset: unknown CNN '%s' (expected one of: %s)", preset,
                             cnn_preset_names());
    model_fields m = {&c->dtype, &c->optimizer, &c->steps, &c->batch, &c->inference, &c->checkpointing,
                      &c->keep_live};
    synth_opt t[] = {OPT_U("image", &c->image, 32, 16384), OPT_U("classes", &c->classes, 1, 1u << 24), MODEL_OPTS(m)};
    sim_status st = model_apply(a, t, OPT_COUNT(t), &m, err);
    if (st != SIM_OK)
        return st;
    if (c->optimizer == SYNTH_ADAFACTOR)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--optimizer=adafactor is modelled for transformers only");
    c->seed = j->seed;
    snprintf(j->name, sizeof j->name, "%s %s %s b%llu %llupx", preset, c->inference ? "inference" : "train",
             synth_dtype_name(c->dtype), (unsigned long long)c->batch, (unsigned long long)c->image);
    jsonw w;
    jsonw_init_members(&w, &j->meta, JSONW_COMPACT);
    jsonw_key_str(&w, "preset", preset);
    jsonw_key_u64(&w, "batch", c->batch);
    jsonw_key_u64(&w, "image", c->image);
    jsonw_key_u64(&w, "classes", c->classes);
    jsonw_key_str(&w, "dtype", synth_dtype_name(c->dtype));
    jsonw_key_str(&w, "optimizer", synth_optimizer_name(c->optimizer));
    jsonw_key_str(&w, "mode", c->inference ? "inference" : "train");
    jsonw_key_u64(&w, "steps", c->steps);
    jsonw_key_u64(&w, "params", cnn_param_count(c));
    return usage_of(cnn_validate(c, err), err);
}

/* --graph-memory=profiled: what vLLM's two profiling captures take, measured under the
 * torch model (PyTorch's allocator with its defaults, as vLLM runs it) on the card */
static sim_status profile_graph_memory(serving_config *c, sim_error *err)
{
    evbuf *b = evbuf_new("profiling", NULL);
    if (b == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    uint64_t before[2], after[2], samples[2] = {0, 0};
    uint32_t n = 0;
    sim_status st = serving_startup_profile_prefix(c, b, before, after, &n, err);
    const strategy_ops *torch = registry_find("torch");
    if (st == SIM_OK && torch == NULL)
        st = sim_error_set(err, SIM_EINTERNAL, NULL, 0, 0, "no torch strategy");
    if (st == SIM_OK)
        st = kvfit_graph_samples(b, torch, c->capacity, before, after, n, samples, err);
    if (st == SIM_OK)
        c->graph_estimate_bytes = serving_graph_estimate(samples, n, c->n_graphs);
    evbuf_free(b);
    return st;
}

static sim_status parse_serving(const cli_args *a, job *j, sim_error *err)
{
    serving_config *c = &j->sv;
    serving_defaults(c);
    const char *model = cli_get(a, "model");
    if (model == NULL)
        model = "gpt2-medium";
    if (!transformer_preset(model, &c->model))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--model: unknown transformer '%s' (expected one of: %s)",
                             model, transformer_preset_names());
    c->model.dtype = SYNTH_FP16;
    synth_opt t[] = {
        OPT_C("dtype", &c->model.dtype, parse_dtype, DTYPE_WORDS),
        OPT_R("rate", &c->rate, 1e-6, 1e6),
        OPT_U("requests", &c->requests, 1, 100000000),
        OPT_U("max-batch", &c->max_batch, 1, 65536),
        OPT_R("prompt-median", &c->prompt_median, 1, 16777216),
        OPT_R("prompt-sigma", &c->prompt_sigma, 0, 10),
        OPT_R("output-median", &c->output_median, 1, 16777216),
        OPT_R("output-sigma", &c->output_sigma, 0, 10),
        OPT_U("max-len", &c->max_len, 2, 1u << 24),
        OPT_U("kv-chunk", &c->kv_chunk, 1, 1u << 24),
        OPT_F("keep-live", &c->keep_live),
        OPT_C("kv", &c->kv, parse_kv, "prealloc, grow or paged"),
        OPT_U("block-size", &c->block_size, 1, 1024),
        OPT_R("gpu-util", &c->gpu_util, 0.01, 1),
        OPT_U("prefix", &c->prefix, 1, 1u << 24),
        OPT_R("gpu-memory-utilization", &c->gpu_util, 0.01, 1),
        OPT_C("graph-pool", &c->graph_pool, parse_graph_pool, "shared or separate"),
        OPT_C("capture-order", &c->capture_order, parse_capture_order, "descending, ascending or recorded"),
        OPT_U("max-num-batched-tokens", &c->max_num_batched_tokens, 1, 1u << 24),
        OPT_U("graph-warmups", &c->graph_warmups, 0, 16),
        OPT_C("graph-memory", &c->graph_memory, parse_graph_memory, "uncounted or profiled"),
        OPT_C("graph-outputs", &c->graph_outputs_kept, parse_graph_outputs, "released or kept"),
    };
    c->graph_warmups = 1;
    c->capacity = j->capacity;
    sim_status st = opt_apply(a, t, OPT_COUNT(t), err);
    if (st != SIM_OK)
        return st;
    if (t[13].given && t[15].given)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--gpu-util and --gpu-memory-utilization are the same fraction: give one");
    const char *graphs = cli_get(a, "cuda-graphs");
    if (graphs) {
        char msg[160];
        if (!serving_graph_sizes_parse(graphs, c->graph_sizes, &c->n_graphs, msg, sizeof msg))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--cuda-graphs: %s", msg);
    }
    c->startup = graphs != NULL || t[15].given;
    for (size_t k = 16; k < OPT_COUNT(t); k++)
        if (t[k].given && !c->startup)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--%s belongs to the vLLM start-up: give --gpu-memory-utilization or --cuda-graphs",
                                 t[k].name);
    if ((t[16].given || t[17].given || t[20].given || t[21].given) && graphs == NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s needs --cuda-graphs",
                             t[16].given   ? "graph-pool"
                             : t[17].given ? "capture-order"
                             : t[20].given ? "graph-memory"
                                           : "graph-outputs");
    if (c->startup && !t[11].given)
        c->kv = SERVING_KV_PAGED;
    const char *lengths = cli_get(a, "lengths");
    if (lengths && serving_load_lengths(c, lengths, err) != SIM_OK) {
        char buf[sizeof err->msg];
        sim_error_format(err, buf, sizeof buf);
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--lengths: %s", buf);
    }
    c->seed = j->seed;
    snprintf(j->name, sizeof j->name, "serving %s %s %.3g req/s x%llu", model, synth_dtype_name(c->model.dtype),
             c->rate, (unsigned long long)c->requests);
    if ((st = usage_of(serving_validate(c, err), err)) != SIM_OK)
        return st;
    if (c->startup && c->graph_memory == SERVING_GRAPHS_PROFILED && (st = profile_graph_memory(c, err)) != SIM_OK)
        return st;
    jsonw w;
    jsonw_init_members(&w, &j->meta, JSONW_COMPACT);
    jsonw_key_str(&w, "model", model);
    jsonw_key_str(&w, "dtype", synth_dtype_name(c->model.dtype));
    jsonw_key_u64(&w, "requests", c->requests);
    jsonw_key_u64(&w, "max_batch", c->max_batch);
    jsonw_key_u64(&w, "max_len", c->max_len);
    jsonw_key_str(&w, "kv", c->kv == SERVING_KV_GROW ? "grow" : c->kv == SERVING_KV_PAGED ? "paged" : "prealloc");
    jsonw_key_u64(&w, "kv_bytes_per_token", serving_kv_bytes_per_token(c));
    jsonw_key_str(&w, "lengths", lengths ? "empirical" : "lognormal");
    if (c->kv == SERVING_KV_PAGED) {
        jsonw_key_u64(&w, "block_size", c->block_size);
        jsonw_key(&w, "gpu_util");
        jsonw_real_fixed(&w, "%g", c->gpu_util);
        jsonw_key_u64(&w, "prefix", c->prefix);
    }
    if (c->startup) { /* what plan needs to regenerate the trace at another fraction */
        jsonw_key(&w, "vllm_startup");
        jsonw_object_inline(&w);
        jsonw_key(&w, "gpu_memory_utilization");
        jsonw_real_fixed(&w, "%g", c->gpu_util);
        jsonw_key_str(&w, "kv_rule", c->graph_memory == SERVING_GRAPHS_PROFILED
                                         ? "requested - weights - profiled activations - graph estimate (vLLM #30515)"
                                         : "requested - weights - profiled activations (vLLM 35d5cda)");
        jsonw_key(&w, "cuda_graphs");
        jsonw_array_inline(&w);
        for (uint32_t k = 0; k < c->n_graphs; k++)
            jsonw_u64(&w, c->graph_sizes[k]);
        jsonw_end(&w);
        jsonw_key_str(&w, "graph_pool", serving_graph_pool_name(c->graph_pool));
        jsonw_key_str(&w, "capture_order", serving_capture_order_name(c->capture_order));
        jsonw_key_u64(&w, "max_num_batched_tokens", c->max_num_batched_tokens ? c->max_num_batched_tokens : c->max_len);
        jsonw_key_u64(&w, "graph_warmups", c->graph_warmups);
        uint64_t wb = 0, ab = 0;
        serving_startup_estimate(c, &wb, &ab);
        jsonw_key_u64(&w, "weights_bytes", wb);
        jsonw_key_u64(&w, "activation_bytes", ab);
        jsonw_key_u64(&w, "block_bytes", c->block_size * serving_kv_bytes_per_token(c));
        jsonw_key_u64(&w, "kv_tensors", c->model.layers);
        jsonw_key_u64(&w, "min_blocks", (c->max_len + c->block_size - 1) / c->block_size + c->prefix / c->block_size);
        jsonw_key_str(&w, "graph_outputs", c->graph_outputs_kept ? "kept" : "released");
        jsonw_key_str(&w, "graph_memory", serving_graph_memory_name(c->graph_memory));
        if (c->graph_memory == SERVING_GRAPHS_PROFILED)
            jsonw_key_u64(&w, "graph_estimate_bytes", c->graph_estimate_bytes);
        jsonw_end(&w);
    }
    return SIM_OK;
}

static sim_status parse_churn(const cli_args *a, job *j, sim_error *err)
{
    churn_config *c = &j->ch;
    churn_defaults(c);
    synth_opt t[] = {
        OPT_U("events", &c->events, 1, 10000000000ull),
        OPT_S("live", &c->live_bytes),
        OPT_S("min", &c->min_bytes),
        OPT_S("max", &c->max_bytes),
        OPT_SR("median", &c->median_bytes),
        OPT_SR("mean", &c->mean_bytes),
        OPT_R("sigma", &c->sigma, 0, 10),
        OPT_U("streams", &c->streams, 1, 1024),
        OPT_F("keep-live", &c->keep_live),
        OPT_C("dist", &c->dist, parse_dist, "uniform, lognormal, exponential, pow2 or fixed"),
    };
    sim_status st = opt_apply(a, t, OPT_COUNT(t), err);
    if (st == SIM_OK)
        st = usage_of(churn_validate(c, err), err);
    if (st != SIM_OK)
        return st;
    c->seed = j->seed;
    char live[32];
    units_format_size(c->live_bytes, live, sizeof live);
    snprintf(j->name, sizeof j->name, "churn %s %llu events, %s live", churn_dist_name(c->dist),
             (unsigned long long)c->events, live);
    jsonw w;
    jsonw_init_members(&w, &j->meta, JSONW_COMPACT);
    jsonw_key_u64(&w, "events", c->events);
    jsonw_key_u64(&w, "live_bytes", c->live_bytes);
    jsonw_key_str(&w, "dist", churn_dist_name(c->dist));
    jsonw_key_u64(&w, "min", c->min_bytes);
    jsonw_key_u64(&w, "max", c->max_bytes);
    return SIM_OK;
}

static sim_status gen_transformer(job *j, synth_out *so, sim_error *err)
{
    return transformer_generate(&j->tf, so, err);
}

static sim_status gen_cnn(job *j, synth_out *so, sim_error *err)
{
    return cnn_generate(&j->cnn, so, err);
}

static sim_status gen_serving(job *j, synth_out *so, sim_error *err)
{
    return serving_generate_report(&j->sv, so, &j->sv_report, err);
}

static sim_status gen_churn(job *j, synth_out *so, sim_error *err)
{
    return churn_generate(&j->ch, so, err);
}

typedef struct kind {
    const char *name;
    const cli_opt *opts;
    const char *summary;
    sim_status (*parse)(const cli_args *a, job *j, sim_error *err); /* options into j, its name and meta */
    sim_status (*generate)(job *j, synth_out *so, sim_error *err);
} kind;

static const kind KINDS[] = {
    {"transformer", TRANSFORMER_OPTS, "training steps or inference passes of a BERT/GPT-2/LLaMA-style model",
     parse_transformer, gen_transformer},
    {"cnn", CNN_OPTS, "training steps or inference passes of a ResNet", parse_cnn, gen_cnn},
    {"serving", SERVING_OPTS, "an inference server: Poisson arrivals, continuous batching, KV caches", parse_serving,
     gen_serving},
    {"churn", CHURN_OPTS, "random alloc/free around a live-set target", parse_churn, gen_churn},
};

static void synth_help(FILE *f)
{
    fprintf(f, "usage: gpusim synth KIND [options] [--seed=N] -o FILE\n\n"
               "Writes a synthetic allocation trace (deterministic for a given --seed).\n\nkinds:\n");
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        fprintf(f, "  %-12s %s\n", KINDS[i].name, KINDS[i].summary);
    fprintf(f, "\n'gpusim synth KIND --help' lists a kind's options.\n"
               "exit status: 0 written, 2 usage or I/O error\n");
}

/* The options every kind has: the seed, the header's device, the start time. */
static sim_status common_options(const cli_args *a, job *j, trace_header *h, uint64_t *start, sim_error *err)
{
    synth_opt seed[] = {OPT_U("seed", &j->seed, 0, 4294967294u)};
    sim_status st = opt_apply(a, seed, 1, err);
    if (st != SIM_OK)
        return st;
    const char *gpu = cli_get(a, "gpu");
    if (gpu && cli_has(a, "capacity"))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--gpu and --capacity exclude each other");
    synth_opt cap[] = {OPT_S("capacity", &h->device_capacity)};
    if (gpu) {
        const gpu_model *g = gpus_find(gpu);
        if (g == NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--gpu: unknown GPU '%s' (see 'gpusim gpus', or use --capacity)", gpu);
        snprintf(h->device_name, sizeof h->device_name, "%s", g->name);
        h->device_capacity = g->capacity_bytes;
    } else if ((st = opt_apply(a, cap, 1, err)) != SIM_OK) {
        return st;
    } else if (cap[0].given) {
        const char *dn = cli_get(a, "device-name");
        snprintf(h->device_name, sizeof h->device_name, "%s", dn ? dn : "custom");
        if (h->device_capacity == 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--capacity: must be more than 0 bytes");
    } else if (cli_has(a, "device-name")) {
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--device-name needs --capacity");
    }
    const char *sv = cli_get(a, "start");
    if (sv && !parse_duration(sv, start))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--start: expected a time such as 0, 250ms or 2s, not '%s'",
                             sv);
    return SIM_OK;
}

/* ---------------------------------------------------------------- command */

/* The meta object's opening: {"generator", "seed", then the kind's members (j->meta),
 * left open for the caller to close (or a rank to add its own). */
static void meta_head(const kind *k, const job *j, sim_buf *meta)
{
    char gen[64];
    snprintf(gen, sizeof gen, "gpusim synth %s", k->name);
    jsonw w;
    jsonw_init_buf(&w, meta, JSONW_COMPACT, 0);
    jsonw_object_inline(&w);
    jsonw_key_str(&w, "generator", gen);
    jsonw_key_u64(&w, "seed", j->seed);
}

/* The trace: the header's meta, the generator, the close. Fills j->stats. */
static sim_status synth_write(const kind *k, job *j, trace_header *h, uint64_t start, const char *proc,
                              const char *out, sim_error *err)
{
    sim_buf meta;
    sim_buf_init(&meta);
    meta_head(k, j, &meta);
    if (j->meta.len)
        sim_buf_puts(&meta, j->meta.data);
    sim_buf_puts(&meta, "}");
    h->meta_json = meta.data;
    synth_out *so = NULL;
    sim_status st = synth_out_open(out, h, start, proc, &so, err);
    sim_buf_release(&meta);
    if (st != SIM_OK)
        return st;
    st = k->generate(j, so, err);
    sim_error cerr;
    sim_error_clear(&cerr);
    sim_status cst = synth_out_close(so, st == SIM_OK, &j->stats, &cerr);
    if (st == SIM_OK && cst != SIM_OK) {
        *err = cerr;
        st = cst == SIM_EUSAGE ? SIM_EIO : cst; /* a failed close is never the command line's fault */
    }
    return st;
}

static void print_summary(const kind *k, const job *j, const char *out)
{
    const synth_stats *stats = &j->stats;
    char peak[32], live[32];
    units_format_size(stats->peak_live_bytes, peak, sizeof peak);
    units_format_size(stats->final_live_bytes, live, sizeof live);
    char pools[48] = "";
    if (stats->pool_events)
        snprintf(pools, sizeof pools, ", %llu pool events", (unsigned long long)stats->pool_events);
    printf("%s: %llu events (%llu allocs, %llu frees, %llu marks%s), peak live %s (%llu B), "
           "live at end %s\n",
           out, (unsigned long long)stats->events, (unsigned long long)stats->allocs, (unsigned long long)stats->frees,
           (unsigned long long)stats->marks, pools, peak, (unsigned long long)stats->peak_live_bytes, live);
    if (k->generate == gen_transformer) {
        transformer_estimate est;
        transformer_estimate_closed_form(&j->tf, &est);
        char w[32], g[32], s[32], ac[32], t[32];
        printf("closed form: %llu params; weights %s + grads %s + optimizer %s + activations %s = %s\n",
               (unsigned long long)est.params, units_format_size(est.weight_bytes, w, sizeof w),
               units_format_size(est.grad_bytes, g, sizeof g), units_format_size(est.optimizer_bytes, s, sizeof s),
               units_format_size(est.activation_bytes, ac, sizeof ac), units_format_size(est.total_bytes, t, sizeof t));
        synth_llm_print_explain(&j->tf, stats);
    }
    if (k->generate == gen_serving && j->sv.startup) {
        const serving_report *r = &j->sv_report;
        char req[32], w[32], act[32], kv[32], outb[32];
        char ge[64] = "";
        if (j->sv.graph_memory == SERVING_GRAPHS_PROFILED && j->sv.n_graphs) {
            char g[32];
            snprintf(ge, sizeof ge, " - the graphs' estimate %s",
                     units_format_size(r->graph_estimate_bytes, g, sizeof g));
        }
        printf(
            "vLLM start-up: requested %s (%.3g x %llu B) - weights %s - profiled activations %s%s = KV cache %s "
            "(%llu blocks of %llu tokens); %llu CUDA graphs (%s pool, %s), outputs %s %s; %llu decode steps replayed, "
            "%llu eager\n",
            units_format_size(r->requested_bytes, req, sizeof req), j->sv.gpu_util, (unsigned long long)j->sv.capacity,
            units_format_size(r->weight_bytes, w, sizeof w), units_format_size(r->activation_bytes, act, sizeof act),
            ge, units_format_size(r->pool_bytes, kv, sizeof kv), (unsigned long long)r->blocks,
            (unsigned long long)j->sv.block_size, (unsigned long long)r->graphs,
            serving_graph_pool_name(j->sv.graph_pool), serving_capture_order_name(j->sv.capture_order),
            units_format_size(r->graph_output_bytes, outb, sizeof outb), j->sv.graph_outputs_kept ? "kept" : "released",
            (unsigned long long)r->graph_replays, (unsigned long long)r->eager_decodes);
    }
    if (k->generate == gen_serving && j->sv.kv == SERVING_KV_PAGED && !j->sv.startup) {
        const serving_report *r = &j->sv_report;
        char pool[32], res[32];
        printf("paged KV: pool %s = %llu blocks of %llu tokens (%llu B each) after the weights and a %s "
               "activation reserve; at most %llu blocks used (%.1f %%), %llu requests decoding at once, "
               "%llu preemptions, %llu shared prefix blocks\n",
               units_format_size(r->pool_bytes, pool, sizeof pool), (unsigned long long)r->blocks,
               (unsigned long long)j->sv.block_size, (unsigned long long)r->block_bytes,
               units_format_size(r->reserve_bytes, res, sizeof res), (unsigned long long)r->peak_blocks_used,
               r->blocks ? 100.0 * (double)r->peak_blocks_used / (double)r->blocks : 0.0,
               (unsigned long long)r->peak_active, (unsigned long long)r->preemptions,
               (unsigned long long)r->shared_blocks);
    }
}

/* --ranks > 1 without --rank: a directory of per-rank traces (synth_llm.c) */
static int synth_write_ranks(const kind *k, job *j, const trace_header *h, uint64_t start, const cli_args *a,
                             const char *out)
{
    sim_buf meta;
    sim_buf_init(&meta);
    meta_head(k, j, &meta);
    if (j->meta.len)
        sim_buf_puts(&meta, j->meta.data);
    int rc = synth_llm_write_ranks(out, h, meta.data, start, cli_get(a, "proc"), &j->tf, cli_has(a, "quiet"));
    sim_buf_release(&meta);
    return rc;
}

int cmd_synth(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            synth_help(stdout);
            return 0;
        }
        synth_help(stderr);
        return 2;
    }
    const kind *k = NULL;
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (strcmp(argv[0], KINDS[i].name) == 0)
            k = &KINDS[i];
    if (k == NULL)
        return cli_usage_error("synth", "unknown kind '%s' (expected transformer, cnn, serving or churn)", argv[0]);
    /* accept the conventional "-o FILE" */
    char *args[CLI_MAX_ARGS];
    int n = 0;
    for (int i = 1; i < argc && n < CLI_MAX_ARGS; i++)
        args[n++] = strcmp(argv[i], "-o") == 0 ? "--output" : argv[i];
    cli_args a;
    bool help;
    if (cli_parse("synth", k->opts, n, args, &a, &help) != SIM_OK)
        return 2;
    if (help) {
        printf("usage: gpusim synth %s [options] [--seed=N] -o FILE\n\n%s.\n\n", k->name, k->summary);
        cli_print_options(stdout, k->opts);
        printf("\nexit status: 0 written, 2 usage or I/O error\n");
        return 0;
    }
    if (a.n_positional > 0)
        return cli_usage_error("synth", "unexpected argument '%s'", a.positional[0]);
    const char *out = cli_get(&a, "output");
    if (out == NULL)
        return cli_usage_error("synth", "no output file (-o FILE)");

    job j;
    memset(&j, 0, sizeof j);
    j.kind = k->name;
    j.seed = 1;
    sim_buf_init(&j.meta);
    trace_header h;
    memset(&h, 0, sizeof h);
    uint64_t start = 0;
    sim_error err;
    sim_error_clear(&err);
    int rc = 0;
    sim_status st = common_options(&a, &j, &h, &start, &err);
    j.capacity = h.device_capacity;
    if (st == SIM_OK)
        st = k->parse(&a, &j, &err);
    bool ranks = st == SIM_OK && k->generate == gen_transformer && synth_llm_per_rank(&a, &j.tf);
    if (st == SIM_OK) {
        const char *name = cli_get(&a, "name");
        snprintf(h.name, sizeof h.name, "%s", name ? name : j.name);
        if (k->generate == gen_transformer && !ranks)
            synth_llm_rank_name(&j.tf, &h); /* --rank=R: named as in the directory */
        if (ranks)
            rc = synth_write_ranks(k, &j, &h, start, &a, out);
        else
            st = synth_write(k, &j, &h, start, cli_get(&a, "proc"), out, &err);
    }
    if (st != SIM_OK)
        rc = cli_exit("synth", st, &err);
    else if (!ranks && !cli_has(&a, "quiet"))
        print_summary(k, &j, out);
    sim_buf_release(&j.meta);
    serving_config_release(&j.sv);
    return rc;
}
