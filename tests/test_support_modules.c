/* Check suite for the small core modules: output buffers, atomic files and whole-file
 * reads, the GPU catalog, in-memory traces, checker reports, strategy options and stat
 * lookup, FNV-1a, the grow-array macro and the string table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/buf.h"
#include "sim/check.h"
#include "sim/evbuf.h"
#include "sim/gpus.h"
#include "sim/grow.h"
#include "sim/hash.h"
#include "sim/strategy.h"
#include "sim/strtab.h"
#include "support/check_main.h"

/* A fresh directory from the template dir, and path = dir/name in it, which
 * sim_buf_write_file must write from b. */
static void temp_file(char *dir, const char *name, char *path, size_t cap, const sim_buf *b)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, cap, "%s/%s", dir, name);
    sim_error err;
    ck_assert_int_eq(sim_buf_write_file(b, path, &err), SIM_OK);
}

START_TEST(json_strings_should_be_escaped)
{
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_json_str(&b, "a\"b\\c\nd\te\x01");
    ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
    sim_buf_reset(&b);
    sim_buf_json_real(&b, 0.5);
    sim_buf_puts(&b, " ");
    sim_buf_json_real(&b, 1.0 / 3.0);
    ck_assert_str_eq(b.data, "0.500000 0.333333");
    sim_buf_release(&b);
}
END_TEST

START_TEST(large_printf_output_should_not_be_truncated)
{
    sim_buf b;
    sim_buf_init(&b);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sim_buf_printf(&b, "<%s>", big);
    ck_assert_uint_eq(b.len, sizeof big + 1);
    ck_assert_int_eq(b.data[b.len - 1], '>');
    sim_buf_release(&b);
}
END_TEST

START_TEST(files_should_appear_whole_or_not_at_all)
{
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_puts(&b, "hello\n");
    char dir[] = "/tmp/gpusim-buf-XXXXXX", path[512];
    temp_file(dir, "out.txt", path, sizeof path, &b);
    FILE *f = fopen(path, "r");
    char line[16] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_str_eq(line, "hello\n");
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_uint_ne(sb.st_mode & 0044, 0); /* not the 0600 of a temporary file */
    /* a directory that does not exist: an I/O error naming the path */
    sim_error err;
    char bad[600];
    snprintf(bad, sizeof bad, "%s/missing/out.txt", dir);
    ck_assert_int_eq(sim_buf_write_file(&b, bad, &err), SIM_EIO);
    ck_assert(strstr(err.file, "missing/out.txt") != NULL);
    /* a path that is a directory */
    ck_assert_int_eq(sim_buf_write_file(&b, dir, &err), SIM_EIO);
    unlink(path);
    ck_assert_int_eq(rmdir(dir), 0); /* nothing else was left there */
    sim_buf_release(&b);
}
END_TEST

START_TEST(the_catalog_should_find_gpus_by_name_or_alias_in_any_case)
{
    ck_assert_ptr_nonnull(gpus_find("H200"));
    ck_assert_ptr_eq(gpus_find("h100"), gpus_find("H100-80GB"));
    ck_assert_ptr_eq(gpus_find("a100"), gpus_find("A100-40GB"));
    ck_assert_ptr_null(gpus_find("A1"));
    ck_assert_ptr_null(gpus_find("Z80"));
    ck_assert_ptr_nonnull(gpus_find(GPUS_DEFAULT));
    const char *required[] = {"T4", "V100-16GB", "V100-32GB", "A10", "A10G", "L4", "A100-40GB", "A100-80GB",
                              "H100-80GB", "H200", "B200", "RTX3090", "RTX4090", "RTX5090", "MI300X",
                              "MI325X", "MI355X"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        const gpu_model *g = gpus_find(required[i]);
        ck_assert_msg(g != NULL, "%s missing", required[i]);
        ck_assert_uint_gt(g->capacity_bytes, 8ull << 30);
        ck_assert(strlen(g->source) > 10);
    }
    /* the H200's figure: 143156 MiB as torch prints it */
    ck_assert_uint_eq(gpus_find("H200")->capacity_bytes, 143156ull << 20);
    ck_assert_uint_eq(gpus_find("A100-40GB")->cc_major, 8);
    /* AMD's: 16 MiB short of 192, 256 and 288 GiB, as PyTorch ROCm prints 255.98 and 287.98 GiB */
    ck_assert_uint_eq(gpus_find("mi325x")->capacity_bytes, (256ull << 30) - (16ull << 20));
    ck_assert_uint_eq(gpus_find("MI355X-288GB")->capacity_bytes, (288ull << 30) - (16ull << 20));
}
END_TEST

START_TEST(a_catalog_gpu_should_become_a_device_and_cc_should_parse_only_as_x_dot_y)
{
    const gpu_model *g = gpus_find("A100-40GB");
    device_info d = gpus_device_info(g);
    ck_assert_str_eq(d.name, "A100-40GB");
    ck_assert_uint_eq(d.capacity_bytes, g->capacity_bytes);
    ck_assert_uint_eq(d.context_bytes, 0);
    ck_assert_uint_eq(d.cc_major, 8);
    ck_assert_uint_eq(d.cc_minor, 0);
    unsigned maj = 99, min = 99;
    ck_assert(gpus_parse_cc("8.9", &maj, &min));
    ck_assert_uint_eq(maj, 8);
    ck_assert_uint_eq(min, 9);
    const char *bad[] = {"8", "8.", "8.10", "21.0", "8.0x", "x.y", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(!gpus_parse_cc(bad[i], &maj, &min), "'%s' accepted", bad[i]);
        ck_assert_uint_eq(maj, 8); /* untouched on failure */
    }
}
END_TEST

START_TEST(an_in_memory_trace_should_give_back_every_event_and_string)
{
    evbuf *b = evbuf_new("p", "n");
    sim_event e1 = {.op = SIM_OP_ALLOC, .id = 1, .size = 10, .t = 1, .ready_t = 1, .tag = "w", .proc = "a"};
    sim_event e2 = {.op = SIM_OP_MARK, .t = 2, .ready_t = 2, .name = "step", .proc = "a"};
    sim_event e3 = {.op = SIM_OP_FREE, .id = 1, .t = 3, .ready_t = 5};
    ck_assert_int_eq(evbuf_push(b, &e1), SIM_OK);
    ck_assert_int_eq(evbuf_push(b, &e2), SIM_OK);
    ck_assert_int_eq(evbuf_push(b, &e3), SIM_OK);
    for (int pass = 0; pass < 2; pass++) { /* replayable any number of times */
        evbuf_cursor c;
        sim_event_source s = evbuf_source(b, &c);
        sim_event ev;
        sim_error err;
        ck_assert_int_eq(s.next(s.ctx, &ev, &err), SIM_OK);
        ck_assert_str_eq(ev.tag, "w");
        ck_assert_str_eq(ev.proc, "a");
        ck_assert_int_eq(s.next(s.ctx, &ev, &err), SIM_OK);
        ck_assert_str_eq(ev.name, "step");
        ck_assert_int_eq(s.next(s.ctx, &ev, &err), SIM_OK);
        ck_assert_ptr_null(ev.proc);
        ck_assert_uint_eq(ev.ready_t, 5);
        ck_assert_int_eq(s.next(s.ctx, &ev, &err), SIM_END);
    }
    ck_assert_uint_eq(evbuf_count(b), 3);
    evbuf_free(b);
}
END_TEST

START_TEST(an_in_memory_trace_should_give_back_the_pool_events_with_their_pool_flags_and_names)
{
    evbuf *b = evbuf_new("p", "n");
    sim_event ev_in[] = {
        {.op = SIM_OP_POOL_BEGIN, .pool = 3, .stream = 1, .pool_flags = SIM_POOL_CAPTURE | SIM_POOL_NO_SPLIT, .t = 1},
        {.op = SIM_OP_ALLOC, .id = 9, .size = 512, .stream = 1, .t = 2},
        {.op = SIM_OP_POOL_END, .pool = 3, .t = 3},
        {.op = SIM_OP_GRAPH_REPLAY, .pool = 3, .name = "bs=8", .t = 4},
        {.op = SIM_OP_GRAPH_REPLAY, .pool = 3, .t = 5},
        {.op = SIM_OP_POOL_RELEASE, .pool = 3, .t = 6},
    };
    for (size_t i = 0; i < sizeof ev_in / sizeof ev_in[0]; i++)
        ck_assert_int_eq(evbuf_push(b, &ev_in[i]), SIM_OK);
    evbuf_cursor c;
    sim_event_source s = evbuf_source(b, &c);
    sim_event ev;
    sim_error err;
    for (size_t i = 0; i < sizeof ev_in / sizeof ev_in[0]; i++) {
        ck_assert_int_eq(s.next(s.ctx, &ev, &err), SIM_OK);
        ck_assert_int_eq(ev.op, ev_in[i].op);
        ck_assert_uint_eq(ev.pool, ev_in[i].pool);
        ck_assert_uint_eq(ev.pool_flags, ev_in[i].pool_flags);
        ck_assert_uint_eq(ev.id, ev_in[i].id);
        ck_assert_uint_eq(ev.size, ev_in[i].size);
        ck_assert_uint_eq(ev.stream, ev_in[i].stream);
        if (ev_in[i].name)
            ck_assert_str_eq(ev.name, ev_in[i].name);
        else
            ck_assert_ptr_null(ev.name);
    }
    ck_assert_int_eq(s.next(s.ctx, &ev, &err), SIM_END);
    evbuf_free(b);
}
END_TEST

START_TEST(reports_should_count_every_violation_and_keep_the_first_lines)
{
    sim_report r;
    sim_report_init(&r);
    ck_assert(sim_report_insist(&r, true, "never"));
    for (int i = 0; i < 1000; i++)
        ck_assert(!sim_report_insist(&r, false, "violation number %d of a long series", i));
    ck_assert_uint_eq(r.violations, 1000);
    ck_assert(sim_report_mentions(&r, "violation number 0 "));
    ck_assert(!sim_report_mentions(&r, "never"));
    ck_assert_uint_lt(r.len, SIM_REPORT_TEXT);
}
END_TEST

START_TEST(the_last_option_given_should_win)
{
    sim_kv kv[] = {{"limit", "1GiB"}, {"bfc_preset", "tf"}, {"limit", "2GiB"}};
    strategy_config cfg = {.opts = kv, .n_opts = 3};
    ck_assert_str_eq(strategy_config_get(&cfg, "limit"), "2GiB");
    ck_assert_ptr_null(strategy_config_get(&cfg, "alloc_conf"));
    ck_assert_str_eq(sim_oom_cause_name(SIM_OOM_FRAGMENTATION), "fragmentation");
}
END_TEST

START_TEST(a_whole_file_should_read_back_nul_terminated_and_a_cap_should_refuse_more)
{
    /* 200000 bytes: more than the first 64 KiB read, so the buffer has to grow twice */
    sim_buf b;
    sim_buf_init(&b);
    for (int i = 0; i < 20000; i++)
        sim_buf_puts(&b, "0123456789");
    char dir[] = "/tmp/gpusim-read-XXXXXX", path[512];
    temp_file(dir, "in.txt", path, sizeof path, &b);
    sim_error err;
    char *text = NULL;
    size_t len = 0;
    ck_assert_int_eq(sim_read_file(path, 200000, &text, &len, &err), SIM_OK);
    ck_assert_uint_eq(len, 200000);
    ck_assert_int_eq(text[len], '\0');
    ck_assert_int_eq(memcmp(text, b.data, len), 0);
    free(text);
    /* one byte over the cap is refused, naming the file */
    ck_assert_int_eq(sim_read_file(path, 199999, &text, &len, &err), SIM_EIO);
    ck_assert_ptr_null(text);
    ck_assert_str_eq(err.file, path);
    ck_assert_ptr_nonnull(strstr(err.msg, "larger than 199999 bytes"));
    /* an empty file is an empty string, not an error */
    sim_buf_reset(&b);
    ck_assert_int_eq(sim_buf_write_file(&b, path, &err), SIM_OK);
    ck_assert_int_eq(sim_read_file(path, 0, &text, &len, &err), SIM_OK);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(text, "");
    free(text);
    unlink(path);
    /* a missing file is SIM_EIO naming it */
    ck_assert_int_eq(sim_read_file(path, 100, &text, &len, &err), SIM_EIO);
    ck_assert_str_eq(err.file, path);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
    rmdir(dir);
    sim_buf_release(&b);
}
END_TEST

START_TEST(fnv1a64_should_match_the_published_vectors_and_continue_across_chunks)
{
    /* test vectors from the FNV authors' page: "" is the offset basis, "a" and "foobar" */
    ck_assert_uint_eq(sim_fnv1a64("", 0), UINT64_C(0xcbf29ce484222325));
    ck_assert_uint_eq(sim_fnv1a64("a", 1), UINT64_C(0xaf63dc4c8601ec8c));
    ck_assert_uint_eq(sim_fnv1a64("foobar", 6), UINT64_C(0x85944171f73967e8));
    uint64_t h = sim_fnv1a64_more(SIM_FNV1A64_INIT, "foo", 3);
    ck_assert_uint_eq(sim_fnv1a64_more(h, "bar", 3), sim_fnv1a64("foobar", 6));
}
END_TEST

START_TEST(sim_grow_should_keep_the_elements_and_refuse_an_overflowing_size)
{
    uint32_t *a = NULL;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < 1000; i++) {
        ck_assert(SIM_GROW(a, i + 1, cap));
        a[i] = i * 3;
    }
    /* doubling from 16: 16, 32, ..., 1024 */
    ck_assert_uint_eq(cap, 1024);
    for (uint32_t i = 0; i < 1000; i++)
        ck_assert_uint_eq(a[i], i * 3);
    /* already big enough: nothing moves */
    uint32_t *before = a;
    ck_assert(SIM_GROW(a, 1024, cap));
    ck_assert_ptr_eq(a, before);
    /* a request past what a 32-bit capacity can count fails and leaves both alone */
    uint64_t huge = (uint64_t)UINT32_MAX + 1;
    ck_assert(!SIM_GROW(a, huge, cap));
    ck_assert_ptr_eq(a, before);
    ck_assert_uint_eq(cap, 1024);
    free(a);
    /* elements of 16 bytes: SIZE_MAX / 8 of them would overflow the byte count */
    struct pair { uint64_t x, y; } *p = NULL;
    size_t pcap = 0;
    ck_assert(!SIM_GROW(p, SIZE_MAX / 8, pcap));
    ck_assert_ptr_null(p);
    ck_assert_uint_eq(pcap, 0);
    ck_assert(SIM_GROW(p, 20, pcap));
    ck_assert_uint_eq(pcap, 20); /* n larger than the first 16 */
    free(p);
}
END_TEST

/* A fake strategy with one statistic of each kind, "b" emitted twice. */
static void fake_stats(const strategy *s, const strategy_stat_sink *sink)
{
    (void)s;
    strategy_emit_u64(sink, "a", 7);
    strategy_emit_real(sink, "b", 0.25);
    strategy_emit_text(sink, "c", "seven");
    strategy_emit_u64(sink, "b", 9);
}

static void fake_options(const strategy *s, const strategy_stat_sink *sink)
{
    (void)s;
    strategy_emit_text(sink, "limit_bytes", "1024");
}

static void count_u64(void *ctx, const char *key, uint64_t v)
{
    (void)key, (void)v;
    (*(unsigned *)ctx)++;
}

START_TEST(a_stat_should_be_found_by_name_whatever_its_kind)
{
    strategy_ops ops = {.name = "fake", .stats = fake_stats, .options = fake_options};
    strategy_stat_value v;
    ck_assert(strategy_stat_find(&ops, NULL, "a", &v));
    ck_assert_int_eq(v.kind, STRATEGY_STAT_U64);
    ck_assert_uint_eq(v.u64, 7);
    ck_assert(strategy_stat_find(&ops, NULL, "c", &v));
    ck_assert_int_eq(v.kind, STRATEGY_STAT_TEXT);
    ck_assert_str_eq(v.text, "seven");
    /* emitted twice: the last wins, kind and all */
    ck_assert(strategy_stat_find(&ops, NULL, "b", &v));
    ck_assert_int_eq(v.kind, STRATEGY_STAT_U64);
    ck_assert_uint_eq(v.u64, 9);
    ck_assert(!strategy_stat_find(&ops, NULL, "limit_bytes", &v));
    ck_assert(strategy_option_find(&ops, NULL, "limit_bytes", &v));
    ck_assert_str_eq(v.text, "1024");
    /* a sink with only the u64 callback: the emitters skip the NULL ones */
    unsigned calls = 0;
    strategy_stat_sink only_u64 = {.u64 = count_u64, .ctx = &calls};
    fake_stats(NULL, &only_u64);
    ck_assert_uint_eq(calls, 2);
}
END_TEST

START_TEST(a_string_table_should_number_each_string_once_across_its_growth)
{
    /* 5000 distinct strings, interned twice in different orders: the table rehashes
     * several times (64 slots at first, twice the strings at least), and every string
     * keeps its first number, 1 to 5000 in order of first appearance */
    strtab *t = strtab_new();
    ck_assert_ptr_nonnull(t);
    char s[32];
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(s, sizeof s, "tag-%u", i * 7919u % 5000u);
        ck_assert_uint_eq(strtab_intern(t, s), i + 1);
    }
    for (uint32_t i = 5000; i-- > 0;) {
        snprintf(s, sizeof s, "tag-%u", i * 7919u % 5000u);
        ck_assert_uint_eq(strtab_intern(t, s), i + 1);
        ck_assert_str_eq(strtab_get(t, i + 1), s);
    }
    /* the empty string is a string like any other; a copy, not the caller's buffer */
    uint32_t e = strtab_intern(t, "");
    ck_assert_uint_eq(e, 5001);
    strcpy(s, "changed");
    ck_assert_str_eq(strtab_get(t, e), "");
    ck_assert_uint_eq(strtab_intern(t, ""), 5001);
    strtab_free(t);
    strtab_free(NULL);
}
END_TEST

START_TEST(json_strings_should_replace_bytes_that_are_not_utf8)
{
    /* é (C3 A9) and 😀 (F0 9F 98 80) pass; a stray continuation byte, a lone lead byte,
     * an overlong '/' (C0 AF) and a surrogate (ED A0 80) become U+FFFD, byte by byte */
    ck_assert_uint_eq(sim_utf8_len("\xC3\xA9"), 2);
    ck_assert_uint_eq(sim_utf8_len("\xF0\x9F\x98\x80"), 4);
    ck_assert_uint_eq(sim_utf8_len("\x80"), 0);
    ck_assert_uint_eq(sim_utf8_len("\xC3"), 0);
    ck_assert_uint_eq(sim_utf8_len("\xC0\xAF"), 0);
    ck_assert_uint_eq(sim_utf8_len("\xED\xA0\x80"), 0);
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_json_str(&b, "a\xC3\xA9\x80z\xC3");
    ck_assert_str_eq(b.data, "\"a\xC3\xA9\\ufffdz\\ufffd\"");
    sim_buf_release(&b);
}
END_TEST
