/* The largest gpu_memory_utilization that survives capture (kvfit.h). */
#include "kvfit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traces/json.h"

static sim_status need_u64(const json_value *o, const char *key, const char *path, uint64_t *out, sim_error *err)
{
    const json_value *v = json_get(o, key);
    if (v == NULL || json_to_u64(v, UINT64_MAX, out) != JSON_INT_OK)
        return sim_error_set(err, SIM_ETRACE, path, 0, 0,
                             "the header's meta.vllm_startup has no whole number \"%s\" (write the trace again with "
                             "this gpusim's synth serving --gpu-memory-utilization)",
                             key);
    return SIM_OK;
}

sim_status kvfit_rule_read(const char *meta_json, const char *path, kvfit_rule *r, sim_error *err)
{
    memset(r, 0, sizeof *r);
    if (meta_json == NULL)
        return sim_error_set(err, SIM_ETRACE, path, 0, 0,
                             "the trace has no header meta: the largest gpu_memory_utilization is answered for a "
                             "trace of `gpusim synth serving --gpu-memory-utilization=F` (its meta.vllm_startup)");
    json_parser *p = json_parser_new();
    if (p == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    char msg[200];
    const json_value *root = json_parse(p, meta_json, strlen(meta_json), 0, msg, sizeof msg);
    const json_value *v = root ? json_get(root, "vllm_startup") : NULL;
    sim_status st = SIM_OK;
    if (v == NULL || v->type != JSON_OBJECT)
        st = sim_error_set(err, SIM_ETRACE, path, 0, 0,
                           "the header's meta has no vllm_startup: the largest gpu_memory_utilization is answered for "
                           "a trace of `gpusim synth serving --gpu-memory-utilization=F`");
    const json_value *f = v ? json_get(v, "gpu_memory_utilization") : NULL;
    if (st == SIM_OK && (f == NULL || f->type != JSON_NUMBER))
        st = sim_error_set(err, SIM_ETRACE, path, 0, 0, "the header's meta.vllm_startup has no gpu_memory_utilization");
    if (st == SIM_OK) {
        r->recorded = json_to_double(f);
        if ((st = need_u64(v, "weights_bytes", path, &r->weights_bytes, err)) == SIM_OK &&
            (st = need_u64(v, "activation_bytes", path, &r->activation_bytes, err)) == SIM_OK &&
            (st = need_u64(v, "block_bytes", path, &r->block_bytes, err)) == SIM_OK &&
            (st = need_u64(v, "kv_tensors", path, &r->kv_tensors, err)) == SIM_OK)
            st = need_u64(v, "min_blocks", path, &r->min_blocks, err);
        if (st == SIM_OK && json_get(v, "graph_estimate_bytes") != NULL)
            st = need_u64(v, "graph_estimate_bytes", path, &r->graph_estimate_bytes, err);
    }
    if (st == SIM_OK && (r->block_bytes == 0 || r->kv_tensors == 0 || r->block_bytes % r->kv_tensors != 0))
        st = sim_error_set(err, SIM_ETRACE, path, 0, 0,
                           "the header's meta.vllm_startup: block_bytes must be a positive multiple of kv_tensors");
    json_parser_free(p);
    return st;
}

uint64_t kvfit_blocks(const kvfit_rule *r, uint32_t milli, uint64_t capacity)
{
    /* as the generator: requested = floor(F × capacity), F a double */
    uint64_t requested = (uint64_t)floor((double)milli / 1000.0 * (double)capacity);
    uint64_t non_kv = r->weights_bytes + r->activation_bytes + r->graph_estimate_bytes;
    return requested > non_kv ? (requested - non_kv) / r->block_bytes : 0;
}

typedef struct sample_watch {
    const uint64_t *before, *after;
    uint32_t n;
    uint64_t held_before[2], held_after[2];
} sample_watch;

static void sample_observe(void *ctx, const engine_tick *t)
{
    sample_watch *w = ctx;
    for (uint32_t k = 0; k < w->n; k++) {
        if (t->event == w->before[k])
            w->held_before[k] = t->total.reserved_bytes;
        if (t->event == w->after[k])
            w->held_after[k] = t->total.reserved_bytes;
    }
}

sim_status kvfit_graph_samples(const evbuf *prefix, const strategy_ops *ops, uint64_t capacity, const uint64_t *before,
                               const uint64_t *after, uint32_t n, uint64_t *samples, sim_error *err)
{
    sample_watch w = {.before = before, .after = after, .n = n < 2 ? n : 2};
    engine_config c = {.ops = ops};
    c.device.name = "profiling";
    c.device.capacity_bytes = capacity;
    sim_status st = engine_config_observe(&c, sample_observe, &w, err);
    if (st != SIM_OK)
        return st;
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(prefix, &cur);
    sim_run *run = NULL;
    st = engine_run(&c, &src, 1, &run, err);
    if (st == SIM_OK && run->total.ooms > 0)
        st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                           "--graph-memory=profiled: the profiling captures run out of memory on the device "
                           "(event %llu): the model does not fit",
                           (unsigned long long)run->total.first_oom.event);
    sim_run_free(run);
    for (uint32_t k = 0; k < w.n && st == SIM_OK; k++)
        samples[k] = w.held_after[k] > w.held_before[k] ? w.held_after[k] - w.held_before[k] : 0;
    return st;
}

static bool is_capture_begin(const sim_event *e)
{
    return e->op == SIM_OP_POOL_BEGIN && (e->pool_flags & SIM_POOL_CAPTURE) != 0;
}

/* in up to the end of its start-up, the KV tensors resized to blocks: the events before
 * the generator's "serving" mark, else up to the last capture's pool_end, else all */
static sim_status rewrite(const evbuf *in, const kvfit_rule *r, uint64_t blocks, evbuf **out)
{
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(in, &cur);
    uint64_t last = UINT64_MAX, serving = UINT64_MAX, open_pool = 0;
    sim_event e;
    sim_error err;
    for (uint64_t i = 0; src.next(src.ctx, &e, &err) == SIM_OK; i++) {
        if (is_capture_begin(&e)) {
            open_pool = e.pool;
        } else if (e.op == SIM_OP_POOL_END && open_pool != 0 && e.pool == open_pool) {
            last = i;
            open_pool = 0;
        } else if (e.op == SIM_OP_MARK && serving == UINT64_MAX && e.name != NULL && strcmp(e.name, "serving") == 0) {
            serving = i;
            break;
        }
    }
    if (serving != UINT64_MAX)
        last = serving > 0 ? serving - 1 : 0;
    evbuf *b = evbuf_new(src.path, src.name);
    if (b == NULL)
        return SIM_ENOMEM;
    src = evbuf_source(in, &cur);
    const uint64_t per_tensor = blocks * (r->block_bytes / r->kv_tensors);
    for (uint64_t i = 0; src.next(src.ctx, &e, &err) == SIM_OK && (last == UINT64_MAX || i <= last); i++) {
        if (e.op == SIM_OP_ALLOC && e.tag != NULL && strncmp(e.tag, "kv:", 3) == 0)
            e.size = per_tensor;
        if (evbuf_push(b, &e) != SIM_OK) {
            evbuf_free(b);
            return SIM_ENOMEM;
        }
    }
    *out = b;
    return SIM_OK;
}

/* One replay at F = milli / 1000: *ok when it survives. */
static sim_status try_at(const engine_config *cfg, const evbuf *in, const kvfit_rule *r, uint32_t milli,
                         kvfit_answer *a, bool *ok, sim_oom_record *oom, uint64_t *reserved, sim_error *err)
{
    evbuf *b = NULL;
    uint64_t blocks = kvfit_blocks(r, milli, cfg->device.capacity_bytes);
    if (rewrite(in, r, blocks, &b) != SIM_OK)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    engine_config c = engine_config_plain(cfg);
    c.end_at_first_oom = true;
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(b, &cur);
    sim_run *run = NULL;
    sim_status st = engine_run(&c, &src, 1, &run, err);
    a->replays++;
    if (st == SIM_OK) {
        *ok = run->total.completed && run->total.ooms == 0;
        *oom = run->total.first_oom;
        *reserved = run->total.final_reserved_bytes;
    }
    sim_run_free(run);
    evbuf_free(b);
    return st;
}

void kvfit_search(const engine_config *cfg, const evbuf *in, const kvfit_rule *r, kvfit_answer *out)
{
    memset(out, 0, sizeof *out);
    sim_error_clear(&out->err);
    const uint64_t cap = cfg->device.capacity_bytes;
    /* the smallest F that leaves one request's blocks (vLLM refuses to start below it) */
    uint32_t lo = 1, hi = 1000;
    if (kvfit_blocks(r, 1000, cap) < r->min_blocks)
        return;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (kvfit_blocks(r, mid, cap) >= r->min_blocks)
            hi = mid;
        else
            lo = mid + 1;
    }
    const uint32_t m0 = lo;
    bool ok = false;
    sim_oom_record oom;
    uint64_t reserved = 0;
    if ((out->st = try_at(cfg, in, r, m0, out, &ok, &oom, &reserved, &out->err)) != SIM_OK)
        return;
    if (!ok) { /* fails even with the fewest blocks */
        out->fails_above = true;
        out->fail_milli = m0;
        out->fail_oom = oom;
        return;
    }
    out->found = true;
    out->milli = m0;
    out->end_of_startup_reserved_bytes = reserved;
    /* the largest that survives: ok(good), !ok(bad) */
    uint32_t good = m0, bad = 1001;
    if ((out->st = try_at(cfg, in, r, 1000, out, &ok, &oom, &reserved, &out->err)) != SIM_OK)
        return;
    if (ok) {
        good = 1000;
        out->end_of_startup_reserved_bytes = reserved;
    } else {
        bad = 1000;
        out->fail_oom = oom;
    }
    while (bad - good > 1 && bad <= 1000) {
        uint32_t mid = (good + bad) / 2;
        if ((out->st = try_at(cfg, in, r, mid, out, &ok, &oom, &reserved, &out->err)) != SIM_OK)
            return;
        if (ok) {
            good = mid;
            out->end_of_startup_reserved_bytes = reserved;
        } else {
            bad = mid;
            out->fail_oom = oom;
        }
    }
    out->milli = good;
    out->kv_bytes = kvfit_blocks(r, good, cap) * r->block_bytes;
    out->fails_above = bad <= 1000;
    out->fail_milli = bad <= 1000 ? bad : 0;
}
