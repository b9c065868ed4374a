/* The HTML report's tables (html_tables.h): the summary of every run and the largest
 * live allocations at a moment, exact bytes beside the rounded sizes. */
#include "html_tables.h"

#include <stdio.h>
#include <string.h>

#include "html.h"
#include "sim/units.h"

static void td_size(sim_buf *b, const char *cls, uint64_t v)
{
    char s[32];
    sim_buf_printf(b, "<td class=\"%s\" title=\"%llu B\">%s</td>", cls, (unsigned long long)v,
                   units_format_size(v, s, sizeof s));
}

void html_summary_table(sim_buf *b, const capture *const *caps, uint32_t n)
{
    sim_buf_puts(b, "<table class=\"summary\"><thead><tr><th>strategy</th><th>peak requested</th>"
                    "<th>peak allocated</th><th>peak reserved</th><th>peak on the device</th>"
                    "<th>fragmentation at peak</th><th>max fragmentation</th><th>out of memory</th></tr></thead>"
                    "<tbody>\n");
    for (uint32_t i = 0; i < n; i++) {
        const sim_metrics *m = &caps[i]->run->total;
        sim_buf_puts(b, "<tr><td class=\"strategy\">");
        sim_buf_xml_escape(b, caps[i]->run->ops->name);
        sim_buf_puts(b, "</td>");
        td_size(b, "peak-requested", m->peak_requested_bytes);
        td_size(b, "peak-allocated", m->peak_allocated_bytes);
        td_size(b, "peak-reserved", m->peak_reserved_bytes);
        td_size(b, "peak-device", m->peak_device_bytes);
        sim_buf_printf(b, "<td>%.4f</td><td>%.4f</td>", m->fragmentation_at_peak, m->fragmentation_max);
        if (m->first_oom.happened)
            sim_buf_printf(b, "<td class=\"oom-cell\">event %llu (%s)</td>", (unsigned long long)m->first_oom.event,
                           sim_oom_cause_name(m->first_oom.cause));
        else
            sim_buf_puts(b, "<td>no</td>");
        sim_buf_puts(b, "</tr>\n");
    }
    sim_buf_puts(b, "</tbody></table>\n");
}

void html_top_table(sim_buf *b, const capture *c, const capture_view *v)
{
    char lb[32];
    sim_buf_printf(b, "<p>At event %llu (t = %llu ns), %llu allocations were live, %s in total",
                   (unsigned long long)v->event, (unsigned long long)v->t,
                   (unsigned long long)v->live_count, units_format_size(v->live_bytes, lb, sizeof lb));
    sim_buf_printf(b, "; the %u largest:</p>\n", v->n_top);
    if (v->n_top == 0)
        return;
    bool multi = c->run->n_sources > 1;
    sim_buf_printf(b, "<table class=\"top\"><thead><tr><th>#</th><th>size</th><th>bytes</th><th>id</th>"
                      "<th>tag</th><th>stream</th>%s</tr></thead><tbody>\n",
                   multi ? "<th>trace</th>" : "");
    for (uint32_t i = 0; i < v->n_top; i++) {
        const capture_alloc *a = &v->top[i];
        char s[32];
        sim_buf_printf(b, "<tr><td>%u</td><td>%s</td><td class=\"num\">%llu</td><td class=\"num\">%llu</td><td>", i + 1,
                       units_format_size(a->size, s, sizeof s), (unsigned long long)a->size,
                       (unsigned long long)a->id);
        sim_buf_xml_escape(b, a->tag[0] ? a->tag : "—");
        if (a->pending)
            sim_buf_puts(b, " <em>(freed, pending)</em>");
        sim_buf_printf(b, "</td><td class=\"num\">%u</td>", a->stream);
        if (multi) {
            sim_buf_puts(b, "<td class=\"trace\">");
            sim_buf_xml_escape(b, c->run->sources[a->source].path);
            sim_buf_puts(b, "</td>");
        }
        sim_buf_puts(b, "</tr>\n");
    }
    sim_buf_puts(b, "</tbody></table>\n");
}
