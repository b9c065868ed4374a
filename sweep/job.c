/* One sweep job: replay and result line. */
#include "job.h"

#include <inttypes.h>
#include <string.h>

#include "answers/node.h"
#include "reports/node.h"
#include "reports/result.h"
#include "sim/engine.h"

static void job_coordinates(const sweep_spec *s, const sweep_job *j, sim_buf *b)
{
    sim_buf_puts(b, "{\"job\":{\"trace\":");
    sim_buf_json_str(b, s->traces[j->trace].display);
    sim_buf_puts(b, s->devices[j->c.device].node ? ",\"node\":" : ",\"device\":");
    sim_buf_json_str(b, s->devices[j->c.device].name);
    sim_buf_puts(b, ",\"strategy\":");
    sim_buf_json_str(b, s->strategies[j->c.strategy]->name);
    sim_buf_puts(b, ",\"options\":");
    sim_buf_json_str(b, s->optsets[j->c.optset].name);
    sim_buf_puts(b, "}");
}

/* A node job's members after the coordinates: the §5 object's "gpusim", "trace" and
 * "strategy" of rank 0 (its line up to its "device"), then "node", a "result" of the
 * whole node and "devices", every GPU's figures (reports/node.h). */
static void node_members(const sweep_device *dv, const node_result *r, sim_buf *line)
{
    const sim_run *run0 = r->dev[0].run; /* rank 0 runs on GPU 0: the job sees every GPU */
    sim_buf one;
    sim_buf_init(&one);
    report_json_line(run0, &one);
    const char *cut = one.data ? strstr(one.data, ",\"device\":{") : NULL;
    if (cut != NULL && one.len > 1) {
        sim_buf_puts(line, ",");
        sim_buf_put(line, one.data + 1, (size_t)(cut - one.data) - 1);
    }
    sim_buf_release(&one);
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
    sim_buf_puts(line, ",\"node\":{\"name\":");
    sim_buf_json_str(line, dv->name);
    sim_buf_printf(line,
                   ",\"gpus\":%u,\"capacity_bytes\":%" PRIu64 ",\"context_bytes\":%" PRIu64
                   "},\"result\":{\"completed\":%s,\"ooms\":%" PRIu64 ",\"gpus_used\":%u,\"peak_device_bytes\":%" PRIu64
                   ",\"peak_gpu\":%u,\"headroom_bytes\":%" PRIu64 ",\"headroom_gpu\":%u,\"fragmentation\":{\"max\":%.6f},"
                   "\"first_oom\":",
                   r->n, total, dv->info.context_bytes, completed ? "true" : "false", ooms, v.used, v.peak_used_bytes,
                   v.peak_gpu, v.least_headroom_bytes, v.least_gpu, frag);
    if (v.failing_gpu >= 0)
        sim_buf_printf(line, "{\"gpu\":%d,\"rank\":%d,\"cause\":\"%s\"}", v.failing_gpu,
                       r->dev[v.failing_gpu].shares[v.failing_share].rank, sim_oom_cause_name(v.cause));
    else
        sim_buf_puts(line, "null");
    sim_buf_puts(line, "},\"devices\":");
    jsonw w;
    jsonw_init_buf(&w, line, JSONW_COMPACT, 0);
    report_jsonw_node_devices(r, &w);
    sim_buf_puts(line, "}");
}

/* The trace as rank 0 of a job that sees every GPU of the node. */
static sim_status node_job_run(const sweep_spec *s, const sweep_job *j, const evbuf *b, sim_buf *line,
                               uint64_t *events, sim_error *err)
{
    const sweep_device *dv = &s->devices[j->c.device];
    const sweep_optset *o = &s->optsets[j->c.optset];
    engine_config cfg = {.ops = s->strategies[j->c.strategy], .opts = o->kv, .n_opts = o->n_kv,
                         .on_oom_skip = s->on_oom_skip};
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
    job_coordinates(s, &j, line);
    sim_error err;
    sim_error_clear(&err);
    sim_status st;
    const evbuf *b = sweep_cache_acquire(c, j.trace, &err);
    if (b == NULL) {
        st = err.status;
    } else if (s->devices[j.c.device].node) {
        st = node_job_run(s, &j, b, line, events, &err);
        sweep_cache_release(c, j.trace);
    } else {
        const sweep_optset *o = &s->optsets[j.c.optset];
        engine_config cfg = {.device = sweep_spec_device_info(s, j.c.device),
                             .ops = s->strategies[j.c.strategy],
                             .opts = o->kv,
                             .n_opts = o->n_kv,
                             .on_oom_skip = s->on_oom_skip};
        evbuf_cursor cur;
        sim_event_source src = evbuf_source(b, &cur);
        sim_run *run = NULL;
        st = engine_run(&cfg, &src, 1, &run, &err);
        if (st == SIM_OK) {
            /* the §5 object's members follow the coordinates: its opening brace becomes a comma */
            size_t at = line->len;
            report_json_line(run, line);
            if (!line->oom && line->len > at)
                line->data[at] = ',';
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
        sim_buf_printf(line, ",\"error\":{\"exit\":%d,\"message\":", code);
        sim_buf_json_str(line, msg);
        sim_buf_puts(line, "}}");
    }
    sim_buf_puts(line, "\n");
    return code;
}
