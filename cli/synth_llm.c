/* The large-language-model options of `gpusim synth transformer` and the per-rank
 * output (synth_llm.h). */
#include "synth_llm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/units.h"
#include "traces/synth/nccl.h"
#include "traces/synth/synth.h"
#include "traces/synth/trainer.h"

static sim_status get_u64(const cli_args *a, const char *name, uint64_t lo, uint64_t hi, uint64_t *out, bool *given,
                          sim_error *err)
{
    const char *v = cli_get(a, name);
    if (given)
        *given = v != NULL;
    if (v == NULL)
        return SIM_OK;
    uint64_t x;
    if (units_parse_u64(v, &x, err) != SIM_OK || x < lo || x > hi)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s: expected a whole number from %llu to %llu, not '%s'",
                             name, (unsigned long long)lo, (unsigned long long)hi, v);
    *out = x;
    return SIM_OK;
}

/* index of v in words (NULL-terminated), or -1 */
static int word(const char *v, const char *const *words)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(v, words[i]) == 0)
            return i;
    return -1;
}

static sim_status choice(const cli_args *a, const char *name, const char *const *words, const char *expected, int *out,
                         sim_error *err)
{
    const char *v = cli_get(a, name);
    if (v == NULL)
        return SIM_OK;
    int k = word(v, words);
    if (k < 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--%s: expected %s, not '%s'", name, expected, v);
    *out = k;
    return SIM_OK;
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        sim_status st_ = (x);                                                                                          \
        if (st_ != SIM_OK)                                                                                             \
            return st_;                                                                                                \
    } while (0)

sim_status synth_llm_parse(const cli_args *a, transformer_config *c, sim_error *err)
{
    bool given;
    const trainer_traits *tr = trainer_get(TRAINER_EAGER);
    const char *tname = cli_get(a, "trainer");
    if (tname && (tr = trainer_find(tname)) == NULL) {
        char names[128];
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--trainer: expected %s, not '%s'",
                             trainer_names(names, sizeof names), tname);
    }
    c->trainer = tr == trainer_get(TRAINER_EAGER) ? NULL : tr->name;
    c->main_grads = tr->main_grads;
    c->fused_swiglu = tr->fused_swiglu;
    c->loss_fp32 = tr->loss_fp32;
    c->fsdp2 = tr->fsdp2;
    c->fsdp_root = tr->fsdp_root;
    c->fsdp_streams = tr->fsdp_streams;
    c->te_dummy_wgrad = tr->te_dummy_wgrad;
    c->loss_bwd_input = tr->loss_bwd_input;
    c->ce_chunked = tr->ce_chunked;
    if (tr->bf16 && cli_get(a, "dtype") == NULL) /* torchtitan's param_dtype, LitGPT's bf16-true */
        c->dtype = SYNTH_BF16;
    TRY(get_u64(a, "kv-heads", 1, 1u << 20, &c->kv_heads, NULL, err));
    TRY(get_u64(a, "head-dim", 1, 4096, &c->head_dim, NULL, err));
    TRY(get_u64(a, "experts", 1, 1024, &c->experts, &given, err));
    if (given && c->experts_active == 0)
        c->experts_active = c->experts < 2 ? c->experts : 2;
    TRY(get_u64(a, "experts-active", 1, 1024, &c->experts_active, NULL, err));
    static const char *const ATT[] = {"eager", "flash", NULL}, *const PREC[] = {"pure", "mixed", NULL},
                             *const REC[] = {"none", "layer", "selective", "op", NULL},
                             *const FSDP[] = {"full", "hybrid", NULL}, *const LIFE[] = {"eager", "graph", NULL};
    /* the trainer's defaults first; an option given explicitly wins */
    int att = c->flash || tr->flash ? 1 : 0, prec = tr->mixed ? 1 : 0, rec = -1, fsdp = -1, life = 0;
    if (tr->recompute && !c->inference && !c->checkpointing)
        rec = word(tr->recompute, REC);
    TRY(choice(a, "attention", ATT, "eager or flash", &att, err));
    TRY(choice(a, "precision", PREC, "pure or mixed", &prec, err));
    TRY(choice(a, "recompute", REC, "none, layer, selective or op", &rec, err));
    TRY(choice(a, "fsdp", FSDP, "full or hybrid", &fsdp, err));
    TRY(choice(a, "lifetimes", LIFE, "eager or graph", &life, err));
    c->graph_lifetimes = life == 1;
    c->flash = att == 1;
    c->precision = prec ? TRANSFORMER_MIXED : TRANSFORMER_PURE;
    c->fp8 = cli_has(a, "fp8");
    c->fused = cli_has(a, "fused-optimizer") || tr->fused_optimizer;
    if (rec >= 0 && c->checkpointing && rec != 1)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--checkpointing and --recompute disagree");
    if (rec >= 0) {
        c->checkpointing = rec == 1 || rec == 3;
        c->selective = rec == 2;
        c->sac_op = rec == 3;
    }
    uint64_t every = 0;
    TRY(get_u64(a, "recompute-every", 1, 1u << 20, &every, &given, err));
    if (given && !(c->checkpointing && !c->sac_op))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--recompute-every needs --recompute=layer");
    c->ckpt_every = (uint32_t)every;
    if (c->sac_op && !tr->fsdp2 && cli_get(a, "recompute"))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--recompute=op is torchtitan's op-level policy: it needs --trainer=torchtitan");
    static const char *const RED[] = {"fp32", "bf16", NULL};
    int red = 0;
    TRY(choice(a, "reduce-dtype", RED, "fp32 or bf16", &red, err));
    if (cli_has(a, "reduce-dtype") && !tr->fsdp2)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--reduce-dtype is FSDP2's: it needs --trainer=torchtitan");
    c->reduce_bytes = red == 1 ? 2 : 4;
    if (c->inference && (c->selective || c->checkpointing))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--recompute only applies to --mode=train");
    TRY(get_u64(a, "lora", 1, 4096, &c->lora_rank, NULL, err));
    const char *targets = cli_get(a, "lora-targets");
    if (targets && !c->lora_rank)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--lora-targets needs --lora=RANK");
    if (c->lora_rank) {
        /* PEFT's default for the llama, mistral, mixtral, qwen2 and qwen3 models:
         * src/peft/utils/constants.py, TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING
         * (huggingface/peft 00073fe8) */
        c->lora_targets = LORA_Q | LORA_V;
        if (targets && !transformer_lora_parse(targets, &c->lora_targets))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--lora-targets: expected a list of q, k, v, o, gate, up, down, attn, mlp, all, "
                                 "not '%s'",
                                 targets);
    }
    c->qlora = cli_has(a, "qlora");
    if (c->lora_rank) { /* LitGPT's lora and adapter scripts chunk the head, its adapters drop out */
        c->lm_head_chunk = tr->lm_head_chunk;
        c->lora_dropout = tr->lora_dropout;
    }
    c->sp = cli_has(a, "sp");
    uint64_t zero = tr->distributed_optimizer ? 1 : tr->fsdp2 ? 3 : 0, ranks = 1, shard_group = 8;
    TRY(get_u64(a, "zero", 0, 3, &zero, NULL, err));
    TRY(get_u64(a, "shard-group", 1, 65536, &shard_group, &given, err));
    if (given && fsdp != 1)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--shard-group needs --fsdp=hybrid");
    TRY(get_u64(a, "tp", 1, 4096, &c->tp, NULL, err));
    TRY(get_u64(a, "pp", 1, 4096, &c->pp, NULL, err));
    TRY(get_u64(a, "ranks", 1, 65536, &ranks, NULL, err));
    const uint64_t tp = c->tp ? c->tp : 1, pp = c->pp ? c->pp : 1;
    if (tr->sp_with_tp && tp > 1)
        c->sp = true;
    if (tr->vocab_divisible) { /* Megatron pads the embedding and the head's vocabulary */
        const uint64_t m = tr->vocab_divisible * tp;
        c->vocab = (c->vocab + m - 1) / m * m;
    }
    if (ranks % (tp * pp) != 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--ranks=%llu is not a multiple of --tp · --pp = %llu",
                             (unsigned long long)ranks, (unsigned long long)(tp * pp));
    c->dp = ranks / (tp * pp);
    if (fsdp >= 0) {
        if (cli_has(a, "zero") && zero != 3)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--fsdp shards like --zero=3, not --zero=%llu",
                                 (unsigned long long)zero);
        zero = 3;
        if (fsdp == 1) {
            if (c->dp % shard_group != 0)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                     "--shard-group=%llu must divide the %llu data-parallel ranks",
                                     (unsigned long long)shard_group, (unsigned long long)c->dp);
            c->shard = shard_group;
        }
    }
    c->zero = (uint32_t)zero;
    c->micro_batches = pp > 1 ? pp : 0;
    TRY(get_u64(a, "micro-batches", 1, 4096, &c->micro_batches, NULL, err));
    uint64_t channels = NCCL_CHANNELS_DEFAULT;
    TRY(get_u64(a, "nccl-channels", 0, 64, &channels, NULL, err));
    c->nccl_channels = (uint32_t)channels;
    TRY(get_u64(a, "rank", 0, 65535, &c->rank, &given, err));
    if (given && c->rank >= ranks)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--rank=%llu: the job has %llu ranks",
                             (unsigned long long)c->rank, (unsigned long long)ranks);
    return SIM_OK;
}

static void phase_json(jsonw *w, const char *key, const transformer_phase *p)
{
    jsonw_key(w, key);
    jsonw_object_inline(w);
    jsonw_key_u64(w, "weights", p->weights);
    jsonw_key_u64(w, "grads", p->grads);
    jsonw_key_u64(w, "optimizer", p->optimizer);
    jsonw_key_u64(w, "activations", p->activations);
    jsonw_key_u64(w, "temporaries", p->temporaries);
    jsonw_key_u64(w, "gathered", p->gathered);
    jsonw_key_u64(w, "total", p->total);
    jsonw_end(w);
}

void synth_llm_meta(const transformer_config *c, jsonw *w)
{
    if (!transformer_beyond_classic(c))
        return;
    transformer_dims d;
    transformer_dims_of(c, &d);
    jsonw_key_u64(w, "kv_heads", c->kv_heads ? c->kv_heads : c->heads);
    jsonw_key_u64(w, "head_dim", d.hd);
    jsonw_key_u64(w, "experts", c->experts);
    jsonw_key_u64(w, "experts_active", c->experts_active);
    jsonw_key_bool(w, "tied", c->tied);
    jsonw_key_str(w, "attention", c->flash ? "flash" : "eager");
    jsonw_key_str(w, "precision", c->precision ? "mixed" : "pure");
    jsonw_key_bool(w, "fp8", c->fp8);
    jsonw_key_str(w, "recompute", c->checkpointing ? "layer" : c->selective ? "selective" : "none");
    jsonw_key_u64(w, "lora_rank", c->lora_rank);
    jsonw_key_u64(w, "lora_targets", c->lora_targets);
    jsonw_key_bool(w, "qlora", c->qlora);
    jsonw_key_u64(w, "zero", c->zero);
    jsonw_key_u64(w, "ranks", transformer_ranks(c));
    jsonw_key_u64(w, "dp", d.dp);
    jsonw_key_u64(w, "tp", d.tp);
    jsonw_key_u64(w, "pp", d.pp);
    jsonw_key_bool(w, "sp", c->sp);
    if (c->trainer)
        jsonw_key_str(w, "trainer", c->trainer);
    jsonw_key_bool(w, "main_grads", c->main_grads);
    jsonw_key_bool(w, "fused_swiglu", c->fused_swiglu);
    if (c->loss_fp32)
        jsonw_key_bool(w, "loss_fp32", true);
    if (c->fsdp2) {
        jsonw_key_bool(w, "fsdp2", true);
        jsonw_key_str(w, "reduce_dtype", c->reduce_bytes == 2 ? "bf16" : "fp32");
        if (c->fsdp_root)
            jsonw_key_bool(w, "fsdp_root", true);
        if (c->fsdp_streams)
            jsonw_key_bool(w, "fsdp_streams", true);
    }
    if (c->sac_op)
        jsonw_key_str(w, "recompute_policy", "op");
    if (c->ckpt_every > 1)
        jsonw_key_u64(w, "recompute_every", c->ckpt_every);
    if (c->lm_head_chunk)
        jsonw_key_u64(w, "lm_head_chunk", c->lm_head_chunk);
    if (c->ce_chunked)
        jsonw_key_bool(w, "ce_chunked", true);
    if (c->loss_bwd_input)
        jsonw_key_bool(w, "loss_bwd_input", true);
    if (c->lora_dropout)
        jsonw_key_bool(w, "lora_dropout", true);
    jsonw_key_u64(w, "shard", d.shard);
    jsonw_key_u64(w, "micro_batches", c->micro_batches ? c->micro_batches : 1);
    jsonw_key_u64(w, "rank", c->rank);
    jsonw_key_u64(w, "stage", d.stage);
    if (transformer_ranks(c) > 1) { /* memory outside the allocator: add it to --context */
        jsonw_key_u64(w, "nccl_channels", c->nccl_channels);
        jsonw_key_u64(w, "nccl_bytes", synth_llm_nccl_bytes(c));
    }
    transformer_rank_estimate r;
    transformer_estimate_rank(c, &r);
    jsonw_key(w, "rank_closed_form");
    jsonw_object_inline(w);
    jsonw_key_u64(w, "params", r.params);
    jsonw_key_u64(w, "trainable", r.trainable);
    jsonw_key_u64(w, "local_params", r.local_params);
    phase_json(w, "forward_backward", &r.fwd_bwd);
    phase_json(w, "optimizer_step", &r.optimizer);
    jsonw_key_u64(w, "peak", r.peak);
    jsonw_end(w);
}

uint64_t synth_llm_nccl_bytes(const transformer_config *c)
{
    if (transformer_ranks(c) <= 1)
        return 0;
    transformer_dims d;
    transformer_dims_of(c, &d);
    return nccl_rank_bytes(d.dp, d.tp, d.pp, d.stage, c->nccl_channels);
}

void synth_llm_rank_name(const transformer_config *c, trace_header *h)
{
    if (transformer_ranks(c) <= 1)
        return;
    char name[sizeof h->name];
    snprintf(name, sizeof name, "%.200s rank %llu/%llu", h->name, (unsigned long long)c->rank,
             (unsigned long long)transformer_ranks(c));
    memcpy(h->name, name, sizeof name);
}

bool synth_llm_per_rank(const cli_args *a, const transformer_config *c)
{
    return transformer_ranks(c) > 1 && !cli_has(a, "rank");
}

void synth_llm_print_explain(const transformer_config *c, const synth_stats *s)
{
    sim_buf b;
    sim_buf_init(&b);
    transformer_explain(c, s, &b);
    if (b.len)
        fputs(b.data, stdout);
    sim_buf_release(&b);
}

/* one rank's trace; fills stats */
static sim_status write_rank(const char *path, const trace_header *h0, const char *meta_head, uint64_t start,
                             const char *proc, const transformer_config *c, synth_stats *stats, sim_error *err)
{
    trace_header h = *h0;
    synth_llm_rank_name(c, &h);
    sim_buf meta;
    sim_buf_init(&meta);
    sim_buf_puts(&meta, meta_head);
    jsonw w;
    jsonw_init_members(&w, &meta, JSONW_COMPACT);
    synth_llm_meta(c, &w);
    sim_buf_puts(&meta, "}");
    h.meta_json = meta.data;
    synth_out *so = NULL;
    sim_status st = synth_out_open(path, &h, start, proc, &so, err);
    sim_buf_release(&meta);
    if (st != SIM_OK)
        return st;
    st = transformer_generate(c, so, err);
    sim_error cerr;
    sim_error_clear(&cerr);
    sim_status cst = synth_out_close(so, st == SIM_OK, stats, &cerr);
    if (st == SIM_OK && cst != SIM_OK) {
        *err = cerr;
        st = cst;
    }
    return st;
}

int synth_llm_write_ranks(const char *dir, const trace_header *h, const char *meta_head, uint64_t start,
                          const char *proc, transformer_config *c, bool quiet)
{
    sim_error err;
    sim_error_clear(&err);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        sim_error_set(&err, SIM_EIO, dir, 0, 0, "cannot create the directory: %s", strerror(errno));
        return cli_fail(&err);
    }
    const uint64_t ranks = transformer_ranks(c);
    sim_buf job;
    sim_buf_init(&job);
    jsonw w;
    jsonw_init_buf(&w, &job, JSONW_COMPACT, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "format", "gpusim-job");
    jsonw_key_u64(&w, "version", 1);
    jsonw_key_str(&w, "name", h->name);
    jsonw_key_u64(&w, "ranks", ranks);
    jsonw_key(&w, "traces");
    jsonw_array(&w);
    int rc = 0;
    for (uint64_t r = 0; r < ranks && rc == 0; r++) {
        c->rank = r;
        transformer_dims d;
        transformer_dims_of(c, &d);
        char path[4200], file[32];
        snprintf(file, sizeof file, "rank-%05llu.jsonl", (unsigned long long)r);
        snprintf(path, sizeof path, "%.4000s/%s", dir, file);
        synth_stats s;
        sim_status st = write_rank(path, h, meta_head, start, proc, c, &s, &err);
        if (st != SIM_OK) {
            rc = st == SIM_EUSAGE ? cli_usage_error("synth", "%s", err.msg) : cli_fail(&err);
            break;
        }
        jsonw_object(&w);
        jsonw_key_u64(&w, "rank", r);
        jsonw_key_str(&w, "file", file);
        jsonw_key_u64(&w, "dp_rank", d.dp_rank);
        jsonw_key_u64(&w, "tp_rank", d.tp_rank);
        jsonw_key_u64(&w, "stage", d.stage);
        jsonw_key_u64(&w, "peak_live_bytes", s.peak_live_bytes);
        jsonw_key_u64(&w, "nccl_bytes", synth_llm_nccl_bytes(c));
        jsonw_end(&w);
        if (quiet)
            continue;
        char peak[32];
        units_format_size(s.peak_live_bytes, peak, sizeof peak);
        char nccl[32];
        units_format_size(synth_llm_nccl_bytes(c), nccl, sizeof nccl);
        printf("%s: %llu events, peak live %s (%llu B) [dp %llu, tp %llu, stage %llu]; NCCL buffers %s outside "
               "the allocator (replay adds them to the context)\n",
               path, (unsigned long long)s.events, peak, (unsigned long long)s.peak_live_bytes,
               (unsigned long long)d.dp_rank, (unsigned long long)d.tp_rank, (unsigned long long)d.stage, nccl);
        if (r == 0) {
            c->rank = 0;
            synth_llm_print_explain(c, &s);
        }
    }
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(&job, "\n");
    if (rc == 0) {
        char path[4200];
        snprintf(path, sizeof path, "%.4000s/job.json", dir);
        FILE *f = fopen(path, "w");
        bool ok = f != NULL && fputs(job.data, f) >= 0;
        if (f != NULL && fclose(f) != 0)
            ok = false;
        if (!ok) {
            sim_error_set(&err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
            rc = cli_fail(&err);
        }
    }
    sim_buf_release(&job);
    c->rank = 0;
    return rc;
}
