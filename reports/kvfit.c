/* `plan --gpu-memory-utilization` for people and machines (kvfit.h). */
#include "kvfit.h"

#include <stdio.h>

#include "sim/jsonw.h"
#include "sim/units.h"

void report_kvfit_text(const char *path, const kvfit_rule *r, const kvfit_row *rows, uint32_t n, sim_buf *b)
{
    char w[32], ac[32], kv[32], res[32], cap[32], ctx[32];
    sim_buf_printf(b, "gpusim %s: plan the largest gpu_memory_utilization that survives CUDA graph capture\n",
                   GPUSIM_VERSION);
    char ge[64] = "";
    if (r->graph_estimate_bytes) {
        char g[32];
        snprintf(ge, sizeof ge, " - the graphs' estimate %s", units_format_size(r->graph_estimate_bytes, g, sizeof g));
    }
    sim_buf_printf(b,
                   "  trace   %s: written at gpu_memory_utilization %g; vLLM's KV rule: floor((F x capacity - "
                   "weights %s - profiled activations %s%s) / %llu B) blocks\n",
                   path, r->recorded, units_format_size(r->weights_bytes, w, sizeof w),
                   units_format_size(r->activation_bytes, ac, sizeof ac), ge, (unsigned long long)r->block_bytes);
    sim_buf_printf(b, "\n  %-14s %10s %10s  %-8s  %8s  %12s  %18s  %s\n", "GPU", "capacity", "context", "strategy",
                   "largest F", "KV cache", "end of start-up", "at the next 0.001");
    for (uint32_t i = 0; i < n; i++) {
        const kvfit_row *row = &rows[i];
        const kvfit_answer *a = &row->a;
        sim_buf_printf(b, "  %-14s %10s %10s  %-8s  ", row->gpu,
                       units_format_size(row->capacity_bytes, cap, sizeof cap),
                       units_format_size(row->context_bytes, ctx, sizeof ctx), row->strategy);
        if (a->st != SIM_OK) {
            sim_buf_printf(b, "error: %s\n", a->err.msg);
            continue;
        }
        if (!a->found) {
            sim_buf_printf(b, "%8s  %12s  %18s  %s\n", "none", "-", "-",
                           a->fails_above ? "out of memory with one request's KV blocks"
                                          : "no fraction leaves one request's KV blocks");
            continue;
        }
        sim_buf_printf(b, "%8.3f  %12s  %18s  ", a->milli / 1000.0, units_format_size(a->kv_bytes, kv, sizeof kv),
                       units_format_size(a->end_of_startup_reserved_bytes, res, sizeof res));
        if (a->fails_above)
            sim_buf_printf(b, "%.3f: out of memory at event %llu (%s, tag \"%s\")\n", a->fail_milli / 1000.0,
                           (unsigned long long)a->fail_oom.event, sim_oom_cause_name(a->fail_oom.cause),
                           a->fail_oom.tag);
        else
            sim_buf_puts(b, "(1.000 survives)\n");
    }
    sim_buf_puts(b,
                 "  (F survives when its start-up, the capture of the CUDA graphs included, runs without running out "
                 "of memory; the CUDA context and the graph pools are outside vLLM's rule)\n");
}

void report_kvfit_json(const char *path, const kvfit_rule *r, const kvfit_row *rows, uint32_t n, sim_buf *b)
{
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    jsonw_key_str(&w, "trace", path);
    jsonw_key(&w, "rule");
    jsonw_object_inline(&w);
    jsonw_key(&w, "recorded_gpu_memory_utilization");
    jsonw_real_fixed(&w, "%g", r->recorded);
    jsonw_key_u64(&w, "weights_bytes", r->weights_bytes);
    jsonw_key_u64(&w, "activation_bytes", r->activation_bytes);
    jsonw_key_u64(&w, "block_bytes", r->block_bytes);
    jsonw_key_u64(&w, "min_blocks", r->min_blocks);
    jsonw_key_u64(&w, "graph_estimate_bytes", r->graph_estimate_bytes);
    jsonw_end(&w);
    jsonw_key(&w, "rows");
    jsonw_array(&w);
    for (uint32_t i = 0; i < n; i++) {
        const kvfit_row *row = &rows[i];
        const kvfit_answer *a = &row->a;
        jsonw_object_inline(&w);
        jsonw_key_str(&w, "gpu", row->gpu);
        jsonw_key_u64(&w, "capacity_bytes", row->capacity_bytes);
        jsonw_key_u64(&w, "context_bytes", row->context_bytes);
        jsonw_key_str(&w, "strategy", row->strategy);
        if (a->st != SIM_OK) {
            jsonw_key_str(&w, "error", a->err.msg);
            jsonw_end(&w);
            continue;
        }
        jsonw_key(&w, "largest_gpu_memory_utilization");
        if (a->found)
            jsonw_real_fixed(&w, "%.3f", a->milli / 1000.0);
        else
            jsonw_null(&w);
        jsonw_key_u64(&w, "kv_bytes", a->found ? a->kv_bytes : 0);
        jsonw_key_u64(&w, "end_of_startup_reserved_bytes", a->found ? a->end_of_startup_reserved_bytes : 0);
        jsonw_key(&w, "fails_at");
        if (a->fails_above)
            jsonw_real_fixed(&w, "%.3f", a->fail_milli / 1000.0);
        else
            jsonw_null(&w);
        jsonw_key(&w, "failure");
        if (a->fails_above) {
            jsonw_object_inline(&w);
            jsonw_key_u64(&w, "event", a->fail_oom.event);
            jsonw_key_str(&w, "cause", sim_oom_cause_name(a->fail_oom.cause));
            jsonw_key_str(&w, "tag", a->fail_oom.tag);
            jsonw_end(&w);
        } else {
            jsonw_null(&w);
        }
        jsonw_key_u64(&w, "replays", a->replays);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}
