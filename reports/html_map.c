/* The HTML report's allocator pictures (html_map.h): the memory map of a moment and
 * an offline plan's arena. */
#include "html_map.h"

#include <stdio.h>
#include <string.h>

#include "html.h"
#include "html_draw.h"
#include "sim/units.h"

/* ---------------------------------------------------------------- memory map */

enum { P_USED, P_SLACK, P_FREE, P_PENDING, P_UNMAPPED, P_N };
static const char *const PART_COLOR[P_N] = {COLOR_REQUESTED, COLOR_ALLOCATED, COLOR_FREE, COLOR_PENDING,
                                            COLOR_UNMAPPED};
static const char *const PART_NAME[P_N] = {"used (requested)", "slack (rounding, unsplit)", "free (cached)",
                                           "pending free", "unmapped"};

/* Draws a bar block by block. A block a pixel wide or more is its own group with a
 * title (its size, its allocation's id, tag and stream, requested against slack);
 * thinner ones are merged into one rect of the colour that has most of their bytes,
 * titled with what it merges: a region of 100k blocks stays a few hundred rects. */
typedef struct painter {
    sim_buf *b;
    const capture *c;
    double y, h;
    double run_x, run_w;
    double tally[P_N];
    uint64_t bytes[P_N];
    uint64_t blocks; /* blocks (whole or in part) in the run */
    int colors_in_run;
    int last;
} painter;

static void part_rect(sim_buf *b, double x, double y, double w, double h, int part)
{
    sim_buf_printf(b, "<rect class=\"blk\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>", x, y, w,
                   h, PART_COLOR[part]);
}

static void paint_flush(painter *pt)
{
    if (pt->run_w <= 0)
        return;
    int best = 0;
    for (int i = 1; i < P_N; i++)
        if (pt->tally[i] > pt->tally[best])
            best = i;
    sim_buf_puts(pt->b, "<g class=\"blocks\"><title>");
    sim_buf_printf(pt->b, "%llu blocks too thin to draw apart:", (unsigned long long)pt->blocks);
    const char *sep = " ";
    for (int i = 0; i < P_N; i++) {
        if (pt->bytes[i] == 0)
            continue;
        char s[32];
        sim_buf_printf(pt->b, "%s%s %s", sep, PART_NAME[i], units_format_size(pt->bytes[i], s, sizeof s));
        sep = ", ";
    }
    sim_buf_puts(pt->b, "</title>");
    part_rect(pt->b, pt->run_x, pt->y, pt->run_w, pt->h, best);
    sim_buf_puts(pt->b, "</g>");
    pt->run_x += pt->run_w;
    pt->run_w = 0;
    memset(pt->tally, 0, sizeof pt->tally);
    memset(pt->bytes, 0, sizeof pt->bytes);
    pt->blocks = 0;
    pt->colors_in_run = 0;
    pt->last = -1;
}

static void paint(painter *pt, int part, double w, uint64_t bytes)
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
    pt->bytes[part] += bytes;
    pt->run_w += w;
}

/* What the hover (and, without scripts, the title) says of one block. */
static void block_title(sim_buf *b, const capture *c, const capture_block *cb)
{
    const strategy_block *k = &cb->b;
    char sz[32], rq[32], sl[32];
    static const char *const STATE[] = {"used", "free (cached)", "pending free", "unmapped"};
    sim_buf_printf(b, "%s block %s (%llu B) at 0x%llx, stream %u", STATE[k->state],
                   units_format_size(k->size_bytes, sz, sizeof sz), (unsigned long long)k->size_bytes,
                   (unsigned long long)k->addr, k->stream);
    if (c->run->n_procs > 1) {
        sim_buf_puts(b, ", process ");
        sim_buf_xml_escape(b, c->run->procs[cb->proc].name);
    }
    if (k->state != BLOCK_USED && k->state != BLOCK_PENDING)
        return;
    if (cb->known) {
        sim_buf_printf(b, "; allocation id %llu, tag ", (unsigned long long)cb->id);
        sim_buf_xml_escape(b, cb->tag ? cb->tag : "(none)");
    } else if (cb->alike > 1) {
        sim_buf_printf(b, "; one of %u live allocations of this size on this stream (which one is not known)",
                       cb->alike);
    } else {
        sim_buf_puts(b, "; which allocation holds it is not known");
    }
    uint64_t slack = k->size_bytes - k->requested_bytes;
    sim_buf_printf(b, "; requested %s (%llu B), slack %s (%llu B)",
                   units_format_size(k->requested_bytes, rq, sizeof rq), (unsigned long long)k->requested_bytes,
                   units_format_size(slack, sl, sizeof sl), (unsigned long long)slack);
}

/* One block of the bar: its own group when it is a pixel wide or more. */
static void paint_block(painter *pt, const capture_block *cb, double scale)
{
    const strategy_block *k = &cb->b;
    double bw = (double)k->size_bytes * scale;
    bool used = k->state == BLOCK_USED || k->state == BLOCK_PENDING;
    int part = k->state == BLOCK_USED      ? P_USED
               : k->state == BLOCK_PENDING ? P_PENDING
               : k->state == BLOCK_FREE    ? P_FREE
                                           : P_UNMAPPED;
    int rest = k->state == BLOCK_USED ? P_SLACK : part;
    uint64_t req = used ? k->requested_bytes : k->size_bytes;
    if (bw < 1.0) {
        pt->blocks++;
        paint(pt, part, (double)req * scale, req);
        paint(pt, rest, bw - (double)req * scale, k->size_bytes - req);
        return;
    }
    paint_flush(pt);
    sim_buf_puts(pt->b, "<g class=\"block\"><title>");
    block_title(pt->b, pt->c, cb);
    sim_buf_puts(pt->b, "</title>");
    double uw = (double)req * scale;
    if (uw > 0)
        part_rect(pt->b, pt->run_x, pt->y, uw, pt->h, part);
    if (bw - uw > 0)
        part_rect(pt->b, pt->run_x + uw, pt->y, bw - uw, pt->h, rest);
    sim_buf_puts(pt->b, "</g>");
    pt->run_x += bw;
}

typedef struct region_row {
    uint64_t first, end; /* block index range */
    uint64_t addr, size, used, slack, free;
    uint64_t gap;     /* free bytes in a block the walker names "central gap" (BFC) */
    bool partitioned; /* the walker names partitions: spatially partitioned BFC */
    uint32_t proc, region;
} region_row;

#define MAP_MAX_ROWS 48u
/* The map's bars start right of the timelines' plots, for labels like "p2 #13 1009 MiB". */
#define MX0 (PX0 + 40)
#define MW (PW - 40)

/* A row label's size: three significant digits ("1009 MiB", "98.2 MiB", "6 MiB"). */
static void row_size(uint64_t v, char *buf, size_t cap)
{
    static const char *const UNIT[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)v;
    size_t u = 0;
    uint64_t unit = 1;
    while (x >= 1024 && u + 1 < sizeof UNIT / sizeof UNIT[0]) {
        x /= 1024;
        unit *= 1024;
        u++;
    }
    bool whole = v % unit == 0;
    snprintf(buf, cap, x >= 100 || whole ? "%.0f %s" : x >= 10 ? "%.1f %s" : "%.2f %s", x, UNIT[u]);
}

void html_memory_map(sim_buf *b, const capture *c, const capture_view *v)
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
    html_svg_open(b, h, v->request ? "memory-map memory-map-oom" : "memory-map", label);
    if (v->request) {
        const char *names[2] = {"request", "largest free"};
        const uint64_t sizes[2] = {v->request, largest_free};
        const char *fills[2] = {COLOR_LIMIT, PART_COLOR[P_FREE]};
        for (uint32_t ri = 0; ri < 2; ri++) {
            double y = 6 + (double)ri * (row_h + gap);
            double w = (double)sizes[ri] / (double)largest * MW;
            char sz[32], full[32];
            html_size_label(sizes[ri], sz, sizeof sz);
            /* the label goes right of the bar (inside it when the bar is nearly full width):
             * the left margin is sized for region labels like "#7 6.76 GiB" */
            double bar = w < 2 ? 2 : w;
            bool inside = bar > MW - 160;
            sim_buf_printf(b, "<g class=\"%s\"><title>%s: %s</title>", ri ? "largest-free" : "oom-request", names[ri],
                           units_format_size(sizes[ri], full, sizeof full));
            sim_buf_printf(b,
                           "<rect class=\"blk\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                           "fill=\"%s\"/><rect class=\"region-outline\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
                           "height=\"%.1f\"/>",
                           MX0, y, bar, row_h, fills[ri], MX0, y, bar, row_h);
            sim_buf_printf(b,
                           "<text class=\"tick-label%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s %s</text></g>\n",
                           inside && ri == 0 ? " on-dark" : "", inside ? MX0 + bar - 6 : MX0 + bar + 6, y + 12,
                           inside ? "end" : "start", names[ri], sz);
        }
    }
    for (uint32_t ri = 0; ri < n; ri++) {
        const region_row *r = &rows[ri];
        double y = 6 + (double)(ri + lead) * (row_h + gap);
        double w = (double)r->size / (double)largest * MW;
        if (w < 2)
            w = 2;
        char sz[32], us[32], sl[32], fr[32];
        sim_buf_printf(b, "<g class=\"region\"><title>region %u at 0x%llx: %s; used %s, slack %s, free %s", r->region,
                       (unsigned long long)r->addr, units_format_size(r->size, sz, sizeof sz),
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
            sim_buf_xml_escape(b, c->run->procs[r->proc].name);
            sim_buf_puts(b, ")");
        }
        row_size(r->size, sz, sizeof sz);
        char who[16] = "";
        bool multi = c->run->n_procs > 1;
        if (multi)
            snprintf(who, sizeof who, "p%u ", r->proc + 1);
        sim_buf_printf(
            b, "</title><text class=\"tick-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"%s%s%s>%s#%u %s</text>",
            MX0 - 6, y + 12, multi ? " fill=\"" : "", multi ? html_process_color(r->proc) : "", multi ? "\"" : "", who,
            r->region, sz);
        painter pt = {.b = b, .c = c, .y = y, .h = row_h, .run_x = MX0, .last = -1};
        double scale = w / (double)r->size;
        for (uint64_t j = r->first; j < r->end; j++)
            paint_block(&pt, &v->blocks[j], scale);
        paint_flush(&pt);
        sim_buf_printf(b, "<rect class=\"region-outline\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/></g>\n",
                       MX0, y, w, row_h);
    }
    double ly = (double)(n + lead) * (row_h + gap) + 24;
    html_legend(b, MX0, ly, PART_NAME, PART_COLOR, P_N);
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
void html_plan_map(sim_buf *b, const capture *c)
{
    html_plot p = {TOP, PLAN_H, c->plan_events ? c->plan_events + 1 : 2, c->plan_heap ? c->plan_heap : 1, false};
    char heap[32];
    sim_buf_printf(b, "<p class=\"note\">Offline plan: %u buffers in an arena of %s (%llu B)", c->plan_buffers,
                   units_format_size(c->plan_heap, heap, sizeof heap), (unsigned long long)c->plan_heap);
    if (c->n_rects < c->plan_buffers)
        sim_buf_printf(b, "; the %u largest are drawn", c->n_rects);
    sim_buf_puts(b, ". x: the program's alloc and free events in order; y: offset in the arena. Each "
                    "rectangle is one buffer, from its allocation to its free; the white between them is the "
                    "plan's fragmentation.</p>\n");
    html_svg_open(b, TOP + PLAN_H + 40, "plan", "planned arena: offset against time");
    html_y_axis_bytes(b, &p);
    for (uint32_t i = c->n_rects; i-- > 0;) { /* smallest first, so the large ones stay visible */
        const capture_rect *r = &c->rects[i];
        double x0 = html_px_x(&p, (double)r->first + 1.0), x1 = html_px_x(&p, (double)r->last + 2.0);
        double y1 = html_px_y(&p, (double)r->off), y0 = html_px_y(&p, (double)(r->off + r->size));
        double w = x1 - x0 > 0.5 ? x1 - x0 : 0.5, h = y1 - y0 > 0.5 ? y1 - y0 : 0.5;
        sim_buf_printf(b,
                       "<rect class=\"buffer\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                       "fill-opacity=\"0.85\" stroke=\"#ffffff\" stroke-width=\"%s\"><title>offset %llu, %llu B, "
                       "events %llu..%llu</title></rect>\n",
                       x0, y0, w, h, COLOR_REQUESTED, h >= 3.0 ? "0.4" : "0", (unsigned long long)r->off,
                       (unsigned long long)r->size, (unsigned long long)r->first, (unsigned long long)r->last);
    }
    html_x_axis(b, &p);
    html_axis_titles(b, &p, "offset");
    sim_buf_puts(b, "</svg>\n");
}
