/* One sweep job: replay and result line. */
#include "job.h"

#include <string.h>

#include "answers/node.h"
#include "reports/node.h"
#include "reports/result.h"
#include "sim/engine.h"

static void job_coordinates(const sweep_spec *s, const sweep_job *j, jsonw *w)
{
    jsonw_key(w, "job");
    jsonw_object_inline(w);
    jsonw_key_str(w, "trace", s->traces[j->trace].display);
    jsonw_key_str(w, s->devices[j->c.device].node ? "node" : "device", s->devices[j->c.device].name);
    jsonw_key_str(w, "strategy", s->strategies[j->c.strategy]->name);
    jsonw_key_str(w, "options", s->optsets[j->c.optset].name);
    jsonw_end(w);
}

/* A node job's members after the coordinates: the §5 object's "gpusim", "trace" and
 * "strategy" of rank 0 (its members before "device"), then "node", a "result" of the
 * whole node and "devices", every GPU's figures (reports/node.h). */
static void node_members(const sweep_device *dv, const node_result *r, jsonw *w)
{
    report_jsonw_members(r->dev[0].run, true, w); /* rank 0 runs on GPU 0: the job sees every GPU */
    uint64_t total = 0, ooms = 0;
    double frag = 0.0;
    bool completed = true;
    for (uint32_t d = 0; d < r->n; d++) {
        total += r->dev[d].info.capacity_bytes;
        const sim_run *run = r->dev[d].run;
        if (run == NULL)
            continue;
        ooms += run->total.ooms;
        frag = run->total.fragmentation_max > frag ? run->total.fragmentation_max : frag;
        for (uint32_t p = 0; p < run->n_procs; p++)
            completed = completed && run->procs[p].m.completed;
    }
    node_verdict v = node_result_verdict(r);
    jsonw_key(w, "node");
    jsonw_object_inline(w);
    jsonw_key_str(w, "name", dv->name);
    jsonw_key_u64(w, "gpus", r->n);
    jsonw_key_u64(w, "capacity_bytes", total);
    jsonw_key_u64(w, "context_bytes", dv->info.context_bytes);
    jsonw_end(w);
    jsonw_key(w, "result");
    jsonw_object_inline(w);
    jsonw_key_bool(w, "completed", completed);
    jsonw_key_u64(w, "ooms", ooms);
    jsonw_key_u64(w, "gpus_used", v.used);
    jsonw_key_u64(w, "peak_device_bytes", v.peak_used_bytes);
    jsonw_key_u64(w, "peak_gpu", v.peak_gpu);
    jsonw_key_u64(w, "headroom_bytes", v.least_headroom_bytes);
    jsonw_key_u64(w, "headroom_gpu", v.least_gpu);
    jsonw_key(w, "fragmentation");
    jsonw_object_inline(w);
    jsonw_key(w, "max");
    jsonw_real_fixed(w, "%.6f", frag);
    jsonw_end(w);
    jsonw_key(w, "first_oom");
    if (v.failing_gpu >= 0) {
        jsonw_object_inline(w);
        jsonw_key(w, "gpu");
        jsonw_i64(w, v.failing_gpu);
        jsonw_key(w, "rank");
        jsonw_i64(w, r->dev[v.failing_gpu].shares[v.failing_share].rank);
        jsonw_key_str(w, "cause", sim_oom_cause_name(v.cause));
        jsonw_end(w);
    } else {
        jsonw_null(w);
    }
    jsonw_end(w);
    jsonw_key(w, "devices");
    report_jsonw_node_devices(r, w);
}

/* The trace as rank 0 of a job that sees every GPU of the node. */
static sim_status node_job_run(const sweep_spec *s, const sweep_job *j, const evbuf *b, sim_memo *memo,
                               jsonw *line, uint64_t *events, sim_error *err)
{
    const sweep_device *dv = &s->devices[j->c.device];
    const sweep_optset *o = &s->optsets[j->c.optset];
    engine_config cfg = {.ops = s->strategies[j->c.strategy], .opts = o->kv, .n_opts = o->n_kv,
                         .on_oom_skip = s->on_oom_skip, .memo = memo};
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(b, &cur);
    node_job job = {.name = "job 1", .ranks = &src, .n_ranks = 1};
    sim_status st = node_parse_visible(NULL, dv->gpus.n, job.visible, &job.n_visible, err);
    node_result r = {0};
    if (st == SIM_OK)
        st = node_run(&cfg, &dv->gpus, &job, 1, &r, err);
    if (st == SIM_OK) {
        node_members(dv, &r, line);
        for (uint32_t d = 0; d < r.n; d++)
            *events += r.dev[d].run ? r.dev[d].run->events : 0;
    }
    node_result_release(&r);
    return st;
}

int sweep_job_run(const sweep_spec *s, sweep_cache *c, uint64_t job, sim_buf *line, uint64_t *events)
{
    sweep_job j = sweep_spec_job(s, job);
    sim_buf_reset(line);
    *events = 0;
    jsonw w;
    jsonw_init_buf(&w, line, JSONW_COMPACT, 0);
    jsonw_object(&w);
    job_coordinates(s, &j, &w);
    sim_error err;
    sim_error_clear(&err);
    sim_status st;
    const evbuf *b = sweep_cache_acquire(c, j.trace, &err);
    if (b == NULL) {
        st = err.status;
    } else if (s->devices[j.c.device].node) {
        st = node_job_run(s, &j, b, sweep_cache_memo(c), &w, events, &err);
        sweep_cache_release(c, j.trace);
    } else {
        const sweep_optset *o = &s->optsets[j.c.optset];
        engine_config cfg = {.device = sweep_spec_device_info(s, j.c.device),
                             .ops = s->strategies[j.c.strategy],
                             .opts = o->kv,
                             .n_opts = o->n_kv,
                             .on_oom_skip = s->on_oom_skip,
                             .memo = sweep_cache_memo(c)}; /* planned plans each trace once */
        evbuf_cursor cur;
        sim_event_source src = evbuf_source(b, &cur);
        sim_run *run = NULL;
        st = engine_run(&cfg, &src, 1, &run, &err);
        if (st == SIM_OK) {
            report_jsonw_members(run, false, &w); /* the §5 object's members follow the coordinates */
            *events = run->events;
        }
        sim_run_free(run);
        sweep_cache_release(c, j.trace);
    }
    int code = 0;
    if (st != SIM_OK) {
        char msg[1600];
        sim_error_format(&err, msg, sizeof msg);
        code = sim_status_exit_code(st);
        jsonw_key(&w, "error");
        jsonw_object_inline(&w);
        jsonw_key(&w, "exit");
        jsonw_i64(&w, code);
        jsonw_key_str(&w, "message", msg);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    sim_buf_puts(line, "\n");
    return code;
}
