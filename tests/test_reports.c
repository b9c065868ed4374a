/* Check suite for the HTML report and what it draws: the min/max curve, capture's
 * first pass (the curve over measured events, the OOM's place, each process's
 * marks), the second pass to the peak (memory map with each block's allocation,
 * live allocations with tags, what --on-oom=skip dropped), the what-if answers, the
 * HTML page (its titles, its one script, the lanes of marks), the progress line. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "answers/capture.h"
#include "answers/limit.h"
#include "answers/whatif.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/progress.h"
#include "reports/result.h"
#include "sim/evbuf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"

/* ---------------------------------------------------------------- fixtures */

static void push_alloc(evbuf *b, uint64_t id, uint64_t size, uint64_t t, const char *tag)
{
    sim_event ev = {.op = SIM_OP_ALLOC, .id = id, .size = size, .t = t, .ready_t = t, .tag = tag};
    ck_assert_int_eq(evbuf_push(b, &ev), SIM_OK);
}

static void push_free(evbuf *b, uint64_t id, uint64_t t)
{
    sim_event ev = {.op = SIM_OP_FREE, .id = id, .t = t, .ready_t = t};
    ck_assert_int_eq(evbuf_push(b, &ev), SIM_OK);
}

static void push_mark(evbuf *b, const char *name, uint64_t t)
{
    sim_event ev = {.op = SIM_OP_MARK, .name = name, .t = t, .ready_t = t};
    ck_assert_int_eq(evbuf_push(b, &ev), SIM_OK);
}

/* A sawtooth: 4 weights live throughout, then 3 steps of 5 activations each. */
static evbuf *sawtooth(void)
{
    evbuf *b = evbuf_new("saw.json", "sawtooth");
    uint64_t t = 0, id = 1;
    for (int w = 0; w < 4; w++)
        push_alloc(b, id++, 8 * MiB, t++, "weight");
    for (int step = 0; step < 3; step++) {
        push_mark(b, "step", t++);
        uint64_t first = id;
        for (int k = 0; k < 5; k++)
            push_alloc(b, id++, (uint64_t)(k + 1) * 3 * MiB + 1000, t++, k == 4 ? "big<activation>" : "act");
        for (uint64_t k = first; k < id; k++)
            push_free(b, k, t++);
    }
    for (uint64_t k = 1; k <= 4; k++)
        push_free(b, k, t++);
    return b;
}

typedef struct evb_ctx {
    evbuf *b;
    evbuf_cursor cur;
} evb_ctx;

static sim_status evb_open(void *ctx, sim_event_source *srcs, sim_error *err)
{
    (void)err;
    evb_ctx *c = ctx;
    srcs[0] = evbuf_source(c->b, &c->cur);
    return SIM_OK;
}

static void evb_close(void *ctx)
{
    (void)ctx;
}

static engine_config config_for(const char *sname)
{
    engine_config cfg = {.device = {.name = "test", .capacity_bytes = 16 * GiB}, .ops = registry_find(sname)};
    ck_assert_ptr_nonnull(cfg.ops);
    return cfg;
}

static capture *capture_of(evbuf *b, const char *sname, uint32_t buckets)
{
    engine_config cfg = config_for(sname);
    evb_ctx ctx = {b, {0}};
    capture_sources cs = {1, evb_open, evb_close, &ctx};
    capture *c = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(capture_run(&cfg, &cs, buckets, &c, &err), SIM_OK);
    return c;
}

/* The page of one capture into h (to release). */
static void page_of(const capture *c, sim_buf *h)
{
    sim_buf_init(h);
    const capture *caps[1] = {c};
    report_html(caps, 1, h);
}

/* ---------------------------------------------------------------- curve */

START_TEST(curve_should_keep_both_extremes_of_every_bucket)
{
    timeline c;
    ck_assert(timeline_init(&c, 4));
    /* 100 events of a sawtooth 0,10,0,10,...: every bucket spans 0..10 */
    for (uint64_t e = 1; e <= 100; e++) {
        uint64_t v = e % 2 ? 0 : 10;
        timeline_row r = {.t = e, .event = e, .requested = v, .allocated = v, .reserved = v,
                          .fragmentation = (double)v / 10.0};
        timeline_add(&c, &r);
    }
    timeline_finish(&c);
    ck_assert_uint_le(c.n, 4);
    ck_assert_uint_ge(c.n, 2);
    uint64_t covered = 0;
    for (uint64_t i = 0; i < c.n; i++) {
        ck_assert_uint_eq(c.rows[i].requested_min, 0);
        ck_assert_uint_eq(c.rows[i].requested, 10);
        ck_assert_uint_eq(c.rows[i].reserved_min, 0);
        ck_assert(c.rows[i].fragmentation > 0.99);
        ck_assert(c.rows[i].fragmentation_min < 0.01);
        ck_assert_uint_eq(c.rows[i].event, covered + 1);
        covered += c.rows[i].count;
    }
    ck_assert_uint_eq(covered, 100);
    timeline_release(&c);
}
END_TEST

START_TEST(curve_should_keep_single_events_unmerged_below_the_budget)
{
    timeline c;
    ck_assert(timeline_init(&c, 100));
    for (uint64_t e = 1; e <= 10; e++) {
        timeline_row r = {.t = e, .event = e, .requested = e, .allocated = e, .reserved = e};
        timeline_add(&c, &r);
    }
    timeline_finish(&c);
    ck_assert_uint_eq(c.n, 10);
    ck_assert_uint_eq(c.rows[9].requested_min, 10);
    ck_assert_uint_eq(c.rows[9].requested, 10);
    timeline_release(&c);
}
END_TEST

/* ---------------------------------------------------------------- capture */

START_TEST(the_curve_should_cover_every_event_and_reach_the_engine_s_peaks)
{
    const char *names[] = {"growth", "greedy", "ideal", "raw", "torch"};
    evbuf *b = sawtooth();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (registry_find(names[i]) == NULL)
            continue;
        capture *c = capture_of(b, names[i], 64);
        const sim_metrics *m = &c->run->total;
        /* no OOM: every event is measured, once */
        ck_assert_uint_eq(c->events, c->run->events);
        ck_assert_uint_eq(c->oom_event, 0);
        uint64_t covered = 0, top_res = 0, top_req = 0;
        for (uint64_t k = 0; k < c->curve.n; k++) {
            const timeline_row *r = &c->curve.rows[k];
            ck_assert_uint_eq(r->event, covered + 1);
            covered += r->count;
            if (r->reserved > top_res)
                top_res = r->reserved;
            if (r->requested > top_req)
                top_req = r->requested;
        }
        /* 4 + 3 × (mark + 5 allocs + 5 frees) + 4 = 41 events: one row each under 64 */
        ck_assert_uint_eq(c->curve.n, 41);
        ck_assert_uint_eq(covered, c->events);
        ck_assert_uint_eq(top_res, m->peak_reserved_bytes);
        /* 4 weights of 8 MiB + the five activations of a step: 32 MiB + 45 MiB + 5000 B */
        ck_assert_uint_eq(top_req, m->peak_requested_bytes);
        ck_assert_uint_eq(top_req, 77 * MiB + 5000);
        /* after the first event one 8 MiB weight is live, and at the end nothing */
        ck_assert_uint_eq(c->curve.rows[0].requested, 8 * MiB);
        ck_assert_uint_eq(c->curve.rows[40].requested, 0);
        capture_free(c);
    }
    evbuf_free(b);
}
END_TEST

/* 3 weights of 4 GiB on a 16 GiB device, then 8 GiB that does not fit, then more. */
static evbuf *oom_trace(void)
{
    evbuf *b = evbuf_new("oom.json", "oom");
    for (uint64_t id = 1; id <= 3; id++)
        push_alloc(b, id, 4 * GiB, id, "weight");
    push_alloc(b, 4, 8 * GiB, 4, "too big");
    push_alloc(b, 5, 1 * GiB, 5, "after");
    push_free(b, 4, 6);
    push_free(b, 1, 7);
    return b;
}

static capture *capture_skip(evbuf *b, bool skip)
{
    engine_config cfg = config_for("ideal");
    cfg.on_oom_skip = skip;
    evb_ctx ctx = {b, {0}};
    capture_sources cs = {1, evb_open, evb_close, &ctx};
    capture *c = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(capture_run(&cfg, &cs, 64, &c, &err), SIM_OK);
    return c;
}

START_TEST(an_oom_that_ends_the_process_should_end_the_curve_there)
{
    evbuf *b = oom_trace();
    capture *c = capture_skip(b, false);
    /* 7 events counted; the process died at the 4th, so 4 were measured */
    ck_assert_uint_eq(c->run->events, 7);
    ck_assert_uint_eq(c->events, 4);
    ck_assert_uint_eq(c->oom_event, 4);
    ck_assert_uint_eq(c->curve.rows[c->curve.n - 1].event + c->curve.rows[c->curve.n - 1].count - 1, 4);
    /* the peak is the 3 weights (first reached at event 3): all live there */
    ck_assert_uint_eq(c->live_count, 3);
    ck_assert_uint_eq(c->live_bytes, 12 * GiB);
    capture_free(c);
    evbuf_free(b);
}
END_TEST

START_TEST(an_allocation_dropped_by_skip_should_not_be_live_at_the_peak)
{
    evbuf *b = oom_trace();
    capture *c = capture_skip(b, true);
    /* every event measured; the peak is 12 GiB + 1 GiB after event 5 */
    ck_assert_uint_eq(c->events, 7);
    ck_assert_uint_eq(c->oom_event, 4);
    ck_assert_uint_eq(c->run->total.peak_reserved_bytes, 13 * GiB);
    ck_assert_uint_eq(c->live_count, 4);
    ck_assert_uint_eq(c->live_bytes, 13 * GiB);
    for (uint32_t i = 0; i < c->n_top; i++)
        ck_assert_uint_ne(c->top[i].id, 4);
    ck_assert_str_eq(c->top[c->n_top - 1].tag, "after");
    capture_free(c);
    evbuf_free(b);
}
END_TEST

START_TEST(the_second_pass_should_see_the_live_allocations_at_the_peak)
{
    evbuf *b = sawtooth();
    capture *c = capture_of(b, "ideal", 64);
    /* ideal: reserved = requested, first peak at the 5th activation of step 1 */
    ck_assert_uint_eq(c->live_count, 9);
    ck_assert_uint_eq(c->n_top, 9);
    ck_assert_uint_eq(c->top[0].size, 15 * MiB + 1000);
    ck_assert_str_eq(c->top[0].tag, "big<activation>");
    ck_assert_uint_eq(c->top[0].id, 9);
    uint64_t live = 0, used = 0;
    for (uint32_t i = 0; i < c->n_top; i++)
        live += c->top[i].size;
    ck_assert_uint_eq(live, c->live_bytes);
    ck_assert_uint_eq(live, c->run->total.peak_reserved_bytes);
    for (uint64_t i = 0; i < c->n_blocks; i++)
        if (c->blocks[i].b.state == BLOCK_USED)
            used += c->blocks[i].b.requested_bytes;
    ck_assert_uint_eq(used, live);
    capture_free(c);
    evbuf_free(b);
}
END_TEST

START_TEST(the_map_of_growth_should_show_regions_with_free_blocks)
{
    uint64_t held = 0; /* the bytes of every block on the map */
    evbuf *b = sawtooth();
    capture *c = capture_of(b, "growth", 64);
    ck_assert_uint_gt(c->n_blocks, 0);
    for (uint64_t i = 0; i < c->n_blocks; i++)
        held += c->blocks[i].b.size_bytes;
    ck_assert_uint_eq(held, c->run->total.peak_reserved_bytes);
    capture_free(c);
    evbuf_free(b);
}
END_TEST

/* ---------------------------------------------------------------- what-if */

/* oom_trace replayed under cfg: its one OOM, the 8 GiB request. */
static sim_run *oom_run(evbuf *b, const engine_config *cfg)
{
    sim_error err;
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(b, &cur);
    sim_run *run = NULL;
    ck_assert_int_eq(engine_run(cfg, &src, 1, &run, &err), SIM_OK);
    ck_assert_uint_eq(run->total.ooms, 1);
    return run;
}

START_TEST(the_what_if_should_ask_torch_about_expandable_segments_after_an_oom)
{
    evbuf *b = oom_trace();
    engine_config cfg = config_for("torch");
    sim_error err;
    evbuf_cursor cur;
    sim_event_source src;
    sim_run *run = oom_run(b, &cfg);
    ck_assert(whatif_expandable_applies(&cfg, run));
    /* not when expandable segments are on already, nor for another strategy */
    sim_kv on = {"alloc_conf", "max_split_size_mb:64,expandable_segments:True"};
    engine_config already = cfg;
    already.opts = &on;
    already.n_opts = 1;
    ck_assert(!whatif_expandable_applies(&already, run));
    engine_config other = config_for("ideal");
    ck_assert(!whatif_expandable_applies(&other, run));
    /* 12 GiB of weights + 8 GiB does not fit 16 GiB however it is mapped */
    sim_kv conf = {"alloc_conf", "max_split_size_mb:64"};
    cfg.opts = &conf;
    cfg.n_opts = 1;
    whatif w;
    src = evbuf_source(b, &cur);
    ck_assert_int_eq(whatif_expandable(&cfg, &src, 1, &w, &err), SIM_OK);
    ck_assert(w.present);
    ck_assert_str_eq(w.setting, "--alloc-conf=max_split_size_mb:64,expandable_segments:True");
    ck_assert(!w.completed);
    ck_assert_uint_eq(w.ooms, 1);
    ck_assert_uint_eq(w.first_oom.id, 4);
    ck_assert_uint_eq(w.first_oom.size, 8 * GiB);
    sim_buf t;
    sim_buf_init(&t);
    report_text_whatif(run, &w, &t);
    ck_assert_ptr_nonnull(strstr(t.data, "what if --alloc-conf=max_split_size_mb:64,expandable_segments:True: "
                                         "still out of memory"));
    sim_buf_release(&t);
    sim_run_free(run);
    evbuf_free(b);
}
END_TEST

/* ---------------------------------------------------------------- html */

START_TEST(html_should_escape_markup)
{
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_xml_escape(&b, "a<b>&\"c'");
    ck_assert_str_eq(b.data, "a&lt;b&gt;&amp;&quot;c&#39;");
    ck_assert_uint_eq(b.len, 27); /* 1 + 4 + 1 + 4 + 5 + 6 + 1 + 5 */
    sim_buf_release(&b);
}
END_TEST

START_TEST(the_page_should_hold_every_picture_and_one_inline_script)
{
    evbuf *b = sawtooth();
    capture *caps[2] = {capture_of(b, "growth", HTML_PLOT_WIDTH), capture_of(b, "ideal", HTML_PLOT_WIDTH)};
    sim_buf h;
    sim_buf_init(&h);
    report_html((const capture *const *)caps, 2, &h);
    ck_assert_ptr_nonnull(strstr(h.data, "<!DOCTYPE html>"));
    ck_assert_ptr_nonnull(strstr(h.data, "class=\"overlay\""));
    ck_assert_ptr_nonnull(strstr(h.data, "class=\"timeline\""));
    ck_assert_ptr_nonnull(strstr(h.data, "class=\"fragmentation\""));
    ck_assert_ptr_nonnull(strstr(h.data, "class=\"memory-map\""));
    ck_assert_ptr_nonnull(strstr(h.data, "big&lt;activation&gt;"));
    ck_assert_ptr_nonnull(strstr(h.data, "class=\"mark-tick\""));
    /* one inline script, after everything it enhances; no external resources but the SVG namespace */
    const char *script = strstr(h.data, "<script>\n");
    ck_assert_ptr_nonnull(script);
    ck_assert_ptr_null(strstr(script + 1, "<script"));
    ck_assert_ptr_null(strstr(h.data, "<script "));
    ck_assert_ptr_null(strstr(h.data, "http://www.w3.org/1999"));
    /* readable without it: the hover texts are titles (a column of the curve, a block) */
    ck_assert_ptr_nonnull(strstr(h.data, "<rect class=\"col\""));
    ck_assert_ptr_nonnull(strstr(h.data, "<g class=\"block\"><title>used block "));
    ck_assert_ptr_null(strstr(h.data, "src="));
    char peak[64];
    snprintf(peak, sizeof peak, "(%llu B)", (unsigned long long)caps[0]->run->total.peak_reserved_bytes);
    ck_assert_ptr_nonnull(strstr(h.data, peak));
    /* deterministic */
    sim_buf h2;
    sim_buf_init(&h2);
    report_html((const capture *const *)caps, 2, &h2);
    ck_assert_str_eq(h.data, h2.data);
    sim_buf_release(&h);
    sim_buf_release(&h2);
    capture_free(caps[0]);
    capture_free(caps[1]);
    evbuf_free(b);
}
END_TEST

START_TEST(an_oom_should_be_marked_on_the_timeline)
{
    evbuf *b = evbuf_new("oom.json", "oom");
    push_alloc(b, 1, 600 * MiB, 0, "a");
    push_alloc(b, 2, 600 * MiB, 1, "b");
    engine_config cfg = config_for("ideal");
    cfg.device.capacity_bytes = GiB;
    evb_ctx ctx = {b, {0}};
    capture_sources cs = {1, evb_open, evb_close, &ctx};
    capture *c = NULL;
    sim_error err;
    ck_assert_int_eq(capture_run(&cfg, &cs, 100, &c, &err), SIM_OK);
    ck_assert_uint_eq(c->oom_event, 2);
    ck_assert_uint_eq(c->n_top, 1); /* the failed allocation is not live */
    sim_buf h;
    page_of(c, &h);
    ck_assert_ptr_nonnull(strstr(h.data, "class=\"oom-line\""));
    ck_assert_ptr_nonnull(strstr(h.data, "OOM (capacity)"));
    sim_buf_release(&h);
    capture_free(c);
    evbuf_free(b);
}
END_TEST

START_TEST(capture_should_name_each_block_by_its_allocation_where_that_is_known)
{
    /* the peak: the 4 weights and the 5 activations of the first step, each in a block
     * the walk shows and locate ties to its allocation */
    uint64_t used = 0, named = 0;
    bool big = false;
    evbuf *b = sawtooth();
    capture *c = capture_of(b, "torch", 64);
    for (uint64_t i = 0; i < c->n_blocks; i++) {
        const capture_block *k = &c->blocks[i];
        if (k->b.state != BLOCK_USED)
            continue;
        used++;
        if (!k->known)
            continue;
        named++;
        if (k->b.requested_bytes == 8 * MiB)
            ck_assert_str_eq(k->tag, "weight");
        /* the fifth activation of the step at the peak: 5 × 3 MiB + 1000 B, ids
         * 5..9 in the first step, 10..14 in the second, 15..19 in the third */
        if (k->b.requested_bytes == 15 * MiB + 1000) {
            ck_assert_str_eq(k->tag, "big<activation>");
            ck_assert_uint_eq((k->id - 4) % 5, 0);
            big = true;
        }
    }
    ck_assert_uint_eq(used, 9);
    ck_assert_uint_eq(named, 9);
    ck_assert(big);
    sim_buf h;
    page_of(c, &h);
    ck_assert_ptr_nonnull(strstr(h.data, ", tag big&lt;activation&gt;; requested 15.00 MiB (15729640 B), slack "));
    sim_buf_release(&h);
    capture_free(c);
    /* growth (BFC) locates its allocations too: every used block is named, the four
     * weights of 8 MiB as well as the step's activations of distinct sizes. The
     * weights lie in id order: 1 fills region 0 (8 MiB), 2 the low half of region 1
     * (16 MiB), 3 its other half (the best fit), 4 the low end of region 2 (32 MiB) */
    c = capture_of(b, "growth", 64);
    uint64_t weights = 0, acts = 0, weight_ids = 0;
    for (uint64_t i = 0; i < c->n_blocks; i++) {
        const capture_block *k = &c->blocks[i];
        if (k->b.state != BLOCK_USED)
            continue;
        ck_assert(k->known);
        ck_assert_uint_eq(k->alike, 1);
        if (k->b.requested_bytes == 8 * MiB) {
            ck_assert_str_eq(k->tag, "weight");
            ck_assert_uint_eq(k->id, weights + 1);
            weight_ids |= 1u << k->id;
            weights++;
        } else {
            ck_assert_str_eq(k->tag, k->b.requested_bytes == 15 * MiB + 1000 ? "big<activation>" : "act");
            acts++;
        }
    }
    ck_assert_uint_eq(weight_ids, 0x1e); /* ids 1, 2, 3 and 4, each in a block of its own */
    ck_assert_uint_eq(weights, 4);
    ck_assert_uint_eq(acts, 5);
    capture_free(c);
    evbuf_free(b);
}
END_TEST

typedef struct two_ctx {
    evbuf *b[2];
    evbuf_cursor cur[2];
} two_ctx;

static sim_status two_open(void *ctx, sim_event_source *srcs, sim_error *err)
{
    (void)err;
    two_ctx *c = ctx;
    for (int i = 0; i < 2; i++)
        srcs[i] = evbuf_source(c->b[i], &c->cur[i]);
    return SIM_OK;
}

START_TEST(marks_should_keep_their_process_and_go_on_its_own_lane)
{
    /* two processes, one mark each, and an empty_cache in the second */
    evbuf *a = evbuf_new("a.json", "a"), *b = evbuf_new("b.json", "b");
    push_alloc(a, 1, MiB, 0, "x");
    push_mark(a, "a-step", 2);
    push_free(a, 1, 4);
    push_alloc(b, 1, MiB, 1, "y");
    push_mark(b, "b-step", 3);
    sim_event ec = {.op = SIM_OP_EMPTY_CACHE, .t = 5, .ready_t = 5};
    ck_assert_int_eq(evbuf_push(b, &ec), SIM_OK);
    engine_config cfg = config_for("torch");
    two_ctx ctx = {{a, b}, {{0}, {0}}};
    capture_sources cs = {2, two_open, evb_close, &ctx};
    capture *c = NULL;
    sim_error err;
    ck_assert_int_eq(capture_run(&cfg, &cs, 64, &c, &err), SIM_OK);
    ck_assert_uint_eq(c->n_marks, 3);
    /* in time order: a-step (t 2), b-step (t 3), empty_cache (t 5) */
    ck_assert_str_eq(c->marks[0].name, "a-step");
    ck_assert_uint_eq(c->marks[0].process, 0);
    ck_assert_str_eq(c->marks[1].name, "b-step");
    ck_assert_uint_eq(c->marks[1].process, 1);
    ck_assert(c->marks[2].empty_cache);
    ck_assert_uint_eq(c->marks[2].process, 1);
    /* the curve's numbers: events 1 (a alloc), 2 (b alloc), 3 (a-step), 4 (b-step) */
    ck_assert_uint_eq(c->marks[0].event, 3);
    ck_assert_uint_eq(c->marks[1].event, 4);
    sim_buf h;
    page_of(c, &h);
    /* two lanes above the plot (TOP 30 + one more lane of 14: the plot starts at 44):
     * p1's ticks from y 18 to 28, p2's from 32 to 42 */
    ck_assert_ptr_nonnull(strstr(h.data, ">p1</text>"));
    ck_assert_ptr_nonnull(strstr(h.data, ">p2</text>"));
    const char *m0 = strstr(h.data, "<g class=\"mark\" data-process=\"0\">");
    const char *m1 = strstr(h.data, "<g class=\"mark\" data-process=\"1\">");
    ck_assert_ptr_nonnull(m0);
    ck_assert_ptr_nonnull(m1);
    ck_assert_ptr_nonnull(strstr(m0, "y1=\"18.0\""));
    ck_assert_ptr_nonnull(strstr(m1, "y1=\"32.0\""));
    ck_assert_ptr_nonnull(strstr(h.data, "empty_cache of b at event"));
    sim_buf_release(&h);
    capture_free(c);
    evbuf_free(a);
    evbuf_free(b);
}
END_TEST

START_TEST(the_bfc_what_if_should_ask_the_other_set_ups_after_an_oom)
{
    evbuf *b = oom_trace();
    engine_config cfg = config_for("growth");
    sim_run *run = oom_run(b, &cfg);
    /* growth: greedy and limit; greedy: limit only; limit: greedy only; torch: none */
    ck_assert_uint_eq(whatif_bfc_count(&cfg, run), 2);
    engine_config greedy = config_for("greedy"), torch = config_for("torch");
    ck_assert_uint_eq(whatif_bfc_count(&greedy, run), 1);
    ck_assert_uint_eq(whatif_bfc_count(&torch, run), 0);
    whatif w[2];
    sim_error err;
    evbuf_cursor cur;
    sim_event_source src;
    for (uint32_t i = 0; i < 2; i++) {
        src = evbuf_source(b, &cur);
        ck_assert_int_eq(whatif_bfc(&cfg, run, i, &src, 1, &w[i], &err), SIM_OK);
        /* 3 × 4 GiB + 8 GiB is more than the 16 GiB device under any set-up */
        ck_assert(w[i].present);
        ck_assert(!w[i].completed);
        ck_assert_uint_eq(w[i].first_oom.id, 4);
    }
    ck_assert_str_eq(w[0].setting, "--strategy=greedy");
    /* all of the 16 GiB device (no context in this config): 16384 MiB */
    ck_assert_str_eq(w[1].setting, "--strategy=limit --limit=16384MiB");
    ck_assert_int_eq(whatif_bfc(&cfg, run, 2, &src, 1, &w[0], &err), SIM_EUSAGE);
    sim_run_free(run);
    /* the report renders the answers it is given */
    capture *c = capture_skip(b, false);
    sim_buf h;
    sim_buf_init(&h);
    const capture *caps[1] = {c};
    report_html_opts ro = {NULL, false, &w[1], 1};
    report_html_with(caps, 1, &ro, &h);
    ck_assert_ptr_nonnull(strstr(h.data, "<p class=\"what-if\">what if --strategy=limit --limit=16384MiB: still out of "
                                         "memory, at event "));
    sim_buf_release(&h);
    capture_free(c);
    evbuf_free(b);
}
END_TEST

/* ---------------------------------------------------------------- limits */

/* report_limit_text of the sawtooth replayed under sname with one option (key NULL:
 * none) on a 16 GiB device with context ctx and compute capability cc, into buf. */
static const char *limit_of(const char *sname, const char *key, const char *value, uint64_t ctx, unsigned cc,
                            char *buf, size_t cap)
{
    engine_config cfg = config_for(sname);
    cfg.device.context_bytes = ctx;
    cfg.device.cc_major = cc;
    sim_kv kv = {key, value};
    cfg.opts = key ? &kv : NULL;
    cfg.n_opts = key ? 1 : 0;
    evbuf *b = sawtooth();
    evbuf_cursor cur;
    sim_event_source src = evbuf_source(b, &cur);
    sim_run *run = NULL;
    sim_error err;
    ck_assert_int_eq(engine_run(&cfg, &src, 1, &run, &err), SIM_OK);
    report_limit_text(run, buf, cap);
    ck_assert_uint_eq(limit_find(run, NULL, 0), report_limit_bytes(run));
    sim_run_free(run);
    evbuf_free(b);
    return buf;
}

START_TEST(the_limit_should_say_where_it_comes_from)
{
    char t[320];
    ck_assert_str_eq(limit_of("torch", NULL, NULL, 0, 0, t, sizeof t), "16.00 GiB (capacity)");
    /* (uint64)(0.8 x 17179869184 B) = 13743895347 B = 12.80 GiB */
    ck_assert_str_eq(limit_of("torch", "memory_fraction", "0.8", 0, 0, t, sizeof t),
                     "12.80 GiB (0.8 x 16.00 GiB, --memory-fraction)");
    ck_assert_str_eq(limit_of("torch", "alloc_conf", "per_process_memory_fraction:0.5", 0, 0, t, sizeof t),
                     "8.00 GiB (0.5 x 16.00 GiB, per_process_memory_fraction in --alloc-conf)");
    ck_assert_str_eq(limit_of("async", "memory_fraction", "0.25", 0, 0, t, sizeof t),
                     "4.00 GiB (0.25 x 16.00 GiB, --memory-fraction)");
    /* TF's reserve on an unknown compute capability is 1536 MiB: 16384 - 1536 = 14848 MiB */
    ck_assert_str_eq(limit_of("greedy", NULL, NULL, 0, 0, t, sizeof t),
                     "14.50 GiB (TF preset: capacity - 1536 MiB reserve)");
    /* cc 7: 1050 MiB after the 500 MiB context: 16384 - 500 - 1050 = 14834 MiB = 14.49 GiB */
    ck_assert_str_eq(limit_of("growth", NULL, NULL, 500 * MiB, 7, t, sizeof t),
                     "14.49 GiB (TF preset: capacity - 500.00 MiB context - 1050 MiB reserve)");
    ck_assert_str_eq(limit_of("growth", "mem_fraction", "0.5", 0, 0, t, sizeof t),
                     "8.00 GiB (0.5 x 16.00 GiB, --mem-fraction)");
    /* JAX: 0.75 x 16 GiB = 12 GiB, already a multiple of 2 MiB */
    ck_assert_str_eq(limit_of("greedy", "bfc_preset", "jax", 0, 0, t, sizeof t),
                     "12.00 GiB (JAX preset: 0.75 x 16.00 GiB, rounded up to 2 MiB)");
    ck_assert_str_eq(limit_of("limit", "limit", "4096MiB", 0, 0, t, sizeof t), "4.00 GiB (--limit)");
    /* 16384 - 500 MiB = 15884 MiB = 15.51 GiB */
    ck_assert_str_eq(limit_of("ideal", NULL, NULL, 500 * MiB, 0, t, sizeof t), "15.51 GiB (capacity - 500.00 MiB context)");
}
END_TEST

/* ---------------------------------------------------------------- progress */

START_TEST(progress_should_show_rate_and_eta)
{
    char line[160];
    progress_format(line, sizeof line, "replay", 500000, 1000000, false, 2.0);
    ck_assert_str_eq(line, "replay  500k events  250k/s  50%  ETA 2s");
    progress_format(line, sizeof line, "replay", 1500000, 0, false, 1.0);
    ck_assert_str_eq(line, "replay  1.50M events  1.50M/s");
    progress_format(line, sizeof line, "replay", 100000, 1000000, true, 1.0);
    ck_assert_str_eq(line, "replay  100k events  100k/s  ~10%  ETA ~9s");
}
END_TEST

START_TEST(progress_should_stay_silent_off_a_terminal)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    progress p;
    progress_init(&p, f, "replay", 10, false);
    ck_assert(!p.on);
    progress_update(&p, 5);
    progress_finish(&p);
    ck_assert_int_eq(ftell(f), 0);
    fclose(f);
}
END_TEST

/* ---------------------------------------------------------------- junit */

START_TEST(a_junit_failure_should_keep_its_message_on_one_line_and_its_details_in_the_body)
{
    sim_buf b;
    sim_buf_init(&b);
    const junit_property props[] = {{"trace", "t<1>.jsonl"}};
    junit_case cases[] = {
        {"peak_reserved: t.jsonl under torch vs b.json", "2.00 GiB\nbaseline 1.00 GiB", "line 1\nline 2 & more\n", true,
         0.25},
        {"peak_allocated: t.jsonl under torch vs b.json", "ok", NULL, false, 0.25},
    };
    junit_suite s = {"gpusim check t.jsonl under torch vs b.json", "gpusim.check", "regression", props, 1, 0.5,
                     "2026-12-01T20:00:00", "", "out\n"};
    report_junit(&s, cases, 2, &b);
    /* the message's line break is a space; the body keeps its lines, escaped */
    ck_assert_ptr_nonnull(strstr(b.data, "message=\"2.00 GiB baseline 1.00 GiB\">line 1\nline 2 &amp; more\n</failure>"));
    /* no hostname: localhost, as Ant's schema asks; times as decimals */
    ck_assert_ptr_nonnull(strstr(b.data, "time=\"0.500\" timestamp=\"2026-12-01T20:00:00\" hostname=\"localhost\">"));
    ck_assert_ptr_nonnull(strstr(b.data, "<property name=\"trace\" value=\"t&lt;1&gt;.jsonl\"/>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<testcase name=\"peak_allocated: t.jsonl under torch vs b.json\" "
                                         "classname=\"gpusim.check\" time=\"0.250\"/>"));
    ck_assert_ptr_nonnull(strstr(b.data, "tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\""));
    ck_assert_ptr_nonnull(strstr(b.data, "<system-out>out\n</system-out>\n    <system-err></system-err>\n"));
    sim_buf_release(&b);
}
END_TEST

START_TEST(a_junit_timestamp_should_be_utc_without_a_zone)
{
    char t[32];
    /* 1764619200 s = 2025-12-01 20:00:00 UTC */
    ck_assert_str_eq(junit_timestamp(1764619200LL, t, sizeof t), "2025-12-01T20:00:00");
    ck_assert_str_eq(junit_timestamp(0, t, sizeof t), "1970-01-01T00:00:00");
}
END_TEST
