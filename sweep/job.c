/* One sweep job: replay and result line. */
#include "job.h"

#include "reports/result.h"
#include "sim/engine.h"

static void job_coordinates(const sweep_spec *s, const sweep_job *j, sim_buf *b)
{
    sim_buf_puts(b, "{\"job\":{\"trace\":");
    sim_buf_json_str(b, s->traces[j->trace].display);
    sim_buf_puts(b, ",\"device\":");
    sim_buf_json_str(b, s->devices[j->c.device].name);
    sim_buf_puts(b, ",\"strategy\":");
    sim_buf_json_str(b, s->strategies[j->c.strategy]->name);
    sim_buf_puts(b, ",\"options\":");
    sim_buf_json_str(b, s->optsets[j->c.optset].name);
    sim_buf_puts(b, "}");
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
