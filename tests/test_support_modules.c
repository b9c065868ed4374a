/* Check suite for the small core modules: output buffers and atomic files,
 * the GPU catalog, in-memory traces, checker reports, strategy options. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/buf.h"
#include "sim/evbuf.h"
#include "sim/gpus.h"
#include "sim/report.h"
#include "sim/strategy.h"
#include "support/check_main.h"

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
    char dir[] = "/tmp/gpusim-buf-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_puts(&b, "hello\n");
    sim_error err;
    ck_assert_int_eq(sim_buf_write_file(&b, path, &err), SIM_OK);
    FILE *f = fopen(path, "r");
    char line[16] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_str_eq(line, "hello\n");
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_uint_ne(sb.st_mode & 0044, 0); /* not the 0600 of a temporary file */
    /* a directory that does not exist: an I/O error naming the path */
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
                              "H100-80GB", "H200", "B200", "RTX3090", "RTX4090", "RTX5090", "MI300X"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        const gpu_model *g = gpus_find(required[i]);
        ck_assert_msg(g != NULL, "%s missing", required[i]);
        ck_assert_uint_gt(g->capacity_bytes, 8ull << 30);
        ck_assert(strlen(g->source) > 10);
    }
    /* the H200's figure: 143156 MiB as torch prints it */
    ck_assert_uint_eq(gpus_find("H200")->capacity_bytes, 143156ull << 20);
    ck_assert_uint_eq(gpus_find("A100-40GB")->cc_major, 8);
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

static Suite *support_suite(void)
{
    Suite *s = suite_create("support_modules");
    TCase *tc = tcase_create("support");
    tcase_add_test(tc, json_strings_should_be_escaped);
    tcase_add_test(tc, large_printf_output_should_not_be_truncated);
    tcase_add_test(tc, files_should_appear_whole_or_not_at_all);
    tcase_add_test(tc, the_catalog_should_find_gpus_by_name_or_alias_in_any_case);
    tcase_add_test(tc, an_in_memory_trace_should_give_back_every_event_and_string);
    tcase_add_test(tc, reports_should_count_every_violation_and_keep_the_first_lines);
    tcase_add_test(tc, the_last_option_given_should_win);
    suite_add_tcase(s, tc);
    return s;
}

GPUSIM_CHECK_MAIN(support_suite)
