/* Check suite for traces/trace: both containers, detection by content, header
 * rules, event validation, and the writer's round trip. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "support/check_main.h"
#include "support/event_check.h"
#include "support/seed.h"
#include "traces/trace.h"

static trace_reader *open_text(const char *text, sim_error *err)
{
    trace_reader *r = NULL;
    sim_error_clear(err);
    sim_status st = trace_open_mem("mem.trace", text, strlen(text), &r, err);
    if (st != SIM_OK)
        ck_assert_ptr_null(r);
    return r;
}

/* open_text that must succeed with the container want. */
static trace_reader *open_ok(const char *text, trace_container want, sim_error *err)
{
    trace_reader *r = open_text(text, err);
    ck_assert_msg(r != NULL, "%s", err->msg);
    ck_assert_int_eq(trace_get_container(r), want);
    return r;
}

/* Read all events; returns the final status (SIM_END when all were good). */
static sim_status read_all(trace_reader *r, sim_event *evs, int cap, int *n, sim_error *err)
{
    sim_event_source src = trace_source(r);
    sim_status st;
    *n = 0;
    sim_event ev;
    while ((st = src.next(src.ctx, &ev, err)) == SIM_OK)
        if (*n < cap)
            evs[(*n)++] = ev;
    return st;
}

START_TEST(jsonl_should_be_detected_by_content_and_streamed)
{
    sim_error err;
    trace_reader *r = open_ok("{\"format\":\"gpusim-trace\",\"version\":1,\"name\":\"n\",\"time_unit\":\"us\"}\n"
                              "\n"
                              "{\"op\":\"alloc\",\"id\":7,\"size\":4096,\"t\":3,\"stream\":2}\n"
                              "{\"op\":\"free\",\"id\":7,\"t\":5,\"ready_t\":9}\n"
                              "{\"op\":\"mark\",\"name\":\"step\"}\n",
                              TRACE_JSONL, &err);
    ck_assert_str_eq(trace_get_header(r)->name, "n");
    sim_event ev[8];
    int n;
    ck_assert_int_eq(read_all(r, ev, 8, &n, &err), SIM_END);
    ck_assert_int_eq(n, 3);
    /* times in us become ns; the blank line is skipped but counted */
    ck_assert_int_eq(ev[0].op, SIM_OP_ALLOC);
    ck_assert_uint_eq(ev[0].t, 3000);
    ck_assert_uint_eq(ev[0].stream, 2);
    ck_assert_uint_eq(ev[0].line, 3);
    ck_assert_uint_eq(ev[1].ready_t, 9000);
    ck_assert_uint_eq(ev[2].t, 5000); /* a missing t repeats the previous one */
    trace_close(r);
}
END_TEST

START_TEST(a_json_document_should_be_detected_whatever_its_layout)
{
    sim_error err;
    trace_reader *r = open_ok("{\"format\":\"gpusim-trace\",\n \"version\":1,\n"
                              " \"device\":{\"name\":\"X\",\"capacity_bytes\":1024},\n"
                              " \"meta\":{\"k\":[1,2]},\n"
                              " \"events\":[{\"op\":\"alloc\",\"id\":1,\"size\":5},{\"op\":\"free\",\"id\":1}]}",
                              TRACE_JSON, &err);
    ck_assert_str_eq(trace_get_header(r)->device_name, "X");
    ck_assert_uint_eq(trace_get_header(r)->device_capacity, 1024);
    ck_assert_str_eq(trace_get_header(r)->meta_json, "{\"k\":[1,2]}");
    sim_event ev[4];
    int n;
    ck_assert_int_eq(read_all(r, ev, 4, &n, &err), SIM_END);
    ck_assert_int_eq(n, 2);
    ck_assert_uint_eq(ev[1].index, 2);
    trace_close(r);
}
END_TEST

static void expect_open_error(const char *text, const char *msg)
{
    sim_error err;
    trace_reader *r = open_text(text, &err);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(err.status, SIM_ETRACE);
    ck_assert_msg(strstr(err.msg, msg) != NULL, "message '%s' lacks '%s'", err.msg, msg);
}

START_TEST(headers_should_be_checked)
{
    expect_open_error("", "empty file");
    expect_open_error("   \n\n", "empty file");
    expect_open_error("{\"version\":1}", "missing \"format\"");
    expect_open_error("{\"format\":\"other\",\"version\":1}", "must be \"gpusim-trace\"");
    expect_open_error("{\"format\":\"gpusim-trace\"}", "missing \"version\"");
    expect_open_error("{\"format\":\"gpusim-trace\",\"version\":2}", "unsupported \"version\"");
    expect_open_error("{\"format\":\"gpusim-trace\",\"version\":1,\"time_unit\":\"s\"}", "\"time_unit\"");
    expect_open_error("{\"format\":\"gpusim-trace\",\"version\":1,\"events\":{}}", "must be an array");
    expect_open_error("[1,2]", "JSON object header");
    expect_open_error("{\"format\":\"gpusim-trace\",\"version\":1,\"events\":[", "not valid JSON");
}
END_TEST

static void expect_event_error(const char *event_line, const char *msg)
{
    char text[1024];
    snprintf(text, sizeof text, "{\"format\":\"gpusim-trace\",\"version\":1}\n%s\n", event_line);
    sim_error err;
    trace_reader *r = open_text(text, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    sim_event ev[4];
    int n;
    ck_assert_int_eq(read_all(r, ev, 4, &n, &err), SIM_ETRACE);
    ck_assert_msg(strstr(err.msg, msg) != NULL, "'%s': message '%s' lacks '%s'", event_line, err.msg, msg);
    ck_assert_uint_eq(err.line, 2);
    trace_close(r);
}

START_TEST(events_should_be_checked_key_by_key)
{
    expect_event_error("[1]", "must be a JSON object");
    expect_event_error("{\"id\":1}", "missing \"op\"");
    expect_event_error("{\"op\":5}", "\"op\" must be a string");
    expect_event_error("{\"op\":\"realloc\"}", "unknown op \"realloc\"");
    expect_event_error("{\"op\":\"alloc\",\"size\":1}", "missing \"id\"");
    expect_event_error("{\"op\":\"alloc\",\"id\":1}", "missing \"size\"");
    expect_event_error("{\"op\":\"alloc\",\"id\":1,\"size\":-1}", "is negative");
    expect_event_error("{\"op\":\"alloc\",\"id\":1,\"size\":0.5}", "is not an integer");
    expect_event_error("{\"op\":\"alloc\",\"id\":1,\"size\":9007199254740993}", "exceeds 2^53");
    expect_event_error("{\"op\":\"alloc\",\"id\":1,\"size\":\"big\"}", "must be an integer, not a string");
    expect_event_error("{\"op\":\"alloc\",\"id\":1,\"size\":1,\"stream\":4294967296}", "below 2^32");
    expect_event_error("{\"op\":\"alloc\",\"id\":1,\"size\":1,\"tag\":5}", "\"tag\" must be a string");
    expect_event_error("{\"op\":\"alloc\",\"id\":2,\"size\":1,\"share\":-1}", "is negative");
    expect_event_error("{\"op\":\"alloc\",\"id\":2,\"size\":1,\"share\":\"1\"}", "\"share\" must be an integer");
    expect_event_error("{\"op\":\"alloc\",\"id\":2,\"size\":1,\"share\":9007199254740993}", "exceeds 2^53");
    expect_event_error("{\"op\":\"free\",\"id\":1,\"share\":2}", "unknown key \"share\" in a free event");
    expect_event_error("{\"op\":\"free\",\"id\":1,\"t\":5,\"ready_t\":4}", "before t");
    expect_event_error("{\"op\":\"free\",\"id\":1,\"sise\":4}", "unknown key \"sise\"");
    expect_event_error("{\"op\":\"mark\"}", "missing \"name\"");
    expect_event_error("{\"op\":\"alloc\",\"id\":1,\"size\":1", "not valid JSON");
}
END_TEST

START_TEST(the_size_limit_should_be_exactly_2_to_the_53)
{
    sim_error err;
    trace_reader *r = open_text("{\"format\":\"gpusim-trace\",\"version\":1}\n"
                                "{\"op\":\"alloc\",\"id\":9007199254740992,\"size\":9007199254740992}\n",
                                &err);
    ck_assert_ptr_nonnull(r);
    sim_event ev[2];
    int n;
    ck_assert_int_eq(read_all(r, ev, 2, &n, &err), SIM_END);
    ck_assert_uint_eq(ev[0].size, 9007199254740992ull);
    trace_close(r);
}
END_TEST

START_TEST(time_going_backwards_should_name_the_line)
{
    sim_error err;
    trace_reader *r = open_text("{\"format\":\"gpusim-trace\",\"version\":1}\n"
                                "{\"op\":\"mark\",\"name\":\"a\",\"t\":10}\n"
                                "{\"op\":\"mark\",\"name\":\"b\",\"t\":9}\n",
                                &err);
    sim_event ev[2];
    int n;
    ck_assert_int_eq(read_all(r, ev, 2, &n, &err), SIM_ETRACE);
    ck_assert_uint_eq(err.line, 3);
    ck_assert(strstr(err.msg, "t goes backwards") != NULL);
    trace_close(r);
}
END_TEST

START_TEST(the_writer_should_round_trip_every_field)
{
    char path[] = "/tmp/gpusim-trace-test-XXXXXX.jsonl";
    int fd = mkstemps(path, 6);
    ck_assert(fd >= 0);
    close(fd);
    trace_header h = {.device_capacity = 12345};
    snprintf(h.name, sizeof h.name, "round \"trip\"");
    snprintf(h.device_name, sizeof h.device_name, "dev");
    sim_error err;
    trace_writer *w;
    ck_assert_int_eq(trace_writer_open(path, TRACE_JSONL, &h, &w, &err), SIM_OK);
    sim_event in[4] = {
        {.op = SIM_OP_ALLOC,
         .id = 1,
         .size = 4096,
         .t = 5,
         .stream = 3,
         .tag = "w\n1",
         .proc = "p",
         .has_share = true,
         .share = 9007199254740992u},
        {.op = SIM_OP_FREE, .id = 1, .t = 6, .ready_t = 8},
        {.op = SIM_OP_EMPTY_CACHE, .t = 9},
        {.op = SIM_OP_MARK, .t = 9, .name = "end"},
    };
    for (int i = 0; i < 4; i++) {
        if (in[i].ready_t == 0)
            in[i].ready_t = in[i].t;
        ck_assert_int_eq(trace_writer_event(w, &in[i], &err), SIM_OK);
    }
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
    trace_reader *r;
    ck_assert_int_eq(trace_open(path, &r, &err), SIM_OK);
    ck_assert_str_eq(trace_get_header(r)->name, "round \"trip\"");
    ck_assert_uint_eq(trace_get_header(r)->device_capacity, 12345);
    sim_event_source src = trace_source(r);
    sim_event ev;
    ck_assert_int_eq(src.next(src.ctx, &ev, &err), SIM_OK);
    ck_assert_uint_eq(ev.size, 4096);
    ck_assert_uint_eq(ev.stream, 3);
    ck_assert(ev.has_share);
    ck_assert_uint_eq(ev.share, 9007199254740992u);
    ck_assert_str_eq(ev.tag, "w\n1");
    ck_assert_str_eq(ev.proc, "p");
    ck_assert_int_eq(src.next(src.ctx, &ev, &err), SIM_OK);
    ck_assert_uint_eq(ev.ready_t, 8);
    ck_assert(!ev.has_share);
    ck_assert_int_eq(src.next(src.ctx, &ev, &err), SIM_OK);
    ck_assert_int_eq(ev.op, SIM_OP_EMPTY_CACHE);
    ck_assert_int_eq(src.next(src.ctx, &ev, &err), SIM_OK);
    ck_assert_str_eq(ev.name, "end");
    ck_assert_int_eq(src.next(src.ctx, &ev, &err), SIM_END);
    trace_close(r);
    unlink(path);
}
END_TEST

START_TEST(a_discarded_writer_should_leave_no_file)
{
    char path[] = "/tmp/gpusim-trace-discard-XXXXXX";
    char *dir = mkdtemp(path);
    ck_assert_ptr_nonnull(dir);
    char file[512];
    snprintf(file, sizeof file, "%s/out.json", dir);
    sim_error err;
    trace_writer *w;
    ck_assert_int_eq(trace_writer_open(file, TRACE_JSON, NULL, &w, &err), SIM_OK);
    sim_event e = {.op = SIM_OP_MARK, .name = "x"};
    ck_assert_int_eq(trace_writer_event(w, &e, &err), SIM_OK);
    ck_assert_int_eq(trace_writer_close(w, false, &err), SIM_OK);
    ck_assert_int_eq(access(file, F_OK), -1);
    ck_assert_int_eq(rmdir(dir), 0); /* empty: no temporary file either */
}
END_TEST

/* ---- the JSONL fast path (traces/jsonl_fast.h) against the general reader */

/* One random event line: keys of every op (the pool events' too, which the fast
 * path leaves to the general reader) in any order, sometimes a key twice or
 * of another op, numbers at the edges of what the fast path takes (16 and 17
 * digits, 2^53 and one more, a leading zero, a sign, a fraction, an exponent),
 * spaces here and there, strings with and without escapes. */
static void random_line(char *out, size_t cap, uint64_t *rng)
{
    static const char *const KEYS[] = {"op",      "id",   "size",  "t",    "stream",  "tag",      "proc",
                                       "ready_t", "name", "share", "pool", "capture", "no_split", "xx"};
    static const char *const OPS[] = {"alloc", "free",       "mark",     "empty_cache",  "allocx",
                                      "Free",  "pool_begin", "pool_end", "pool_release", "graph_replay"};
    static const char *const NUMS[] = {"0", "7", "42", "1234567", "12345678", "123456789", "9999999999999999",
                                       "10000000000000000", "9007199254740992", "9007199254740993", "007", "-1",
                                       "1.5", "1e3", "3E0", "18446744073709551616", "\"5\"", "null", "true"};
    static const char *const STRS[] = {"\"x\"", "\"act:L1\"", "\"\"", "\"a\\\"b\"", "\"\\u0041\"", "5", "null"};
    static const char *const WS[] = {"", "", "", " ", "  ", "\t"};
    size_t n = 0;
    n += (size_t)snprintf(out + n, cap - n, "%s{", WS[test_rand(rng) % 6]);
    uint64_t keys = 1 + test_rand(rng) % 6;
    for (uint64_t i = 0; i < keys; i++) {
        const char *k = i == 0 && test_rand(rng) % 8 ? "op" : KEYS[test_rand(rng) % 14];
        const char *w1 = WS[test_rand(rng) % 6], *w2 = WS[test_rand(rng) % 6];
        const char *v;
        char opv[32];
        if (strcmp(k, "op") == 0) {
            snprintf(opv, sizeof opv, "\"%s\"", OPS[test_rand(rng) % 10]);
            v = test_rand(rng) % 10 ? opv : NUMS[test_rand(rng) % 19];
        } else if (strcmp(k, "tag") == 0 || strcmp(k, "proc") == 0 || strcmp(k, "name") == 0)
            v = STRS[test_rand(rng) % 7];
        else if (strcmp(k, "capture") == 0 || strcmp(k, "no_split") == 0)
            v = test_rand(rng) % 4 ? (test_rand(rng) % 2 ? "true" : "false") : NUMS[test_rand(rng) % 19];
        else
            v = test_rand(rng) % 4 ? NUMS[test_rand(rng) % 6] : NUMS[test_rand(rng) % 19];
        n += (size_t)snprintf(out + n, cap - n, "%s%s\"%s\"%s:%s%s", i ? "," : "", w1, k, w2, w1, v);
    }
    snprintf(out + n, cap - n, "%s}%s", WS[test_rand(rng) % 6], WS[test_rand(rng) % 6]);
}

START_TEST(the_fast_path_should_read_every_line_as_the_general_reader_does)
{
    uint64_t seed = test_seed("the_fast_path_should_read_every_line_as_the_general_reader_does");
    uint64_t rng = seed;
    static const char *const UNITS[] = {"ns", "us", "ms"};
    char lines[3][512], jsonl[2048], doc[2048];
    for (int iter = 0; iter < 20000; iter++) {
        const char *unit = UNITS[test_rand(&rng) % 3];
        for (int i = 0; i < 3; i++)
            random_line(lines[i], sizeof lines[i], &rng);
        /* the same three events as JSON Lines (fast path first) and as a document
         * (the general reader only), one event per line in both */
        snprintf(jsonl, sizeof jsonl, "{\"format\":\"gpusim-trace\",\"version\":1,\"time_unit\":\"%s\"}\n%s\n%s\n%s\n",
                 unit, lines[0], lines[1], lines[2]);
        snprintf(doc, sizeof doc,
                 "{\"format\":\"gpusim-trace\",\"version\":1,\"time_unit\":\"%s\",\"events\":[\n%s,\n%s,\n%s]}", unit,
                 lines[0], lines[1], lines[2]);
        sim_error e1, e2;
        trace_reader *a = open_text(jsonl, &e1), *b = open_text(doc, &e2);
        if (b == NULL) {
            /* not valid JSON as a document (a bad line): JSONL says so at that line */
            if (a != NULL) {
                sim_event ev[4];
                int n;
                ck_assert_int_ne(read_all(a, ev, 4, &n, &e1), SIM_END);
                trace_close(a);
            }
            continue;
        }
        ck_assert_ptr_nonnull(a);
        sim_event_source sa = trace_source(a), sb = trace_source(b);
        for (;;) {
            sim_event x, y;
            sim_status s1 = sa.next(sa.ctx, &x, &e1), s2 = sb.next(sb.ctx, &y, &e2);
            ck_assert_msg(s1 == s2, "seed %llu: %s\n%s\n%s: JSONL %d (%s), document %d (%s)", (unsigned long long)seed,
                          lines[0], lines[1], lines[2], s1, s1 == SIM_OK ? "" : e1.msg, s2, s2 == SIM_OK ? "" : e2.msg);
            if (s1 != SIM_OK) {
                if (s1 != SIM_END)
                    ck_assert_uint_eq(e1.line, e2.line);
                break;
            }
            event_check_same(&x, &y);
        }
        trace_close(a);
        trace_close(b);
    }
}
END_TEST
