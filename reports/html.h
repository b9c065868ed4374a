/* html.h — the self-contained HTML report of one or more replays of the same trace
 * (replay --report, compare --report): inline SVG and CSS, no script, no network.
 * Per replay: the memory timeline (requested, allocated, reserved as per-pixel
 * min/max bands, the device capacity, the OOM, marks as ticks), fragmentation over
 * time, the memory map at the peak (each region a bar of used / slack / free
 * blocks) and the largest live allocations there with their tags; with several
 * replays, reserved memory of every strategy on one event axis first. */
#ifndef GPUSIM_HTML_H
#define GPUSIM_HTML_H

#include "answers/capture.h"
#include "answers/whatif.h"
#include "sim/buf.h"

/* Buckets a report asks capture_run for: one per pixel column of the plots. */
#define HTML_PLOT_WIDTH 860u

/* The whole page into out; deterministic (same captures, same bytes). */
void report_html(const capture *const *caps, uint32_t n, sim_buf *out);
/* What a report may add or change. */
typedef struct report_html_opts {
    const whatif *whatif;  /* the what-if answer of caps[0]'s run, or NULL (replay --report) */
    bool x_time;           /* the charts' x axis is the trace's time (--x=time), else events */
} report_html_opts;
void report_html_with(const capture *const *caps, uint32_t n, const report_html_opts *opts, sim_buf *out);

/* Text with &, <, >, " and ' escaped, for element content and attributes. */
void html_escape(sim_buf *b, const char *s);

#endif
