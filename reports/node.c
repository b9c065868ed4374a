/* Text and JSON for a replay on a node (reports/node.h). */
#include "node.h"

#include <inttypes.h>
#include <stdio.h>

#include "reports/result.h"
#include "sim/units.h"

static uint64_t left_of(const node_device_result *d, uint64_t used)
{
    return d->info.capacity_bytes > used ? d->info.capacity_bytes - used : 0;
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
    sim_buf_printf(out, "{\n  \"gpusim\": \"%s\",\n  \"strategy\": ", GPUSIM_VERSION);
    sim_buf_json_str(out, strategy_name);
    sim_buf_puts(out, ",\n  \"jobs\": [");
    for (uint32_t j = 0; j < n_jobs; j++) {
        visible_list(&jobs[j], vis, sizeof vis);
        sim_buf_printf(out, "%s{\"name\": ", j ? ", " : "");
        sim_buf_json_str(out, jobs[j].name);
        sim_buf_puts(out, ", \"visible\": ");
        sim_buf_json_str(out, vis);
        sim_buf_printf(out, ", \"ranks\": %u}", jobs[j].n_ranks);
    }
    sim_buf_puts(out, "],\n  \"devices\": [");
    for (uint32_t i = 0; i < r->n; i++) {
        const node_device_result *dv = &r->dev[i];
        sim_buf_printf(out, "%s\n    {\"gpu\": %u, \"name\": ", i ? "," : "", i);
        sim_buf_json_str(out, dv->info.name);
        sim_buf_printf(out,
                       ", \"capacity_bytes\": %" PRIu64 ", \"peak_used_bytes\": %" PRIu64 ", \"final_used_bytes\": %" PRIu64
                       ", \"free_for_others_bytes\": %" PRIu64 ", \"shares\": [",
                       dv->info.capacity_bytes, dv->peak_used_bytes, dv->final_used_bytes,
                       left_of(dv, dv->final_used_bytes));
        for (uint32_t s = 0; s < dv->n_shares; s++) {
            const node_share *sh = &dv->shares[s];
            sim_buf_printf(out, "%s{\"job\": ", s ? ", " : "");
            sim_buf_json_str(out, jobs[sh->job].name);
            sim_buf_printf(out,
                           ", \"rank\": %d, \"peak_device_bytes\": %" PRIu64 ", \"final_device_bytes\": %" PRIu64
                           ", \"oom\": %s}",
                           sh->rank, sh->peak_device_bytes, sh->final_device_bytes, sh->oom ? "true" : "false");
        }
        sim_buf_puts(out, "]}");
    }
    sim_buf_puts(out, "\n  ]\n}\n");
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

void report_node_devices_json(const node_result *r, bool compact, const char *indent, sim_buf *b)
{
    const char *sp = compact ? "" : " ";
    sim_buf_puts(b, "[");
    for (uint32_t i = 0; i < r->n; i++) {
        const node_device_result *dv = &r->dev[i];
        sim_buf_printf(b, "%s%s%s{\"gpu\":%s%u,%s\"name\":%s", i ? "," : "", compact ? "" : "\n", compact ? "" : indent,
                       sp, i, sp, sp);
        sim_buf_json_str(b, dv->info.name);
        sim_buf_printf(b, ",%s\"capacity_bytes\":%s%" PRIu64 ",%s\"limit_bytes\":%s", sp, sp, dv->info.capacity_bytes, sp,
                       sp);
        if (dv->run != NULL)
            sim_buf_printf(b, "%" PRIu64, report_limit_bytes(dv->run));
        else
            sim_buf_puts(b, "null");
        sim_buf_printf(b,
                       ",%s\"peak_used_bytes\":%s%" PRIu64 ",%s\"final_used_bytes\":%s%" PRIu64
                       ",%s\"headroom_bytes\":%s%" PRIu64 ",%s\"oom\":%s%s,%s\"use\":%s",
                       sp, sp, dv->peak_used_bytes, sp, sp, dv->final_used_bytes, sp, sp, node_device_headroom(dv), sp,
                       sp, report_node_oom(dv) ? "true" : "false", sp, sp);
        char use[192];
        report_node_use(dv, use, sizeof use);
        if (use[0])
            sim_buf_json_str(b, use);
        else
            sim_buf_puts(b, "null");
        sim_buf_puts(b, "}");
    }
    sim_buf_puts(b, "]");
}
