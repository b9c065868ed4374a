/* html_tables.h — private to the HTML report (html.c): its two tables, rendered from
 * what capture collected. */
#ifndef GPUSIM_HTML_TABLES_H
#define GPUSIM_HTML_TABLES_H

#include <stdint.h>

#include "answers/capture.h"
#include "sim/buf.h"

/* One row per run: strategy, peaks, fragmentation, OOM. */
void html_summary_table(sim_buf *b, const capture *const *caps, uint32_t n);
/* The largest live allocations at the moment v shows (the peak, or the OOM). */
void html_top_table(sim_buf *b, const capture *c, const capture_view *v);

#endif
