/* The HTML report (html.h): the page, its timelines and its side-by-side chart.
 * Every picture is SVG drawn here from capture data: the browser computes nothing,
 * and the page reads the same with scripts off (every hover text is an SVG <title>).
 * Sizes on the axes are binary (MiB, GiB) like the rest of gpusim; exact bytes are
 * in the tables. The memory map and the plan are html_map.c, the axes and the
 * palette html_draw.c, the style sheet and the script html_script.c. */
#include "html.h"

#include <stdio.h>
#include <string.h>

#include "answers/limit.h"
#include "html_draw.h"
#include "html_map.h"
#include "html_script.h"
#include "html_tables.h"
#include "reports/result.h"
#include "sim/gpu_context.h"
#include "sim/units.h"

#define HTML_MAX_LANES 8u /* processes past the eighth share lanes (p9 with p1) */

/* ---------------------------------------------------------------- curves */

typedef enum series { S_REQ, S_ALLOC, S_RES, S_FRAG } series;

static void bucket_range(const timeline_row *k, series s, double *lo, double *hi)
{
    switch (s) {
    case S_REQ: *lo = (double)k->requested_min; *hi = (double)k->requested; break;
    case S_ALLOC: *lo = (double)k->allocated_min; *hi = (double)k->allocated; break;
    case S_RES: *lo = (double)k->reserved_min; *hi = (double)k->reserved; break;
    case S_FRAG: *lo = k->fragmentation_min; *hi = k->fragmentation; break;
    }
}

static double bucket_x(const html_plot *p, const timeline_row *k)
{
    if (p->time)
        return html_px_x(p, (double)k->t);
    return html_px_x(p, (double)k->event + (double)(k->count - 1) / 2.0);
}

/* The min/max band of a series: along the maxima left to right, back along the
 * minima. One bucket per pixel column, so the band is the per-pixel range. */
static void band_of(sim_buf *b, const html_plot *p, const timeline *tl, series s, const char *cls, const char *color,
                    bool filled, const char *dash, double width)
{
    if (tl->n == 0)
        return;
    sim_buf_printf(b, "<path class=\"%s\" fill=\"%s\" stroke=\"%s\"", cls, filled ? color : "none", color);
    if (strcmp(dash, "none") != 0)
        sim_buf_printf(b, " stroke-dasharray=\"%s\"", dash);
    if (width > 0) /* inline: an attribute would lose to the style sheet's .series width */
        sim_buf_printf(b, " style=\"stroke-width:%.1fpx\"", width);
    sim_buf_puts(b, " d=\"");
    for (uint64_t i = 0; i < tl->n; i++) {
        double lo, hi;
        bucket_range(&tl->rows[i], s, &lo, &hi);
        sim_buf_printf(b, "%s%.1f %.1f", i ? "L" : "M", bucket_x(p, &tl->rows[i]), html_px_y(p, hi));
    }
    if (filled) {
        for (uint64_t i = tl->n; i-- > 0;) {
            double lo, hi;
            bucket_range(&tl->rows[i], s, &lo, &hi);
            sim_buf_printf(b, "L%.1f %.1f", bucket_x(p, &tl->rows[i]), html_px_y(p, lo));
        }
        sim_buf_puts(b, "Z");
    }
    sim_buf_puts(b, "\"/>\n");
}

static void band(sim_buf *b, const html_plot *p, const capture *c, series s, const char *cls, const char *color,
                 bool filled)
{
    band_of(b, p, &c->curve, s, cls, color, filled, "none", 0);
}

/* One lane of marks per process above the plot (one lane, unlabelled, for one
 * process): a tick in the lane, a dotted line down through the plot, the name
 * beside the tick when there is room. Marks past the axis are not drawn (events of
 * a process an OOM ended take no column). */
static uint32_t n_lanes(const capture *c)
{
    uint32_t n = c->run->n_procs;
    return n > 1 ? (n < HTML_MAX_LANES ? n : HTML_MAX_LANES) : 1;
}

static double plot_top(const capture *c)
{
    return TOP + (double)(n_lanes(c) - 1) * LANE_H;
}

/* The lanes' names, left of the plot (outside the zoom's clip). */
static void lane_labels(sim_buf *b, const html_plot *p, const capture *c)
{
    const uint32_t lanes = n_lanes(c);
    if (c->run->n_procs < 2)
        return;
    for (uint32_t l = 0; l < lanes; l++)
        sim_buf_printf(b,
                       "<text class=\"lane-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">p%u</text>\n",
                       PX0 - 6, p->y0 - (double)(lanes - l) * LANE_H + 10, html_process_color(l), l + 1);
}

static void marks(sim_buf *b, const html_plot *p, const capture *c)
{
    const uint32_t lanes = n_lanes(c);
    const bool multi = c->run->n_procs > 1;
    bool label = c->n_marks <= 24u * lanes;
    double label_end[HTML_MAX_LANES]; /* where each lane's last label ends */
    for (uint32_t l = 0; l < HTML_MAX_LANES; l++)
        label_end[l] = -1e9;
    for (uint32_t i = 0; i < c->n_marks; i++) {
        const capture_mark *m = &c->marks[i];
        uint64_t at = p->time ? m->t : m->event;
        if (at > p->xmax)
            continue;
        uint32_t lane = multi ? m->process % lanes : 0;
        double x = html_px_x(p, (double)at);
        double ly = multi ? p->y0 - (double)(lanes - lane) * LANE_H : p->y0 - 8 - LANE_H + 8;
        sim_buf_printf(b, "<g class=\"mark\" data-process=\"%u\"><title>", m->process);
        if (m->empty_cache) {
            sim_buf_puts(b, "empty_cache");
        } else {
            sim_buf_puts(b, "mark &quot;");
            sim_buf_xml_escape(b, m->name);
            sim_buf_puts(b, "&quot;");
        }
        if (multi) {
            sim_buf_puts(b, " of ");
            sim_buf_xml_escape(b, c->run->procs[m->process].name);
        }
        sim_buf_printf(b, " at event %llu, t = %llu ns</title>", (unsigned long long)m->event,
                       (unsigned long long)m->t);
        sim_buf_printf(b, "<line class=\"mark-tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"%s%s%s/>", x,
                       ly + 2, x, ly + LANE_H - 2, multi ? " stroke=\"" : "", multi ? html_process_color(lane) : "",
                       multi ? "\"" : "");
        sim_buf_printf(b, "<line class=\"mark-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, p->y0, x,
                       p->y0 + p->h);
        const char *name = m->empty_cache ? "empty_cache" : m->name;
        char shown[24];
        size_t len = strnlen(name, sizeof shown - 1);
        memcpy(shown, name, len);
        shown[len] = '\0';
        double w = 5.6 * (double)len + 3; /* about 5.6 px a character at 10 px */
        bool right = x + w > PX0 + PW;    /* near the right edge: the label goes left of the tick */
        double x0 = right ? x - w : x;
        if (label && x0 > label_end[lane] + 4) { /* a label needs room; the title keeps the name */
            label_end[lane] = x0 + w;
            sim_buf_printf(b, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">",
                           right ? x - 3 : x + 3, ly + LANE_H - 4, right ? "end" : "start");
            sim_buf_xml_escape(b, shown);
            sim_buf_puts(b, "</text>");
        }
        sim_buf_puts(b, "</g>\n");
    }
}

/* Hover targets: one transparent column per curve row, titled with its values (the
 * highest over the events it covers, as the bands' tops). */
static void columns(sim_buf *b, const html_plot *p, const timeline *tl)
{
    sim_buf_puts(b, "<g class=\"cols\">");
    for (uint64_t i = 0; i < tl->n; i++) {
        const timeline_row *r = &tl->rows[i];
        double x = bucket_x(p, r);
        double xl = i ? (bucket_x(p, &tl->rows[i - 1]) + x) / 2 : PX0;
        double xr = i + 1 < tl->n ? (bucket_x(p, &tl->rows[i + 1]) + x) / 2 : PX0 + PW;
        if (xr - xl < 0.2)
            continue;
        sim_buf_printf(b, "<rect class=\"col\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\"><title>", xl,
                       p->y0, xr - xl, p->h);
        if (r->count > 1)
            sim_buf_printf(b, "events %llu to %llu", (unsigned long long)r->event,
                           (unsigned long long)(r->event + r->count - 1));
        else
            sim_buf_printf(b, "event %llu", (unsigned long long)r->event);
        char q[32], a[32], v[32];
        sim_buf_printf(b, " (t = %llu ns): requested %s, allocated %s, reserved %s, fragmentation %.3f",
                       (unsigned long long)r->t, units_format_size(r->requested, q, sizeof q),
                       units_format_size(r->allocated, a, sizeof a), units_format_size(r->reserved, v, sizeof v),
                       r->fragmentation);
        sim_buf_puts(b, "</title></rect>");
    }
    sim_buf_puts(b, "</g>\n");
}

/* A zoomable plot: its data for the script, the clip, the group the brush scales. */
static void zoom_open(sim_buf *b, const html_plot *p, uint32_t id)
{
    sim_buf_printf(b,
                   "<defs><clipPath id=\"clip-%u\"><rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%.1f\"/></clipPath>"
                   "</defs>\n<g clip-path=\"url(#clip-%u)\"><g class=\"zoom\">\n",
                   id, PX0, PW, p->y0 + p->h, id);
}

static void zoom_close(sim_buf *b, const html_plot *p)
{
    sim_buf_printf(b,
                   "</g></g>\n<rect class=\"brush\" x=\"%.1f\" y=\"%.1f\" width=\"0\" height=\"%.1f\"/>\n"
                   "<text class=\"zoom-note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"></text>\n",
                   PX0, p->y0, p->h, PX0 + PW, p->y0 + p->h + 32);
}

/* The svg element of a zoomable chart: its plot's geometry and axis range as data. */
static void svg_zoomable(sim_buf *b, const html_plot *p, double h, const char *cls, const char *label)
{
    sim_buf_printf(
        b,
        "<svg class=\"%s\" data-zoom=\"x\" data-x0=\"%.0f\" data-pw=\"%.0f\" data-xmin=\"%u\" data-xmax=\"%llu\" "
        "data-unit=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
        "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"",
        cls, PX0, PW, p->time ? 0u : 1u, (unsigned long long)p->xmax, p->time ? "t (ns)" : "events", PAGE_W, h, PAGE_W,
        h);
    sim_buf_xml_escape(b, label);
    sim_buf_puts(b, "\">\n");
}

static void capacity_line(sim_buf *b, const html_plot *p, uint64_t capacity)
{
    char s[32];
    html_size_label(capacity, s, sizeof s);
    if (capacity > p->ymax) {
        sim_buf_printf(b, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">device capacity %s "
                          "(above this scale)</text>\n",
                       PX0 + PW, p->y0 + 12, s);
        return;
    }
    double y = html_px_y(p, (double)capacity);
    sim_buf_printf(b, "<line class=\"capacity\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", PX0, y, PX0 + PW, y);
    sim_buf_printf(b, "<text class=\"capacity-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">device capacity %s</text>\n",
                   PX0 + PW - 4, y - 4, s);
}

static void oom_marker(sim_buf *b, const html_plot *p, const capture *c)
{
    if (c->oom_event == 0)
        return;
    const sim_oom_record *o = &c->run->total.first_oom;
    double x = html_px_x(p, p->time ? (double)o->t : (double)c->oom_event);
    sim_buf_printf(b, "<g class=\"oom\"><title>");
    sim_buf msg;
    sim_buf_init(&msg);
    report_oom_sentence(c->run, o, &msg);
    sim_buf_xml_escape(b, msg.data ? msg.data : "");
    sim_buf_release(&msg);
    sim_buf_printf(b, "</title><line class=\"oom-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, p->y0, x,
                   p->y0 + p->h);
    bool right = x > PX0 + PW - 140; /* near the right edge: the label goes left of the line */
    sim_buf_printf(b, "<text class=\"oom-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">OOM (%s)</text></g>\n",
                   right ? x - 4 : x + 3, p->y0 + 40, right ? "end" : "start", sim_oom_cause_name(o->cause));
}

/* The y range of memory plots: the highest curve, plus the capacity when it is
 * not far above (a 40 GiB line over a 2 GiB curve would flatten the curve). */
static uint64_t mem_ymax(const capture *const *caps, uint32_t n, uint64_t capacity)
{
    uint64_t top = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint64_t k = 0; k < caps[i]->curve.n; k++)
            if (caps[i]->curve.rows[k].reserved > top)
                top = caps[i]->curve.rows[k].reserved;
    if (capacity <= 2 * top)
        top = capacity > top ? capacity : top;
    top += top / 16;
    return top ? top : MiB;
}

static void chart_memory(sim_buf *b, const capture *c, uint32_t id, uint64_t xmax, uint64_t ymax, bool time)
{
    device_info d = device_get_info(c->run->dev);
    html_plot p = {plot_top(c), MEM_H, xmax, ymax, time};
    /* the legend: the three series, then one line per process (p1, p2, ...) */
    const char *names[3 + HTML_MAX_LANES] = {"reserved", "allocated", "requested"};
    const char *colors[3 + HTML_MAX_LANES] = {COLOR_RESERVED, COLOR_ALLOCATED, COLOR_REQUESTED};
    char pnb[HTML_MAX_LANES][24];
    uint32_t np = c->n_proc_curves < HTML_MAX_LANES ? c->n_proc_curves : HTML_MAX_LANES;
    for (uint32_t i = 0; i < np; i++) {
        snprintf(pnb[i], sizeof pnb[i], "p%u reserved", i + 1);
        names[3 + i] = pnb[i];
        colors[3 + i] = html_process_color(i);
    }
    double lh = html_legend_height(PX0, names, 3 + np);
    svg_zoomable(b, &p, p.y0 + MEM_H + 62 + lh, "timeline", "memory over time");
    html_y_axis_bytes(b, &p);
    zoom_open(b, &p, id);
    band(b, &p, c, S_RES, "series reserved", COLOR_RESERVED, true);
    band(b, &p, c, S_ALLOC, "series allocated", COLOR_ALLOCATED, true);
    band(b, &p, c, S_REQ, "series requested", COLOR_REQUESTED, true);
    for (uint32_t i = 0; i < c->n_proc_curves; i++)
        band_of(b, &p, &c->proc_curves[i], S_RES, "series process-reserved", html_process_color(i), false,
                html_category_dash(i), 0);
    columns(b, &p, &c->curve);
    marks(b, &p, c);
    oom_marker(b, &p, c);
    zoom_close(b, &p);
    lane_labels(b, &p, c);
    capacity_line(b, &p, d.capacity_bytes);
    html_x_axis(b, &p);
    html_axis_titles(b, &p, "memory");
    html_legend(b, PX0, p.y0 + MEM_H + 56, names, colors, 3 + np);
    sim_buf_puts(b, "</svg>\n");
    if (c->n_proc_curves > 0) {
        sim_buf_puts(b, "<p class=\"note procs\">");
        for (uint32_t i = 0; i < c->n_proc_curves && i < c->run->n_procs; i++) {
            sim_buf_printf(b, "%sp%u = ", i ? "; " : "", i + 1);
            sim_buf_xml_escape(b, c->run->procs[i].name);
        }
        sim_buf_puts(b, "</p>\n");
    }
}

static void chart_fragmentation(sim_buf *b, const capture *c, uint32_t id, uint64_t xmax, bool time)
{
    html_plot p = {12, FRAG_H, xmax, 0, time};
    svg_zoomable(b, &p, 12 + FRAG_H + 44, "fragmentation", "fragmentation over time");
    html_y_axis_ratio(b, &p);
    zoom_open(b, &p, id);
    band(b, &p, c, S_FRAG, "series fragmentation", COLOR_FRAGMENTATION, true);
    zoom_close(b, &p);
    html_x_axis(b, &p);
    html_axis_titles(b, &p, "fragmentation");
    sim_buf_puts(b, "</svg>\n");
}

#define OVERLAY_MAX 64u

/* The stroke width of the i-th of n curves side by side: 1.2 px for the last, 0.8 px
 * more for each one drawn before it (at most 12 steps), so every curve under another
 * shows on both sides of it. */
static double overlay_width(uint32_t i, uint32_t n)
{
    uint32_t above = n - 1 - i;
    return 1.2 + 0.8 * (double)(above < 12 ? above : 12);
}

/* Every strategy's first OOM on the side-by-side chart: a line in its colour and its
 * name, each label on a row of its own (rows of 14 px down from the top, none on the
 * capacity label's), so that labels of nearby OOMs never overlap; the title is the
 * OOM's sentence. */
static void overlay_ooms(sim_buf *b, const html_plot *p, const capture *const *caps, uint32_t n, uint64_t capacity)
{
    /* the row of the capacity's label (capacity_line), which no OOM label takes */
    double cap_y = capacity > p->ymax ? p->y0 + 12 : html_px_y(p, (double)capacity) - 4;
    double y = p->y0;
    for (uint32_t i = 0; i < n; i++) {
        const capture *c = caps[i];
        if (c->oom_event == 0)
            continue;
        const sim_oom_record *o = &c->run->total.first_oom;
        double x = html_px_x(p, p->time ? (double)o->t : (double)c->oom_event);
        do /* the next row, past the capacity's; back to the top below the plot's middle */
            y = y + 14 > p->y0 + p->h / 2 ? p->y0 + 14 : y + 14;
        while (y > cap_y - 14 && y < cap_y + 14);
        const char *color = html_strategy_color(i);
        sim_buf_puts(b, "<g class=\"oom strategy-oom\"><title>");
        sim_buf_xml_escape(b, c->run->ops->name);
        sim_buf_puts(b, ": ");
        sim_buf msg;
        sim_buf_init(&msg);
        report_oom_sentence(c->run, o, &msg);
        sim_buf_xml_escape(b, msg.data ? msg.data : "");
        sim_buf_release(&msg);
        sim_buf_printf(b,
                       "</title><line class=\"oom-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "style=\"stroke:%s\" stroke-dasharray=\"4 2\"/>",
                       x, p->y0, x, p->y0 + p->h, color);
        bool right = x > PX0 + PW - 160; /* near the right edge: the label goes left of the line */
        sim_buf_printf(b, "<text class=\"oom-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" style=\"fill:%s\">OOM ",
                       right ? x - 4 : x + 3, y, right ? "end" : "start", color);
        sim_buf_xml_escape(b, c->run->ops->name);
        sim_buf_printf(b, " (%s)</text></g>\n", sim_oom_cause_name(o->cause));
    }
}

static void chart_overlay(sim_buf *b, const capture *const *caps, uint32_t n, uint64_t xmax, uint64_t ymax, bool time)
{
    device_info d = device_get_info(caps[0]->run->dev);
    html_plot p = {plot_top(caps[0]), MEM_H, xmax, ymax, time};
    const char *names[OVERLAY_MAX + 1];
    const char *colors[OVERLAY_MAX + 1];
    names[0] = "requested";
    colors[0] = COLOR_REQUESTED;
    uint32_t nl = n < OVERLAY_MAX ? n : OVERLAY_MAX;
    for (uint32_t i = 0; i < nl; i++) {
        names[i + 1] = caps[i]->run->ops->name;
        colors[i + 1] = html_strategy_color(i);
    }
    double lh = html_legend_height(PX0, names, nl + 1);
    svg_zoomable(b, &p, p.y0 + MEM_H + 62 + lh, "overlay", "reserved memory of every strategy");
    html_y_axis_bytes(b, &p);
    zoom_open(b, &p, 0);
    band(b, &p, caps[0], S_REQ, "series requested", COLOR_REQUESTED, true);
    /* where curves coincide (two strategies reserving alike), each stays visible: the
     * first is drawn widest and every later one narrower on top of it, so coinciding
     * curves show as nested stripes of their colours */
    for (uint32_t i = 0; i < n; i++) {
        char cls[96];
        snprintf(cls, sizeof cls, "series reserved strategy-%s", caps[i]->run->ops->name);
        band_of(b, &p, &caps[i]->curve, S_RES, cls, html_strategy_color(i), false, html_category_dash(i),
                overlay_width(i, n));
    }
    marks(b, &p, caps[0]);
    overlay_ooms(b, &p, caps, n, d.capacity_bytes);
    zoom_close(b, &p);
    lane_labels(b, &p, caps[0]);
    capacity_line(b, &p, d.capacity_bytes);
    html_x_axis(b, &p);
    html_axis_titles(b, &p, "reserved");
    html_legend(b, PX0, p.y0 + MEM_H + 56, names, colors, nl + 1);
    sim_buf_puts(b, "</svg>\n");
}

/* ---------------------------------------------------------------- page */

/* One what-if answer as a sentence (nothing when none was asked). */
static void what_if(sim_buf *b, const whatif *w)
{
    if (w == NULL || !w->present)
        return;
    sim_buf wt;
    sim_buf_init(&wt);
    report_whatif_sentence(w, &wt);
    sim_buf_printf(b, "<p class=\"what-if%s\">", w->completed ? " what-if-fixes" : "");
    sim_buf_xml_escape(b, wt.data ? wt.data : "");
    sim_buf_puts(b, "</p>\n");
    sim_buf_release(&wt);
}

void report_html(const capture *const *caps, uint32_t n, sim_buf *b)
{
    report_html_opts o = {NULL, false, NULL, 0};
    report_html_with(caps, n, &o, b);
}

void report_html_with(const capture *const *caps, uint32_t n, const report_html_opts *ro, sim_buf *b)
{
    if (n == 0)
        return;
    const whatif *w = ro->whatif;
    const bool xt = ro->x_time;
    const sim_run *r0 = caps[0]->run;
    const sim_run_source *s0 = &r0->sources[0];
    device_info d = device_get_info(r0->dev);
    /* the title names every trace (several traces are several processes) */
    sim_buf title;
    sim_buf_init(&title);
    for (uint32_t i = 0; i < r0->n_sources; i++) {
        const sim_run_source *s = &r0->sources[i];
        sim_buf_printf(&title, "%s%s", i ? " + " : "", s->name[0] ? s->name : s->path);
    }
    (void)s0;
    sim_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>gpusim report: ");
    sim_buf_xml_escape(b, title.data ? title.data : "");
    sim_buf_printf(b, "</title>\n<style>\n%s</style>\n</head><body>\n<h1>gpusim report: ", html_css);
    sim_buf_xml_escape(b, title.data ? title.data : "");
    sim_buf_puts(b, "</h1>\n");
    sim_buf_release(&title);
    for (uint32_t i = 0; i < r0->n_sources; i++) {
        const sim_run_source *s = &r0->sources[i];
        sim_buf_puts(b, "<p class=\"meta\">trace <code>");
        sim_buf_xml_escape(b, s->path);
        sim_buf_printf(b, "</code>: %llu events (%llu allocs, %llu frees, %llu marks)</p>\n",
                       (unsigned long long)s->events, (unsigned long long)s->allocs, (unsigned long long)s->frees,
                       (unsigned long long)s->marks);
    }
    for (uint32_t i = 0; i < n; i++) { /* the strategies that did not model the trace's pools */
        uint64_t ignored = report_pool_events_ignored(caps[i]->run);
        char note[512];
        if (ignored == 0)
            continue;
        sim_buf_puts(b, "<p class=\"meta\">pools: ");
        sim_buf_xml_escape(b, report_no_pools_text(caps[i]->run, note, sizeof note));
        sim_buf_printf(b, " (%llu pool event%s)</p>\n", (unsigned long long)ignored, ignored == 1 ? "" : "s");
    }
    char cap[32], ctx[32];
    sim_buf_puts(b, "<p class=\"meta\">device ");
    sim_buf_xml_escape(b, d.name);
    sim_buf_printf(b, ": capacity %s (%llu B), context %s per process; gpusim %s</p>\n",
                   units_format_size(d.capacity_bytes, cap, sizeof cap), (unsigned long long)d.capacity_bytes,
                   units_format_size(d.context_bytes, ctx, sizeof ctx), GPUSIM_VERSION);
    if (d.context_default) {
        char why[256];
        sim_buf_printf(b, "<p class=\"meta\">context: %s</p>\n",
                       gpu_context_describe(d.context_default, d.cc_major, why, sizeof why));
    }
    if (d.nccl_bytes) {
        char nc[32];
        sim_buf_printf(b, "<p class=\"meta\">NCCL buffers %s of the context, from %s</p>\n",
                       units_format_size(d.nccl_bytes, nc, sizeof nc),
                       d.nccl_given ? "--nccl" : "the trace header (meta.nccl_bytes)");
    }
    html_summary_table(b, caps, n);

    uint64_t xmax = 1;
    for (uint32_t i = 0; i < n; i++) {
        /* the axis: the longest replay's events, or its last time (--x=time) */
        const timeline *tl = &caps[i]->curve;
        uint64_t last = xt ? (tl->n ? tl->rows[tl->n - 1].t : 0) : caps[i]->events;
        if (last > xmax)
            xmax = last;
    }
    sim_buf_puts(b, "<p class=\"note\">Curves: per pixel column, the band spans the lowest and highest value over "
                    "the events it covers. Requested = live bytes the program asked for; allocated = blocks handed "
                    "out (rounding and unsplit slack included); reserved = memory held from the device. With scripts on, "
                    "the pointer over a column, a block or a mark shows its numbers (the highest of a column's "
                    "events), and dragging across a timeline zooms into those events (double-click: back).</p>\n");
    if (n > 1) {
        sim_buf_puts(b, "<h2 id=\"side-by-side\">Strategies side by side</h2>\n");
        chart_overlay(b, caps, n, xmax, mem_ymax(caps, n, d.capacity_bytes), xt);
    }
    for (uint32_t i = 0; i < n; i++) {
        const capture *c = caps[i];
        const char *name = c->run->ops->name;
        sim_buf_puts(b, "<section class=\"strategy-section\" id=\"strategy-");
        sim_buf_xml_escape(b, name);
        sim_buf_puts(b, "\">\n<h2>");
        sim_buf_xml_escape(b, name);
        char pk[32];
        sim_buf_printf(b, ": peak reserved <span class=\"peak-value\">%s</span> (%llu B)</h2>\n",
                       units_format_size(c->run->total.peak_reserved_bytes, pk, sizeof pk),
                       (unsigned long long)c->run->total.peak_reserved_bytes);
        /* what was replayed: the effective options and the limit they give (a fraction,
         * --limit or a preset, not the raw capacity) */
        sim_buf opts;
        sim_buf_init(&opts);
        report_json_options(c->run, &opts);
        char lim[32], src[256];
        uint64_t lb = limit_find(c->run, src, sizeof src);
        sim_buf_puts(b, "<p class=\"meta settings\">settings <code>");
        sim_buf_xml_escape(b, opts.data ? opts.data : "{}");
        sim_buf_printf(b, "</code>; effective allocator limit <span class=\"limit-value\">%s</span> (%llu B, ",
                       units_format_size(lb, lim, sizeof lim), (unsigned long long)lb);
        sim_buf_xml_escape(b, src);
        sim_buf_puts(b, ")</p>\n");
        sim_buf_release(&opts);
        if (c->run->total.first_oom.happened) {
            sim_buf_puts(b, "<p class=\"oom-cell\">");
            sim_buf msg;
            sim_buf_init(&msg);
            report_oom_sentence(c->run, &c->run->total.first_oom, &msg);
            sim_buf_xml_escape(b, msg.data ? msg.data : "");
            sim_buf_release(&msg);
            sim_buf_puts(b, "</p>\n");
            /* the allocator's own words, as the framework raises them (PyTorch's
             * "CUDA out of memory. Tried to allocate ...") */
            const char *own = c->run->total.first_oom.info.detail;
            if (own[0]) {
                sim_buf_puts(b, "<p class=\"meta allocator-oom\">the allocator's own message: <code>");
                sim_buf_xml_escape(b, own);
                sim_buf_puts(b, "</code></p>\n");
            }
        }
        if (i == 0) {
            what_if(b, w);
            for (uint32_t k = 0; k < ro->n_alts; k++)
                what_if(b, &ro->alts[k]);
        }
        sim_buf_puts(b, "<h3>Memory over time</h3>\n");
        chart_memory(b, c, 2 * i + 1, xmax, mem_ymax(&caps[i], 1, d.capacity_bytes), xt);
        sim_buf_puts(b, "<h3>Fragmentation over time</h3>\n<p class=\"note\">1 − largest free block / free bytes "
                        "inside reserved memory (TensorFlow's metric).</p>\n");
        chart_fragmentation(b, c, 2 * i + 2, xmax, xt);
        capture_view pv = capture_peak_view(c);
        if (c->has_oom_view) {
            /* an OOM is the moment that matters: its map and live allocations come first */
            char rq[32];
            sim_buf_printf(b, "<section class=\"at-oom\">\n<h3>Memory map at the OOM (event %llu)</h3>\n"
                              "<p class=\"note\">The allocator as the failing request of %s found it: the first "
                              "two bars are the request and the largest free piece, to the scale of the regions "
                              "below.</p>\n",
                           (unsigned long long)c->run->total.first_oom.event,
                           units_format_size(c->oom_view.request, rq, sizeof rq));
            html_memory_map(b, c, &c->oom_view);
            sim_buf_puts(b, "<h3>Largest live allocations at the OOM</h3>\n");
            html_top_table(b, c, &c->oom_view);
            sim_buf_puts(b, "</section>\n<section class=\"at-peak\">\n");
        }
        sim_buf_puts(b, "<h3>Memory map at the peak</h3>\n<p class=\"note\">Each bar is one region or segment "
                        "held from the device, drawn to scale, blocks in address order.</p>\n");
        html_memory_map(b, c, &pv);
        if (c->n_rects > 0) {
            sim_buf_puts(b, "<h3>Planned arena: offset × time</h3>\n");
            html_plan_map(b, c);
        }
        sim_buf_puts(b, "<h3>Largest live allocations at the peak</h3>\n");
        html_top_table(b, c, &pv);
        if (c->has_oom_view)
            sim_buf_puts(b, "</section>\n");
        sim_buf_puts(b, "</section>\n");
    }
    sim_buf_printf(b, "<script>\n%s</script>\n</body></html>\n", html_js);
}
