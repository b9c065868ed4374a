/* html_map.h — private to the HTML report (html.c): the memory map of the moment a
 * view shows (each region a bar of its blocks, every block or run of thin blocks
 * titled for the hover) and the arena of an offline plan, offset against time. */
#ifndef GPUSIM_HTML_MAP_H
#define GPUSIM_HTML_MAP_H

#include "answers/capture.h"
#include "sim/buf.h"

void html_memory_map(sim_buf *b, const capture *c, const capture_view *v);
/* The plan's c->n_rects buffers (the page draws it when there are any). */
void html_plan_map(sim_buf *b, const capture *c);

#endif
