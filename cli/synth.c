/* gpusim synth KIND [options] -o FILE : write a synthetic trace (traces/synth/). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim/buf.h"
#include "sim/gpus.h"
#include "sim/units.h"
#include "traces/synth/churn.h"
#include "traces/synth/cnn.h"
#include "traces/synth/serving.h"
#include "traces/synth/transformer.h"
#include "synth_llm.h"

#define SYNTH_COMMON_OPTS                                                                            \
    {"output", true, "FILE: where to write (.jsonl = JSON Lines, else a JSON document); also -o"},    \
    {"o", true, ""},                                                                                 \
    {"seed", true, "N: seed of the GSL mt19937 generator, 0 to 4294967294 (default 1)"},            \
    {"name", true, "STR: the trace's name (default: a description of the workload)"},              \
    {"gpu", true, "NAME: put this catalog GPU in the trace header (gpusim gpus)"},                   \
    {"capacity", true, "SIZE: put a device of this capacity in the header (with --device-name)"},    \
    {"device-name", true, "STR: the header device's name with --capacity (default \"custom\")"},     \
    {"start", true, "TIME: time of the first event, e.g. 0, 1500ms, 2s (default 0)"},                \
    {"proc", true, "NAME: write \"proc\": NAME on every event (several jobs in one file)"},           \
    {"quiet", false, "print nothing on success"}

#define SYNTH_MODEL_OPTS                                                                              \
    {"batch", true, "N: batch size"},                                                                 \
    {"dtype", true, "fp32|fp16|bf16: element type of every tensor (default: the preset's)"},         \
    {"optimizer", true, "sgd|momentum|adam|adamw|adafactor: optimizer states (none, 1, 2, factored)"},          \
    {"steps", true, "N: training steps, or forward passes with --mode=inference (default 1)"},        \
    {"mode", true, "train|inference (default train)"},                                               \
    {"checkpointing", false, "activation checkpointing: keep layer outputs only, recompute in backward"}, \
    {"keep-live", false, "leave weights and optimizer states allocated at the end"}

static const cli_opt TRANSFORMER_OPTS[] = {
    {"preset", true, "bert-base|bert-large|gpt2-small|gpt2-medium|llama-7b|llama2-7b|llama2-13b|llama2-70b|"
                     "llama3-8b|llama3-70b|mistral-7b|mixtral-8x7b|qwen2-0.5b|qwen2-1.5b|qwen2-7b|qwen2-72b|"
                     "qwen3-0.6b|qwen3-8b|qwen3-32b (default gpt2-small; sources in traces/synth/README.md)"},
    {"arch", true, "bert|gpt2|llama: the layer structure (default: the preset's)"},
    {"layers", true, "N: transformer layers"},
    {"hidden", true, "N: hidden size"},
    {"heads", true, "N: attention heads (must divide --hidden)"},
    {"ffn", true, "N: MLP inner size (default 4·hidden; LLaMA 256·ceil(8·hidden/3/256))"},
    {"seq", true, "N: sequence length"},
    {"vocab", true, "N: vocabulary size"},
    {"max-pos", true, "N: learned position table size (bert, gpt2)"},
    SYNTH_MODEL_OPTS,
    SYNTH_LLM_OPTS,
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

static const cli_opt CNN_OPTS[] = {
    {"preset", true, "resnet18|resnet34|resnet50|resnet101|resnet152 (default resnet50)"},
    {"image", true, "N: image height and width in pixels (default 224)"},
    {"classes", true, "N: output classes (default 1000)"},
    SYNTH_MODEL_OPTS,
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

static const cli_opt SERVING_OPTS[] = {
    {"model", true, "PRESET: the served transformer (transformer presets; default gpt2-medium)"},
    {"dtype", true, "fp32|fp16|bf16 (default fp16)"},
    {"rate", true, "R: mean request arrivals per second, Poisson (default 2)"},
    {"requests", true, "N: run until N requests completed (default 1000)"},
    {"max-batch", true, "N: requests decoded together at most (default 16)"},
    {"lengths", true, "FILE: empirical lengths, one request per line: PROMPT [OUTPUT]"},
    {"prompt-median", true, "N: median prompt length in tokens, lognormal (default 256)"},
    {"prompt-sigma", true, "S: sigma of log prompt length (default 1.0)"},
    {"output-median", true, "N: median output length in tokens, lognormal (default 128)"},
    {"output-sigma", true, "S: sigma of log output length (default 0.8)"},
    {"max-len", true, "N: prompt + output cap in tokens (default 1024)"},
    {"kv", true, "prealloc|grow|paged: KV cache for the whole length, grown by --kv-chunk, or vLLM's block pool"},
    {"kv-chunk", true, "N: tokens per KV growth step (default 128)"},
    {"block-size", true, "N: paged: tokens per KV block (default 16)"},
    {"gpu-util", true, "F: paged: fraction of the device for weights, activations and the pool (default 0.9)"},
    {"prefix", true, "N: paged: every prompt starts with the same N tokens, their blocks shared"},
    {"keep-live", false, "leave the weights allocated at the end"},
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

static const cli_opt CHURN_OPTS[] = {
    {"events", true, "N: alloc/free events before the final drain (default 100000)"},
    {"live", true, "SIZE: live-set target (default 1GiB)"},
    {"dist", true, "uniform|lognormal|exponential|pow2|fixed: size distribution (default lognormal)"},
    {"min", true, "SIZE: smallest size (default 512)"},
    {"max", true, "SIZE: largest size (default 256MiB)"},
    {"median", true, "SIZE: lognormal median (default 1MiB)"},
    {"sigma", true, "S: lognormal sigma (default 1.5)"},
    {"mean", true, "SIZE: exponential mean (default 1MiB)"},
    {"streams", true, "N: spread allocations over N streams (default 1)"},
    {"keep-live", false, "do not free what is live at the end"},
    SYNTH_COMMON_OPTS,
    {NULL, false, NULL},
};

typedef struct kind {
    const char *name;
    const cli_opt *opts;
    const char *summary;
} kind;

static const kind KINDS[] = {
    {"transformer", TRANSFORMER_OPTS, "training steps or inference passes of a BERT/GPT-2/LLaMA-style model"},
    {"cnn", CNN_OPTS, "training steps or inference passes of a ResNet"},
    {"serving", SERVING_OPTS, "an inference server: Poisson arrivals, continuous batching, KV caches"},
    {"churn", CHURN_OPTS, "random alloc/free around a live-set target"},
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

/* ---------------------------------------------------------------- option values */

typedef struct opts {
    const cli_args *a;
    bool bad;
} opts;

static bool get_u64(opts *o, const char *name, uint64_t lo, uint64_t hi, uint64_t *out)
{
    const char *v = cli_get(o->a, name);
    if (v == NULL || o->bad)
        return false;
    sim_error err;
    uint64_t x;
    if (units_parse_u64(v, &x, &err) != SIM_OK || x < lo || x > hi) {
        cli_usage_error("synth", "--%s: expected a whole number from %llu to %llu, not '%s'", name,
                        (unsigned long long)lo, (unsigned long long)hi, v);
        o->bad = true;
        return false;
    }
    *out = x;
    return true;
}

static bool get_size(opts *o, const char *name, uint64_t *out)
{
    const char *v = cli_get(o->a, name);
    if (v == NULL || o->bad)
        return false;
    sim_error err;
    if (units_parse_size(v, out, &err) != SIM_OK) {
        cli_usage_error("synth", "--%s: %s", name, err.msg);
        o->bad = true;
        return false;
    }
    return true;
}

static bool get_real(opts *o, const char *name, double lo, double hi, double *out)
{
    const char *v = cli_get(o->a, name);
    if (v == NULL || o->bad)
        return false;
    sim_error err;
    if (units_parse_real(v, lo, hi, out, &err) != SIM_OK) {
        cli_usage_error("synth", "--%s: expected a number from %g to %g, not '%s'", name, lo, hi, v);
        o->bad = true;
        return false;
    }
    return true;
}

static bool get_dtype(opts *o, synth_dtype *d)
{
    const char *v = cli_get(o->a, "dtype");
    if (v == NULL || o->bad)
        return false;
    if (!synth_dtype_parse(v, d)) {
        cli_usage_error("synth", "--dtype: expected fp32, fp16 or bf16, not '%s'", v);
        o->bad = true;
        return false;
    }
    return true;
}

static void get_optimizer(opts *o, synth_optimizer *opt)
{
    const char *v = cli_get(o->a, "optimizer");
    if (v == NULL || o->bad)
        return;
    if (!synth_optimizer_parse(v, opt)) {
        cli_usage_error("synth", "--optimizer: expected sgd, momentum, adam, adamw or adafactor, not '%s'", v);
        o->bad = true;
    }
}

static void get_mode(opts *o, bool *inference)
{
    const char *v = cli_get(o->a, "mode");
    if (v == NULL || o->bad)
        return;
    if (strcmp(v, "train") == 0)
        *inference = false;
    else if (strcmp(v, "inference") == 0)
        *inference = true;
    else {
        cli_usage_error("synth", "--mode: expected train or inference, not '%s'", v);
        o->bad = true;
    }
}

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
    if (ns > 9.0e15 || ns != floor(ns))
        return false;
    *out = (uint64_t)ns;
    return true;
}

/* ---------------------------------------------------------------- per kind */

typedef struct job {
    const char *kind;
    char name[256];
    sim_buf meta;               /* extra meta keys, each starting with ',' */
    transformer_config tf;
    cnn_config cnn;
    serving_config sv;
    serving_report sv_report;
    churn_config ch;
    uint64_t seed;
    uint64_t capacity;          /* of the header's device (paged serving sizes its pool from it) */
} job;

static void parse_model_common(opts *o, synth_dtype *dtype, synth_optimizer *opt, uint64_t *steps,
                               bool *inference, bool *ckpt, bool *keep, uint64_t *batch)
{
    get_dtype(o, dtype);
    get_optimizer(o, opt);
    get_u64(o, "steps", 1, 1000000, steps);
    get_mode(o, inference);
    get_u64(o, "batch", 1, 1u << 20, batch);
    *ckpt = cli_has(o->a, "checkpointing");
    *keep = cli_has(o->a, "keep-live");
}

static bool parse_transformer(opts *o, job *j)
{
    transformer_config *c = &j->tf;
    transformer_defaults(c);
    const char *preset = cli_get(o->a, "preset");
    if (preset == NULL)
        preset = "gpt2-small";
    if (!transformer_preset(preset, c)) {
        cli_usage_error("synth", "--preset: unknown transformer '%s' (expected one of: %s)", preset,
                        transformer_preset_names());
        return false;
    }
    const char *arch = cli_get(o->a, "arch");
    if (arch && !transformer_arch_parse(arch, &c->arch)) {
        cli_usage_error("synth", "--arch: expected bert, gpt2 or llama, not '%s'", arch);
        return false;
    }
    bool custom_ffn = get_u64(o, "ffn", 1, 1u << 22, &c->ffn);
    if (get_u64(o, "hidden", 1, 1u << 20, &c->hidden) && !custom_ffn)
        c->ffn = transformer_default_ffn(c->arch, c->hidden);
    get_u64(o, "layers", 1, 100000, &c->layers);
    get_u64(o, "heads", 1, 1u << 20, &c->heads);
    get_u64(o, "seq", 1, 1u << 22, &c->seq);
    get_u64(o, "vocab", 1, 1u << 24, &c->vocab);
    get_u64(o, "max-pos", 1, 1u << 24, &c->max_pos);
    if (c->arch == TRANSFORMER_BERT && c->type_vocab == 0)
        c->type_vocab = 2;
    if (c->arch != TRANSFORMER_BERT)
        c->type_vocab = 0;
    parse_model_common(o, &c->dtype, &c->optimizer, &c->steps, &c->inference, &c->checkpointing, &c->keep_live,
                       &c->batch);
    if (o->bad)
        return false;
    if (c->inference && c->checkpointing) {
        cli_usage_error("synth", "--checkpointing only applies to --mode=train");
        return false;
    }
    sim_error lerr;
    sim_error_clear(&lerr);
    if (synth_llm_parse(o->a, c, &lerr) != SIM_OK) {
        cli_usage_error("synth", "%s", lerr.msg);
        return false;
    }
    c->seed = j->seed;
    snprintf(j->name, sizeof j->name, "%s %s %s b%llu s%llu %s", preset, c->inference ? "inference" : "train",
             synth_dtype_name(c->dtype), (unsigned long long)c->batch, (unsigned long long)c->seq,
             c->inference ? "" : synth_optimizer_name(c->optimizer));
    transformer_estimate est;
    transformer_estimate_closed_form(c, &est);
    sim_buf_printf(&j->meta,
                   ",\"preset\":\"%s\",\"arch\":\"%s\",\"layers\":%llu,\"hidden\":%llu,\"heads\":%llu,\"ffn\":%llu,"
                   "\"seq\":%llu,\"batch\":%llu,\"vocab\":%llu,\"dtype\":\"%s\",\"optimizer\":\"%s\","
                   "\"mode\":\"%s\",\"checkpointing\":%s,\"steps\":%llu,"
                   "\"closed_form\":{\"params\":%llu,\"weight_bytes\":%llu,\"grad_bytes\":%llu,"
                   "\"optimizer_bytes\":%llu,\"activation_bytes\":%llu,\"total_bytes\":%llu}",
                   preset, transformer_arch_name(c->arch), (unsigned long long)c->layers,
                   (unsigned long long)c->hidden, (unsigned long long)c->heads, (unsigned long long)c->ffn,
                   (unsigned long long)c->seq, (unsigned long long)c->batch, (unsigned long long)c->vocab,
                   synth_dtype_name(c->dtype), synth_optimizer_name(c->optimizer),
                   c->inference ? "inference" : "train", c->checkpointing ? "true" : "false",
                   (unsigned long long)c->steps, (unsigned long long)est.params,
                   (unsigned long long)est.weight_bytes, (unsigned long long)est.grad_bytes,
                   (unsigned long long)est.optimizer_bytes, (unsigned long long)est.activation_bytes,
                   (unsigned long long)est.total_bytes);
    if (!synth_llm_per_rank(o->a, c))
        synth_llm_meta(c, &j->meta); /* per rank: each trace adds its own */
    sim_error err;
    sim_error_clear(&err);
    if (transformer_validate(c, &err) != SIM_OK) {
        cli_usage_error("synth", "%s", err.msg);
        return false;
    }
    return true;
}

static bool parse_cnn(opts *o, job *j)
{
    cnn_config *c = &j->cnn;
    cnn_defaults(c);
    const char *preset = cli_get(o->a, "preset");
    if (preset == NULL)
        preset = "resnet50";
    if (!cnn_preset(preset, c)) {
        cli_usage_error("synth", "--preset: unknown CNN '%s' (expected one of: %s)", preset, cnn_preset_names());
        return false;
    }
    get_u64(o, "image", 32, 16384, &c->image);
    get_u64(o, "classes", 1, 1u << 24, &c->classes);
    parse_model_common(o, &c->dtype, &c->optimizer, &c->steps, &c->inference, &c->checkpointing, &c->keep_live,
                       &c->batch);
    if (o->bad)
        return false;
    if (c->inference && c->checkpointing) {
        cli_usage_error("synth", "--checkpointing only applies to --mode=train");
        return false;
    }
    if (c->optimizer == SYNTH_ADAFACTOR) {
        cli_usage_error("synth", "--optimizer=adafactor is modelled for transformers only");
        return false;
    }
    c->seed = j->seed;
    snprintf(j->name, sizeof j->name, "%s %s %s b%llu %llupx", preset, c->inference ? "inference" : "train",
             synth_dtype_name(c->dtype), (unsigned long long)c->batch, (unsigned long long)c->image);
    sim_buf_printf(&j->meta,
                   ",\"preset\":\"%s\",\"batch\":%llu,\"image\":%llu,\"classes\":%llu,\"dtype\":\"%s\","
                   "\"optimizer\":\"%s\",\"mode\":\"%s\",\"steps\":%llu,\"params\":%llu",
                   preset, (unsigned long long)c->batch, (unsigned long long)c->image,
                   (unsigned long long)c->classes, synth_dtype_name(c->dtype), synth_optimizer_name(c->optimizer),
                   c->inference ? "inference" : "train", (unsigned long long)c->steps,
                   (unsigned long long)cnn_param_count(c));
    sim_error err;
    sim_error_clear(&err);
    if (cnn_validate(c, &err) != SIM_OK) {
        cli_usage_error("synth", "%s", err.msg);
        return false;
    }
    return true;
}

static bool parse_serving(opts *o, job *j)
{
    serving_config *c = &j->sv;
    serving_defaults(c);
    const char *model = cli_get(o->a, "model");
    if (model == NULL)
        model = "gpt2-medium";
    if (!transformer_preset(model, &c->model)) {
        cli_usage_error("synth", "--model: unknown transformer '%s' (expected one of: %s)", model,
                        transformer_preset_names());
        return false;
    }
    c->model.dtype = SYNTH_FP16;
    get_dtype(o, &c->model.dtype);
    get_real(o, "rate", 1e-6, 1e6, &c->rate);
    get_u64(o, "requests", 1, 100000000, &c->requests);
    get_u64(o, "max-batch", 1, 65536, &c->max_batch);
    get_real(o, "prompt-median", 1, 16777216, &c->prompt_median);
    get_real(o, "prompt-sigma", 0, 10, &c->prompt_sigma);
    get_real(o, "output-median", 1, 16777216, &c->output_median);
    get_real(o, "output-sigma", 0, 10, &c->output_sigma);
    get_u64(o, "max-len", 2, 1u << 24, &c->max_len);
    get_u64(o, "kv-chunk", 1, 1u << 24, &c->kv_chunk);
    get_u64(o, "block-size", 1, 1024, &c->block_size);
    get_real(o, "gpu-util", 0.01, 1, &c->gpu_util);
    get_u64(o, "prefix", 1, 1u << 24, &c->prefix);
    c->capacity = j->capacity;
    c->keep_live = cli_has(o->a, "keep-live");
    const char *kv = cli_get(o->a, "kv");
    if (kv && !o->bad) {
        if (strcmp(kv, "prealloc") == 0)
            c->kv = SERVING_KV_PREALLOC;
        else if (strcmp(kv, "grow") == 0)
            c->kv = SERVING_KV_GROW;
        else if (strcmp(kv, "paged") == 0)
            c->kv = SERVING_KV_PAGED;
        else {
            cli_usage_error("synth", "--kv: expected prealloc, grow or paged, not '%s'", kv);
            return false;
        }
    }
    if (o->bad)
        return false;
    const char *lengths = cli_get(o->a, "lengths");
    if (lengths) {
        sim_error err;
        sim_error_clear(&err);
        if (serving_load_lengths(c, lengths, &err) != SIM_OK) {
            char buf[1600];
            sim_error_format(&err, buf, sizeof buf);
            cli_usage_error("synth", "--lengths: %s", buf);
            return false;
        }
    }
    c->seed = j->seed;
    snprintf(j->name, sizeof j->name, "serving %s %s %.3g req/s x%llu", model, synth_dtype_name(c->model.dtype),
             c->rate, (unsigned long long)c->requests);
    sim_buf_printf(&j->meta,
                   ",\"model\":\"%s\",\"dtype\":\"%s\",\"requests\":%llu,\"max_batch\":%llu,"
                   "\"max_len\":%llu,\"kv\":\"%s\",\"kv_bytes_per_token\":%llu,\"lengths\":\"%s\"",
                   model, synth_dtype_name(c->model.dtype), (unsigned long long)c->requests,
                   (unsigned long long)c->max_batch, (unsigned long long)c->max_len,
                   c->kv == SERVING_KV_GROW ? "grow" : c->kv == SERVING_KV_PAGED ? "paged" : "prealloc",
                   (unsigned long long)serving_kv_bytes_per_token(c), lengths ? "empirical" : "lognormal");
    if (c->kv == SERVING_KV_PAGED)
        sim_buf_printf(&j->meta, ",\"block_size\":%llu,\"gpu_util\":%g,\"prefix\":%llu",
                       (unsigned long long)c->block_size, c->gpu_util, (unsigned long long)c->prefix);
    sim_error err;
    sim_error_clear(&err);
    if (serving_validate(c, &err) != SIM_OK) {
        cli_usage_error("synth", "%s", err.msg);
        return false;
    }
    return true;
}

static bool parse_churn(opts *o, job *j)
{
    churn_config *c = &j->ch;
    churn_defaults(c);
    get_u64(o, "events", 1, 10000000000ull, &c->events);
    get_size(o, "live", &c->live_bytes);
    get_size(o, "min", &c->min_bytes);
    get_size(o, "max", &c->max_bytes);
    uint64_t v;
    if (get_size(o, "median", &v))
        c->median_bytes = (double)v;
    if (get_size(o, "mean", &v))
        c->mean_bytes = (double)v;
    get_real(o, "sigma", 0, 10, &c->sigma);
    get_u64(o, "streams", 1, 1024, &c->streams);
    c->keep_live = cli_has(o->a, "keep-live");
    const char *dist = cli_get(o->a, "dist");
    if (dist && !o->bad && !churn_dist_parse(dist, &c->dist)) {
        cli_usage_error("synth", "--dist: expected uniform, lognormal, exponential, pow2 or fixed, not '%s'", dist);
        return false;
    }
    if (o->bad)
        return false;
    sim_error err;
    sim_error_clear(&err);
    if (churn_validate(c, &err) != SIM_OK) {
        cli_usage_error("synth", "%s", err.msg);
        return false;
    }
    c->seed = j->seed;
    char live[32];
    units_format_size(c->live_bytes, live, sizeof live);
    snprintf(j->name, sizeof j->name, "churn %s %llu events, %s live", churn_dist_name(c->dist),
             (unsigned long long)c->events, live);
    sim_buf_printf(&j->meta, ",\"events\":%llu,\"live_bytes\":%llu,\"dist\":\"%s\",\"min\":%llu,\"max\":%llu",
                   (unsigned long long)c->events, (unsigned long long)c->live_bytes, churn_dist_name(c->dist),
                   (unsigned long long)c->min_bytes, (unsigned long long)c->max_bytes);
    return true;
}

/* ---------------------------------------------------------------- command */

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

    int rc = 2;
    job j;
    memset(&j, 0, sizeof j);
    j.kind = k->name;
    j.seed = 1;
    sim_buf_init(&j.meta);
    opts o = {.a = &a, .bad = false};
    get_u64(&o, "seed", 0, 4294967294u, &j.seed);
    trace_header h;
    memset(&h, 0, sizeof h);
    const char *gpu = cli_get(&a, "gpu");
    if (gpu && cli_has(&a, "capacity")) {
        cli_usage_error("synth", "--gpu and --capacity exclude each other");
        goto done;
    }
    if (gpu) {
        const gpu_model *g = gpus_find(gpu);
        if (g == NULL) {
            cli_usage_error("synth", "--gpu: unknown GPU '%s' (see 'gpusim gpus', or use --capacity)", gpu);
            goto done;
        }
        snprintf(h.device_name, sizeof h.device_name, "%s", g->name);
        h.device_capacity = g->capacity_bytes;
    } else if (get_size(&o, "capacity", &h.device_capacity)) {
        const char *dn = cli_get(&a, "device-name");
        snprintf(h.device_name, sizeof h.device_name, "%s", dn ? dn : "custom");
        if (h.device_capacity == 0) {
            cli_usage_error("synth", "--capacity: must be more than 0 bytes");
            goto done;
        }
    } else if (cli_has(&a, "device-name") && !o.bad) {
        cli_usage_error("synth", "--device-name needs --capacity");
        goto done;
    }
    uint64_t start = 0;
    const char *sv = cli_get(&a, "start");
    if (sv && !parse_duration(sv, &start)) {
        cli_usage_error("synth", "--start: expected a time such as 0, 250ms or 2s, not '%s'", sv);
        goto done;
    }
    if (o.bad)
        goto done;
    j.capacity = h.device_capacity;
    bool ok = false;
    if (strcmp(k->name, "transformer") == 0)
        ok = parse_transformer(&o, &j);
    else if (strcmp(k->name, "cnn") == 0)
        ok = parse_cnn(&o, &j);
    else if (strcmp(k->name, "serving") == 0)
        ok = parse_serving(&o, &j);
    else
        ok = parse_churn(&o, &j);
    if (!ok || o.bad)
        goto done;

    const char *name = cli_get(&a, "name");
    snprintf(h.name, sizeof h.name, "%s", name ? name : j.name);
    sim_buf meta;
    sim_buf_init(&meta);
    sim_buf_printf(&meta, "{\"generator\":\"gpusim synth %s\",\"seed\":%llu", k->name, (unsigned long long)j.seed);
    if (j.meta.len)
        sim_buf_puts(&meta, j.meta.data);
    sim_buf_puts(&meta, "}");
    h.meta_json = meta.data;
    if (strcmp(k->name, "transformer") == 0 && synth_llm_per_rank(&a, &j.tf)) {
        meta.data[meta.len - 1] = '\0'; /* without the closing brace: each rank adds its keys */
        rc = synth_llm_write_ranks(out, &h, meta.data, start, cli_get(&a, "proc"), &j.tf, cli_has(&a, "quiet"));
        sim_buf_release(&meta);
        goto done;
    }

    sim_error err;
    sim_error_clear(&err);
    synth_out *so = NULL;
    if (synth_out_open(out, &h, start, cli_get(&a, "proc"), &so, &err) != SIM_OK) {
        sim_buf_release(&meta);
        rc = cli_fail(&err);
        goto done;
    }
    sim_buf_release(&meta);
    sim_status st;
    if (strcmp(k->name, "transformer") == 0)
        st = transformer_generate(&j.tf, so, &err);
    else if (strcmp(k->name, "cnn") == 0)
        st = cnn_generate(&j.cnn, so, &err);
    else if (strcmp(k->name, "serving") == 0)
        st = serving_generate_report(&j.sv, so, &j.sv_report, &err);
    else
        st = churn_generate(&j.ch, so, &err);
    synth_stats stats;
    sim_error cerr;
    sim_error_clear(&cerr);
    sim_status cst = synth_out_close(so, st == SIM_OK, &stats, &cerr);
    if (st == SIM_EUSAGE) {
        rc = cli_usage_error("synth", "%s", err.msg);
        goto done;
    }
    if (st != SIM_OK) {
        rc = cli_fail(&err);
        goto done;
    }
    if (cst != SIM_OK) {
        rc = cli_fail(&cerr);
        goto done;
    }
    if (!cli_has(&a, "quiet")) {
        char peak[32], live[32];
        units_format_size(stats.peak_live_bytes, peak, sizeof peak);
        units_format_size(stats.final_live_bytes, live, sizeof live);
        printf("%s: %llu events (%llu allocs, %llu frees, %llu marks), peak live %s (%llu B), "
               "live at end %s\n",
               out, (unsigned long long)stats.events, (unsigned long long)stats.allocs,
               (unsigned long long)stats.frees, (unsigned long long)stats.marks, peak,
               (unsigned long long)stats.peak_live_bytes, live);
        if (strcmp(k->name, "transformer") == 0) {
            transformer_estimate est;
            transformer_estimate_closed_form(&j.tf, &est);
            char w[32], g[32], s[32], ac[32], t[32];
            printf("closed form: %llu params; weights %s + grads %s + optimizer %s + activations %s = %s\n",
                   (unsigned long long)est.params, units_format_size(est.weight_bytes, w, sizeof w),
                   units_format_size(est.grad_bytes, g, sizeof g), units_format_size(est.optimizer_bytes, s, sizeof s),
                   units_format_size(est.activation_bytes, ac, sizeof ac),
                   units_format_size(est.total_bytes, t, sizeof t));
            synth_llm_print_explain(&j.tf, &stats);
        }
        if (strcmp(k->name, "serving") == 0 && j.sv.kv == SERVING_KV_PAGED) {
            const serving_report *r = &j.sv_report;
            char pool[32], res[32];
            printf("paged KV: pool %s = %llu blocks of %llu tokens (%llu B each) after the weights and a %s "
                   "activation reserve; at most %llu blocks used (%.1f %%), %llu requests decoding at once, "
                   "%llu preemptions, %llu shared prefix blocks\n",
                   units_format_size(r->pool_bytes, pool, sizeof pool), (unsigned long long)r->blocks,
                   (unsigned long long)j.sv.block_size, (unsigned long long)r->block_bytes,
                   units_format_size(r->reserve_bytes, res, sizeof res), (unsigned long long)r->peak_blocks_used,
                   r->blocks ? 100.0 * (double)r->peak_blocks_used / (double)r->blocks : 0.0,
                   (unsigned long long)r->peak_active, (unsigned long long)r->preemptions,
                   (unsigned long long)r->shared_blocks);
        }
    }
    rc = 0;
done:
    sim_buf_release(&j.meta);
    serving_config_release(&j.sv);
    return rc;
}
