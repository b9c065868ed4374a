/* Drawing helpers of the HTML report (html_draw.h). */
#include "html_draw.h"

#include <stdio.h>
#include <string.h>

#include "html.h"
#include "sim/units.h"

/* ---------------------------------------------------------------- text helpers */

/* Axis labels: "0", "512 MiB", "1.5 GiB" (trailing zeros dropped). */
void html_size_label(uint64_t v, char *buf, size_t cap)
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

double html_px_x(const html_plot *p, double event)
{
    if (p->time)
        return PX0 + event / (double)(p->xmax ? p->xmax : 1) * PW;
    double span = p->xmax > 1 ? (double)(p->xmax - 1) : 1.0;
    return PX0 + (event - 1.0) / span * PW;
}

double html_px_y(const html_plot *p, double v)
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

void html_x_axis(sim_buf *b, const html_plot *p)
{
    double yb = p->y0 + p->h;
    sim_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0, yb, PX0 + PW,
                   yb);
    uint64_t step = count_step(p->xmax);
    sim_buf_puts(b, "<g class=\"x-ticks\">");
    if (p->time) {
        for (uint64_t v = 0; step && v <= p->xmax; v += step) {
            double x = html_px_x(p, (double)v);
            char s[32];
            short_time(v, s, sizeof s);
            sim_buf_printf(b, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, yb, x,
                           yb + 4);
            sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                           yb + 16, s);
        }
        sim_buf_puts(b, "</g>\n");
        return;
    }
    for (uint64_t v = 0; v <= p->xmax; v += step) {
        double x = html_px_x(p, v ? (double)v : 1.0);
        char s[32];
        short_count(v ? v : 1, s, sizeof s);
        sim_buf_printf(b, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, yb, x, yb + 4);
        sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                       yb + 16, s);
    }
    sim_buf_puts(b, "</g>\n");
}

void html_y_axis_bytes(sim_buf *b, const html_plot *p)
{
    sim_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0, p->y0, PX0,
                   p->y0 + p->h);
    uint64_t step = size_step(p->ymax);
    for (uint64_t v = 0; v <= p->ymax; v += step) {
        double y = html_px_y(p, (double)v);
        char s[32];
        html_size_label(v, s, sizeof s);
        sim_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", PX0, y, PX0 + PW,
                       y);
        sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PX0 - 6,
                       y + 4, s);
        if (v > UINT64_MAX - step)
            break;
    }
}

void html_y_axis_ratio(sim_buf *b, const html_plot *p)
{
    sim_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0, p->y0, PX0,
                   p->y0 + p->h);
    for (int pct = 0; pct <= 100; pct += 25) {
        double y = p->y0 + p->h - (double)pct / 100.0 * p->h;
        sim_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", PX0, y, PX0 + PW,
                       y);
        sim_buf_printf(b, "<text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>\n", PX0 - 6,
                       y + 4, pct);
    }
}

void html_axis_titles(sim_buf *b, const html_plot *p, const char *ytitle)
{
    double ym = p->y0 + p->h / 2;
    sim_buf_printf(b,
                   "<text class=\"axis-label\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
                   "text-anchor=\"middle\">%s</text>\n",
                   ym, ym, ytitle);
    sim_buf_printf(b, "<text class=\"axis-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                   PX0 + PW / 2, p->y0 + p->h + 32, p->time ? "time" : "event");
}

/* The width one legend entry takes: swatch, gap, name (7 px a character at 12 px), gap. */
static double legend_entry_w(const char *name)
{
    return 14 + 7.0 * (double)strlen(name) + 16;
}

double html_legend(sim_buf *b, double x, double y, const char *const *names, const char *const *colors, size_t n)
{
    const double x0 = x;
    for (size_t i = 0; i < n; i++) {
        double w = legend_entry_w(names[i]);
        if (x > x0 && x + w - 16 > PAGE_W) { /* past the right edge: a new line */
            x = x0;
            y += 16;
        }
        /* outlined, so a white swatch (unmapped) shows on the white page */
        sim_buf_printf(b,
                       "<rect class=\"swatch\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\" "
                       "stroke=\"" COLOR_OUTLINE "\" stroke-width=\"0.8\"/>",
                       x, y - 9, colors[i]);
        sim_buf_printf(b, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", x + 14, y);
        sim_buf_xml_escape(b, names[i]);
        sim_buf_puts(b, "</text>\n");
        x += w;
    }
    return y;
}

double html_legend_height(double x, const char *const *names, size_t n)
{
    const double x0 = x;
    double h = 0;
    for (size_t i = 0; i < n; i++) {
        double w = legend_entry_w(names[i]);
        if (x > x0 && x + w - 16 > PAGE_W) {
            x = x0;
            h += 16;
        }
        x += w;
    }
    return h;
}

static const char *const STRATEGY_COLORS[] = {"#1a1a1a", "#8c564b", "#e377c2", "#17becf",
                                              "#bcbd22", "#a6761d", "#7a0177", "#636363"};
#define N_CATEGORY (sizeof STRATEGY_COLORS / sizeof STRATEGY_COLORS[0])
static const char *const PROCESS_COLORS[N_CATEGORY] = {"#0f7173", "#b8336a", "#33415c", "#6b4e16",
                                                       "#5b2a86", "#7a7a00", "#1a1a1a", "#a6761d"};
static const char *const DASHES[] = {"none", "6 3", "2 2", "8 3 2 3"};

const char *html_strategy_color(uint32_t i)
{
    return STRATEGY_COLORS[i % N_CATEGORY];
}

const char *html_process_color(uint32_t i)
{
    return PROCESS_COLORS[i % N_CATEGORY];
}

const char *html_category_dash(uint32_t i)
{
    return DASHES[(i / N_CATEGORY) % (sizeof DASHES / sizeof DASHES[0])];
}

void html_svg_open(sim_buf *b, double h, const char *cls, const char *label)
{
    sim_buf_printf(b,
                   "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"",
                   cls, PAGE_W, h, PAGE_W, h);
    sim_buf_xml_escape(b, label);
    sim_buf_puts(b, "\">\n");
}
