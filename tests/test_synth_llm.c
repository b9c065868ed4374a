/* Check suite for the large-language-model workloads of traces/synth: the presets'
 * parameter counts against the published ones, the trace's model-state bytes
 * against the closed forms (mixed precision, the optimizers, LoRA and QLoRA), the
 * ZeRO paper's per-device formula per stage, tensor and pipeline splits, the
 * rank's closed form of the peak against the trace's peak, the trainers' rules
 * (Megatron-LM's fp32 main-gradient buffer and distributed optimizer) and
 * Korthikanti et al.'s per-layer activation formula. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/check_main.h"
#include "traces/synth/serving.h"
#include "traces/synth/trainer.h"
#include "traces/synth/transformer.h"
#include "traces/trace.h"
#include "support/synth_file.h"

/* ---------------------------------------------------------------- helpers */

/* Generate into memory (no file); the stats include the breakdown at the peak. */
static synth_stats measure(const transformer_config *c)
{
    sim_error err;
    sim_error_clear(&err);
    synth_out *o = synth_out_new_null();
    ck_assert_ptr_nonnull(o);
    ck_assert_msg(transformer_generate(c, o, &err) == SIM_OK, "generate failed: %s", err.msg);
    synth_stats s;
    ck_assert_int_eq(synth_out_close(o, true, &s, &err), SIM_OK);
    return s;
}

/* Live bytes by category when the mark `at` is written (a written trace, read back). */
typedef struct at_mark {
    uint64_t cat[SYNTH_CAT_N];
    bool seen;
} at_mark;

static at_mark live_at(const transformer_config *c, const char *at)
{
    synth_file f;
    synth_file_open(&f, c);
    sim_error err;
    at_mark m;
    memset(&m, 0, sizeof m);
    sim_event_source src = trace_source(f.r);
    uint64_t cap = 1 << 16, *size = calloc(cap, sizeof *size), live[SYNTH_CAT_N] = {0};
    uint8_t *cat = calloc(cap, 1);
    sim_event ev;
    while (src.next(src.ctx, &ev, &err) == SIM_OK && !m.seen) {
        if (ev.op == SIM_OP_ALLOC) {
            ck_assert_uint_lt(ev.id, cap);
            size[ev.id] = ev.size;
            cat[ev.id] = (uint8_t)synth_cat_of(ev.tag);
            live[cat[ev.id]] += ev.size;
        } else if (ev.op == SIM_OP_FREE) {
            live[cat[ev.id]] -= size[ev.id];
        } else if (ev.op == SIM_OP_MARK && strcmp(ev.name, at) == 0) {
            memcpy(m.cat, live, sizeof live);
            m.seen = true;
        }
    }
    synth_file_close(&f);
    free(size);
    free(cat);
    ck_assert_msg(m.seen, "no mark '%s'", at);
    return m;
}

static transformer_config preset(const char *name)
{
    transformer_config c;
    transformer_defaults(&c);
    ck_assert_msg(transformer_preset(name, &c), "%s", name);
    return c;
}

/* transformer_validate must refuse c as a usage error. */
static void expect_invalid(const transformer_config *c)
{
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(transformer_validate(c, &err), SIM_EUSAGE);
}

static transformer_estimate closed_form(const transformer_config *c)
{
    transformer_estimate est;
    transformer_estimate_closed_form(c, &est);
    return est;
}

static transformer_rank_estimate rank_estimate(const transformer_config *c)
{
    transformer_rank_estimate r;
    transformer_estimate_rank(c, &r);
    return r;
}

/* A small llama whose every tensor divides by 8 (so shards are exact). */
static transformer_config small_llama(void)
{
    transformer_config c = preset("llama2-7b");
    c.layers = 2;
    c.hidden = 512;
    c.heads = 8;
    c.kv_heads = 8;
    c.head_dim = 64;
    c.ffn = 1024;
    c.vocab = 1000;
    c.seq = 16;
    c.batch = 1;
    return c;
}

/* ---------------------------------------------------------------- presets */

GPUSIM_TCASE("synth_llm", 300, NULL, NULL);

/* The counts derived in transformer_presets.c, each equal to the published one
 * (the Hugging Face model cards' parameter counts for these checkpoints). */
static const struct {
    const char *preset;
    uint64_t params;
} PUBLISHED[] = {
    {"llama-7b", 6738415616ull},    {"llama2-7b", 6738415616ull},     {"llama2-13b", 13015864320ull},
    {"llama2-70b", 68976648192ull}, {"llama3-8b", 8030261248ull},     {"llama3-70b", 70553706496ull},
    {"mistral-7b", 7241732096ull},  {"mixtral-8x7b", 46702792704ull}, {"qwen2-0.5b", 494032768ull},
    {"qwen2-1.5b", 1543714304ull},  {"qwen2-7b", 7615616512ull},      {"qwen2-72b", 72706203648ull},
    {"qwen3-0.6b", 596049920ull},   {"qwen3-8b", 8190735360ull},      {"qwen3-32b", 32762123264ull},
};

START_TEST(each_llm_preset_should_have_its_published_parameter_count_in_the_closed_form_and_the_trace)
{
    for (size_t i = 0; i < sizeof PUBLISHED / sizeof PUBLISHED[0]; i++) {
        transformer_config c = preset(PUBLISHED[i].preset);
        transformer_estimate est = closed_form(&c);
        ck_assert_msg(est.params == PUBLISHED[i].params, "%s: closed form %llu", PUBLISHED[i].preset,
                      (unsigned long long)est.params);
        /* the trace: an inference pass of 16 tokens holds every weight at its peak */
        c.seq = 16;
        c.inference = true;
        synth_stats s = measure(&c);
        const uint64_t e = synth_dtype_bytes(c.dtype);
        ck_assert_msg(s.peak_by_cat[SYNTH_CAT_WEIGHT] == PUBLISHED[i].params * e, "%s: trace weights %llu",
                      PUBLISHED[i].preset, (unsigned long long)s.peak_by_cat[SYNTH_CAT_WEIGHT]);
    }
}
END_TEST

START_TEST(kv_heads_should_shrink_k_and_v_and_keep_the_rest)
{
    /* llama2-7b with 8 KV heads: k_proj and v_proj lose 4096·(4096 − 8·128) = 12,582,912
     * parameters each, per layer: 6,738,415,616 − 32·2·12,582,912 = 5,933,109,248 */
    transformer_config c = preset("llama2-7b");
    c.kv_heads = 8;
    ck_assert_uint_eq(closed_form(&c).params, 5933109248ull);
    c.kv_heads = 5; /* does not divide 32 heads */
    expect_invalid(&c);
}
END_TEST

/* ---------------------------------------------------------------- precision and optimizers */

START_TEST(mixed_precision_should_hold_2_2_and_12_bytes_per_parameter_at_the_optimizer_step)
{
    transformer_config c = small_llama();
    c.precision = TRANSFORMER_MIXED;
    const uint64_t psi = closed_form(&c).params;
    /* 1000·512 + 2·[4·512² + 3·512·1024 + 2·512] + 512 + 1000·512
     * = 512,000 + 2·2,622,464 + 512 + 512,000 = 6,269,440 */
    ck_assert_uint_eq(psi, 6269440);
    at_mark m = live_at(&c, "optimizer 1");
    ck_assert_uint_eq(m.cat[SYNTH_CAT_WEIGHT], 2 * psi);     /* bf16 weights */
    ck_assert_uint_eq(m.cat[SYNTH_CAT_GRAD], 2 * psi);       /* bf16 gradients */
    ck_assert_uint_eq(m.cat[SYNTH_CAT_OPTIMIZER], 12 * psi); /* fp32 master, m and v */
    ck_assert_uint_eq(m.cat[SYNTH_CAT_ACT], 0);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_TMP], 0); /* fused Adam */
}
END_TEST

START_TEST(optimizers_should_keep_their_state_sizes)
{
    transformer_config c = small_llama();
    c.dtype = SYNTH_FP32;
    const uint64_t psi = closed_form(&c).params;
    c.optimizer = SYNTH_SGD;
    ck_assert_uint_eq(live_at(&c, "optimizer 1").cat[SYNTH_CAT_OPTIMIZER], 0);
    c.steps = 2; /* states are created lazily in step 1's optimizer step */
    c.optimizer = SYNTH_MOMENTUM;
    ck_assert_uint_eq(live_at(&c, "step 2").cat[SYNTH_CAT_OPTIMIZER], 4 * psi);
    c.optimizer = SYNTH_ADAM;
    ck_assert_uint_eq(live_at(&c, "backward 1").cat[SYNTH_CAT_OPTIMIZER], 0);
    ck_assert_uint_eq(live_at(&c, "step 2").cat[SYNTH_CAT_OPTIMIZER], 8 * psi);
}
END_TEST

START_TEST(adafactor_should_keep_a_row_and_a_column_per_matrix)
{
    transformer_config c = small_llama();
    c.dtype = SYNTH_FP32;
    c.optimizer = SYNTH_ADAFACTOR;
    c.steps = 2;
    /* factored second moments, fp32: embed 1000 + 512, per layer q,k,v,o 4·(512 + 512),
     * gate/up (1024 + 512) each, down (512 + 1024), norms 2·512 (vectors, full);
     * final norm 512, lm_head 1000 + 512:
     * 1512 + 2·(4096 + 3·1536 + 1024) + 512 + 1512 = 22,992 elements = 91,968 B */
    ck_assert_uint_eq(live_at(&c, "step 2").cat[SYNTH_CAT_OPTIMIZER], 91968);
    transformer_rank_estimate r = rank_estimate(&c);
    ck_assert_uint_eq(r.optimizer.optimizer, 91968);
}
END_TEST

START_TEST(the_rank_closed_form_should_equal_the_llama_7b_trace_peak_and_name_the_optimizer_step)
{
    /* llama-7b, bf16, Adam, one step: Ψ·e = 6,738,415,616·2 = 13,476,831,232 B. The peak
     * is the optimizer step: weights + gradients + exp_avg + exp_avg_sq + foreach
     * Adam's sqrt(exp_avg_sq) = 5·Ψ·e = 67,384,156,160 B (62.76 GiB); the usual sum,
     * 77.39 GiB, adds the activations, which are gone by then. */
    transformer_config c = preset("llama-7b");
    synth_stats s = measure(&c);
    ck_assert_uint_eq(s.peak_live_bytes, 67384156160ull);
    ck_assert_str_eq(s.peak_mark, "optimizer 1");
    ck_assert_uint_eq(s.peak_by_cat[SYNTH_CAT_WEIGHT], 13476831232ull);
    ck_assert_uint_eq(s.peak_by_cat[SYNTH_CAT_GRAD], 13476831232ull);
    ck_assert_uint_eq(s.peak_by_cat[SYNTH_CAT_OPTIMIZER], 2 * 13476831232ull);
    ck_assert_uint_eq(s.peak_by_cat[SYNTH_CAT_TMP], 13476831232ull);
    transformer_rank_estimate r = rank_estimate(&c);
    ck_assert(r.peak_in_optimizer);
    ck_assert_uint_eq(r.peak, 67384156160ull);
}
END_TEST

/* The rank's closed form against the trace's peak: within 3 % for each mode (the
 * remainder is listed term by term in traces/synth/README.md). */
START_TEST(the_rank_closed_form_should_agree_with_the_trace_peak_in_every_mode)
{
    for (int mode = 0; mode < 10; mode++) {
        transformer_config c = preset("llama3-8b");
        c.seq = 1024;
        c.layers = 4;
        c.steps = 2;
        switch (mode) {
        case 0: break;
        case 1: c.precision = TRANSFORMER_MIXED; break;
        case 2: c.flash = false; break;
        case 3: c.flash = false, c.selective = true; break;
        case 4: c.checkpointing = true; break;
        case 5: c.fp8 = true; break;
        case 6: c.lora_rank = 16, c.lora_targets = LORA_Q | LORA_V; break;
        case 7: c.lora_rank = 16, c.lora_targets = 127, c.qlora = true; break;
        case 8: c.tp = 4, c.dp = 1, c.rank = 3; break;
        case 9: c.tp = 4, c.sp = true, c.precision = TRANSFORMER_MIXED; break;
        }
        synth_stats s = measure(&c);
        transformer_rank_estimate r = rank_estimate(&c);
        double diff = ((double)s.peak_live_bytes - (double)r.peak) / (double)r.peak;
        ck_assert_msg(diff < 0.03 && diff > -0.03, "mode %d: trace %llu, closed form %llu (%+.2f%%)", mode,
                      (unsigned long long)s.peak_live_bytes, (unsigned long long)r.peak, 100 * diff);
    }
}
END_TEST

START_TEST(flash_selective_checkpointing_and_fp8_should_lower_the_activation_peak)
{
    transformer_config c = preset("llama2-7b");
    c.layers = 4;
    c.seq = 2048;
    c.batch = 8; /* activations above the weights and gradients of the SGD step */
    c.optimizer = SYNTH_SGD;
    c.flash = false;
    uint64_t eager = measure(&c).peak_live_bytes;
    c.selective = true;
    uint64_t selective = measure(&c).peak_live_bytes;
    c.selective = false;
    c.flash = true;
    uint64_t flash = measure(&c).peak_live_bytes;
    c.fp8 = true;
    uint64_t fp8 = measure(&c).peak_live_bytes;
    c.fp8 = false;
    c.checkpointing = true;
    uint64_t layer = measure(&c).peak_live_bytes;
    ck_assert_uint_lt(selective, eager);
    ck_assert_uint_lt(flash, eager);
    ck_assert_uint_lt(fp8, flash);
    ck_assert_uint_lt(layer, fp8);
}
END_TEST

/* ---------------------------------------------------------------- LoRA, QLoRA */

START_TEST(lora_should_train_only_the_adapters)
{
    transformer_config c = small_llama();
    c.precision = TRANSFORMER_MIXED;
    c.lora_rank = 8;
    c.lora_targets = LORA_Q | LORA_V;
    transformer_rank_estimate r = rank_estimate(&c);
    /* q and v, r 8: 2 layers · 2 targets · 8·(512 + 512) = 32,768 adapter parameters */
    ck_assert_uint_eq(r.trainable, 32768);
    at_mark m = live_at(&c, "optimizer 1");
    ck_assert_uint_eq(m.cat[SYNTH_CAT_GRAD], 2 * 32768);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_OPTIMIZER], 12 * 32768);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_WEIGHT], 2 * (6269440 + 32768));
    ck_assert_uint_eq(r.optimizer.weights, m.cat[SYNTH_CAT_WEIGHT]);
}
END_TEST

START_TEST(qlora_should_store_4_bit_weights_with_their_constants)
{
    transformer_config c = small_llama();
    c.lora_rank = 8;
    c.lora_targets = LORA_Q | LORA_V;
    c.qlora = true;
    /* per layer the quantized weights are q, k, v, o 4·512² and gate, up, down 3·512·1024:
     * 2,621,440 parameters = 1,310,720 B packed; constants per tensor: 512²/64 = 4096
     * blocks + 4·16 = 4,160 B (×4), 524,288/64 = 8192 blocks + 4·32 = 8,320 B (×3):
     * 41,600 B. Unquantized in bf16: embed, lm_head 2·512,000, norms 2·2·512 + 512,
     * adapters 32,768: (1,024,000 + 2,560 + 32,768)·2 = 2,118,656 B.
     * 2·(1,310,720 + 41,600) + 2,118,656 = 4,823,296 B */
    at_mark m = live_at(&c, "optimizer 1");
    ck_assert_uint_eq(m.cat[SYNTH_CAT_WEIGHT], 4823296);
    transformer_rank_estimate r = rank_estimate(&c);
    ck_assert_uint_eq(r.optimizer.weights, 4823296);
}
END_TEST

/* ---------------------------------------------------------------- ZeRO, FSDP, TP, PP */

START_TEST(the_zero_formula_should_give_the_papers_figures)
{
    /* Rajbhandari et al. 2020, Figure 1: Ψ = 7.5B, K = 12, N_d = 64:
     * 120 GB, 31.4 GB, 16.6 GB, 1.9 GB */
    const uint64_t psi = 7500000000ull;
    ck_assert_uint_eq(transformer_zero_model_states(psi, 12, 64, 0), 120000000000ull);
    ck_assert_uint_eq(transformer_zero_model_states(psi, 12, 64, 1), 31406250000ull);
    ck_assert_uint_eq(transformer_zero_model_states(psi, 12, 64, 2), 16640625000ull);
    ck_assert_uint_eq(transformer_zero_model_states(psi, 12, 64, 3), 1875000000ull);
}
END_TEST

START_TEST(each_zero_stage_should_hold_the_papers_model_states_per_rank)
{
    for (uint32_t z = 0; z <= 3; z++) {
        transformer_config c = small_llama();
        c.precision = TRANSFORMER_MIXED;
        c.zero = z;
        c.dp = 8;
        c.rank = 5;
        at_mark m = live_at(&c, "optimizer 1");
        const uint64_t states = m.cat[SYNTH_CAT_WEIGHT] + m.cat[SYNTH_CAT_GRAD] + m.cat[SYNTH_CAT_OPTIMIZER];
        /* Ψ = 6,269,440 and every tensor divide by 8, so every shard is exact */
        ck_assert_msg(states == transformer_zero_model_states(6269440, 12, 8, z), "stage %u: %llu", z,
                      (unsigned long long)states);
        ck_assert_uint_eq(m.cat[SYNTH_CAT_GATHER], 0);
        transformer_rank_estimate r = rank_estimate(&c);
        ck_assert_uint_eq(r.optimizer.weights + r.optimizer.grads + r.optimizer.optimizer, states);
    }
}
END_TEST

START_TEST(zero3_should_gather_each_layer_and_hybrid_sharding_should_shard_within_the_group)
{
    transformer_config c = small_llama();
    c.precision = TRANSFORMER_MIXED;
    c.zero = 3;
    c.dp = 8;
    synth_stats s = measure(&c);
    ck_assert_uint_gt(s.peak_by_cat[SYNTH_CAT_GATHER], 0);
    at_mark full = live_at(&c, "optimizer 1");
    c.shard = 4; /* hybrid: shard over 4, replicate over 2 */
    at_mark hybrid = live_at(&c, "optimizer 1");
    ck_assert_uint_eq(hybrid.cat[SYNTH_CAT_OPTIMIZER], 2 * full.cat[SYNTH_CAT_OPTIMIZER]);
}
END_TEST

START_TEST(tensor_parallel_ranks_should_split_the_model)
{
    transformer_config c = preset("llama2-70b");
    c.tp = 8;
    transformer_rank_estimate r = rank_estimate(&c);
    /* per rank: embed and lm_head 2·4000·8192, per layer q, o 2·8192·1024, k, v
     * 2·8192·128, MLP 3·8192·3584, norms 2·8192 (replicated); final norm 8192:
     * 65,536,000 + 80·(16,777,216 + 2,097,152 + 88,080,384 + 16,384) + 8,192
     * = 65,536,000 + 80·106,971,136 + 8,192 = 8,623,235,072 */
    ck_assert_uint_eq(r.local_params, 8623235072ull);
    c.seq = 16;
    c.inference = true;
    c.rank = 3;
    ck_assert_uint_eq(measure(&c).peak_by_cat[SYNTH_CAT_WEIGHT], 2 * 8623235072ull);
}
END_TEST

START_TEST(sequence_parallelism_should_split_every_activation_but_the_token_ids)
{
    /* llama2-70b, seq 4096, batch 1: every saved tensor of a layer and of the head is
     * split by t = 8 with --sp (heads 64/8, KV heads 8/8, MLP 28672/8, vocabulary
     * 32000/8, hidden-sized tensors and norm statistics along the sequence); only the
     * token ids (8·b·s bytes) stay whole */
    transformer_config c = preset("llama2-70b");
    transformer_rank_estimate one_rank, split;
    transformer_estimate_rank(&c, &one_rank);
    c.tp = 8;
    c.sp = true;
    transformer_estimate_rank(&c, &split);
    const uint64_t ids = 8 * 4096;
    ck_assert_uint_eq((one_rank.fwd_bwd.activations - ids) % 8, 0);
    ck_assert_uint_eq(split.fwd_bwd.activations - ids, (one_rank.fwd_bwd.activations - ids) / 8);
    /* the trace agrees, rank 5 of 8 */
    c.layers = 4;
    c.rank = 5;
    transformer_estimate_rank(&c, &split);
    synth_stats s = measure(&c);
    ck_assert_uint_ge(s.peak_live_bytes, split.peak);
    ck_assert_uint_le(s.peak_live_bytes - split.peak, split.peak / 100);
    c.seq = 4100; /* not a multiple of 8 */
    expect_invalid(&c);
}
END_TEST

START_TEST(pipeline_stages_should_hold_their_layers_and_micro_batches_in_flight)
{
    transformer_config c = small_llama();
    c.layers = 4;
    c.seq = 512;
    c.pp = 4;
    c.micro_batches = 8;
    c.optimizer = SYNTH_SGD;
    /* one layer per stage: 4·512² + 3·512·1024 + 2·512 = 2,622,464 parameters; stage 0 adds
     * embed_tokens 512,000, stage 3 the final norm 512 and lm_head 512,000 */
    const uint64_t local[4] = {3134464, 2622464, 2622464, 3134976};
    uint64_t act[4];
    for (uint64_t s = 0; s < 4; s++) {
        c.rank = s; /* dp = tp = 1: rank = stage */
        synth_stats st = measure(&c);
        act[s] = st.peak_by_cat[SYNTH_CAT_ACT];
        ck_assert_uint_eq(st.peak_by_cat[SYNTH_CAT_WEIGHT], 2 * local[s]);
        transformer_rank_estimate r = rank_estimate(&c);
        ck_assert_uint_eq(r.local_params, local[s]);
    }
    /* 1F1B: stage s keeps 4 − s micro-batches in flight */
    ck_assert_uint_gt(act[0], act[1]);
    ck_assert_uint_gt(act[1], act[2]);
    c.pp = 3; /* does not divide 4 layers */
    expect_invalid(&c);
}
END_TEST

/* ---------------------------------------------------------------- paged KV serving */

static serving_config paged_server(void)
{
    serving_config c;
    serving_defaults(&c);
    ck_assert(transformer_preset("llama3-8b", &c.model));
    c.model.inference = true;
    c.kv = SERVING_KV_PAGED;
    c.requests = 300;
    c.rate = 50;
    c.capacity = (uint64_t)40 << 30;
    c.max_batch = 64;
    c.prompt_median = 1024;
    c.max_len = 4096;
    return c;
}

static synth_stats serve(const serving_config *c, serving_report *r)
{
    sim_error err;
    sim_error_clear(&err);
    synth_out *o = synth_out_new_null();
    ck_assert_msg(serving_generate_report(c, o, r, &err) == SIM_OK, "%s", err.msg);
    synth_stats s;
    ck_assert_int_eq(synth_out_close(o, true, &s, &err), SIM_OK);
    return s;
}

START_TEST(the_paged_pool_should_fill_the_devices_fraction_after_weights_and_reserve)
{
    serving_config c = paged_server();
    serving_report r;
    synth_stats s = serve(&c, &r);
    /* llama3-8b bf16: 2·32 layers·8 KV heads·128·2 B = 131,072 B per token, 2 MiB per
     * 16-token block. Weights 8,030,261,248·2 = 16,060,522,496 B. Reserve: the prefill of
     * 4096 tokens 4096·(3·4096 + 14336)·2 (flash: no scores) = 218,103,808 plus 64 rows of
     * (3·4096 + 14336 + 128256)·2 = 19,824,640: 237,928,448 B. Pool: floor((0.9·40 GiB −
     * 16,060,522,496 − 237,928,448) / 2,097,152) = floor(10,660.3) = 10,660 blocks
     * = 22,355,640,320 B */
    ck_assert_uint_eq(r.block_bytes, 2097152);
    ck_assert_uint_eq(r.reserve_bytes, 237928448);
    ck_assert_uint_eq(r.blocks, 10660);
    ck_assert_uint_eq(r.pool_bytes, 22355640320ull);
    /* the pool is one allocation: the peak is weights + pool + one step's temporaries */
    ck_assert_uint_ge(s.peak_live_bytes, 16060522496ull + 22355640320ull);
    ck_assert_uint_le(s.peak_live_bytes, 16060522496ull + 22355640320ull + r.reserve_bytes);
    ck_assert_uint_eq(s.peak_by_cat[SYNTH_CAT_KV], r.pool_bytes);
    ck_assert_uint_le(r.peak_blocks_used, r.blocks);
    ck_assert_uint_gt(r.peak_active, 1);
    ck_assert_uint_eq(s.final_live_bytes, 0);
}
END_TEST

START_TEST(a_small_pool_should_preempt_and_a_shared_prefix_should_need_fewer_blocks)
{
    serving_config c = paged_server();
    c.gpu_util = 0.45; /* 18 GiB: about 1,000 blocks for up to 64 requests of ~1000 tokens */
    serving_report small;
    serve(&c, &small);
    ck_assert_uint_gt(small.preemptions, 0);
    ck_assert_uint_le(small.peak_blocks_used, small.blocks);
    c.gpu_util = 0.9;
    c.prefix = 512;
    serving_report shared;
    serve(&c, &shared);
    ck_assert_uint_eq(shared.shared_blocks, 32); /* 512 / 16 */
    /* the shared blocks are held once, beside every request's private ones */
    ck_assert_uint_le(shared.peak_blocks_used + shared.shared_blocks, shared.blocks);
    ck_assert_uint_gt(shared.peak_blocks_used, 0);
    c.capacity = (uint64_t)16 << 30; /* the weights alone take 15 GiB */
    sim_error err;
    sim_error_clear(&err);
    synth_out *o = synth_out_new_null();
    serving_report r;
    ck_assert_int_eq(serving_generate_report(&c, o, &r, &err), SIM_EUSAGE);
    synth_out_close(o, false, NULL, &err);
}
END_TEST

/* ---------------------------------------------------------------- trainers */

START_TEST(the_trainer_table_should_name_its_five_trainers_with_their_rules)
{
    char names[64];
    ck_assert_str_eq(trainer_names(names, sizeof names), "eager|megatron|hf|torchtitan|litgpt|torchtitan-2024.12");
    const trainer_traits *e = trainer_find("eager"), *m = trainer_find("megatron");
    ck_assert_ptr_eq(e, trainer_get(TRAINER_EAGER));
    ck_assert_ptr_eq(m, trainer_get(TRAINER_MEGATRON));
    ck_assert(!e->mixed && !e->main_grads && !e->distributed_optimizer && !e->flash);
    ck_assert(m->mixed && m->main_grads && m->distributed_optimizer && m->flash && m->fused_optimizer && m->sp_with_tp);
    ck_assert_ptr_nonnull(strstr(m->sources, "param_and_grad_buffer.py"));
    ck_assert(m->fused_swiglu && !e->fused_swiglu);
    ck_assert_uint_eq(m->vocab_divisible, 128); /* --make-vocab-size-divisible-by's default */
    ck_assert_uint_eq(e->vocab_divisible, 0);
    /* TE's cached placeholder weight gradients (graph.c rule 19): Megatron's only */
    ck_assert(m->te_dummy_wgrad && !e->te_dummy_wgrad);
    ck_assert_ptr_nonnull(strstr(m->sources, "get_dummy_wgrad"));
    for (size_t i = TRAINER_HF; i < trainer_count(); i++)
        ck_assert(!trainer_get(i)->te_dummy_wgrad);
    ck_assert_ptr_null(trainer_find("deepspeed"));
}
END_TEST

START_TEST(hf_should_set_sdpa_the_fused_adamw_and_the_fp32_loss_and_nothing_of_megatrons)
{
    const trainer_traits *h = trainer_find("hf");
    ck_assert_ptr_eq(h, trainer_get(TRAINER_HF));
    /* transformers 5: SDPA by default, adamw_torch_fused from torch 2.8, ForCausalLMLoss's
     * logits.float(); weights and states in the checkpoint's dtype (no fp32 masters), no
     * main-gradient buffer, no sharded optimizer, no vocabulary padding */
    ck_assert(h->flash && h->fused_optimizer && h->loss_fp32);
    ck_assert(!h->mixed && !h->main_grads && !h->distributed_optimizer && !h->sp_with_tp && !h->fused_swiglu);
    ck_assert_uint_eq(h->vocab_divisible, 0);
    ck_assert_ptr_nonnull(strstr(h->sources, "loss_utils.py"));
    ck_assert_ptr_nonnull(strstr(h->sources, "GradientCheckpointingLayer"));
    ck_assert(!trainer_find("eager")->loss_fp32 && !trainer_find("megatron")->loss_fp32);
}
END_TEST

START_TEST(hfs_fp32_loss_should_add_two_bytes_per_logit_to_the_log_softmax_and_its_gradient)
{
    /* bf16, b 8, s 256, a 32000-token vocabulary: the log-softmax saved for backward is
     * 2048 x 32000 x 2 = 131,072,000 B in bf16, 262,144,000 B in fp32 after logits.float();
     * at the start of backward the fp32 one is live (+131,072,000 B), and at the head's
     * backward its fp32 gradient too: the closed form's activations grow by
     * 2 x 2048 x 32000 x 2 = 262,144,000 B, and so does the trace's peak (the head's
     * backward is the peak of both, above the optimizer step's 290 MiB) */
    transformer_config c = small_llama();
    c.vocab = 32000;
    c.batch = 8;
    c.seq = 256;
    c.flash = true;
    c.fused = true;
    const uint64_t eager_peak = measure(&c).peak_live_bytes;
    const at_mark eager_bwd = live_at(&c, "backward 1");
    const transformer_rank_estimate eager_r = rank_estimate(&c);
    c.loss_fp32 = true;
    const uint64_t hf_peak = measure(&c).peak_live_bytes;
    const at_mark hf_bwd = live_at(&c, "backward 1");
    const transformer_rank_estimate hf_r = rank_estimate(&c);
    ck_assert_uint_eq(hf_bwd.cat[SYNTH_CAT_ACT] - eager_bwd.cat[SYNTH_CAT_ACT], 131072000u);
    ck_assert_uint_eq(hf_r.fwd_bwd.activations - eager_r.fwd_bwd.activations, 262144000u);
    ck_assert_uint_eq(hf_peak - eager_peak, 262144000u);
    ck_assert_uint_eq(eager_peak, eager_r.peak);
    ck_assert_uint_eq(hf_peak, hf_r.peak);
    /* fp32 weights: logits.float() returns the same tensor, nothing changes */
    c.dtype = SYNTH_FP32;
    const uint64_t fp32_hf = measure(&c).peak_live_bytes;
    c.loss_fp32 = false;
    ck_assert_uint_eq(fp32_hf, measure(&c).peak_live_bytes);
}
END_TEST

START_TEST(megatron_main_grads_should_be_one_fp32_buffer_from_the_load)
{
    /* graph.c rule 16: 4 bytes per trainable parameter, allocated at load and kept; with
     * fp32 master weights and Adam's two moments (12 bytes) and bf16 weights (2 bytes):
     * 6,269,440 parameters (the small llama above) hold 2 + 4 + 12 = 18 bytes each */
    transformer_config c = small_llama();
    c.precision = TRANSFORMER_MIXED;
    c.main_grads = true;
    const uint64_t psi = closed_form(&c).params;
    ck_assert_uint_eq(psi, 6269440);
    at_mark m = live_at(&c, "step 1"); /* before any backward: already there */
    ck_assert(m.seen);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_GRAD], 4 * psi);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_WEIGHT], 2 * psi);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_OPTIMIZER], 12 * psi);
    m = live_at(&c, "optimizer 1"); /* after backward: the same buffer, nothing added */
    ck_assert_uint_eq(m.cat[SYNTH_CAT_GRAD], 4 * psi);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_ACT], 0);
    /* the rank's closed form counts the buffer in both phases: 18 bytes per parameter
     * at the optimizer step */
    transformer_rank_estimate r = rank_estimate(&c);
    ck_assert_uint_eq(r.optimizer.total, 18 * psi);
    ck_assert_uint_eq(r.fwd_bwd.grads, 4 * psi);
    /* with TE's placeholders (rule 19) both phases count them: the small llama's four fused
     * shapes, 2,621,440 bf16 elements = 5,242,880 B */
    c.te_dummy_wgrad = true;
    ck_assert_uint_eq(transformer_te_dummy_bytes(&c), 5242880u);
    r = rank_estimate(&c);
    ck_assert_uint_eq(r.fwd_bwd.grads, 4 * psi + 5242880u);
    ck_assert_uint_eq(r.optimizer.grads, 4 * psi + 5242880u);
}
END_TEST

START_TEST(megatron_with_the_distributed_optimizer_should_hold_6_plus_12_over_dp_bytes_per_parameter)
{
    /* tp 2, dp 4, the distributed optimizer (ZeRO-1): weights 2 and main grads 4 bytes
     * per local parameter, master and moments 12/4 = 3 bytes: 9 bytes per parameter,
     * each tensor's shard ceil(numel/4) elements (all these numels divide by 4) */
    transformer_config c = small_llama();
    c.precision = TRANSFORMER_MIXED;
    c.main_grads = true;
    c.flash = true;
    c.fused = true;
    c.tp = 2;
    c.dp = 4;
    c.sp = true;
    c.zero = 1;
    const uint64_t local = rank_estimate(&c).local_params;
    at_mark m = live_at(&c, "optimizer 1");
    ck_assert_uint_eq(m.cat[SYNTH_CAT_WEIGHT], 2 * local);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_GRAD], 4 * local);
    ck_assert_uint_eq(m.cat[SYNTH_CAT_OPTIMIZER], 3 * local);
}
END_TEST

START_TEST(the_rank_closed_form_should_agree_with_a_megatron_trace_peak)
{
    /* llama3-8b, 4 layers, tp 4 with sp, dp 2, 4 micro-batches in a 2-stage pipeline */
    transformer_config c = preset("llama3-8b");
    c.seq = 1024;
    c.layers = 4;
    c.precision = TRANSFORMER_MIXED;
    c.main_grads = true;
    c.te_dummy_wgrad = true; /* graph.c rule 19, in both */
    c.fused_swiglu = true;
    c.fused = true;
    c.zero = 1;
    c.tp = 4, c.sp = true, c.dp = 2, c.pp = 2, c.micro_batches = 4;
    for (uint64_t rank = 0; rank < 16; rank += 8) { /* the first and the last stage */
        c.rank = rank;
        synth_stats s = measure(&c);
        transformer_rank_estimate r = rank_estimate(&c);
        double diff = ((double)s.peak_live_bytes - (double)r.peak) / (double)r.peak;
        ck_assert_msg(diff < 0.01 && diff > -0.01, "rank %llu: trace %llu, closed form %llu (%+.2f%%)",
                      (unsigned long long)rank, (unsigned long long)s.peak_live_bytes, (unsigned long long)r.peak,
                      100 * diff);
    }
}
END_TEST

START_TEST(main_grads_should_refuse_zero_2_and_3)
{
    transformer_config c = small_llama();
    c.main_grads = true;
    c.zero = 2;
    c.dp = 2;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(transformer_validate(&c, &err), SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "--trainer=megatron"));
}
END_TEST

START_TEST(the_closed_form_should_be_korthikantis_per_layer_activation_formula)
{
    /* Korthikanti et al. 2022, eq. (1): a GPT layer saves s·b·h·(34 + 5·a·s/h) bytes
     * in 16-bit with dropout. GPT-2 medium's shape at s 1024, b 8 (h 1024, a 16,
     * I = 4h), fp16: s·b·h = 8,388,608, 5·a·s/h = 80: 8,388,608 · 114 = 956,301,312 B
     * per layer, 24 layers: 22,951,231,488 B */
    transformer_config c = preset("gpt2-medium");
    c.dtype = SYNTH_FP16;
    c.batch = 8;
    c.seq = 1024;
    const uint64_t sbh = c.seq * c.batch * c.hidden;
    ck_assert_uint_eq(sbh * (34 + 5 * c.heads * c.seq / c.hidden), 956301312u);
    ck_assert_uint_eq(closed_form(&c).activation_bytes, c.layers * 956301312ull);
    ck_assert_uint_eq(closed_form(&c).activation_bytes, 22951231488ull);
}
END_TEST

START_TEST(a_fused_swiglu_should_save_one_mlp_activation_less_per_layer)
{
    /* Megatron's fused SwiGLU keeps gate and up and recomputes silu(gate): per layer
     * b·s·I·e bytes fewer. llama3-8b, 2 layers, vocabulary 1000, batch 8, seq 4096, bf16
     * (I = 14336): 2 · 8 · 4096 · 14336 · 2 = 1,879,048,192 B fewer activations in the closed form, and
     * the trace's peak (in forward/backward, not in the optimizer step) lower by the same */
    transformer_config c = preset("llama3-8b");
    c.layers = 2;
    c.vocab = 1000;
    c.batch = 8;
    c.seq = 4096;
    c.dtype = SYNTH_BF16;
    transformer_rank_estimate eager = rank_estimate(&c);
    synth_stats se = measure(&c);
    c.fused_swiglu = true;
    transformer_rank_estimate fused = rank_estimate(&c);
    synth_stats sf = measure(&c);
    ck_assert(!eager.peak_in_optimizer && !fused.peak_in_optimizer);
    ck_assert_uint_eq(eager.fwd_bwd.activations - fused.fwd_bwd.activations, 1879048192u);
    ck_assert_uint_eq(se.peak_live_bytes - sf.peak_live_bytes, 1879048192u);
}
END_TEST
