/* Check suite for the synthetic workload generators (traces/synth): determinism
 * per seed, valid v1 traces that replay under `ideal` and free what they allocate,
 * and the transformer's parameter, gradient and optimizer bytes against the
 * closed-form counts derived in traces/synth/transformer.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/engine.h"
#include "strategies/ideal.h"
#include "support/check_main.h"
#include "support/slurp.h"
#include "traces/synth/churn.h"
#include "traces/synth/cnn.h"
#include "sim/units.h"
#include "traces/synth/serving.h"
#include "traces/synth/transformer.h"
#include "traces/trace.h"

/* ---------------------------------------------------------------- helpers */

/* A scratch directory per test (no file-scope state). */
typedef struct tmp {
    char dir[256];
    char buf[4][512];
    int k;
} tmp;

/* Each test's scratch directory: the fixture of the "synth" case makes it before the
 * test and removes it after (each forked test has its own). */
static tmp T;

static void tmp_setup(void)
{
    memset(&T, 0, sizeof T);
    snprintf(T.dir, sizeof T.dir, "/tmp/gpusim_synth_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(T.dir));
}

static void tmp_teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", T.dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* dir/name; valid for the next three calls */
static const char *tmp_path(tmp *t, const char *name)
{
    char out[512];
    snprintf(out, sizeof out, "%s/%s", t->dir, name);
    t->k = (t->k + 1) % 4;
    memcpy(t->buf[t->k], out, sizeof out);
    return t->buf[t->k];
}

typedef enum { GEN_TRANSFORMER, GEN_CNN, GEN_SERVING, GEN_CHURN } gen_kind;

typedef struct any_config {
    gen_kind kind;
    transformer_config tf;
    cnn_config cnn;
    serving_config sv;
    churn_config ch;
} any_config;

static synth_stats write_trace(const any_config *c, const char *path)
{
    trace_header h;
    memset(&h, 0, sizeof h);
    snprintf(h.name, sizeof h.name, "test");
    snprintf(h.device_name, sizeof h.device_name, "H100-80GB");
    h.device_capacity = (uint64_t)81090 << 20;
    sim_error err;
    sim_error_clear(&err);
    synth_out *o = NULL;
    ck_assert_int_eq(synth_out_open(path, &h, 0, NULL, &o, &err), SIM_OK);
    sim_status st = SIM_OK;
    switch (c->kind) {
    case GEN_TRANSFORMER: st = transformer_generate(&c->tf, o, &err); break;
    case GEN_CNN: st = cnn_generate(&c->cnn, o, &err); break;
    case GEN_SERVING: st = serving_generate(&c->sv, o, &err); break;
    case GEN_CHURN: st = churn_generate(&c->ch, o, &err); break;
    }
    ck_assert_msg(st == SIM_OK, "generate failed: %s", err.msg);
    synth_stats stats;
    ck_assert_int_eq(synth_out_close(o, true, &stats, &err), SIM_OK);
    return stats;
}

static bool files_equal(const char *a, const char *b)
{
    size_t na, nb;
    char *x = test_slurp(a, &na), *y = test_slurp(b, &nb);
    bool eq = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return eq;
}

/* Bytes by tag prefix ("weight:", "grad:", ...), and counts. */
typedef struct tally {
    uint64_t weight, grad, adam_m, adam_v, momentum, buffer;
    uint64_t n_weight, n_adam_m, allocs, frees;
    uint64_t kv_allocs;
} tally;

static bool starts(const char *s, const char *p)
{
    return s && strncmp(s, p, strlen(p)) == 0;
}

static tally read_tally(const char *path)
{
    tally t;
    memset(&t, 0, sizeof t);
    sim_error err;
    sim_error_clear(&err);
    trace_reader *r = NULL;
    ck_assert_msg(trace_open(path, &r, &err) == SIM_OK, "%s", err.msg);
    sim_event_source src = trace_source(r);
    sim_event ev;
    sim_status st;
    while ((st = src.next(src.ctx, &ev, &err)) == SIM_OK) {
        if (ev.op == SIM_OP_FREE)
            t.frees++;
        if (ev.op != SIM_OP_ALLOC)
            continue;
        t.allocs++;
        if (starts(ev.tag, "weight:")) {
            t.weight += ev.size;
            t.n_weight++;
        } else if (starts(ev.tag, "grad:")) {
            t.grad += ev.size;
        } else if (starts(ev.tag, "adam_m:")) {
            t.adam_m += ev.size;
            t.n_adam_m++;
        } else if (starts(ev.tag, "adam_v:")) {
            t.adam_v += ev.size;
        } else if (starts(ev.tag, "momentum:")) {
            t.momentum += ev.size;
        } else if (starts(ev.tag, "buffer:")) {
            t.buffer += ev.size;
        } else if (starts(ev.tag, "kv:")) {
            t.kv_allocs++;
        }
    }
    ck_assert_msg(st == SIM_END, "%s", err.msg);
    trace_close(r);
    return t;
}

/* Replay under `ideal` on a large device; returns the metrics. */
/* c written to name in scratch, and the tally of what was written. */
static tally write_tally(tmp *scratch, const any_config *c, const char *name)
{
    write_trace(c, tmp_path(scratch, name));
    return read_tally(tmp_path(scratch, name));
}

/* A lengths file holding text, at name in scratch; returns its path (valid as tmp_path's). */
static const char *write_lengths(tmp *scratch, const char *name, const char *text)
{
    const char *path = tmp_path(scratch, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static sim_metrics replay_ideal(const char *path)
{
    sim_error err;
    sim_error_clear(&err);
    trace_reader *r = NULL;
    ck_assert_msg(trace_open(path, &r, &err) == SIM_OK, "%s", err.msg);
    ck_assert_uint_eq(trace_get_header(r)->device_capacity, (uint64_t)81090 << 20);
    sim_event_source src = trace_source(r);
    engine_config cfg = {
        .device = {.name = "big", .capacity_bytes = (uint64_t)1 << 40, .cc_major = 9},
        .ops = ideal_strategy(),
    };
    sim_run *run = NULL;
    ck_assert_msg(engine_run(&cfg, &src, 1, &run, &err) == SIM_OK, "replay failed: %s", err.msg);
    sim_metrics m = run->total;
    sim_run_free(run);
    trace_close(r);
    return m;
}

static any_config small_transformer(const char *preset)
{
    any_config c = {.kind = GEN_TRANSFORMER};
    transformer_defaults(&c.tf);
    ck_assert(transformer_preset(preset, &c.tf));
    c.tf.seq = 16;
    c.tf.batch = 2;
    return c;
}

static any_config default_of(gen_kind k)
{
    any_config c = {.kind = k};
    switch (k) {
    case GEN_TRANSFORMER: c = small_transformer("bert-base"); break;
    case GEN_CNN:
        cnn_defaults(&c.cnn);
        c.cnn.batch = 2;
        c.cnn.image = 64;
        break;
    case GEN_SERVING:
        serving_defaults(&c.sv);
        c.sv.requests = 60;
        break;
    case GEN_CHURN:
        churn_defaults(&c.ch);
        c.ch.events = 5000;
        c.ch.live_bytes = 64 << 20;
        break;
    }
    return c;
}

/* ---------------------------------------------------------------- determinism */

GPUSIM_TCASE("synth", 120, tmp_setup, tmp_teardown);

START_TEST(each_generator_should_write_byte_identical_files_for_the_same_seed)
{
    for (int k = GEN_TRANSFORMER; k <= GEN_CHURN; k++) {
        any_config c = default_of((gen_kind)k);
        write_trace(&c, tmp_path(&T, "a.jsonl"));
        write_trace(&c, tmp_path(&T, "b.jsonl"));
        ck_assert_msg(files_equal(tmp_path(&T, "a.jsonl"), tmp_path(&T, "b.jsonl")), "generator %d differs", k);
        write_trace(&c, tmp_path(&T, "a.json"));
        write_trace(&c, tmp_path(&T, "b.json"));
        ck_assert_msg(files_equal(tmp_path(&T, "a.json"), tmp_path(&T, "b.json")), "generator %d differs (json)", k);
    }
}
END_TEST

START_TEST(each_generator_should_write_different_files_for_different_seeds)
{
    for (int k = GEN_TRANSFORMER; k <= GEN_CHURN; k++) {
        any_config c = default_of((gen_kind)k);
        c.tf.seed = c.cnn.seed = c.sv.seed = c.ch.seed = 1;
        write_trace(&c, tmp_path(&T, "a.jsonl"));
        c.tf.seed = c.cnn.seed = c.sv.seed = c.ch.seed = 2;
        write_trace(&c, tmp_path(&T, "b.jsonl"));
        ck_assert_msg(!files_equal(tmp_path(&T, "a.jsonl"), tmp_path(&T, "b.jsonl")), "generator %d ignores the seed", k);
    }
}
END_TEST

START_TEST(model_sizes_should_not_depend_on_the_seed)
{
    any_config c = small_transformer("gpt2-small");
    c.tf.seed = 1;
    synth_stats a = write_trace(&c, tmp_path(&T, "a.jsonl"));
    c.tf.seed = 99;
    synth_stats b = write_trace(&c, tmp_path(&T, "b.jsonl"));
    ck_assert_uint_eq(a.peak_live_bytes, b.peak_live_bytes);
    ck_assert_uint_eq(a.events, b.events);
}
END_TEST

/* ---------------------------------------------------------------- validity */

START_TEST(every_generated_trace_should_replay_under_ideal_and_free_everything)
{
    for (int k = GEN_TRANSFORMER; k <= GEN_CHURN; k++) {
        any_config c = default_of((gen_kind)k);
        synth_stats s = write_trace(&c, tmp_path(&T, "t.jsonl"));
        sim_metrics m = replay_ideal(tmp_path(&T, "t.jsonl"));
        ck_assert(m.completed);
        ck_assert_uint_eq(m.ooms, 0);
        ck_assert_uint_eq(m.final_requested_bytes, 0);
        ck_assert_uint_eq(m.peak_requested_bytes, s.peak_live_bytes);
        ck_assert_uint_eq(s.final_live_bytes, 0);
        tally t = read_tally(tmp_path(&T, "t.jsonl"));
        ck_assert_uint_eq(t.allocs, t.frees);
        ck_assert_uint_eq(t.allocs, s.allocs);
    }
}
END_TEST

START_TEST(transformer_variants_should_replay_and_free_everything)
{
    static const char *const P[] = {"bert-base", "gpt2-small", "llama-7b"};
    for (int p = 0; p < 3; p++)
        for (int v = 0; v < 4; v++) {
            any_config c = small_transformer(P[p]);
            c.tf.layers = 2;
            c.tf.steps = 2;
            c.tf.checkpointing = v == 1;
            c.tf.inference = v == 2;
            c.tf.optimizer = v == 3 ? SYNTH_MOMENTUM : SYNTH_ADAM;
            c.tf.dtype = v == 3 ? SYNTH_BF16 : SYNTH_FP32;
            write_trace(&c, tmp_path(&T, "t.json"));
            sim_metrics m = replay_ideal(tmp_path(&T, "t.json"));
            ck_assert_msg(m.completed && m.final_requested_bytes == 0, "%s variant %d", P[p], v);
        }
}
END_TEST

START_TEST(keep_live_should_leave_weights_and_optimizer_states_allocated)
{
    any_config c = small_transformer("bert-base");
    c.tf.keep_live = true;
    synth_stats s = write_trace(&c, tmp_path(&T, "t.jsonl"));
    sim_metrics m = replay_ideal(tmp_path(&T, "t.jsonl"));
    ck_assert(m.completed);
    const uint64_t params = 109482240ull;
    ck_assert_uint_eq(m.final_requested_bytes, params * 4 * 3); /* weights + Adam m, v */
    ck_assert_uint_eq(s.final_live_bytes, params * 4 * 3);
}
END_TEST

/* ---------------------------------------------------------------- closed form */

/* Parameter counts derived in transformer.c's header comment. */
static const struct {
    const char *preset;
    uint64_t params;
} PARAMS[] = {
    {"bert-base", 109482240ull},  {"bert-large", 335141888ull},   {"gpt2-small", 124439808ull},
    {"gpt2-medium", 354823168ull}, {"llama-7b", 6738415616ull},
};

START_TEST(transformer_bytes_should_equal_the_closed_form_for_each_preset)
{
    for (size_t i = 0; i < sizeof PARAMS / sizeof PARAMS[0]; i++) {
        any_config c = small_transformer(PARAMS[i].preset);
        const uint64_t e = synth_dtype_bytes(c.tf.dtype);
        transformer_estimate est;
        transformer_estimate_closed_form(&c.tf, &est);
        ck_assert_msg(est.params == PARAMS[i].params, "%s: closed form %llu", PARAMS[i].preset,
                      (unsigned long long)est.params);
        tally t = write_tally(&T, &c, "t.jsonl");
        ck_assert_msg(t.weight == PARAMS[i].params * e, "%s: weights %llu", PARAMS[i].preset,
                      (unsigned long long)t.weight);
        ck_assert_uint_eq(t.weight, est.weight_bytes);
        ck_assert_msg(t.grad == PARAMS[i].params * e, "%s: grads %llu", PARAMS[i].preset,
                      (unsigned long long)t.grad);
        ck_assert_uint_eq(t.grad, est.grad_bytes);
        ck_assert_uint_eq(t.adam_m, PARAMS[i].params * e);
        ck_assert_uint_eq(t.adam_v, PARAMS[i].params * e);
        ck_assert_uint_eq(t.adam_m + t.adam_v, est.optimizer_bytes);
    }
}
END_TEST

START_TEST(adam_states_should_be_created_on_the_first_step_only)
{
    any_config c = small_transformer("gpt2-small");
    c.tf.layers = 2;
    c.tf.steps = 3;
    tally t = write_tally(&T, &c, "t.jsonl");
    ck_assert_uint_eq(t.n_adam_m, t.n_weight);
    /* gradients are recreated every step (zero_grad(set_to_none=True)) */
    ck_assert_uint_eq(t.grad, 3 * t.weight);
}
END_TEST

START_TEST(sgd_should_have_no_state_and_momentum_one_buffer)
{
    any_config c = small_transformer("bert-base");
    c.tf.optimizer = SYNTH_SGD;
    tally t = write_tally(&T, &c, "t.jsonl");
    ck_assert_uint_eq(t.adam_m + t.adam_v + t.momentum, 0);
    c.tf.optimizer = SYNTH_MOMENTUM;
    t = write_tally(&T, &c, "t.jsonl");
    ck_assert_uint_eq(t.momentum, t.weight);
}
END_TEST

START_TEST(checkpointing_and_inference_should_lower_the_peak)
{
    any_config c = small_transformer("bert-base");
    c.tf.seq = 128;
    c.tf.batch = 8;
    c.tf.optimizer = SYNTH_SGD; /* else foreach Adam's first step (5 copies of the weights) is the peak */
    uint64_t train = write_trace(&c, tmp_path(&T, "t.jsonl")).peak_live_bytes;
    c.tf.checkpointing = true;
    uint64_t ckpt = write_trace(&c, tmp_path(&T, "t.jsonl")).peak_live_bytes;
    c.tf.checkpointing = false;
    c.tf.inference = true;
    uint64_t inf = write_trace(&c, tmp_path(&T, "t.jsonl")).peak_live_bytes;
    ck_assert_uint_lt(ckpt, train);
    ck_assert_uint_lt(inf, ckpt);
    /* inference holds the weights and little more */
    ck_assert_uint_ge(inf, 109482240ull * 4);
}
END_TEST

/* --lifetimes=graph (graph.c rule 15): the same gradients and states, but each
 * gradient is applied and freed at its last use in backward and the update is
 * fused, so no Adam temporaries (one per parameter per step) and no moment where
 * weights, gradients, both moments and the temporaries (5 copies) are all live. */
START_TEST(graph_lifetimes_should_apply_each_gradient_at_its_last_use)
{
    any_config c = small_transformer("gpt2-small");
    c.tf.layers = 2;
    c.tf.steps = 2;
    synth_stats eager = write_trace(&c, tmp_path(&T, "e.jsonl"));
    tally te = read_tally(tmp_path(&T, "e.jsonl"));
    c.tf.graph_lifetimes = true;
    synth_stats graph = write_trace(&c, tmp_path(&T, "g.jsonl"));
    tally tg = read_tally(tmp_path(&T, "g.jsonl"));
    ck_assert_uint_eq(tg.grad, te.grad);
    ck_assert_uint_eq(tg.n_adam_m, te.n_adam_m);
    ck_assert_uint_eq(te.allocs - tg.allocs, 2 * te.n_weight); /* the denominators of two steps */
    ck_assert_uint_ge(eager.peak_live_bytes, 5 * te.weight);
    ck_assert_uint_lt(graph.peak_live_bytes, 4 * te.weight);
    ck_assert_uint_eq(graph.final_live_bytes, 0);
    /* one device's training step only */
    c.tf.inference = true;
    sim_error err;
    ck_assert_int_eq(transformer_validate(&c.tf, &err), SIM_EUSAGE);
}
END_TEST

START_TEST(resnet50_weights_should_equal_25557032_parameters)
{
    any_config c = default_of(GEN_CNN);
    ck_assert_uint_eq(cnn_param_count(&c.cnn), 25557032ull);
    tally t = write_tally(&T, &c, "t.jsonl");
    ck_assert_uint_eq(t.weight, 25557032ull * 4);
    ck_assert_uint_eq(t.grad, 25557032ull * 4);
    ck_assert_uint_eq(t.momentum, 25557032ull * 4);
    /* 53 BatchNorms: running mean and var (C floats each) + an int64 counter;
     * the BN channels of ResNet-50 sum to 26,560 */
    ck_assert_uint_eq(t.buffer, 2 * 26560 * 4 + 53 * 8);
    cnn_config other;
    cnn_defaults(&other);
    ck_assert(cnn_preset("resnet18", &other));
    ck_assert_uint_eq(cnn_param_count(&other), 11689512ull);
    ck_assert(cnn_preset("resnet101", &other));
    ck_assert_uint_eq(cnn_param_count(&other), 44549160ull);
}
END_TEST

/* ---------------------------------------------------------------- serving, churn */

START_TEST(serving_should_free_each_kv_cache_and_read_empirical_lengths)
{
    const char *lp = write_lengths(&T, "lengths.txt", "# prompt output\n100 20\n\n900 50\n30\n");
    any_config c = default_of(GEN_SERVING);
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(serving_load_lengths(&c.sv, lp, &err), SIM_OK);
    ck_assert_uint_eq(c.sv.n_lengths, 3);
    tally t = write_tally(&T, &c, "t.jsonl");
    ck_assert_uint_eq(t.kv_allocs, 60);
    sim_metrics m = replay_ideal(tmp_path(&T, "t.jsonl"));
    ck_assert(m.completed && m.final_requested_bytes == 0);
    c.sv.kv = SERVING_KV_GROW;
    c.sv.kv_chunk = 16;
    t = write_tally(&T, &c, "g.jsonl");
    ck_assert_uint_gt(t.kv_allocs, 60);
    m = replay_ideal(tmp_path(&T, "g.jsonl"));
    ck_assert(m.completed && m.final_requested_bytes == 0);
    serving_config_release(&c.sv);
}
END_TEST

START_TEST(the_vllm_startup_should_size_the_kv_cache_by_vllms_rule_and_capture_every_graph)
{
    any_config c = default_of(GEN_SERVING);
    c.sv.requests = 5;
    c.sv.startup = true;
    c.sv.kv = SERVING_KV_PAGED;
    c.sv.capacity = (uint64_t)81090 << 20; /* the H100 the other tests write */
    c.sv.gpu_util = 0.5;
    c.sv.graph_warmups = 1;
    c.sv.n_graphs = 3;
    c.sv.graph_sizes[0] = 1;
    c.sv.graph_sizes[1] = 4;
    c.sv.graph_sizes[2] = 2;
    trace_header h;
    memset(&h, 0, sizeof h);
    snprintf(h.device_name, sizeof h.device_name, "H100-80GB");
    h.device_capacity = c.sv.capacity;
    sim_error err;
    sim_error_clear(&err);
    synth_out *o = NULL;
    ck_assert_int_eq(synth_out_open(tmp_path(&T, "v.jsonl"), &h, 0, NULL, &o, &err), SIM_OK);
    serving_report r;
    ck_assert_msg(serving_generate_report(&c.sv, o, &r, &err) == SIM_OK, "%s", err.msg);
    synth_stats st;
    ck_assert_int_eq(synth_out_close(o, true, &st, &err), SIM_OK);
    /* the header's estimate is what the start-up subtracted */
    uint64_t w = 0, a = 0;
    serving_startup_estimate(&c.sv, &w, &a);
    ck_assert_uint_eq(r.weight_bytes, w);
    ck_assert_uint_eq(r.activation_bytes, a);
    /* vLLM's rule: blocks = (0.5 x capacity - weights - activations) / (16 tokens x KV bytes per token) */
    ck_assert_uint_eq(r.requested_bytes, (uint64_t)81090 << 19);
    ck_assert_uint_eq(r.block_bytes, 16 * serving_kv_bytes_per_token(&c.sv));
    ck_assert_uint_eq(r.blocks, (((uint64_t)81090 << 19) - w - a) / r.block_bytes);
    ck_assert_uint_eq(r.pool_bytes, r.blocks * r.block_bytes);
    /* three captures: a begin, an end and a release each, and a replay per decode step
     * (batches of at most 4 decode through the graphs) */
    ck_assert_uint_eq(r.graphs, 3);
    ck_assert_uint_eq(r.eager_decodes, 0);
    ck_assert_uint_gt(r.graph_replays, 0);
    ck_assert_uint_eq(st.pool_events, 9 + r.graph_replays);
    ck_assert_uint_eq(st.final_live_bytes, 0);
    /* the ideal replay runs it through */
    sim_metrics m = replay_ideal(tmp_path(&T, "v.jsonl"));
    ck_assert(m.completed);
}
END_TEST

START_TEST(the_graphs_estimate_should_extrapolate_two_samples_as_vllm_does)
{
    /* first + (graphs - 1) x max(second, 1 MiB) */
    const uint64_t two[2] = {64 * MiB, 3 * MiB}, small[2] = {64 * MiB, 1000};
    ck_assert_uint_eq(serving_graph_estimate(two, 2, 10), 64 * MiB + 9 * 3 * MiB);
    ck_assert_uint_eq(serving_graph_estimate(small, 2, 10), 64 * MiB + 9 * MiB);
    ck_assert_uint_eq(serving_graph_estimate(two, 1, 1), 64 * MiB);
    ck_assert_uint_eq(serving_graph_estimate(two, 1, 3), 64 * MiB + 2 * MiB);
    ck_assert_uint_eq(serving_graph_estimate(two, 0, 3), 0);
}
END_TEST

START_TEST(serving_should_reject_a_malformed_lengths_file_with_its_line)
{
    const char *lp = write_lengths(&T, "bad.txt", "100 20\nlots\n");
    serving_config c;
    serving_defaults(&c);
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(serving_load_lengths(&c, lp, &err), SIM_EUSAGE);
    ck_assert_uint_eq(err.line, 2);
    ck_assert_ptr_null(c.lengths);
    ck_assert_int_eq(serving_load_lengths(&c, tmp_path(&T, "missing.txt"), &err), SIM_EIO);
}
END_TEST

START_TEST(churn_should_hover_around_its_live_target)
{
    any_config c = default_of(GEN_CHURN);
    c.ch.dist = CHURN_UNIFORM;
    c.ch.min_bytes = 1 << 20;
    c.ch.max_bytes = 4 << 20;
    c.ch.events = 20000;
    synth_stats s = write_trace(&c, tmp_path(&T, "t.jsonl"));
    ck_assert_uint_ge(s.peak_live_bytes, c.ch.live_bytes);
    ck_assert_uint_lt(s.peak_live_bytes, c.ch.live_bytes + 64 * c.ch.max_bytes);
    c.ch.keep_live = true;
    s = write_trace(&c, tmp_path(&T, "t.jsonl"));
    ck_assert_uint_gt(s.final_live_bytes, c.ch.live_bytes / 2);
}
END_TEST

START_TEST(validation_should_reject_inconsistent_shapes)
{
    sim_error err;
    transformer_config t;
    transformer_defaults(&t);
    t.heads = 7;
    ck_assert_int_eq(transformer_validate(&t, &err), SIM_EUSAGE);
    transformer_defaults(&t);
    ck_assert(transformer_preset("bert-base", &t));
    t.seq = 513;
    ck_assert_int_eq(transformer_validate(&t, &err), SIM_EUSAGE);
    cnn_config c;
    cnn_defaults(&c);
    c.image = 8;
    ck_assert_int_eq(cnn_validate(&c, &err), SIM_EUSAGE);
    churn_config ch;
    churn_defaults(&ch);
    ch.min_bytes = 10;
    ch.max_bytes = 5;
    ck_assert_int_eq(churn_validate(&ch, &err), SIM_EUSAGE);
    ck_assert(!transformer_preset("bert-huge", &t));
}
END_TEST

START_TEST(the_rng_should_be_seeded_explicitly_and_keep_seed_zero_distinct)
{
    synth_rng *a = synth_rng_new(0), *b = synth_rng_new(4357), *c = synth_rng_new(0);
    double x = synth_rng_uniform(a), y = synth_rng_uniform(b), z = synth_rng_uniform(c);
    ck_assert(!test_same_double(x, y));
    ck_assert(test_same_double(x, z));
    synth_rng_free(a);
    synth_rng_free(b);
    synth_rng_free(c);
}
END_TEST
