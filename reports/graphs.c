/* The CUDA graphs' answer for people and machines (graphs.h). */
#include "graphs.h"

#include <stdio.h>
#include <string.h>

#include "sim/units.h"

static const char *sharing_word(graphs_sharing s)
{
    return s == GRAPHS_SHARED ? "shared" : s == GRAPHS_SEPARATE ? "separate" : "as recorded";
}

void report_graphs_settings(const graphs_answer *g, sim_buf *b)
{
    if (g == NULL || !g->present || g->best < 0)
        return;
    const graphs_variant *v = &g->variants[g->best];
    if (v->sharing == GRAPHS_SHARED)
        sim_buf_puts(b, "pool = torch.cuda.graph_pool_handle() once, passed as torch.cuda.graph(g, pool=pool) to every "
                        "capture");
    else
        sim_buf_puts(b, "no pool= argument: each torch.cuda.graph(g) capture in a pool of its own");
    if (v->order == GRAPHS_ORDER_LARGEST_FIRST)
        sim_buf_puts(b, "; the capture loop over the batch sizes largest first (sorted(sizes, reverse=True))");
    else if (v->order == GRAPHS_ORDER_SMALLEST_FIRST)
        sim_buf_puts(b, "; the capture loop over the batch sizes smallest first (sorted(sizes))");
    else
        sim_buf_puts(b, "; the capture loop in the recorded order");
}

void report_text_graphs(const graphs_answer *g, const char *who, sim_buf *b)
{
    if (g == NULL || !g->present)
        return;
    char s1[32], s2[32], s3[32], s4[32];
    const char *how = strcmp(g->recorded_sharing, "shared") == 0     ? "into one shared pool"
                      : strcmp(g->recorded_sharing, "separate") == 0 ? "each into a pool of its own"
                                                                     : "into pools some of them share";
    sim_buf_printf(b, "\n  CUDA graphs%s%s: %u captures %s; ", who ? " under " : "", who ? who : "", g->captures, how);
    if (g->end_of_capture_event)
        sim_buf_printf(b, "at the end of capture (event %llu) %s reserved in all\n",
                       (unsigned long long)g->end_of_capture_event,
                       units_format_size(g->end_of_capture_reserved_bytes, s1, sizeof s1));
    else
        sim_buf_puts(b, "the replay ended before the last capture did\n");
    if (g->n_pools) {
        sim_buf_printf(b, "    %-6s %6s  %20s  %18s  %19s\n", "pool", "graphs", "high-water reserved",
                       "at end of capture", "one pool per graph");
        for (uint32_t i = 0; i < g->n_pools; i++) {
            const graphs_pool *p = &g->pools[i];
            sim_buf_printf(b, "    %-6llu %6u  %20s  %18s  %19s\n", (unsigned long long)p->pool, p->graphs,
                           units_format_size(p->peak_reserved_bytes, s1, sizeof s1),
                           units_format_size(p->reserved_bytes, s2, sizeof s2),
                           units_format_size(p->one_pool_each_bytes, s3, sizeof s3));
        }
        if (g->pools_truncated)
            sim_buf_printf(b, "    (the first %u pools)\n", GRAPHS_MAX_POOLS);
    }
    sim_buf_printf(b, "    %-36s %14s  %17s  %14s  %s\n", "what if (pools, capture order)", "peak reserved",
                   "end of capture", "graph pools", "OOM");
    for (uint32_t i = 0; i < GRAPHS_VARIANTS; i++) {
        const graphs_variant *v = &g->variants[i];
        char label[64];
        snprintf(label, sizeof label, "%s, %s%s", sharing_word(v->sharing), graphs_order_name(v->order),
                 v->recorded ? " (the trace)" : "");
        if (v->st != SIM_OK) {
            char msg[sizeof v->err.msg + 600];
            sim_error_format(&v->err, msg, sizeof msg);
            sim_buf_printf(b, "    %-36s cannot be built: %s\n", label, msg);
            continue;
        }
        sim_buf_printf(
            b, "    %-36s %14s  %17s  %14s  %s\n", label, units_format_size(v->peak_reserved_bytes, s2, sizeof s2),
            v->reached_end_of_capture ? units_format_size(v->end_of_capture_reserved_bytes, s3, sizeof s3) : "-",
            v->reached_end_of_capture ? units_format_size(v->pools_reserved_bytes, s4, sizeof s4) : "-",
            v->completed            ? "no"
            : v->first_oom.happened ? "yes"
                                    : "did not complete");
    }
    if (g->best >= 0) {
        const graphs_variant *v = &g->variants[g->best];
        sim_buf_printf(b, "    best: %s pool%s, %s (peak reserved %s): ", sharing_word(v->sharing),
                       v->sharing == GRAPHS_SEPARATE ? "s" : "", graphs_order_name(v->order),
                       units_format_size(v->peak_reserved_bytes, s1, sizeof s1));
        report_graphs_settings(g, b);
        sim_buf_puts(b, "\n");
    }
}

static void json_oom_or_null(const graphs_variant *v, jsonw *w)
{
    if (!v->first_oom.happened) {
        jsonw_null(w);
        return;
    }
    jsonw_object_inline(w);
    jsonw_key_u64(w, "event", v->first_oom.event);
    jsonw_key_u64(w, "size", v->first_oom.size);
    jsonw_key_str(w, "cause", sim_oom_cause_name(v->first_oom.cause));
    jsonw_end(w);
}

void report_jsonw_graphs(const graphs_answer *g, jsonw *w)
{
    if (g == NULL || !g->present) {
        jsonw_null(w);
        return;
    }
    jsonw_object(w);
    jsonw_key_u64(w, "captures", g->captures);
    jsonw_key_str(w, "recorded_pools", g->recorded_sharing);
    jsonw_key(w, "end_of_capture_event");
    if (g->end_of_capture_event)
        jsonw_u64(w, g->end_of_capture_event);
    else
        jsonw_null(w);
    jsonw_key_u64(w, "end_of_capture_reserved_bytes", g->end_of_capture_reserved_bytes);
    jsonw_key(w, "pools");
    jsonw_array(w);
    for (uint32_t i = 0; i < g->n_pools; i++) {
        const graphs_pool *p = &g->pools[i];
        jsonw_object_inline(w);
        jsonw_key_u64(w, "pool", p->pool);
        jsonw_key_u64(w, "graphs", p->graphs);
        jsonw_key_u64(w, "peak_reserved_bytes", p->peak_reserved_bytes);
        jsonw_key_u64(w, "end_of_capture_reserved_bytes", p->reserved_bytes);
        jsonw_key_u64(w, "one_pool_per_graph_bytes", p->one_pool_each_bytes);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key(w, "whatif");
    jsonw_array(w);
    for (uint32_t i = 0; i < GRAPHS_VARIANTS; i++) {
        const graphs_variant *v = &g->variants[i];
        jsonw_object_inline(w);
        jsonw_key_str(w, "pools", sharing_word(v->sharing));
        jsonw_key_str(w, "capture_order", graphs_order_name(v->order));
        jsonw_key_bool(w, "recorded", v->recorded);
        if (v->st != SIM_OK) {
            char msg[sizeof v->err.msg + 600];
            sim_error_format(&v->err, msg, sizeof msg);
            jsonw_key_str(w, "error", msg);
        } else {
            jsonw_key_bool(w, "completed", v->completed);
            jsonw_key_u64(w, "ooms", v->ooms);
            jsonw_key_u64(w, "peak_reserved_bytes", v->peak_reserved_bytes);
            jsonw_key(w, "end_of_capture_reserved_bytes");
            if (v->reached_end_of_capture)
                jsonw_u64(w, v->end_of_capture_reserved_bytes);
            else
                jsonw_null(w);
            jsonw_key(w, "graph_pools_reserved_bytes");
            if (v->reached_end_of_capture)
                jsonw_u64(w, v->pools_reserved_bytes);
            else
                jsonw_null(w);
            jsonw_key(w, "first_oom");
            json_oom_or_null(v, w);
        }
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key(w, "best");
    if (g->best >= 0) {
        const graphs_variant *v = &g->variants[g->best];
        jsonw_object_inline(w);
        jsonw_key_str(w, "pools", sharing_word(v->sharing));
        jsonw_key_str(w, "capture_order", graphs_order_name(v->order));
        sim_buf s;
        sim_buf_init(&s);
        report_graphs_settings(g, &s);
        jsonw_key_str(w, "settings", s.data ? s.data : "");
        sim_buf_release(&s);
        jsonw_end(w);
    } else {
        jsonw_null(w);
    }
    jsonw_end(w);
}
