/* Several strategies side by side, as text and as JSON. */
#include "compare.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reports/graphs.h"
#include "reports/result.h"
#include "sim/gpu_context.h"
#include "sim/jsonw.h"
#include "sim/units.h"

void report_compare_json(const sim_run *const *runs, uint32_t n, sim_buf *b)
{
    report_compare_json_graphs(runs, NULL, n, b);
}

void report_compare_json_graphs(const sim_run *const *runs, const graphs_answer *const *graphs, uint32_t n, sim_buf *b)
{
    const sim_run *r0 = runs[0];
    device_info d = device_get_info(r0->dev);
    jsonw w;
    jsonw_init_buf(&w, b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    jsonw_key(&w, "trace");
    if (r0->n_sources > 1)
        jsonw_array_inline(&w);
    for (uint32_t i = 0; i < r0->n_sources; i++)
        report_jsonw_source(&r0->sources[i], &w);
    if (r0->n_sources > 1)
        jsonw_end(&w);
    jsonw_key(&w, "device");
    jsonw_object_inline(&w);
    jsonw_key_str(&w, "name", d.name);
    jsonw_key_u64(&w, "capacity_bytes", d.capacity_bytes);
    jsonw_key_u64(&w, "context_bytes", d.context_bytes);
    jsonw_end(&w);
    jsonw_key(&w, "rows");
    jsonw_array(&w);
    for (uint32_t i = 0; i < n; i++) {
        const sim_run *run = runs[i];
        jsonw_object_inline(&w); /* a member per line, the first beside the brace */
        jsonw_key_str(&w, "strategy", run->ops->name);
        jsonw_wrap(&w);
        jsonw_key(&w, "options");
        report_jsonw_options(run, &w);
        jsonw_wrap(&w);
        jsonw_key_u64(&w, "limit_bytes", report_limit_bytes(run));
        jsonw_wrap(&w);
        jsonw_key(&w, "result");
        report_jsonw_result(run, UINT32_MAX, &w);
        if (graphs != NULL && graphs[i] != NULL && graphs[i]->present) {
            jsonw_wrap(&w);
            jsonw_key(&w, "cuda_graphs");
            report_jsonw_graphs(graphs[i], &w);
        }
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(b, "\n");
}

static void cell_size(sim_buf *b, uint64_t v)
{
    char s[32];
    sim_buf_printf(b, " %15s", units_format_size(v, s, sizeof s));
}

void report_compare_text(const sim_run *const *runs, uint32_t n, sim_buf *b)
{
    report_compare_text_graphs(runs, NULL, n, b);
}

void report_compare_text_graphs(const sim_run *const *runs, const graphs_answer *const *graphs, uint32_t n, sim_buf *b)
{
    const sim_run *r0 = runs[0];
    device_info d = device_get_info(r0->dev);
    char cap[32], ctx[32];
    sim_buf_printf(b, "gpusim %s: compare %u strategies\n", GPUSIM_VERSION, n);
    for (uint32_t i = 0; i < r0->n_sources; i++) {
        const sim_run_source *s = &r0->sources[i];
        sim_buf_printf(b, "  trace   %s%s%s%s: %llu events (%llu allocs, %llu frees)\n", s->path, s->name[0] ? " (" : "",
                       s->name, s->name[0] ? ")" : "", (unsigned long long)s->events, (unsigned long long)s->allocs,
                       (unsigned long long)s->frees);
    }
    /* the strategies that did not model the trace's pools, those with one reason together */
    const strategy_ops **ops = malloc((size_t)n * sizeof *ops);
    uint64_t pool_events = 0;
    for (uint32_t i = 0; i < r0->n_sources; i++)
        pool_events += r0->sources[i].pool_events;
    if (ops != NULL) {
        for (uint32_t i = 0; i < n; i++)
            ops[i] = runs[i]->ops;
        report_text_pools_ignored_by(ops, n, pool_events, b);
        free(ops);
    } else { /* no memory to group them: a line each */
        for (uint32_t i = 0; i < n; i++)
            report_text_pools_ignored(runs[i], b);
    }
    sim_buf_printf(b, "  device  %s: capacity %s, context %s per process\n", d.name,
                   units_format_size(d.capacity_bytes, cap, sizeof cap),
                   units_format_size(d.context_bytes, ctx, sizeof ctx));
    report_context_lines(&d, b);
    /* the effective limit of each strategy (a preset's reserve, a fraction, --limit) */
    sim_buf_puts(b, "  limits ");
    /* strategies with the same limit from the same source named together, in their
     * order (a few strategies: the texts are made again rather than kept) */
    for (uint32_t i = 0, groups = 0; i < n; i++) {
        char li[320], lj[320];
        report_limit_text(runs[i], li, sizeof li);
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = strcmp(report_limit_text(runs[j], lj, sizeof lj), li) == 0;
        if (seen)
            continue;
        sim_buf_printf(b, "%s%s", groups++ ? "; " : " ", runs[i]->ops->name);
        for (uint32_t k = i + 1; k < n; k++)
            if (strcmp(report_limit_text(runs[k], lj, sizeof lj), li) == 0)
                sim_buf_printf(b, ", %s", runs[k]->ops->name);
        sim_buf_printf(b, " %s", li);
    }
    sim_buf_puts(b, "\n\n");
    sim_buf_printf(b, "  %-10s %15s %15s %15s %15s %9s %9s  %s\n", "strategy", "peak requested", "peak allocated",
                   "peak reserved", "peak device", "frag@peak", "frag max", "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const sim_metrics *m = &runs[i]->total;
        sim_buf_printf(b, "  %-10s", runs[i]->ops->name);
        cell_size(b, m->peak_requested_bytes);
        cell_size(b, m->peak_allocated_bytes);
        cell_size(b, m->peak_reserved_bytes);
        cell_size(b, m->peak_device_bytes);
        sim_buf_printf(b, " %9.4f %9.4f  ", m->fragmentation_at_peak, m->fragmentation_max);
        if (m->first_oom.happened)
            sim_buf_printf(b, "event %llu (%s)\n", (unsigned long long)m->first_oom.event,
                           sim_oom_cause_name(m->first_oom.cause));
        else
            sim_buf_puts(b, "no\n");
    }
    sim_buf_puts(b, "  (device = reserved + context; frag = 1 - largest free block / free bytes inside reserved memory)\n");
    for (uint32_t i = 0; i < n; i++) {
        const sim_metrics *m = &runs[i]->total;
        if (!m->first_oom.happened)
            continue;
        sim_buf_printf(b, "\n  %s: ", runs[i]->ops->name);
        report_oom_sentence(runs[i], &m->first_oom, b);
        sim_buf_puts(b, "\n");
    }
    for (uint32_t i = 0; graphs != NULL && i < n; i++) {
        if (graphs[i] == NULL || !graphs[i]->present)
            continue;
        report_text_graphs(graphs[i], runs[i]->ops->name, b);
    }
}
