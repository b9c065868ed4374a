/* Check suite for the trace v1 pool events (pool_begin, pool_end, pool_release,
 * graph_replay) in every container: every op and field combination round-trips
 * JSON → JSONL → gtrace → JSON (and through the in-memory spool, sim/evbuf.h) byte
 * for byte and field for field; every reader error of a bad pool field names the file
 * and the line (JSONL) or event (JSON); the gtrace encoding is the one
 * traces/FORMAT.md documents, and every malformed pool event in it is refused; the
 * engine refuses pool 0 from a source no reader checked. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/buf.h"
#include "sim/engine.h"
#include "sim/evbuf.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "support/event_check.h"
#include "support/slurp.h"
#include "traces/gtrace.h"
#include "traces/trace.h"

static const char *tmp_path(const char *suffix)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/gpusim-test-pool-events-%d%s", (int)getpid(), suffix);
    return path;
}

/* ---------------------------------------------------------------- the combinations */

/* A JSON document in exactly the spelling gpusim's writer uses (written here by hand,
 * not by the writer): an alloc, then every pool_begin combination (no stream, stream
 * 0, 7 and 2^32 − 1; capture left to its default or given against it; use_on_oom;
 * no_split; with and without a proc) with pool ids of one to eight varint bytes, each
 * followed by its pool_end, pool_release and graph_replays (no name, "", a plain name
 * and one with escapes), with a mark, an empty_cache and a deferred free among them. */
static char *combinations_json(void)
{
    static const char *const STREAMS[] = {NULL, "0", "7", "4294967295"};
    static const unsigned long long POOLS[] = {1, 127, 128, 16383, 16384, 9007199254740992ull};
    static const char *const NAMES[] = {NULL, "", "bs=8", "a \\\"graph\\\" \\\\ 2"};
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_puts(&b,
                 "{\"format\":\"gpusim-trace\",\"version\":1,\"name\":\"pools\",\"time_unit\":\"ns\",\"events\":[\n");
    sim_buf_puts(&b, "{\"op\":\"alloc\",\"id\":1,\"size\":4096,\"t\":0,\"stream\":7,\"tag\":\"weights\"}");
    unsigned long long t = 0;
    unsigned k = 0;
    for (unsigned s = 0; s < 4; s++)
        for (unsigned against = 0; against < 2; against++)
            for (unsigned oom = 0; oom < 2; oom++)
                for (unsigned split = 0; split < 2; split++)
                    for (unsigned proc = 0; proc < 2; proc++, k++) {
                        unsigned long long pool = POOLS[k % 6];
                        const char *pr = proc ? ",\"proc\":\"job \\\"A\\\"\"" : "";
                        t += k % 3 == 0 ? 0 : 1000 + k;
                        sim_buf_printf(&b, ",\n{\"op\":\"pool_begin\",\"pool\":%llu,\"t\":%llu", pool, t);
                        if (STREAMS[s])
                            sim_buf_printf(&b, ",\"stream\":%s", STREAMS[s]);
                        if (against) /* the default is a capture iff a stream is named */
                            sim_buf_printf(&b, ",\"capture\":%s", STREAMS[s] ? "false" : "true");
                        if (oom)
                            sim_buf_puts(&b, ",\"use_on_oom\":true");
                        if (split)
                            sim_buf_puts(&b, ",\"no_split\":true");
                        sim_buf_printf(&b, "%s}", pr);
                        if (k % 5 == 0)
                            sim_buf_printf(&b, ",\n{\"op\":\"mark\",\"name\":\"capture %u\",\"t\":%llu}", k, t);
                        sim_buf_printf(&b, ",\n{\"op\":\"pool_end\",\"pool\":%llu,\"t\":%llu%s}", pool, ++t, pr);
                        const char *name = NAMES[k % 4];
                        sim_buf_printf(&b, ",\n{\"op\":\"graph_replay\",\"pool\":%llu,\"t\":%llu", pool, t += 3);
                        if (name)
                            sim_buf_printf(&b, ",\"name\":\"%s\"", name);
                        sim_buf_printf(&b, "%s}", pr);
                        if (k % 7 == 0)
                            sim_buf_printf(&b, ",\n{\"op\":\"empty_cache\",\"t\":%llu}", t);
                        sim_buf_printf(&b, ",\n{\"op\":\"pool_release\",\"pool\":%llu,\"t\":%llu%s}", pool, t, pr);
                    }
    sim_buf_printf(&b, ",\n{\"op\":\"free\",\"id\":1,\"t\":%llu,\"ready_t\":%llu,\"ready_stream\":7}", t + 1, t + 9);
    sim_buf_puts(&b, "\n]}\n");
    ck_assert(!b.oom);
    return b.data;
}

/* Copy every event of path into a new file out of container c. */
static void convert(const char *in, const char *out, trace_container c)
{
    sim_error err;
    trace_reader *r = NULL;
    ck_assert_msg(trace_open(in, &r, &err) == SIM_OK, "%s: %s", in, err.msg);
    trace_writer *w = NULL;
    ck_assert_int_eq(trace_writer_open(out, c, trace_get_header(r), &w, &err), SIM_OK);
    sim_event_source src = trace_source(r);
    sim_event ev;
    sim_status st;
    while ((st = src.next(src.ctx, &ev, &err)) == SIM_OK)
        ck_assert_msg(trace_writer_event(w, &ev, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(st == SIM_END, "%s: %s", in, err.msg);
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
    trace_close(r);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(every_pool_event_should_round_trip_json_jsonl_gtrace_json_byte_for_byte)
{
    char *text = combinations_json();
    char a[256], l[256], g[256], z[256];
    snprintf(a, sizeof a, "%s", tmp_path("-a.json"));
    snprintf(l, sizeof l, "%s", tmp_path("-b.jsonl"));
    snprintf(g, sizeof g, "%s", tmp_path("-c.gtrace"));
    snprintf(z, sizeof z, "%s", tmp_path("-d.json"));
    write_text(a, text);
    convert(a, l, TRACE_JSONL);
    convert(l, g, TRACE_GTRACE);
    convert(g, z, TRACE_JSON);
    size_t len;
    char *back = test_slurp(z, &len);
    ck_assert_uint_eq(len, strlen(text));
    ck_assert_str_eq(back, text);
    free(back);
    /* the JSONL holds the same event lines */
    char *jl = test_slurp(l, &len);
    const char *ev_text = strchr(text, '\n') + 1, *ev_jl = strchr(jl, '\n') + 1;
    for (; *ev_text != ']'; ev_text = strchr(ev_text, '\n') + 1, ev_jl = strchr(ev_jl, '\n') + 1) {
        size_t n = strcspn(ev_jl, "\n");
        ck_assert_msg(strncmp(ev_text, ev_jl, n) == 0, "%.*s", (int)n, ev_jl);
    }
    free(jl);
    /* and the four readers give the same events, field for field (lines and indices too) */
    trace_reader *r[3];
    const char *paths[3] = {a, l, g};
    sim_error err;
    sim_event_source src[3];
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(trace_open(paths[i], &r[i], &err), SIM_OK);
        src[i] = trace_source(r[i]);
    }
    uint64_t n_pool = 0, n_begin_all = 0;
    for (;;) {
        sim_event ev[3];
        sim_status st = src[0].next(src[0].ctx, &ev[0], &err);
        for (int i = 1; i < 3; i++)
            ck_assert_int_eq(src[i].next(src[i].ctx, &ev[i], &err), st);
        if (st != SIM_OK)
            break;
        for (int i = 1; i < 3; i++)
            event_check_same(&ev[i], &ev[0]);
        n_pool += ev[0].op >= SIM_OP_POOL_BEGIN;
        n_begin_all += ev[0].op == SIM_OP_POOL_BEGIN && (ev[0].pool_flags & SIM_POOL_ALL_STREAMS);
    }
    ck_assert_uint_eq(n_pool, 64 * 4);
    ck_assert_uint_eq(n_begin_all, 16);
    for (int i = 0; i < 3; i++)
        trace_close(r[i]);
    free(text);
    unlink(a);
    unlink(l);
    unlink(g);
    unlink(z);
}
END_TEST

START_TEST(the_in_memory_spool_should_give_back_every_pool_field)
{
    char *text = combinations_json();
    sim_error err;
    trace_reader *r = NULL, *again = NULL;
    ck_assert_int_eq(trace_open_mem("mem.json", text, strlen(text), &r, &err), SIM_OK);
    sim_event_source src = trace_source(r);
    evbuf *b = evbuf_new("mem.json", "pools");
    ck_assert_int_eq(evbuf_fill(b, &src, &err), SIM_OK);
    /* field for field against a second reading */
    ck_assert_int_eq(trace_open_mem("mem.json", text, strlen(text), &again, &err), SIM_OK);
    sim_event_source want = trace_source(again);
    evbuf_cursor cur;
    sim_event_source got = evbuf_source(b, &cur);
    sim_event x, y;
    uint64_t n = 0;
    while (want.next(want.ctx, &y, &err) == SIM_OK) {
        ck_assert_int_eq(got.next(got.ctx, &x, &err), SIM_OK);
        event_check_same(&x, &y);
        ck_assert_int_eq(x.has_ready_stream, y.has_ready_stream);
        ck_assert_uint_eq(x.ready_stream, y.ready_stream);
        n++;
    }
    ck_assert_int_eq(got.next(got.ctx, &x, &err), SIM_END);
    ck_assert_uint_eq(n, evbuf_count(b));
    /* and byte for byte through the writer */
    const char *out = tmp_path("-spool.json");
    trace_writer *w = NULL;
    ck_assert_int_eq(trace_writer_open(out, TRACE_JSON, trace_get_header(r), &w, &err), SIM_OK);
    got = evbuf_source(b, &cur);
    while (got.next(got.ctx, &x, &err) == SIM_OK)
        ck_assert_int_eq(trace_writer_event(w, &x, &err), SIM_OK);
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
    size_t len;
    char *back = test_slurp(out, &len);
    ck_assert_str_eq(back, text);
    free(back);
    unlink(out);
    evbuf_free(b);
    trace_close(r);
    trace_close(again);
    free(text);
}
END_TEST

START_TEST(pool_lines_among_fast_path_lines_should_leave_no_pool_on_their_neighbours)
{
    const char *text = "{\"format\":\"gpusim-trace\",\"version\":1}\n"
                       "{\"op\":\"pool_begin\",\"pool\":9,\"t\":1,\"stream\":3,\"no_split\":true}\n"
                       "{\"op\":\"alloc\",\"id\":1,\"size\":512,\"t\":2,\"stream\":3}\n"
                       "{\"op\":\"graph_replay\",\"pool\":9,\"t\":3,\"name\":\"g\"}\n"
                       "{\"op\":\"mark\",\"name\":\"m\",\"t\":4}\n"
                       "{ \"op\" : \"pool_end\" , \"pool\" : 9 }\n"
                       "{\"op\":\"free\",\"id\":1,\"t\":5}\n";
    sim_error err;
    trace_reader *r = NULL;
    ck_assert_int_eq(trace_open_mem("mixed.jsonl", text, strlen(text), &r, &err), SIM_OK);
    ck_assert_int_eq(trace_get_container(r), TRACE_JSONL);
    sim_event_source src = trace_source(r);
    sim_event ev; /* one struct for every event, as the engine and convert use it */
    static const sim_op OPS[] = {SIM_OP_POOL_BEGIN, SIM_OP_ALLOC,    SIM_OP_GRAPH_REPLAY,
                                 SIM_OP_MARK,       SIM_OP_POOL_END, SIM_OP_FREE};
    static const uint64_t POOL[] = {9, 0, 9, 0, 9, 0};
    static const uint32_t FLAGS[] = {SIM_POOL_CAPTURE | SIM_POOL_NO_SPLIT, 0, 0, 0, 0, 0};
    static const uint64_t T[] = {1, 2, 3, 4, 4, 5}; /* pool_end has no t: the previous event's */
    for (int i = 0; i < 6; i++) {
        ck_assert_msg(src.next(src.ctx, &ev, &err) == SIM_OK, "%s", err.msg);
        ck_assert_int_eq(ev.op, OPS[i]);
        ck_assert_uint_eq(ev.pool, POOL[i]);
        ck_assert_uint_eq(ev.pool_flags, FLAGS[i]);
        ck_assert_uint_eq(ev.line, (uint64_t)i + 2);
        ck_assert_uint_eq(ev.index, (uint64_t)i + 1);
        ck_assert_uint_eq(ev.t, T[i]);
    }
    ck_assert_str_eq(trace_get_header(r)->name, "");
    ck_assert_int_eq(src.next(src.ctx, &ev, &err), SIM_END);
    trace_close(r);
}
END_TEST

/* ---------------------------------------------------------------- reader errors */

typedef struct bad_case {
    const char *line;
    const char *msg;
} bad_case;

static const bad_case BAD[] = {
    {"{\"op\":\"pool_begin\",\"pool\":0,\"stream\":1}", "\"pool\" must be at least 1 (0 is the default pool"},
    {"{\"op\":\"pool_release\",\"pool\":0}", "\"pool\" must be at least 1"},
    {"{\"op\":\"pool_end\"}", "missing \"pool\""},
    {"{\"op\":\"graph_replay\",\"name\":\"g\"}", "missing \"pool\""},
    {"{\"op\":\"pool_begin\",\"pool\":\"3\"}", "\"pool\" must be an integer, not a string"},
    {"{\"op\":\"pool_end\",\"pool\":-2}", "\"pool\" -2 is negative"},
    {"{\"op\":\"pool_end\",\"pool\":1.5}", "\"pool\" 1.5 is not an integer"},
    {"{\"op\":\"pool_release\",\"pool\":9007199254740993}", "\"pool\" 9007199254740993 exceeds 2^53"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"stream\":4294967296}", "\"stream\" must be below 2^32"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"stream\":-1}", "\"stream\" -1 is negative"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"stream\":\"side\"}", "\"stream\" must be an integer, not a string"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"stream\":null}", "\"stream\" must be an integer, not null"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"stream\":1,\"capture\":1}",
     "\"capture\" must be true or false, not a number"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"capture\":\"true\"}", "\"capture\" must be true or false, not a string"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"use_on_oom\":null}", "\"use_on_oom\" must be true or false, not null"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"no_split\":[]}", "\"no_split\" must be true or false, not an array"},
    {"{\"op\":\"pool_end\",\"pool\":1,\"stream\":1}", "unknown key \"stream\" in a pool_end event"},
    {"{\"op\":\"pool_end\",\"pool\":1,\"capture\":true}", "unknown key \"capture\" in a pool_end event"},
    {"{\"op\":\"pool_release\",\"pool\":1,\"name\":\"g\"}", "unknown key \"name\" in a pool_release event"},
    {"{\"op\":\"graph_replay\",\"pool\":1,\"stream\":0}", "unknown key \"stream\" in a graph_replay event"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"id\":1}", "unknown key \"id\" in a pool_begin event"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"streams\":1}", "unknown key \"streams\" in a pool_begin event"},
    {"{\"op\":\"alloc\",\"id\":1,\"size\":1,\"pool\":1}", "unknown key \"pool\" in a alloc event"},
    {"{\"op\":\"mark\",\"name\":\"m\",\"pool\":1}", "unknown key \"pool\" in a mark event"},
    {"{\"op\":\"pool_begin\",\"pool\":1,\"pool\":2}", "duplicate key \"pool\" in a pool_begin event"},
    {"{\"op\":\"graph_replay\",\"pool\":1,\"name\":5}", "\"name\" must be a string, not a number"},
    {"{\"op\":\"pool_end\",\"pool\":1,\"t\":1}", "t goes backwards"},
    {"{\"op\":\"pool_begins\",\"pool\":1}", "unknown op \"pool_begins\" (expected alloc, free, empty_cache, mark, "
                                            "pool_begin, pool_end, pool_release or graph_replay)"},
};

/* The error of reading text to its end: the status, with err filled. */
static sim_status read_to_end(const char *name, const char *text, sim_error *err)
{
    trace_reader *r = NULL;
    sim_status st = trace_open_mem(name, text, strlen(text), &r, err);
    if (st != SIM_OK)
        return st;
    sim_event_source src = trace_source(r);
    sim_event ev;
    while ((st = src.next(src.ctx, &ev, err)) == SIM_OK)
        ;
    trace_close(r);
    return st;
}

START_TEST(every_bad_pool_field_should_be_named_with_the_file_and_line)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        /* JSON Lines: the bad event on line 3, after a good one at t = 2 */
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"format\":\"gpusim-trace\",\"version\":1}\n{\"op\":\"mark\",\"name\":\"x\",\"t\":2}\n%s\n",
                 BAD[i].line);
        sim_error err;
        sim_error_clear(&err);
        ck_assert_int_eq(read_to_end("bad.jsonl", text, &err), SIM_ETRACE);
        ck_assert_msg(strstr(err.msg, BAD[i].msg) != NULL, "%s: got \"%s\"", BAD[i].line, err.msg);
        ck_assert_str_eq(err.file, "bad.jsonl");
        ck_assert_uint_eq(err.line, 3);
        /* a document: the same message, at the event's line and index */
        snprintf(text, sizeof text,
                 "{\"format\":\"gpusim-trace\",\"version\":1,\"events\":[\n{\"op\":\"mark\",\"name\":\"x\",\"t\":2},\n"
                 "%s\n]}\n",
                 BAD[i].line);
        sim_error_clear(&err);
        ck_assert_int_eq(read_to_end("bad.json", text, &err), SIM_ETRACE);
        ck_assert_msg(strstr(err.msg, BAD[i].msg) != NULL, "%s: got \"%s\"", BAD[i].line, err.msg);
        ck_assert_str_eq(err.file, "bad.json");
        ck_assert_uint_eq(err.line, 3);
        ck_assert_uint_eq(err.event, 2);
    }
}
END_TEST

START_TEST(pool_begin_should_take_capture_from_its_stream_unless_told)
{
    static const struct {
        const char *keys;
        uint32_t flags, stream;
    } CASES[] = {
        {"", SIM_POOL_ALL_STREAMS, 0},
        {",\"stream\":0", SIM_POOL_CAPTURE, 0},
        {",\"stream\":5", SIM_POOL_CAPTURE, 5},
        {",\"stream\":5,\"capture\":false", 0, 5},
        {",\"capture\":true", SIM_POOL_ALL_STREAMS | SIM_POOL_CAPTURE, 0},
        {",\"capture\":false", SIM_POOL_ALL_STREAMS, 0},
        {",\"use_on_oom\":true,\"no_split\":false", SIM_POOL_ALL_STREAMS | SIM_POOL_USE_ON_OOM, 0},
        {",\"use_on_oom\":false,\"no_split\":true,\"stream\":2", SIM_POOL_CAPTURE | SIM_POOL_NO_SPLIT, 2},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"format\":\"gpusim-trace\",\"version\":1}\n{\"op\":\"pool_begin\",\"pool\":4%s}\n", CASES[i].keys);
        sim_error err;
        trace_reader *r = NULL;
        ck_assert_int_eq(trace_open_mem("m.jsonl", text, strlen(text), &r, &err), SIM_OK);
        sim_event_source src = trace_source(r);
        sim_event ev;
        ck_assert_msg(src.next(src.ctx, &ev, &err) == SIM_OK, "%s", err.msg);
        ck_assert_msg(ev.pool_flags == CASES[i].flags, "%s: flags %u", CASES[i].keys, ev.pool_flags);
        ck_assert_uint_eq(ev.stream, CASES[i].stream);
        ck_assert_uint_eq(ev.pool, 4);
        trace_close(r);
    }
}
END_TEST

/* ---------------------------------------------------------------- the gtrace encoding */

/* A gtrace file of one block holding payload (its string table and events, n_events
 * of them), as gtrace.h's writer frames it; *len its size (the caller frees it). */
static uint8_t *gtrace_of(const uint8_t *payload, uint32_t plen, uint32_t n_events, size_t *len)
{
    /* the header of an empty trace as the writer makes it, without its end block */
    const char *path = tmp_path("-frame.gtrace");
    trace_writer *w = NULL;
    sim_error err;
    ck_assert_int_eq(trace_writer_open(path, TRACE_GTRACE, NULL, &w, &err), SIM_OK);
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
    size_t n;
    char *empty = test_slurp(path, &n);
    unlink(path);
    size_t head = n - 20; /* the end block: 12 bytes of frame, 8 of count */
    uint8_t *f = malloc(head + 12 + plen + 20);
    memcpy(f, empty, head);
    free(empty);
    gtrace_crc c;
    gtrace_crc_init(&c);
    uint8_t *p = f + head;
    uint32_t words[2] = {n_events, plen};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++)
            p[4 * i + k] = (uint8_t)(words[i] >> (8 * k));
    uint32_t crc = gtrace_crc_update(&c, gtrace_crc_update(&c, 0, p, 8), payload, plen);
    for (int k = 0; k < 4; k++)
        p[8 + k] = (uint8_t)(crc >> (8 * k));
    memcpy(p + 12, payload, plen);
    p += 12 + plen;
    uint8_t end[20] = {0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, (uint8_t)n_events};
    crc = gtrace_crc_update(&c, gtrace_crc_update(&c, 0, end, 8), end + 12, 8);
    for (int k = 0; k < 4; k++)
        end[8 + k] = (uint8_t)(crc >> (8 * k));
    memcpy(p, end, 20);
    *len = head + 12 + plen + 20;
    return f;
}

/* Read the one-block gtrace of payload: the status of its events, the last one read in
 * *ev (its strings copied: valid until the next call). */
static sim_status read_gtrace(const uint8_t *payload, uint32_t plen, uint32_t n_events, sim_event *ev, sim_error *err)
{
    size_t len;
    uint8_t *f = gtrace_of(payload, plen, n_events, &len);
    trace_reader *r = NULL;
    sim_status st = trace_open_mem("hand.gtrace", (const char *)f, len, &r, err);
    ck_assert_msg(st == SIM_OK, "%s", err->msg);
    sim_event_source src = trace_source(r);
    for (uint32_t i = 0; i < n_events && st == SIM_OK; i++)
        st = src.next(src.ctx, ev, err);
    if (st == SIM_OK) {
        sim_event more;
        st = src.next(src.ctx, &more, err);
        ck_assert_int_eq(st, SIM_END);
        st = SIM_OK;
        static char name[64], proc[64]; /* the reader's strings go with it */
        if (ev->name != NULL)
            ev->name = strcpy(name, ev->name);
        if (ev->proc != NULL)
            ev->proc = strcpy(proc, ev->proc);
    }
    trace_close(r);
    free(f);
    return st;
}

START_TEST(the_gtrace_encoding_should_be_the_one_format_md_documents)
{
    sim_event ev;
    sim_error err;
    /* no strings; pool_begin (E | op 0 = 0x80), dt 5, pool 3, flags 2 (capture), stream 1 */
    static const uint8_t BEGIN[] = {0x00, 0x80, 0x05, 0x03, 0x02, 0x01};
    ck_assert_int_eq(read_gtrace(BEGIN, sizeof BEGIN, 1, &ev, &err), SIM_OK);
    ck_assert_int_eq(ev.op, SIM_OP_POOL_BEGIN);
    ck_assert_uint_eq(ev.t, 5);
    ck_assert_uint_eq(ev.pool, 3);
    ck_assert_uint_eq(ev.pool_flags, SIM_POOL_CAPTURE);
    ck_assert_uint_eq(ev.stream, 1);
    ck_assert_uint_eq(ev.line, 2); /* the line runs on from 1 */
    /* flags 13 (all streams, use_on_oom, no_split): no stream follows; pool 128 in two bytes */
    static const uint8_t ALL[] = {0x00, 0x80, 0x00, 0x80, 0x01, 0x0D};
    ck_assert_int_eq(read_gtrace(ALL, sizeof ALL, 1, &ev, &err), SIM_OK);
    ck_assert_uint_eq(ev.pool, 128);
    ck_assert_uint_eq(ev.pool_flags, SIM_POOL_ALL_STREAMS | SIM_POOL_USE_ON_OOM | SIM_POOL_NO_SPLIT);
    ck_assert_uint_eq(ev.stream, 0);
    /* pool_end (0x81), then pool_release with P and L (0x82 | 0x08 | 0x20 = 0xAA: proc 0, line 40) */
    static const uint8_t END_REL[] = {0x01, 0x01, 'p', 0x00, 0x81, 0x01, 0x07, 0xAA, 0x00, 0x07, 0x00, 0x28};
    ck_assert_int_eq(read_gtrace(END_REL, sizeof END_REL, 2, &ev, &err), SIM_OK);
    ck_assert_int_eq(ev.op, SIM_OP_POOL_RELEASE);
    ck_assert_uint_eq(ev.pool, 7);
    ck_assert_uint_eq(ev.t, 1);
    ck_assert_str_eq(ev.proc, "p");
    ck_assert_uint_eq(ev.line, 40);
    /* graph_replay (0x83) with S: its name, string 0 */
    static const uint8_t REPLAY[] = {0x01, 0x04, 'b', 's', '=', '8', 0x00, 0x87, 0x02, 0x03, 0x00};
    ck_assert_int_eq(read_gtrace(REPLAY, sizeof REPLAY, 1, &ev, &err), SIM_OK);
    ck_assert_int_eq(ev.op, SIM_OP_GRAPH_REPLAY);
    ck_assert_uint_eq(ev.pool, 3);
    ck_assert_str_eq(ev.name, "bs=8");
    /* without S: no name */
    static const uint8_t BARE[] = {0x00, 0x83, 0x02, 0x03};
    ck_assert_int_eq(read_gtrace(BARE, sizeof BARE, 1, &ev, &err), SIM_OK);
    ck_assert_ptr_null(ev.name);
    /* and the writer writes exactly those bytes */
    const char *path = tmp_path("-enc.gtrace");
    trace_writer *w = NULL;
    ck_assert_int_eq(trace_writer_open(path, TRACE_GTRACE, NULL, &w, &err), SIM_OK);
    sim_event out = {.op = SIM_OP_POOL_BEGIN,
                     .t = 5,
                     .ready_t = 5,
                     .pool = 3,
                     .stream = 1,
                     .pool_flags = SIM_POOL_CAPTURE,
                     .line = 2};
    ck_assert_int_eq(trace_writer_event(w, &out, &err), SIM_OK);
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
    size_t n, want_n;
    char *got = test_slurp(path, &n);
    uint8_t *want = gtrace_of(BEGIN, sizeof BEGIN, 1, &want_n);
    ck_assert_uint_eq(n, want_n);
    ck_assert(memcmp(got, want, n) == 0);
    free(got);
    free(want);
    unlink(path);
}
END_TEST

START_TEST(every_malformed_pool_event_in_a_gtrace_should_be_refused)
{
    static const struct {
        uint8_t bytes[16];
        uint32_t len;
        const char *msg;
    } CASES[] = {
        {{0x00, 0x81, 0x00, 0x00}, 4, "bad pool (0 or above 2^53)"},
        {{0x00, 0x81, 0x00, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10}, 11, "bad pool (0 or above 2^53)"},
        {{0x00, 0x81, 0x00}, 3, "bad pool (0 or above 2^53)"},
        {{0x00, 0x80, 0x00, 0x01, 0x10, 0x01}, 6, "bad pool_begin flags"},
        {{0x00, 0x80, 0x00, 0x01}, 4, "bad pool_begin flags"},
        {{0x00, 0x80, 0x00, 0x01, 0x02, 0x80, 0x80, 0x80, 0x80, 0x10}, 10, "bad stream"},
        {{0x00, 0x80, 0x00, 0x01, 0x02}, 5, "bad stream"},
        {{0x00, 0x90, 0x00, 0x01, 0x01}, 5, "bad pool event"},                   /* R */
        {{0x01, 0x00, 0x00, 0x84, 0x00, 0x01, 0x01, 0x00}, 8, "bad pool event"}, /* S on a pool_begin */
        {{0x01, 0x00, 0x00, 0x85, 0x00, 0x01, 0x00}, 7, "bad pool event"},       /* S on a pool_end */
        {{0x00, 0xC2, 0x00, 0x01}, 4, "only an alloc shares"},                   /* X */
        {{0x00, 0x87, 0x00, 0x01, 0x00}, 5, "bad graph_replay name"},            /* no string 0 */
        {{0x00, 0x87, 0x00, 0x01}, 4, "bad graph_replay name"},
        {{0x00, 0x8B, 0x00, 0x01, 0x00}, 5, "bad proc"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        sim_event ev;
        sim_error err;
        sim_error_clear(&err);
        sim_status st = read_gtrace(CASES[i].bytes, CASES[i].len, 1, &ev, &err);
        ck_assert_msg(st == SIM_ETRACE, "case %zu: status %d", i, (int)st);
        ck_assert_msg(strstr(err.msg, CASES[i].msg) != NULL, "case %zu: %s", i, err.msg);
        ck_assert_str_eq(err.file, "hand.gtrace");
        ck_assert_uint_eq(err.event, 1);
    }
}
END_TEST

START_TEST(the_gtrace_writer_should_refuse_a_pool_event_of_pool_0)
{
    const char *path = tmp_path("-zero.gtrace");
    trace_writer *w = NULL;
    sim_error err;
    ck_assert_int_eq(trace_writer_open(path, TRACE_GTRACE, NULL, &w, &err), SIM_OK);
    sim_event ev = {.op = SIM_OP_POOL_END, .pool = 0};
    ck_assert_int_eq(trace_writer_event(w, &ev, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "a pool_end of pool 0") != NULL, "%s", err.msg);
    ev = (sim_event){.op = (sim_op)SIM_N_OPS};
    ck_assert_int_eq(trace_writer_event(w, &ev, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "unknown op 8") != NULL, "%s", err.msg);
    ck_assert_int_eq(trace_writer_close(w, false, &err), SIM_OK);
    ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(the_engine_should_refuse_pool_0_from_any_source_under_every_strategy)
{
    /* no reader lets pool 0 through: a source of its own (the spool) does */
    evbuf *b = evbuf_new("spool", NULL);
    static const sim_op OPS[] = {SIM_OP_POOL_BEGIN, SIM_OP_POOL_END, SIM_OP_POOL_RELEASE, SIM_OP_GRAPH_REPLAY};
    for (size_t k = 0; k < registry_count(); k++)
        for (int i = 0; i < 4; i++) {
            evbuf_free(b);
            b = evbuf_new("spool", NULL);
            sim_event a = {.op = SIM_OP_ALLOC, .id = 1, .size = 512, .line = 2, .index = 1};
            sim_event p = {.op = OPS[i], .pool = 0, .line = 7, .index = 2};
            ck_assert_int_eq(evbuf_push(b, &a), SIM_OK);
            ck_assert_int_eq(evbuf_push(b, &p), SIM_OK);
            sim_kv kv[] = {{"limit", "1GiB"}};
            engine_config cfg = {.device = {.name = "d", .capacity_bytes = 1ull << 32, .cc_major = 8},
                                 .ops = registry_get(k),
                                 .opts = kv,
                                 .n_opts = strcmp(registry_get(k)->name, "limit") == 0 ? 1 : 0};
            evbuf_cursor cur;
            sim_event_source src = evbuf_source(b, &cur);
            sim_run *run = NULL;
            sim_error err;
            sim_error_clear(&err);
            ck_assert_int_eq(engine_run(&cfg, &src, 1, &run, &err), SIM_ETRACE);
            ck_assert_ptr_null(run);
            char want[128];
            snprintf(want, sizeof want, "%s of pool 0 (the default pool is not a private pool; pool ids start at 1)",
                     sim_op_name(OPS[i]));
            ck_assert_msg(strcmp(err.msg, want) == 0, "%s: %s", registry_get(k)->name, err.msg);
            ck_assert_str_eq(err.file, "spool");
            ck_assert_uint_eq(err.line, 7);
        }
    evbuf_free(b);
}
END_TEST
