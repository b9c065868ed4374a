/* Check suite for traces/gtrace: the checksum, a lossless round trip of every
 * field across many blocks, detection by content through trace_open and
 * trace_open_mem, and that every corruption (each byte flipped, every
 * truncation, a wrong version, trailing data) is an invalid trace, never a crash
 * and never a silently shorter trace. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/check_main.h"
#include "support/seed.h"
#include "support/slurp.h"
#include "traces/gtrace.h"
#include "traces/trace.h"

static char *tmp_path(const char *suffix)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/gpusim-test-gtrace-%d%s", (int)getpid(), suffix);
    return path;
}

/* A varied event sequence: every op (the pool events too), field and flag, irregular lines. */
static sim_event make_event(uint64_t i, uint64_t *s, uint64_t *t, char *tag, char *proc, char *mark)
{
    sim_event ev = {0};
    *t += test_rand(s) % 3 == 0 ? 0 : test_rand(s) % 100000;
    ev.t = ev.ready_t = *t;
    ev.index = i + 1;
    ev.line = test_rand(s) % 7 == 0 ? test_rand(s) % 1000000 : i + 2;
    switch (test_rand(s) % 12) {
    case 8: /* the pool events: ids of one to eight varint bytes, every flag */
    case 9:
    case 10:
    case 11:
        ev.op = (sim_op)(SIM_OP_POOL_BEGIN + test_rand(s) % 4);
        ev.pool = test_rand(s) % 3 == 0 ? SIM_MAX_SIZE - test_rand(s) % 3 : 1 + test_rand(s) % 300;
        if (ev.op == SIM_OP_POOL_BEGIN) {
            ev.pool_flags = (uint32_t)(test_rand(s) % 16);
            if (!(ev.pool_flags & SIM_POOL_ALL_STREAMS))
                ev.stream = test_rand(s) % 2 ? UINT32_MAX : (uint32_t)(test_rand(s) % 5);
        }
        if (ev.op == SIM_OP_GRAPH_REPLAY && test_rand(s) % 2) {
            snprintf(mark, 32, "bs=%llu", (unsigned long long)(test_rand(s) % 64));
            ev.name = mark;
        }
        break;
    case 0:
        ev.op = SIM_OP_MARK;
        snprintf(mark, 32, "step %llu", (unsigned long long)(test_rand(s) % 50));
        ev.name = mark;
        break;
    case 1: ev.op = SIM_OP_EMPTY_CACHE; break;
    case 2:
    case 3:
        ev.op = SIM_OP_FREE;
        ev.id = test_rand(s) % SIM_MAX_SIZE;
        if (test_rand(s) % 2)
            ev.ready_t = ev.t + test_rand(s) % 1000;
        if (test_rand(s) % 3 == 0) {
            ev.has_ready_stream = true;
            ev.ready_stream = test_rand(s) % 2 ? UINT32_MAX : (uint32_t)(test_rand(s) % 5);
        }
        break;
    default:
        ev.op = SIM_OP_ALLOC;
        ev.id = test_rand(s) % 4 == 0 ? SIM_MAX_SIZE : test_rand(s) % 1000;
        ev.size = test_rand(s) % 3 == 0 ? SIM_MAX_SIZE : test_rand(s) % 100000000;
        ev.stream = test_rand(s) % 3 == 0 ? (uint32_t)(test_rand(s) % 5) : (test_rand(s) % 2 ? UINT32_MAX : 0);
        if (test_rand(s) % 4 == 0) { /* a share below, at or above the id, up to 2^53 */
            ev.has_share = true;
            ev.share = test_rand(s) % 5 == 0 ? SIM_MAX_SIZE : test_rand(s) % 1000;
        }
        if (test_rand(s) % 2) {
            snprintf(tag, 32, "tag\"%llu\\", (unsigned long long)(test_rand(s) % 300));
            ev.tag = tag;
        }
        break;
    }
    if (test_rand(s) % 3 == 0) {
        snprintf(proc, 32, "job-%llu", (unsigned long long)(test_rand(s) % 3));
        ev.proc = proc;
    }
    return ev;
}

static void write_sample(const char *path, uint64_t n, uint64_t seed)
{
    trace_header h = {0};
    snprintf(h.name, sizeof h.name, "sample \"trace\"");
    snprintf(h.device_name, sizeof h.device_name, "A100-40GB");
    h.device_capacity = 42505273344ull;
    h.meta_json = (char *)"{\"k\":[1,2.5,\"x\"]}";
    trace_writer *w = NULL;
    sim_error err;
    ck_assert_int_eq(trace_writer_open(path, TRACE_GTRACE, &h, &w, &err), SIM_OK);
    uint64_t s = seed, t = 0;
    char tag[32], proc[32], mark[32];
    for (uint64_t i = 0; i < n; i++) {
        sim_event ev = make_event(i, &s, &t, tag, proc, mark);
        ck_assert_int_eq(trace_writer_event(w, &ev, &err), SIM_OK);
    }
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
}

/* The bytes of a sample of n events from seed, written through tmp_path(suffix) and
 * removed again; *len is their count (the caller frees them). */
static char *sample_bytes(const char *suffix, uint64_t n, uint64_t seed, size_t *len)
{
    const char *path = tmp_path(suffix);
    write_sample(path, n, seed);
    char *data = test_slurp(path, len);
    unlink(path);
    return data;
}

static void check_sample(trace_reader *r, uint64_t n, uint64_t seed)
{
    ck_assert_int_eq(trace_get_container(r), TRACE_GTRACE);
    const trace_header *h = trace_get_header(r);
    ck_assert_str_eq(h->name, "sample \"trace\"");
    ck_assert_str_eq(h->device_name, "A100-40GB");
    ck_assert_uint_eq(h->device_capacity, 42505273344ull);
    ck_assert_str_eq(h->meta_json, "{\"k\":[1,2.5,\"x\"]}");
    ck_assert_uint_eq(h->ns_per_unit, 1);
    sim_event_source src = trace_source(r);
    uint64_t s = seed, t = 0;
    char tag[32], proc[32], mark[32];
    sim_error err;
    for (uint64_t i = 0; i < n; i++) {
        sim_event want = make_event(i, &s, &t, tag, proc, mark), got;
        ck_assert_int_eq(src.next(src.ctx, &got, &err), SIM_OK);
        ck_assert_int_eq(got.op, want.op);
        ck_assert_uint_eq(got.id, want.id);
        ck_assert_uint_eq(got.size, want.size);
        ck_assert_uint_eq(got.t, want.t);
        ck_assert_uint_eq(got.ready_t, want.ready_t);
        ck_assert_uint_eq(got.stream, want.op == SIM_OP_ALLOC || want.op == SIM_OP_POOL_BEGIN ? want.stream : 0);
        ck_assert_uint_eq(got.pool, want.pool);
        ck_assert_uint_eq(got.pool_flags, want.pool_flags);
        ck_assert_int_eq(got.has_ready_stream, want.has_ready_stream);
        ck_assert_uint_eq(got.ready_stream, want.ready_stream);
        ck_assert_int_eq(got.has_share, want.has_share);
        ck_assert_uint_eq(got.share, want.share);
        ck_assert_uint_eq(got.line, want.line);
        ck_assert_uint_eq(got.index, i + 1);
        ck_assert_str_eq(got.tag ? got.tag : "-", want.tag ? want.tag : "-");
        ck_assert_str_eq(got.name ? got.name : "-", want.name ? want.name : "-");
        ck_assert_str_eq(got.proc ? got.proc : "-", want.proc ? want.proc : "-");
    }
    sim_event ev;
    ck_assert_int_eq(src.next(src.ctx, &ev, &err), SIM_END);
}

GPUSIM_TCASE("gtrace", 120, NULL, NULL);

START_TEST(crc32c_should_match_the_standard_check_value)
{
    gtrace_crc c;
    gtrace_crc_init(&c);
    ck_assert_uint_eq(gtrace_crc_update(&c, 0, "123456789", 9), 0xE3069283u);
    /* in pieces: the same */
    uint32_t crc = gtrace_crc_update(&c, 0, "1234", 4);
    ck_assert_uint_eq(gtrace_crc_update(&c, crc, "56789", 5), 0xE3069283u);
}
END_TEST

START_TEST(every_field_should_round_trip_across_blocks)
{
    const char *path = tmp_path(".gtrace");
    uint64_t n = 3 * GTRACE_BLOCK_EVENTS + 17;
    write_sample(path, n, 7);
    sim_error err;
    trace_reader *r = NULL;
    ck_assert_msg(trace_open(path, &r, &err) == SIM_OK, "%s", err.msg);
    check_sample(r, n, 7);
    trace_close(r);
    /* the same from memory */
    size_t len;
    char *data = test_slurp(path, &len);
    ck_assert_int_eq(trace_open_mem("mem.gtrace", data, len, &r, &err), SIM_OK);
    check_sample(r, n, 7);
    trace_close(r);
    free(data);
    unlink(path);
}
END_TEST

START_TEST(an_empty_trace_should_round_trip)
{
    const char *path = tmp_path("-empty.gtrace");
    write_sample(path, 0, 1);
    sim_error err;
    trace_reader *r = NULL;
    ck_assert_int_eq(trace_open(path, &r, &err), SIM_OK);
    check_sample(r, 0, 1);
    trace_close(r);
    unlink(path);
}
END_TEST

/* Read everything; returns the final status. */
static sim_status read_mem(const char *data, size_t len, uint64_t *n, sim_error *err)
{
    trace_reader *r = NULL;
    *n = 0;
    sim_status st = trace_open_mem("bad.gtrace", data, len, &r, err);
    if (st != SIM_OK)
        return st;
    sim_event_source src = trace_source(r);
    sim_event ev;
    while ((st = src.next(src.ctx, &ev, err)) == SIM_OK)
        (*n)++;
    trace_close(r);
    return st;
}

START_TEST(every_flipped_byte_should_be_an_invalid_trace)
{
    size_t len;
    char *data = sample_bytes("-flip.gtrace", 300, 3, &len);
    for (size_t i = GTRACE_MAGIC_LEN; i < len; i++) {
        for (unsigned bit = 0; bit < 8; bit += 3) {
            data[i] = (char)(data[i] ^ (1 << bit));
            uint64_t n;
            sim_error err;
            sim_status st = read_mem(data, len, &n, &err);
            ck_assert_msg(st == SIM_ETRACE, "byte %zu bit %u: status %d", i, bit, (int)st);
            data[i] = (char)(data[i] ^ (1 << bit));
        }
    }
    free(data);
}
END_TEST

START_TEST(every_truncation_should_be_an_invalid_trace)
{
    size_t len;
    char *data = sample_bytes("-trunc.gtrace", 200, 5, &len);
    for (size_t cut = 0; cut < len; cut++) {
        uint64_t n;
        sim_error err;
        sim_status st = read_mem(data, cut, &n, &err);
        /* short prefixes are not even recognised as gtrace: then they are bad JSON */
        ck_assert_msg(st == SIM_ETRACE, "cut at %zu: status %d", cut, (int)st);
        if (cut >= 16)
            ck_assert_msg(strstr(err.msg, "corrupt gtrace") != NULL, "cut %zu: %s", cut, err.msg);
    }
    /* trailing data after the end block */
    char *more = malloc(len + 1);
    memcpy(more, data, len);
    more[len] = 0;
    uint64_t n;
    sim_error err;
    ck_assert_int_eq(read_mem(more, len + 1, &n, &err), SIM_ETRACE);
    ck_assert_ptr_nonnull(strstr(err.msg, "data after the end block"));
    free(more);
    free(data);
}
END_TEST

START_TEST(another_version_should_be_named)
{
    size_t len;
    char *data = sample_bytes("-ver.gtrace", 10, 5, &len);
    data[8] = 2;
    uint64_t n;
    sim_error err;
    ck_assert_int_eq(read_mem(data, len, &n, &err), SIM_ETRACE);
    ck_assert_msg(strstr(err.msg, "version 2 is not supported") != NULL, "%s", err.msg);
    free(data);
}
END_TEST

START_TEST(the_writer_should_refuse_time_going_backwards)
{
    const char *path = tmp_path("-order.gtrace");
    trace_writer *w = NULL;
    sim_error err;
    ck_assert_int_eq(trace_writer_open(path, TRACE_GTRACE, NULL, &w, &err), SIM_OK);
    sim_event a = {.op = SIM_OP_EMPTY_CACHE, .t = 10, .ready_t = 10};
    sim_event b = {.op = SIM_OP_EMPTY_CACHE, .t = 9, .ready_t = 9};
    ck_assert_int_eq(trace_writer_event(w, &a, &err), SIM_OK);
    ck_assert_int_ne(trace_writer_event(w, &b, &err), SIM_OK);
    ck_assert_int_eq(trace_writer_close(w, false, &err), SIM_OK);
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_int_eq(trace_container_for_path("x.gtrace"), TRACE_GTRACE);
}
END_TEST
