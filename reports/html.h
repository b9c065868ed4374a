/* html.h — the self-contained HTML report of one or more replays of the same trace
 * (replay --report, compare --report): one file, inline SVG and CSS and one small
 * inline script, no network. Per replay: the settings, the what-if answers, the memory
 * timeline, fragmentation over time and the memory map at the OOM and at the peak;
 * with several replays, reserved memory of every strategy on one event axis first. */

/* In detail: the settings and the effective allocator limit; the timeline shows
 * requested, allocated and reserved as per-pixel min/max bands, each process's reserved
 * memory, the device capacity, the OOM, marks and empty_caches on one lane per process;
 * the memory maps show each region as a bar of used / slack / free blocks, and the
 * largest live allocations there with their tags. Every block, timeline column and mark
 * carries an SVG <title> (the hover text, and the fallback with scripts off); the
 * script adds a tooltip and a brush zoom. */
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
    const whatif *alts;    /* more what-if answers of caps[0]'s run (BFC: greedy, limit), or NULL */
    uint32_t n_alts;
} report_html_opts;
void report_html_with(const capture *const *caps, uint32_t n, const report_html_opts *opts, sim_buf *out);

#endif
