/* The HTML report (html.h). Every picture is SVG drawn here from capture data:
 * nothing is computed in the browser. Sizes on the axes are binary (MiB, GiB) like
 * the rest of gpusim; exact bytes are in the tables. */
#include "html.h"

#include <stdio.h>
#include <string.h>

#include "html_tables.h"
#include "reports/result.h"
#include "sim/units.h"

/* ---------------------------------------------------------------- geometry */

#define PAGE_W 960.0
#define PX0 88.0                       /* left edge of every plot */
#define PW ((double)HTML_PLOT_WIDTH)   /* plot width */
#define MEM_H 230.0
#define FRAG_H 110.0
#define TOP 30.0                       /* room for marks and the legend */

/* one line per process: dark tones unlike the series' own colours */
#define N_PROC_COLORS 6u
static const char *const PROC_COLORS[N_PROC_COLORS] = {"#6a3d9a", "#b15928", "#1f78b4", "#33a02c", "#e31a1c", "#000000"};
static const char *const STRAT_COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                           "#8c564b", "#e377c2", "#17becf", "#bcbd22"};
#define N_STRAT_COLORS (sizeof STRAT_COLORS / sizeof STRAT_COLORS[0])

/* ---------------------------------------------------------------- text helpers */

void html_escape(sim_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': sim_buf_puts(b, "&amp;"); break;
        case '<': sim_buf_puts(b, "&lt;"); break;
        case '>': sim_buf_puts(b, "&gt;"); break;
        case '"': sim_buf_puts(b, "&quot;"); break;
        case '\'': sim_buf_puts(b, "&#39;"); break;
        default:
            if ((unsigned char)*s >= 0x80) {
                size_t n = sim_utf8_len(s);
                if (n == 0) {
                    sim_buf_puts(b, "&#xFFFD;"); /* not UTF-8: the page stays valid */
                } else {
                    sim_buf_put(b, s, n);
                    s += n - 1;
                }
            } else {
                sim_buf_put(b, s, 1);
            }
        }
    }
}

/* Axis labels: "0", "512 MiB", "1.5 GiB" (trailing zeros dropped). */
static void short_size(uint64_t v, char *buf, size_t cap)
{
    const char *unit = "B";
    double x = (double)v;
    if (v >= GiB) {
        unit = "GiB";
        x /= (double)GiB;
    } else if (v >= MiB) {
        unit = "MiB";
        x /= (double)MiB;
    } else if (v >= KiB) {
        unit = "KiB";
        x /= (double)KiB;
    }
    if (v == 0) {
        snprintf(buf, cap, "0");
        return;
    }
    snprintf(buf, cap, "%.2f", x);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *e = buf + strlen(buf) - 1;
        while (e > dot && *e == '0')
            *e-- = '\0';
        if (e == dot)
            *e = '\0';
    }
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, " %s", unit);
}

static void short_count(uint64_t v, char *buf, size_t cap)
{
    if (v >= 1000000 && v % 100000 == 0)
        snprintf(buf, cap, v % 1000000 ? "%.1fM" : "%.0fM", (double)v / 1e6);
    else if (v >= 1000 && v % 100 == 0)
        snprintf(buf, cap, v % 1000 ? "%.1fk" : "%.0fk", (double)v / 1e3);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)v);
}

/* A power-of-two byte step giving at most 6 intervals up to ymax. */
static uint64_t size_step(uint64_t ymax)
{
    uint64_t step = 1;
    while (step < ((uint64_t)1 << 62) && ymax / step > 6)
        step *= 2;
    return step;
}

/* A 1-2-5 decimal step giving at most 8 intervals up to xmax. */
static uint64_t count_step(uint64_t xmax)
{
    uint64_t base = 1;
    for (;;) {
        if (xmax / base <= 8)
            return base;
        if (xmax / (2 * base) <= 8)
            return 2 * base;
        if (xmax / (5 * base) <= 8)
            return 5 * base;
        base *= 10;
    }
}

/* ---------------------------------------------------------------- plot frame */

typedef struct plot {
    double y0, h;          /* top of the plot area and its height */
    uint64_t xmax;         /* events on the axis (time: ns) */
    uint64_t ymax;         /* bytes at the top (0: a 0..1 ratio plot) */
    bool time;             /* x is the trace's time from 0 (--x=time), else events from 1 */
} plot;

static double px_x(const plot *p, double event)
{
    if (p->time)
        return PX0 + event / (double)(p->xmax ? p->xmax : 1) * PW;
    double span = p->xmax > 1 ? (double)(p->xmax - 1) : 1.0;
    return PX0 + (event - 1.0) / span * PW;
}

static double px_y(const plot *p, double v)
{
    double top = p->ymax ? (double)p->ymax : 1.0;
    double y = p->y0 + p->h - v / top * p->h;
    return y < p->y0 ? p->y0 : y;
}

/* Time tick labels: "0", "250 ms", "1.5 s", "2 min". */
static void short_time(uint64_t ns, char *buf, size_t cap)
{
    if (ns == 0)
        snprintf(buf, cap, "0");
    else if (ns < 1000000)
        snprintf(buf, cap, "%.3g us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, cap, "%.3g ms", (double)ns / 1e6);
    else if (ns < (uint64_t)120 * 1000000000)
        snprintf(buf, cap, "%.3g s", (double)ns / 1e9);
    else
        snprintf(buf, cap, "%.3g min", (double)ns / 6e10);
}

static void x_axis(sim_buf *b, const plot *p)
{
    double yb = p->y0 + p->h;
    sim_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0, yb, PX0 + PW, yb);
    uint64_t step = count_step(p->xmax);
    if (p->time) {
        for (uint64_t v = 0; step && v <= p->xmax; v += step) {
            double x = px_x(p, (double)v);
            char s[32];
            short_time(v, s, sizeof s);
            sim_buf_printf(b, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, yb, x,
                           yb + 4);
            sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                           x, yb + 16, s);
        }
        return;
    }
    for (uint64_t v = 0; v <= p->xmax; v += step) {
        double x = px_x(p, v ? (double)v : 1.0);
        char s[32];
        short_count(v ? v : 1, s, sizeof s);
        sim_buf_printf(b, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, yb, x, yb + 4);
        sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                       yb + 16, s);
    }
}

static void y_axis_bytes(sim_buf *b, const plot *p)
{
    sim_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0, p->y0, PX0,
                   p->y0 + p->h);
    uint64_t step = size_step(p->ymax);
    for (uint64_t v = 0; v <= p->ymax; v += step) {
        double y = px_y(p, (double)v);
        char s[32];
        short_size(v, s, sizeof s);
        sim_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", PX0, y, PX0 + PW, y);
        sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PX0 - 6,
                       y + 4, s);
        if (v > UINT64_MAX - step)
            break;
    }
}

static void y_axis_ratio(sim_buf *b, const plot *p)
{
    sim_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0, p->y0, PX0,
                   p->y0 + p->h);
    for (int pct = 0; pct <= 100; pct += 25) {
        double y = p->y0 + p->h - (double)pct / 100.0 * p->h;
        sim_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", PX0, y, PX0 + PW, y);
        sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>\n",
                       PX0 - 6, y + 4, pct);
    }
}

static void axis_titles(sim_buf *b, const plot *p, const char *ytitle)
{
    double ym = p->y0 + p->h / 2;
    sim_buf_printf(b,
                   "<text class=\"axis-label\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
                   "text-anchor=\"middle\">%s</text>\n",
                   ym, ym, ytitle);
    sim_buf_printf(b, "<text class=\"axis-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                   PX0 + PW / 2, p->y0 + p->h + 32, p->time ? "time" : "event");
}

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

static double bucket_x(const plot *p, const timeline_row *k)
{
    if (p->time)
        return px_x(p, (double)k->t);
    return px_x(p, (double)k->event + (double)(k->count - 1) / 2.0);
}

/* The min/max band of a series: along the maxima left to right, back along the
 * minima. One bucket per pixel column, so the band is the per-pixel range. */
static void band_of(sim_buf *b, const plot *p, const timeline *tl, series s, const char *cls, const char *color,
                    bool filled)
{
    if (tl->n == 0)
        return;
    sim_buf_printf(b, "<path class=\"%s\" fill=\"%s\" stroke=\"%s\" d=\"", cls, filled ? color : "none", color);
    for (uint64_t i = 0; i < tl->n; i++) {
        double lo, hi;
        bucket_range(&tl->rows[i], s, &lo, &hi);
        sim_buf_printf(b, "%s%.1f %.1f", i ? "L" : "M", bucket_x(p, &tl->rows[i]), px_y(p, hi));
    }
    if (filled) {
        for (uint64_t i = tl->n; i-- > 0;) {
            double lo, hi;
            bucket_range(&tl->rows[i], s, &lo, &hi);
            sim_buf_printf(b, "L%.1f %.1f", bucket_x(p, &tl->rows[i]), px_y(p, lo));
        }
        sim_buf_puts(b, "Z");
    }
    sim_buf_puts(b, "\"/>\n");
}

static void band(sim_buf *b, const plot *p, const capture *c, series s, const char *cls, const char *color,
                 bool filled)
{
    band_of(b, p, &c->curve, s, cls, color, filled);
}

static void legend(sim_buf *b, double x, double y, const char *const *names, const char *const *colors, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* outlined, so a white swatch (unmapped) shows on the white page */
        sim_buf_printf(b, "<rect class=\"swatch\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\" "
                          "stroke=\"#777\" stroke-width=\"0.8\"/>",
                       x, y - 9, colors[i]);
        sim_buf_printf(b, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", x + 14, y);
        html_escape(b, names[i]);
        sim_buf_puts(b, "</text>\n");
        x += 14 + 7.0 * (double)strlen(names[i]) + 16;
    }
}

static void marks(sim_buf *b, const plot *p, const sim_run *run)
{
    bool label = run->n_marks <= 24;
    double last_label = -1e9;
    for (uint32_t i = 0; i < run->n_marks; i++) {
        const sim_run_mark *m = &run->marks[i];
        uint64_t at = p->time ? m->t : m->event;
        if (at > p->xmax)
            continue; /* numbered past the axis (events of a process an OOM ended): not drawn outside it */
        double x = px_x(p, (double)at);
        sim_buf_printf(b, "<g class=\"mark\"><title>mark &quot;");
        html_escape(b, m->name);
        sim_buf_printf(b, "&quot; at event %llu, t = %llu ns</title>", (unsigned long long)m->event,
                       (unsigned long long)m->t);
        sim_buf_printf(b, "<line class=\"mark-tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, p->y0 - 8,
                       x, p->y0 + p->h);
        if (label && x - last_label >= 64) { /* a label needs room; the tick's title keeps the name */
            last_label = x;
            char name[24];
            size_t len = strnlen(m->name, sizeof name - 1);
            memcpy(name, m->name, len);
            name[len] = '\0';
            sim_buf_printf(b, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\">", x + 2, p->y0 - 10);
            html_escape(b, name);
            sim_buf_puts(b, "</text>");
        }
        sim_buf_puts(b, "</g>\n");
    }
}

static void capacity_line(sim_buf *b, const plot *p, uint64_t capacity)
{
    char s[32];
    short_size(capacity, s, sizeof s);
    if (capacity > p->ymax) {
        sim_buf_printf(b, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">device capacity %s "
                          "(above this scale)</text>\n",
                       PX0 + PW, p->y0 + 12, s);
        return;
    }
    double y = px_y(p, (double)capacity);
    sim_buf_printf(b, "<line class=\"capacity\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", PX0, y, PX0 + PW, y);
    sim_buf_printf(b, "<text class=\"capacity-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">device capacity %s</text>\n",
                   PX0 + PW - 4, y - 4, s);
}

static void oom_marker(sim_buf *b, const plot *p, const capture *c)
{
    if (c->oom_event == 0)
        return;
    const sim_oom_record *o = &c->run->total.first_oom;
    double x = px_x(p, p->time ? (double)o->t : (double)c->oom_event);
    sim_buf_printf(b, "<g class=\"oom\"><title>");
    sim_buf msg;
    sim_buf_init(&msg);
    report_oom_sentence(c->run, o, &msg);
    html_escape(b, msg.data ? msg.data : "");
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

static void svg_open(sim_buf *b, double h, const char *cls, const char *label)
{
    sim_buf_printf(b,
                   "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"",
                   cls, PAGE_W, h, PAGE_W, h);
    html_escape(b, label);
    sim_buf_puts(b, "\">\n");
}

static void chart_memory(sim_buf *b, const capture *c, uint64_t xmax, uint64_t ymax, bool time)
{
    device_info d = device_get_info(c->run->dev);
    plot p = {TOP, MEM_H, xmax, ymax, time};
    svg_open(b, TOP + MEM_H + 62, "timeline", "memory over time");
    y_axis_bytes(b, &p);
    band(b, &p, c, S_RES, "series reserved", "#3a9a5b", true);
    band(b, &p, c, S_ALLOC, "series allocated", "#e0892f", true);
    band(b, &p, c, S_REQ, "series requested", "#3b6fb6", true);
    /* several processes: each one's reserved memory as its own line (p1, p2, ...) */
    for (uint32_t i = 0; i < c->n_proc_curves; i++)
        band_of(b, &p, &c->proc_curves[i], S_RES, "series process-reserved", PROC_COLORS[i % N_PROC_COLORS], false);
    capacity_line(b, &p, d.capacity_bytes);
    marks(b, &p, c->run);
    oom_marker(b, &p, c);
    x_axis(b, &p);
    axis_titles(b, &p, "memory");
    static const char *const names[] = {"reserved", "allocated", "requested"};
    static const char *const colors[] = {"#3a9a5b", "#e0892f", "#3b6fb6"};
    legend(b, PX0, TOP + MEM_H + 56, names, colors, 3);
    if (c->n_proc_curves > 0) {
        const char *pn[N_PROC_COLORS];
        char pnb[N_PROC_COLORS][24];
        uint32_t np = c->n_proc_curves < N_PROC_COLORS ? c->n_proc_curves : N_PROC_COLORS;
        for (uint32_t i = 0; i < np; i++) {
            snprintf(pnb[i], sizeof pnb[i], "p%u reserved", i + 1);
            pn[i] = pnb[i];
        }
        legend(b, PX0 + 330, TOP + MEM_H + 56, pn, PROC_COLORS, np);
    }
    sim_buf_puts(b, "</svg>\n");
    if (c->n_proc_curves > 0) {
        sim_buf_puts(b, "<p class=\"note procs\">");
        for (uint32_t i = 0; i < c->n_proc_curves && i < c->run->n_procs; i++) {
            sim_buf_printf(b, "%sp%u = ", i ? "; " : "", i + 1);
            html_escape(b, c->run->procs[i].name);
        }
        sim_buf_puts(b, "</p>\n");
    }
}

static void chart_fragmentation(sim_buf *b, const capture *c, uint64_t xmax, bool time)
{
    plot p = {12, FRAG_H, xmax, 0, time};
    svg_open(b, 12 + FRAG_H + 44, "fragmentation", "fragmentation over time");
    y_axis_ratio(b, &p);
    band(b, &p, c, S_FRAG, "series fragmentation", "#8064a2", true);
    x_axis(b, &p);
    axis_titles(b, &p, "fragmentation");
    sim_buf_puts(b, "</svg>\n");
}

static void chart_overlay(sim_buf *b, const capture *const *caps, uint32_t n, uint64_t xmax, uint64_t ymax, bool time)
{
    device_info d = device_get_info(caps[0]->run->dev);
    plot p = {TOP, MEM_H, xmax, ymax, time};
    svg_open(b, TOP + MEM_H + 62, "overlay", "reserved memory of every strategy");
    y_axis_bytes(b, &p);
    band(b, &p, caps[0], S_REQ, "series requested", "#c8c8c8", true);
    const char *names[16];
    const char *colors[16];
    names[0] = "requested";
    colors[0] = "#c8c8c8";
    for (uint32_t i = 0; i < n; i++) {
        const char *col = STRAT_COLORS[i % N_STRAT_COLORS];
        char cls[96];
        snprintf(cls, sizeof cls, "series reserved strategy-%s", caps[i]->run->ops->name);
        band(b, &p, caps[i], S_RES, cls, col, false);
        if (i + 1 < 16) {
            names[i + 1] = caps[i]->run->ops->name;
            colors[i + 1] = col;
        }
    }
    capacity_line(b, &p, d.capacity_bytes);
    marks(b, &p, caps[0]->run);
    x_axis(b, &p);
    axis_titles(b, &p, "reserved");
    legend(b, PX0, TOP + MEM_H + 56, names, colors, n + 1 < 16 ? n + 1 : 16);
    sim_buf_puts(b, "</svg>\n");
}

/* ---------------------------------------------------------------- memory map */

enum { P_USED, P_SLACK, P_FREE, P_PENDING, P_UNMAPPED, P_N };
static const char *const PART_COLOR[P_N] = {"#3b6fb6", "#e0892f", "#b9e3c6", "#9e9e9e", "#ffffff"};
static const char *const PART_NAME[P_N] = {"used (requested)", "slack (rounding, unsplit)", "free (cached)",
                                           "pending free", "unmapped"};

/* Draws a bar part by part, merging parts thinner than a pixel into one rect of
 * the colour that has most of their bytes: a region of 100k blocks stays a few
 * hundred rects. */
typedef struct painter {
    sim_buf *b;
    double y, h;
    double run_x, run_w;
    double tally[P_N];
    int colors_in_run;
    int last;
} painter;

static void paint_flush(painter *pt)
{
    if (pt->run_w <= 0)
        return;
    int best = 0;
    for (int i = 1; i < P_N; i++)
        if (pt->tally[i] > pt->tally[best])
            best = i;
    sim_buf_printf(pt->b, "<rect class=\"blk\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>",
                   pt->run_x, pt->y, pt->run_w, pt->h, PART_COLOR[best]);
    pt->run_x += pt->run_w;
    pt->run_w = 0;
    memset(pt->tally, 0, sizeof pt->tally);
    pt->colors_in_run = 0;
    pt->last = -1;
}

static void paint(painter *pt, int part, double w)
{
    if (w <= 0)
        return;
    bool pure_same = pt->colors_in_run == 1 && pt->last == part;
    if (!pure_same && pt->run_w >= 1.0)
        paint_flush(pt);
    if (pt->last != part)
        pt->colors_in_run++;
    pt->last = part;
    pt->tally[part] += w;
    pt->run_w += w;
}

typedef struct region_row {
    uint64_t first, end;   /* block index range */
    uint64_t addr, size, used, slack, free;
    uint64_t gap;          /* free bytes in a block the walker names "central gap" (BFC) */
    bool partitioned;      /* the walker names partitions: spatially partitioned BFC */
    uint32_t proc, region;
} region_row;

#define MAP_MAX_ROWS 48u

static void memory_map(sim_buf *b, const capture *c, const capture_view *v)
{
    if (v->n_blocks == 0) {
        sim_buf_printf(b, "<p class=\"note\">No memory was held at %s.</p>\n", v->what);
        return;
    }
    region_row rows[MAP_MAX_ROWS];
    uint32_t n = 0;
    uint64_t more = 0, largest = 0;
    for (uint64_t i = 0; i < v->n_blocks;) {
        const capture_block *f = &v->blocks[i];
        region_row r = {.first = i, .addr = f->b.region_addr, .proc = f->proc, .region = f->b.region};
        uint64_t j = i;
        for (; j < v->n_blocks && v->blocks[j].proc == f->proc && v->blocks[j].b.region == f->b.region; j++) {
            const strategy_block *k = &v->blocks[j].b;
            r.size += k->size_bytes;
            if (k->state == BLOCK_USED || k->state == BLOCK_PENDING) {
                r.used += k->requested_bytes;
                r.slack += k->size_bytes - k->requested_bytes;
            } else if (k->state == BLOCK_FREE) {
                r.free += k->size_bytes;
                if (k->pool != NULL && strcmp(k->pool, "central gap") == 0)
                    r.gap += k->size_bytes;
            }
            if (k->pool != NULL && (strcmp(k->pool, "central gap") == 0 || strcmp(k->pool, "lower") == 0))
                r.partitioned = true;
        }
        r.end = j;
        if (r.size > largest)
            largest = r.size;
        if (n < MAP_MAX_ROWS)
            rows[n++] = r;
        else
            more++;
        i = j;
    }
    const double row_h = 16, gap = 6;
    /* at an OOM, two rows first: the failing request and the largest free piece, to scale */
    uint64_t largest_free = 0;
    for (uint64_t i = 0; i < v->n_blocks; i++)
        if (v->blocks[i].b.state == BLOCK_FREE && v->blocks[i].b.size_bytes > largest_free)
            largest_free = v->blocks[i].b.size_bytes;
    uint32_t lead = v->request ? 2u : 0u;
    if (v->request > largest)
        largest = v->request;
    double h = (double)(n + lead) * (row_h + gap) + 40;
    char label[64];
    snprintf(label, sizeof label, "memory map at %s", v->what);
    svg_open(b, h, v->request ? "memory-map memory-map-oom" : "memory-map", label);
    if (v->request) {
        const char *names[2] = {"request", "largest free"};
        const uint64_t sizes[2] = {v->request, largest_free};
        const char *fills[2] = {"#b00020", PART_COLOR[P_FREE]};
        for (uint32_t ri = 0; ri < 2; ri++) {
            double y = 6 + (double)ri * (row_h + gap);
            double w = (double)sizes[ri] / (double)largest * PW;
            char sz[32], full[32];
            short_size(sizes[ri], sz, sizeof sz);
            /* the label goes right of the bar (inside it when the bar is nearly full width):
             * the left margin is sized for region labels like "#7 6.76 GiB" */
            double bar = w < 2 ? 2 : w;
            bool inside = bar > PW - 160;
            sim_buf_printf(b, "<g class=\"%s\"><title>%s: %s</title>", ri ? "largest-free" : "oom-request", names[ri],
                           units_format_size(sizes[ri], full, sizeof full));
            sim_buf_printf(b, "<rect class=\"blk\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                              "fill=\"%s\"/><rect class=\"region-outline\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
                              "height=\"%.1f\"/>",
                           PX0, y, bar, row_h, fills[ri], PX0, y, bar, row_h);
            sim_buf_printf(b, "<text class=\"tick-label%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s %s</text></g>\n",
                           inside && ri == 0 ? " on-dark" : "", inside ? PX0 + bar - 6 : PX0 + bar + 6, y + 12,
                           inside ? "end" : "start", names[ri], sz);
        }
    }
    for (uint32_t ri = 0; ri < n; ri++) {
        const region_row *r = &rows[ri];
        double y = 6 + (double)(ri + lead) * (row_h + gap);
        double w = (double)r->size / (double)largest * PW;
        if (w < 2)
            w = 2;
        char sz[32], us[32], sl[32], fr[32];
        short_size(r->size, sz, sizeof sz);
        sim_buf_printf(b, "<g class=\"region\"><title>region %u at 0x%llx: %s; used %s, slack %s, free %s",
                       r->region, (unsigned long long)r->addr, units_format_size(r->size, sz, sizeof sz),
                       units_format_size(r->used, us, sizeof us), units_format_size(r->slack, sl, sizeof sl),
                       units_format_size(r->free, fr, sizeof fr));
        if (r->partitioned) {
            /* spatially partitioned BFC: the free bytes split into the central gap and
             * the lower partition's holes */
            char gp[32], ho[32];
            sim_buf_printf(b, " (central gap %s, lower-partition holes %s)", units_format_size(r->gap, gp, sizeof gp),
                           units_format_size(r->free - r->gap, ho, sizeof ho));
        }
        if (c->run->n_procs > 1) {
            sim_buf_puts(b, " (process ");
            html_escape(b, c->run->procs[r->proc].name);
            sim_buf_puts(b, ")");
        }
        short_size(r->size, sz, sizeof sz);
        char who[16] = "";
        if (c->run->n_procs > 1)
            snprintf(who, sizeof who, "p%u ", r->proc + 1);
        sim_buf_printf(b, "</title><text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s#%u %s</text>",
                       PX0 - 6, y + 12, who, r->region, sz);
        painter pt = {.b = b, .y = y, .h = row_h, .run_x = PX0, .last = -1};
        double scale = w / (double)r->size;
        for (uint64_t j = r->first; j < r->end; j++) {
            const strategy_block *k = &v->blocks[j].b;
            double bw = (double)k->size_bytes * scale;
            switch (k->state) {
            case BLOCK_USED:
            case BLOCK_PENDING: {
                double uw = (double)k->requested_bytes * scale;
                paint(&pt, k->state == BLOCK_USED ? P_USED : P_PENDING, uw);
                paint(&pt, k->state == BLOCK_USED ? P_SLACK : P_PENDING, bw - uw);
                break;
            }
            case BLOCK_FREE: paint(&pt, P_FREE, bw); break;
            case BLOCK_UNMAPPED: paint(&pt, P_UNMAPPED, bw); break;
            }
        }
        paint_flush(&pt);
        sim_buf_printf(b, "<rect class=\"region-outline\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/></g>\n",
                       PX0, y, w, row_h);
    }
    double ly = (double)(n + lead) * (row_h + gap) + 24;
    legend(b, PX0, ly, PART_NAME, PART_COLOR, P_N);
    sim_buf_puts(b, "</svg>\n");
    if (more)
        sim_buf_printf(b, "<p class=\"note\">%llu more regions are not drawn.</p>\n", (unsigned long long)more);
    if (v->blocks_truncated)
        sim_buf_puts(b, "<p class=\"note\">The allocator held too many blocks to draw them all; the map is cut "
                        "short.</p>\n");
}

/* ---------------------------------------------------------------- planned arena */

#define PLAN_H 300.0

/* The plan of an offline planner, offset against time: each buffer a rectangle
 * from its alloc to its free (the process's alloc/free events, x) at its offset
 * (y, 0 at the bottom). Overlap would be a planner bug; the holes are fragmentation. */
static void plan_map(sim_buf *b, const capture *c)
{
    plot p = {TOP, PLAN_H, c->plan_events ? c->plan_events + 1 : 2, c->plan_heap ? c->plan_heap : 1, false};
    char heap[32];
    sim_buf_printf(b, "<p class=\"note\">Offline plan: %u buffers in an arena of %s (%llu B)", c->plan_buffers,
                   units_format_size(c->plan_heap, heap, sizeof heap), (unsigned long long)c->plan_heap);
    if (c->n_rects < c->plan_buffers)
        sim_buf_printf(b, "; the %u largest are drawn", c->n_rects);
    sim_buf_puts(b, ". x: the program's alloc and free events in order; y: offset in the arena. Each "
                    "rectangle is one buffer, from its allocation to its free; the white between them is the "
                    "plan's fragmentation.</p>\n");
    svg_open(b, TOP + PLAN_H + 40, "plan", "planned arena: offset against time");
    y_axis_bytes(b, &p);
    for (uint32_t i = c->n_rects; i-- > 0;) { /* smallest first, so the large ones stay visible */
        const capture_rect *r = &c->rects[i];
        double x0 = px_x(&p, (double)r->first + 1.0), x1 = px_x(&p, (double)r->last + 2.0);
        double y1 = px_y(&p, (double)r->off), y0 = px_y(&p, (double)(r->off + r->size));
        double w = x1 - x0 > 0.5 ? x1 - x0 : 0.5, h = y1 - y0 > 0.5 ? y1 - y0 : 0.5;
        sim_buf_printf(b,
                       "<rect class=\"buffer\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                       "fill-opacity=\"0.85\" stroke=\"#1d3f6e\" stroke-width=\"%s\"><title>offset %llu, %llu B, "
                       "events %llu..%llu</title></rect>\n",
                       x0, y0, w, h, STRAT_COLORS[i % N_STRAT_COLORS], h >= 3.0 ? "0.4" : "0", (unsigned long long)r->off,
                       (unsigned long long)r->size, (unsigned long long)r->first, (unsigned long long)r->last);
    }
    x_axis(b, &p);
    axis_titles(b, &p, "offset");
    sim_buf_puts(b, "</svg>\n");
}

/* ---------------------------------------------------------------- page */

static const char CSS[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;margin:24px auto;"
    "max-width:1000px;padding:0 12px;background:#fff}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd}"
    "h3{font-size:15px;margin:18px 0 4px}\n"
    ".meta{color:#555;margin:2px 0}.note{color:#666;font-size:12px}\n"
    "table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 8px;border-bottom:1px solid #e4e4e4;"
    "text-align:left}th{background:#f4f4f4;font-weight:600}td.num{text-align:right;font-variant-numeric:"
    "tabular-nums}.top td{white-space:nowrap}.oom-cell{color:#b00020;font-weight:600}\n"
    "svg{display:block;margin:6px 0;overflow:visible}\n"
    "svg .axis{stroke:#444;stroke-width:1}svg .tick{stroke:#444}svg .grid{stroke:#e8e8e8;stroke-width:1}\n"
    "svg text{font:11px system-ui,sans-serif;fill:#333}svg .axis-label{font-size:12px;font-weight:600}\n"
    "svg .legend{font-size:12px}svg .series{fill-opacity:.28;stroke-width:1.2}\n"
    "svg .capacity{stroke:#b00020;stroke-dasharray:6 4;stroke-width:1.5}svg .capacity-label{fill:#b00020}\n"
    "svg .oom-line{stroke:#b00020;stroke-width:2}svg .oom-label{fill:#b00020;font-weight:700}\n"
    "svg .mark-tick{stroke:#999;stroke-dasharray:2 3}svg .mark-label{font-size:10px;fill:#666}\n"
    "svg .region-outline{fill:none;stroke:#555;stroke-width:.8}svg .blk{shape-rendering:crispEdges}\n"
    "svg .on-dark{fill:#fff}.what-if{font-weight:600}.what-if-fixes{color:#1b7a34}\n";

void report_html(const capture *const *caps, uint32_t n, sim_buf *b)
{
    report_html_opts o = {NULL, false};
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
    html_escape(b, title.data ? title.data : "");
    sim_buf_printf(b, "</title>\n<style>\n%s</style>\n</head><body>\n<h1>gpusim report: ", CSS);
    html_escape(b, title.data ? title.data : "");
    sim_buf_puts(b, "</h1>\n");
    sim_buf_release(&title);
    for (uint32_t i = 0; i < r0->n_sources; i++) {
        const sim_run_source *s = &r0->sources[i];
        sim_buf_puts(b, "<p class=\"meta\">trace <code>");
        html_escape(b, s->path);
        sim_buf_printf(b, "</code>: %llu events (%llu allocs, %llu frees, %llu marks)</p>\n",
                       (unsigned long long)s->events, (unsigned long long)s->allocs, (unsigned long long)s->frees,
                       (unsigned long long)s->marks);
    }
    char cap[32], ctx[32];
    sim_buf_puts(b, "<p class=\"meta\">device ");
    html_escape(b, d.name);
    sim_buf_printf(b, ": capacity %s (%llu B), context %s per process; gpusim %s</p>\n",
                   units_format_size(d.capacity_bytes, cap, sizeof cap), (unsigned long long)d.capacity_bytes,
                   units_format_size(d.context_bytes, ctx, sizeof ctx), GPUSIM_VERSION);
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
                    "out (rounding and unsplit slack included); reserved = memory held from the device.</p>\n");
    if (n > 1) {
        sim_buf_puts(b, "<h2 id=\"side-by-side\">Strategies side by side</h2>\n");
        chart_overlay(b, caps, n, xmax, mem_ymax(caps, n, d.capacity_bytes), xt);
    }
    for (uint32_t i = 0; i < n; i++) {
        const capture *c = caps[i];
        const char *name = c->run->ops->name;
        sim_buf_puts(b, "<section class=\"strategy-section\" id=\"strategy-");
        html_escape(b, name);
        sim_buf_puts(b, "\">\n<h2>");
        html_escape(b, name);
        char pk[32];
        sim_buf_printf(b, ": peak reserved <span class=\"peak-value\">%s</span> (%llu B)</h2>\n",
                       units_format_size(c->run->total.peak_reserved_bytes, pk, sizeof pk),
                       (unsigned long long)c->run->total.peak_reserved_bytes);
        /* what was replayed: the effective options and the limit they give (a fraction,
         * --limit or a preset, not the raw capacity) */
        sim_buf opts;
        sim_buf_init(&opts);
        report_json_options(c->run, &opts);
        char lim[32];
        sim_buf_puts(b, "<p class=\"meta settings\">settings <code>");
        html_escape(b, opts.data ? opts.data : "{}");
        sim_buf_printf(b, "</code>; effective allocator limit <span class=\"limit-value\">%s</span> (%llu B)</p>\n",
                       units_format_size(report_limit_bytes(c->run), lim, sizeof lim),
                       (unsigned long long)report_limit_bytes(c->run));
        sim_buf_release(&opts);
        if (c->run->total.first_oom.happened) {
            sim_buf_puts(b, "<p class=\"oom-cell\">");
            sim_buf msg;
            sim_buf_init(&msg);
            report_oom_sentence(c->run, &c->run->total.first_oom, &msg);
            html_escape(b, msg.data ? msg.data : "");
            sim_buf_release(&msg);
            sim_buf_puts(b, "</p>\n");
        }
        if (i == 0 && w != NULL && w->present) {
            sim_buf wt;
            sim_buf_init(&wt);
            report_whatif_sentence(w, &wt);
            sim_buf_printf(b, "<p class=\"what-if%s\">", w->completed ? " what-if-fixes" : "");
            html_escape(b, wt.data ? wt.data : "");
            sim_buf_puts(b, "</p>\n");
            sim_buf_release(&wt);
        }
        sim_buf_puts(b, "<h3>Memory over time</h3>\n");
        chart_memory(b, c, xmax, mem_ymax(&caps[i], 1, d.capacity_bytes), xt);
        sim_buf_puts(b, "<h3>Fragmentation over time</h3>\n<p class=\"note\">1 − largest free block / free bytes "
                        "inside reserved memory (TensorFlow's metric).</p>\n");
        chart_fragmentation(b, c, xmax, xt);
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
            memory_map(b, c, &c->oom_view);
            sim_buf_puts(b, "<h3>Largest live allocations at the OOM</h3>\n");
            html_top_table(b, c, &c->oom_view);
            sim_buf_puts(b, "</section>\n<section class=\"at-peak\">\n");
        }
        sim_buf_puts(b, "<h3>Memory map at the peak</h3>\n<p class=\"note\">Each bar is one region or segment "
                        "held from the device, drawn to scale, blocks in address order.</p>\n");
        memory_map(b, c, &pv);
        if (c->n_rects > 0) {
            sim_buf_puts(b, "<h3>Planned arena: offset × time</h3>\n");
            plan_map(b, c);
        }
        sim_buf_puts(b, "<h3>Largest live allocations at the peak</h3>\n");
        html_top_table(b, c, &pv);
        if (c->has_oom_view)
            sim_buf_puts(b, "</section>\n");
        sim_buf_puts(b, "</section>\n");
    }
    sim_buf_puts(b, "</body></html>\n");
}
