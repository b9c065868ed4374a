/* test_validate.c — the real-GPU harness (validate/) without a GPU: the same code
 * that replay_cuda runs, on the host-memory mock backend. Checks that the harness
 * replays in gpusim's order, that the mock's cudaMalloc charges equal the `raw`
 * model, that mirror mode backs exactly the model's regions, that a driver that
 * refuses memory the model had room for ends the replay as an OOM, and that the
 * measured JSON parses. The mock's numbers are never measurements. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "traces/json.h"
/* the harness's sources, compiled into this test (they are not in gpusim_core) */
#include "validate/vgpu_mock.c"
#include "validate/vjson.c"
#include "validate/vrun.c"

static char path_buf[1024];

/* rel under the source tree, in a buffer that the next call reuses. */
static const char *src_path(const char *rel)
{
    const char *s = getenv("GPUSIM_SOURCE_DIR");
    snprintf(path_buf, sizeof path_buf, "%s/%s", s ? s : ".", rel);
    return path_buf;
}

static vgpu mock_gpu(uint64_t capacity, uint64_t context)
{
    vgpu g;
    char err[256];
    vgpu_mock_config mc = {.capacity_bytes = capacity, .context_bytes = context};
    ck_assert_int_eq(vgpu_mock_open(&mc, &g, err, sizeof err), VGPU_OK);
    return g;
}

/* The prediction validate-report would make for this device. */
static sim_run *predict(const char *path, const char *sname, const sim_kv *kv, uint32_t n, uint64_t cap,
                        uint64_t ctx)
{
    trace_reader *r;
    sim_error err;
    ck_assert_int_eq(trace_open(path, &r, &err), SIM_OK);
    engine_config cfg = {.device = {.name = "mock", .capacity_bytes = cap, .context_bytes = ctx},
                         .ops = registry_find(sname), .opts = kv, .n_opts = n};
    sim_event_source src = trace_source(r);
    sim_run *run = NULL;
    ck_assert_int_eq(engine_run(&cfg, &src, 1, &run, &err), SIM_OK);
    trace_close(r);
    return run;
}

static sim_run *measure(vrun *v, vgpu g, vrun_mode mode, const char *sname, const char *path, const sim_kv *kv,
                        uint32_t n, uint64_t every)
{
    char err[256];
    ck_assert(vrun_init(v, g, mode, sname ? registry_find(sname) : NULL, every, true, err, sizeof err));
    sim_run *run = NULL;
    sim_error e;
    ck_assert_int_eq(vrun_replay(v, path, kv, n, &run, &e), SIM_OK);
    vrun_finish(v);
    return run;
}

/* The end of a measurement: the measured run, the prediction (or NULL), the replay and the GPU. */
static void release_all(sim_run *run, sim_run *pred, vrun *v, vgpu g)
{
    sim_run_free(run);
    sim_run_free(pred);
    vrun_release(v);
    g.ops->close(g.ctx);
}

START_TEST(raw_replay_should_match_the_raw_model_at_any_reading_interval)
{
    static const char *const traces[] = {"traces/examples/mlp_train.json", "tests/golden/deferred_tie.json",
                                         "tests/golden/raw_sizes.jsonl"};
    for (size_t i = 0; i < 3; i++) {
        for (uint64_t every = 1; every <= 7; every += 6) {
            const char *path = src_path(traces[i]);
            vgpu g = mock_gpu(16 * GiB, 300 * MiB);
            vrun v;
            sim_run *run = measure(&v, g, VRUN_RAW, NULL, path, NULL, 0, every);
            sim_run *pred = predict(path, "raw", NULL, 0, 16 * GiB, 300 * MiB);
            ck_assert_uint_eq(v.context_bytes, 300 * MiB);
            /* peaks stay exact with --every > 1: a reading before each free after an allocation */
            ck_assert_uint_eq(v.peak_reserved, pred->total.peak_reserved_bytes);
            ck_assert_uint_eq(v.peak_device_used, pred->total.peak_device_bytes);
            ck_assert_uint_eq(v.final_reserved, pred->total.final_reserved_bytes);
            ck_assert_uint_eq(run->events, pred->events);
            ck_assert_uint_eq(v.num_device_allocs, pred->total.num_device_allocs);
            release_all(run, pred, &v, g);
        }
    }
}
END_TEST

START_TEST(deferred_frees_should_replay_in_the_engines_order)
{
    vgpu g = mock_gpu(1 * GiB, 0);
    vrun v;
    sim_run *run = measure(&v, g, VRUN_RAW, NULL, src_path("tests/golden/deferred_tie.json"), NULL, 0, 1);
    /* 8 trace events + 1 deferred free, one curve row each */
    ck_assert_uint_eq(run->events, 9);
    ck_assert_uint_eq(v.n_curve, 9);
    ck_assert_uint_eq(v.curve[4].event, 5);
    /* event 5 is the deferred free of id 1 (ready_t 40), before the alloc at t=40 */
    ck_assert_uint_eq(v.curve[4].allocated, 200 + 300);
    ck_assert_uint_eq(v.curve[5].allocated, 200 + 300 + 50);
    release_all(run, NULL, &v, g);
}
END_TEST

START_TEST(mirror_mode_should_back_exactly_the_models_regions)
{
    /* torch twice: default, then expandable segments with a 1 GiB cap (OOM ladder, then OOM) */
    static const char *const strategies[] = {"growth", "greedy", "limit", "torch", "torch"};
    sim_kv kv[5] = {{"bfc_preset", "jax"}, {"mem_fraction", "0.25"}, {"limit", "3GiB"}, {"alloc_conf", ""},
                    {"memory_fraction", "1"}};
    for (size_t i = 0; i < 5; i++) {
        if (registry_find(strategies[i]) == NULL)
            continue;
        if (i == 4) {
            kv[3].value = "expandable_segments:True";
            kv[4].value = "0.0625";
        }
        const char *p = src_path("traces/examples/mlp_train.json");
        vgpu g = mock_gpu(16 * GiB, 300 * MiB);
        vrun v;
        sim_run *run = measure(&v, g, VRUN_MIRROR, strategies[i], p, kv, 5, 1);
        sim_run *pred = predict(p, strategies[i], kv, 5, 16 * GiB, 300 * MiB);
        ck_assert_uint_gt(pred->total.peak_reserved_bytes, 0);
        ck_assert_uint_eq(v.peak_backed_bytes, pred->total.peak_reserved_bytes);
        ck_assert_uint_eq(v.peak_reserved, pred->total.peak_reserved_bytes);
        ck_assert_uint_eq(v.peak_device_used, pred->total.peak_device_bytes);
        ck_assert_uint_eq(v.final_reserved, pred->total.final_reserved_bytes);
        if (!v.expandable) /* expandable pages are backed in 2 MiB cudaMallocs */
            ck_assert_uint_eq(v.num_device_allocs, pred->total.num_device_allocs);
        ck_assert_uint_eq(v.driver_refusals, 0);
        ck_assert(run->total.completed == pred->total.completed);
        release_all(run, pred, &v, g);
        ck_assert_uint_eq(v.backed_bytes, 0); /* vrun_release gave every region back */
    }
}
END_TEST

START_TEST(a_driver_refusal_should_end_the_replay_as_an_oom)
{
    /* 1.2 GiB card: growth wants 2 GiB of regions for this trace. The model is told
     * the truth about capacity and context, but something else takes 200 MiB after
     * the context was measured: the driver refuses before the model would. */
    const char *p = src_path("traces/examples/mlp_train.json");
    vgpu g = mock_gpu(1536 * MiB, 100 * MiB);
    vrun v;
    char err[256];
    sim_kv kv[2] = {{"bfc_preset", "jax"}, {"mem_fraction", "1.0"}};
    ck_assert(vrun_init(&v, g, VRUN_MIRROR, registry_find("growth"), 1, true, err, sizeof err));
    uint64_t hidden = 0;
    ck_assert_int_eq(g.ops->dmalloc(g.ctx, 200 * MiB, &hidden), VGPU_OK);
    sim_run *run = NULL;
    sim_error e;
    ck_assert_int_eq(vrun_replay(&v, p, kv, 2, &run, &e), SIM_OK);
    vrun_finish(&v);
    ck_assert_uint_ge(v.driver_refusals, 1);
    ck_assert(run->total.first_oom.happened);
    ck_assert(!run->total.completed);
    sim_buf b;
    sim_buf_init(&b);
    vrun_meta meta = {.trace_path = p, .allocator = "mirror-growth", .predict_strategy = "growth",
                      .predict_opts = kv, .n_predict_opts = 2, .backend = "mock"};
    vrun_json(&v, run, &meta, &b);
    ck_assert_ptr_nonnull(strstr(b.data, "\"cause\": \"driver\""));
    sim_buf_release(&b);
    release_all(run, NULL, &v, g);
}
END_TEST

START_TEST(async_replay_should_track_the_pool_and_write_parsable_json)
{
    const char *p = src_path("traces/examples/mlp_train.json");
    vgpu g = mock_gpu(16 * GiB, 300 * MiB);
    vrun v;
    sim_run *run = measure(&v, g, VRUN_ASYNC, NULL, p, NULL, 0, 5);
    ck_assert_uint_ge(v.pool.reserved_high, run->total.peak_requested_bytes);
    ck_assert_uint_eq(v.pool.used_high, run->total.peak_requested_bytes); /* mock rounds to 512 only */
    sim_buf b;
    sim_buf_init(&b);
    vrun_meta meta = {.trace_path = p, .allocator = "cuda-async", .predict_strategy = "async", .backend = "mock"};
    vrun_json(&v, run, &meta, &b);
    json_parser *jp = json_parser_new();
    char e[256];
    const json_value *doc = json_parse(jp, b.data, b.len, 0, e, sizeof e);
    ck_assert_msg(doc != NULL, "measured JSON does not parse: %s", e);
    ck_assert_str_eq(json_get(doc, "format")->u.str, "gpusim-measured");
    const json_value *m = json_get(doc, "measured");
    uint64_t peak = 0;
    ck_assert_int_eq(json_to_u64(json_get(m, "peak_reserved_bytes"), UINT64_MAX, &peak), JSON_INT_OK);
    ck_assert_uint_eq(peak, v.pool.reserved_high);
    ck_assert_ptr_nonnull(json_get(json_get(doc, "trace"), "fnv1a64"));
    json_parser_free(jp);
    sim_buf_release(&b);
    /* probes run on the mock and give back everything they took */
    sim_buf_init(&b);
    uint64_t fr0 = 0, fr1 = 0, tot = 0;
    sim_run_free(run);
    vrun_release(&v);
    g.ops->pool_trim(g.ctx);
    g.ops->mem_get_info(g.ctx, &fr0, &tot);
    vrun_probes(g, &b);
    g.ops->mem_get_info(g.ctx, &fr1, &tot);
    ck_assert_uint_eq(fr0, fr1);
    jp = json_parser_new();
    ck_assert_msg(json_parse(jp, b.data, b.len, 0, e, sizeof e) != NULL, "probes JSON: %s", e);
    json_parser_free(jp);
    sim_buf_release(&b);
    g.ops->close(g.ctx);
}
END_TEST

START_TEST(a_raw_oom_should_be_data_at_the_models_event)
{
    vgpu g = mock_gpu(700 * MiB, 300 * MiB); /* 400 MiB usable: mlp_train runs out */
    const char *p = src_path("traces/examples/mlp_train.json");
    vrun v;
    sim_run *run = measure(&v, g, VRUN_RAW, NULL, p, NULL, 0, 1);
    sim_run *pred = predict(p, "raw", NULL, 0, 700 * MiB, 300 * MiB);
    ck_assert(run->total.first_oom.happened);
    ck_assert(pred->total.first_oom.happened);
    ck_assert_uint_eq(run->total.first_oom.event, pred->total.first_oom.event);
    ck_assert(!v.fatal);
    release_all(run, pred, &v, g);
}
END_TEST
