/* html_script.h — private to the HTML report (html.c): the page's inline style sheet
 * and its one small inline script. The script only adds to a page that is complete
 * without it: a tooltip that shows the <title> of what the pointer is over (a block
 * of the memory map, a column of a timeline, a mark), and a brush on the timelines
 * (drag across a plot to zoom into those events, double-click to go back). */
#ifndef GPUSIM_HTML_SCRIPT_H
#define GPUSIM_HTML_SCRIPT_H

extern const char html_css[];
extern const char html_js[];

#endif
