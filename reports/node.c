/* Text and JSON for a replay on a node (reports/node.h). */
#include "node.h"

#include <stdio.h>
#include <string.h>

#include "reports/result.h"
#include "sim/jsonw.h"
#include "sim/units.h"

static uint64_t left_of(const node_device_result *d, uint64_t used)
{
    return d->info.capacity_bytes > used ? d->info.capacity_bytes - used : 0;
}

/* The file a rank's trace comes from, without its directory. */
static const char *rank_file(const node_job *j, uint32_t r)
{
    const char *p = j->ranks[r].path ? j->ranks[r].path : "", *slash = strrchr(p, '/');
    return slash ? slash + 1 : p;
}

static void visible_list(const node_job *j, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t v = 0; v < j->n_visible && len < cap; v++) {
        int n = snprintf(buf + len, cap - len, "%s%u", v ? "," : "", j->visible[v]);
        len += n > 0 ? (size_t)n : 0;
    }
}

void report_node_text(const node_result *r, const node_job *jobs, uint32_t n_jobs, const char *strategy_name,
                      sim_buf *out)
{
    char a[32], b[32], c[32], d[32], vis[128];
    sim_buf_printf(out, "gpusim %s: node of %u GPUs, strategy %s\n", GPUSIM_VERSION, r->n, strategy_name);
    for (uint32_t j = 0; j < n_jobs; j++) {
        visible_list(&jobs[j], vis, sizeof vis);
        sim_buf_printf(out, "  %s: CUDA_VISIBLE_DEVICES=%s, %u trace%s (rank r on its r-th visible GPU)\n", jobs[j].name,
                       vis, jobs[j].n_ranks, jobs[j].n_ranks == 1 ? "" : "s");
    }
    sim_buf_puts(out, "\n  GPU  model         capacity    job     rank   held at peak  held at end  left for others  OOM\n");
    for (uint32_t i = 0; i < r->n; i++) {
        const node_device_result *dv = &r->dev[i];
        units_format_size(dv->info.capacity_bytes, a, sizeof a);
        units_format_size(left_of(dv, dv->final_used_bytes), d, sizeof d);
        if (dv->n_shares == 0) {
            sim_buf_printf(out, "  %-4u %-13s %10s  %-7s %-6s %12s %12s %16s  %s\n", i, dv->info.name, a, "-", "-",
                           "0 B", "0 B", d, "-");
            continue;
        }
        for (uint32_t s = 0; s < dv->n_shares; s++) {
            const node_share *sh = &dv->shares[s];
            char rank[16];
            if (sh->rank < 0)
                snprintf(rank, sizeof rank, "start");
            else
                snprintf(rank, sizeof rank, "%d", sh->rank);
            units_format_size(sh->peak_device_bytes, b, sizeof b);
            units_format_size(sh->final_device_bytes, c, sizeof c);
            if (s == 0)
                sim_buf_printf(out, "  %-4u %-13s %10s  ", i, dv->info.name, a);
            else
                sim_buf_printf(out, "  %-4s %-13s %10s  ", "", "", "");
            sim_buf_printf(out, "%-7s %-6s %12s %12s %16s  %s\n", jobs[sh->job].name, rank, b, c,
                           s + 1 == dv->n_shares ? d : "", sh->oom ? "yes" : "no");
        }
    }
    sim_buf_puts(out, "  (held = reserved + CUDA context; rank start: the framework took the GPU at start without "
                      "using it)\n");
}

void report_node_json(const node_result *r, const node_job *jobs, uint32_t n_jobs, const char *strategy_name,
                      sim_buf *out)
{
    char vis[128];
    jsonw w;
    jsonw_init_buf(&w, out, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "gpusim", GPUSIM_VERSION);
    jsonw_key_str(&w, "strategy", strategy_name);
    jsonw_key(&w, "jobs");
    jsonw_array_inline(&w);
    for (uint32_t j = 0; j < n_jobs; j++) {
        visible_list(&jobs[j], vis, sizeof vis);
        jsonw_object_inline(&w);
        jsonw_key_str(&w, "name", jobs[j].name);
        jsonw_key_str(&w, "visible", vis);
        jsonw_key_u64(&w, "ranks", jobs[j].n_ranks);
        jsonw_key(&w, "traces");
        jsonw_array_inline(&w);
        for (uint32_t k = 0; k < jobs[j].n_ranks; k++)
            jsonw_str(&w, rank_file(&jobs[j], k));
        jsonw_end(&w);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_key(&w, "devices");
    jsonw_array(&w);
    for (uint32_t i = 0; i < r->n; i++) {
        const node_device_result *dv = &r->dev[i];
        jsonw_object_inline(&w);
        jsonw_key_u64(&w, "gpu", i);
        jsonw_key_str(&w, "name", dv->info.name);
        jsonw_key_u64(&w, "capacity_bytes", dv->info.capacity_bytes);
        jsonw_key_u64(&w, "peak_used_bytes", dv->peak_used_bytes);
        jsonw_key_u64(&w, "final_used_bytes", dv->final_used_bytes);
        jsonw_key_u64(&w, "free_for_others_bytes", left_of(dv, dv->final_used_bytes));
        jsonw_key(&w, "shares");
        jsonw_array_inline(&w);
        for (uint32_t s = 0; s < dv->n_shares; s++) {
            const node_share *sh = &dv->shares[s];
            jsonw_object_inline(&w);
            jsonw_key_str(&w, "job", jobs[sh->job].name);
            jsonw_key(&w, "rank");
            jsonw_i64(&w, sh->rank);
            jsonw_key_u64(&w, "peak_device_bytes", sh->peak_device_bytes);
            jsonw_key_u64(&w, "final_device_bytes", sh->final_device_bytes);
            jsonw_key_bool(&w, "oom", sh->oom);
            jsonw_end(&w);
        }
        jsonw_end(&w);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(out, "\n");
}

void report_node_use(const node_device_result *d, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t len = 0;
    for (uint32_t k = 0; k < d->n_shares && len < cap; k++) {
        const node_share *sh = &d->shares[k];
        char job[40] = "";
        /* another job's process than the first's: jobs are named "job N" in their order */
        snprintf(job, sizeof job, "%s", k ? " + " : "");
        if (sh->job > 0)
            snprintf(job, sizeof job, "%sjob %u ", k ? " + " : "", sh->job + 1);
        int n = sh->rank < 0 ? snprintf(buf + len, cap - len, "%sstart", job)
                             : snprintf(buf + len, cap - len, "%srank %d", job, sh->rank);
        len += n > 0 ? (size_t)n : 0;
    }
}

bool report_node_oom(const node_device_result *d)
{
    for (uint32_t k = 0; k < d->n_shares; k++)
        if (d->shares[k].oom)
            return true;
    return false;
}

void report_jsonw_node_devices(const node_result *r, jsonw *w)
{
    jsonw_array_lines(w, 1);
    for (uint32_t i = 0; i < r->n; i++) {
        const node_device_result *dv = &r->dev[i];
        jsonw_object_inline(w);
        jsonw_key_u64(w, "gpu", i);
        jsonw_key_str(w, "name", dv->info.name);
        jsonw_key_u64(w, "capacity_bytes", dv->info.capacity_bytes);
        jsonw_key(w, "limit_bytes");
        if (dv->run != NULL)
            jsonw_u64(w, report_limit_bytes(dv->run));
        else
            jsonw_null(w);
        jsonw_key_u64(w, "peak_used_bytes", dv->peak_used_bytes);
        jsonw_key_u64(w, "final_used_bytes", dv->final_used_bytes);
        jsonw_key_u64(w, "headroom_bytes", node_device_headroom(dv));
        jsonw_key_bool(w, "oom", report_node_oom(dv));
        char use[192];
        report_node_use(dv, use, sizeof use);
        jsonw_key(w, "use");
        if (use[0])
            jsonw_str(w, use);
        else
            jsonw_null(w);
        jsonw_end(w);
    }
    jsonw_end(w);
}
