/* html_draw.h — private to the HTML report (html*.c): the page's geometry, one
 * palette for every chart, and the SVG pieces the charts share (axes, legends,
 * size labels). */
#ifndef GPUSIM_HTML_DRAW_H
#define GPUSIM_HTML_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "html.h"
#include "sim/buf.h"

/* ---------------------------------------------------------------- geometry */

#define PAGE_W 960.0
#define PX0 88.0                     /* left edge of every plot */
#define PW ((double)HTML_PLOT_WIDTH) /* plot width */
#define MEM_H 230.0
#define FRAG_H 110.0
#define TOP 30.0    /* room for marks and the legend */
#define LANE_H 14.0 /* one process's lane of marks */

/* ---------------------------------------------------------------- palette
 * One colour per meaning, the same in every chart: a band of requested bytes and
 * a used block of the memory map are both COLOR_REQUESTED; slack (allocated but
 * not requested) is COLOR_ALLOCATED; free cached memory is a light tone of
 * COLOR_RESERVED. The category colours (strategies in the side-by-side chart,
 * processes) avoid those hues, so a line never reads as a series it is not. */
#define COLOR_REQUESTED "#3b6fb6"
#define COLOR_ALLOCATED "#e0892f"
#define COLOR_RESERVED "#3a9a5b"
#define COLOR_FREE "#b9e3c6"
#define COLOR_PENDING "#9e9e9e"
#define COLOR_UNMAPPED "#ffffff"
#define COLOR_FRAGMENTATION "#8064a2"
#define COLOR_LIMIT "#b00020" /* the device capacity, the OOM, the failing request */
#define COLOR_OUTLINE "#777"

/* The i-th strategy's colour in the side-by-side chart (cycling; its dash pattern,
 * html_category_dash, tells the cycles apart). */
const char *html_strategy_color(uint32_t i);
/* The i-th process's colour: its curve, its lane of marks, its rows of the map. */
const char *html_process_color(uint32_t i);
/* "none" for the first cycle of colours, then a dash pattern per cycle. */
const char *html_category_dash(uint32_t i);

/* ---------------------------------------------------------------- plots */

typedef struct html_plot {
    double y0, h;  /* top of the plot area and its height */
    uint64_t xmax; /* events on the axis (time: ns) */
    uint64_t ymax; /* bytes at the top (0: a 0..1 ratio plot) */
    bool time;     /* x is the trace's time from 0 (--x=time), else events from 1 */
} html_plot;

double html_px_x(const html_plot *p, double event);
double html_px_y(const html_plot *p, double v);
void html_x_axis(sim_buf *b, const html_plot *p);
void html_y_axis_bytes(sim_buf *b, const html_plot *p);
void html_y_axis_ratio(sim_buf *b, const html_plot *p);
void html_axis_titles(sim_buf *b, const html_plot *p, const char *ytitle);

/* Axis labels: "0", "512 MiB", "1.5 GiB" (trailing zeros dropped). */
void html_size_label(uint64_t v, char *buf, size_t cap);
/* Swatches and names from (x, y) rightwards; wraps at the page's right edge.
 * Returns the y of the last line. */
double html_legend(sim_buf *b, double x, double y, const char *const *names, const char *const *colors, size_t n);
/* The extra height html_legend's wrapped lines take (0 for one line). */
double html_legend_height(double x, const char *const *names, size_t n);
void html_svg_open(sim_buf *b, double h, const char *cls, const char *label);

#endif
