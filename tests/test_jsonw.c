/* Check suite for the JSON writer (sim/jsonw.h): nesting and layouts, escaping, exact
 * integers, the shortest round-trip reals (with a seeded random sweep), fixed-format
 * reals and the FILE* output. */
#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/jsonw.h"
#include "support/check_main.h"
#include "support/seed.h"

/* The text of one real as jsonw_real writes it, as a top-level value. */
static const char *real_text(sim_buf *b, double v)
{
    jsonw w;
    sim_buf_reset(b);
    jsonw_init_buf(&w, b, JSONW_COMPACT, 0);
    jsonw_real(&w, v);
    return b->data;
}

/* The same document in the layout given: an object with a block array of inline
 * objects, an empty object, an empty array and an inline object holding a block one. */
static void sample(jsonw *w)
{
    jsonw_object(w);
    jsonw_key_str(w, "name", "x");
    jsonw_key(w, "rows");
    jsonw_array(w);
    for (uint64_t i = 0; i < 2; i++) {
        jsonw_object_inline(w);
        jsonw_key_u64(w, "id", i);
        jsonw_key_bool(w, "ok", i == 0);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key(w, "none");
    jsonw_object(w);
    jsonw_end(w);
    jsonw_key(w, "list");
    jsonw_array_inline(w);
    jsonw_end(w);
    jsonw_key(w, "inner");
    jsonw_object_inline(w);
    jsonw_key(w, "deep");
    jsonw_object(w);
    jsonw_key(w, "n");
    jsonw_null(w);
    jsonw_end(w);
    jsonw_end(w);
    jsonw_end(w);
}

START_TEST(pretty_layout_should_indent_blocks_and_keep_inline_containers_on_one_line)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    sample(&w);
    ck_assert_str_eq(b.data, "{\n"
                             "  \"name\": \"x\",\n"
                             "  \"rows\": [\n"
                             "    {\"id\": 0, \"ok\": true},\n"
                             "    {\"id\": 1, \"ok\": false}\n"
                             "  ],\n"
                             "  \"none\": {},\n"
                             "  \"list\": [],\n"
                             "  \"inner\": {\"deep\": {\n"
                             "    \"n\": null\n"
                             "  }}\n"
                             "}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(compact_layout_should_write_one_line_without_spaces)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_COMPACT, 0);
    sample(&w);
    ck_assert_str_eq(b.data, "{\"name\":\"x\",\"rows\":[{\"id\":0,\"ok\":true},{\"id\":1,\"ok\":false}],"
                             "\"none\":{},\"list\":[],\"inner\":{\"deep\":{\"n\":null}}}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(a_base_indent_should_shift_every_line_of_a_pretty_document)
{
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_puts(&b, "keep ");
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 5); /* written after a hand-made prefix at column 5 */
    jsonw_object(&w);
    jsonw_key_u64(&w, "a", 1);
    jsonw_key(&w, "b");
    jsonw_array(&w);
    jsonw_u64(&w, 2);
    jsonw_end(&w);
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "keep {\n       \"a\": 1,\n       \"b\": [\n         2\n       ]\n     }");
    sim_buf_release(&b);
}
END_TEST

START_TEST(a_wrap_should_continue_an_inline_object_one_space_deeper)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    jsonw_array(&w);
    jsonw_object_inline(&w); /* a hanging row, as compare prints them */
    jsonw_key_str(&w, "a", "x");
    jsonw_key_u64(&w, "b", 1);
    jsonw_wrap(&w);
    jsonw_key(&w, "c");
    jsonw_object(&w);
    jsonw_key_u64(&w, "d", 2);
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "[\n  {\"a\": \"x\", \"b\": 1,\n   \"c\": {\n     \"d\": 2\n   }}\n]");
    sim_buf_reset(&b);
    jsonw_init_buf(&w, &b, JSONW_COMPACT, 0); /* nothing to wrap on one line */
    jsonw_object_inline(&w);
    jsonw_key_u64(&w, "a", 1);
    jsonw_wrap(&w);
    jsonw_key_u64(&w, "b", 2);
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "{\"a\":1,\"b\":2}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(an_array_of_lines_should_close_right_after_its_last_item)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 4);
    jsonw_object_inline(&w); /* a grid row, as plan prints them */
    jsonw_key(&w, "runs");
    jsonw_array_lines(&w, 2);
    jsonw_u64(&w, 1);
    jsonw_u64(&w, 2);
    jsonw_end(&w);
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "{\"runs\": [\n      1,\n      2]}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(a_join_should_keep_the_next_member_of_a_block_on_the_same_line)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    jsonw_object(&w);
    jsonw_key_u64(&w, "a", 1);
    jsonw_join(&w);
    jsonw_key_u64(&w, "b", 2);
    jsonw_key_u64(&w, "c", 3);
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "{\n  \"a\": 1, \"b\": 2,\n  \"c\": 3\n}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(a_members_writer_should_continue_an_object_opened_elsewhere)
{
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_puts(&b, "{\"a\":1");
    jsonw w;
    jsonw_init_members(&w, &b, JSONW_COMPACT);
    jsonw_key_u64(&w, "b", 2);
    jsonw_key(&w, "c");
    jsonw_object_inline(&w);
    jsonw_key_bool(&w, "d", true);
    jsonw_end(&w);
    sim_buf_puts(&b, "}");
    ck_assert_str_eq(b.data, "{\"a\":1,\"b\":2,\"c\":{\"d\":true}}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(an_object_with_its_own_step_should_indent_by_it)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    jsonw_object_step(&w, 1);
    jsonw_key_u64(&w, "a", 1);
    jsonw_key(&w, "b");
    jsonw_object_inline(&w);
    jsonw_key_u64(&w, "c", 2);
    jsonw_end(&w);
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "{\n \"a\": 1,\n \"b\": {\"c\": 2}\n}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(nesting_should_reach_the_maximum_depth)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_COMPACT, 0);
    for (int i = 0; i < JSONW_MAX_DEPTH; i++)
        jsonw_array(&w);
    for (int i = 0; i < JSONW_MAX_DEPTH; i++)
        jsonw_end(&w);
    ck_assert_uint_eq(b.len, 2 * JSONW_MAX_DEPTH);
    ck_assert_int_eq(b.data[JSONW_MAX_DEPTH - 1], '[');
    ck_assert_int_eq(b.data[JSONW_MAX_DEPTH], ']');
    sim_buf_release(&b);
}
END_TEST

START_TEST(strings_should_escape_quotes_backslashes_and_control_characters)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_COMPACT, 0);
    jsonw_object(&w);
    jsonw_key_str(&w, "k\"\\", "a\"b\\c\nd\te\r\x01\x1f");
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "{\"k\\\"\\\\\":\"a\\\"b\\\\c\\nd\\te\\r\\u0001\\u001f\"}");
    sim_buf_release(&b);
}
END_TEST

START_TEST(strings_should_pass_utf8_through_and_replace_invalid_bytes)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_COMPACT, 0);
    jsonw_array_inline(&w);
    jsonw_str(&w, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* é, €, an emoji: 2, 3 and 4 bytes */
    jsonw_str(&w, "a\xff"
                  "b\xc3"); /* a byte that never starts UTF-8, and a truncated sequence */
    jsonw_end(&w);
    ck_assert_str_eq(b.data, "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\",\"a\\ufffdb\\ufffd\"]");
    sim_buf_release(&b);
}
END_TEST

START_TEST(integers_should_be_exact_at_their_limits)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    jsonw_array_inline(&w);
    jsonw_u64(&w, 0);
    jsonw_u64(&w, UINT64_MAX);
    jsonw_i64(&w, INT64_MIN);
    jsonw_i64(&w, INT64_MAX);
    jsonw_i64(&w, -1);
    jsonw_end(&w);
    ck_assert_str_eq(b.data,
                     "[0, 18446744073709551615, -9223372036854775808, 9223372036854775807, -1]");
    sim_buf_release(&b);
}
END_TEST

START_TEST(reals_should_take_the_shortest_form_that_reads_back)
{
    sim_buf b;
    sim_buf_init(&b);
    ck_assert_str_eq(real_text(&b, 0.1), "0.1");
    ck_assert_str_eq(real_text(&b, 1e300), "1e+300");
    ck_assert_str_eq(real_text(&b, 5e-324), "5e-324"); /* the smallest subnormal, 4.94...e-324 */
    ck_assert_str_eq(real_text(&b, 123456789.0), "123456789");
    ck_assert_str_eq(real_text(&b, 9007199254740993.0), "9007199254740992"); /* 2^53 + 1 is not a double */
    sim_buf_release(&b);
}
END_TEST

START_TEST(reals_should_keep_the_sign_of_zero_and_write_non_finite_as_null)
{
    sim_buf b;
    sim_buf_init(&b);
    ck_assert_str_eq(real_text(&b, 0.0), "0");
    ck_assert_str_eq(real_text(&b, -0.0), "-0");
    ck_assert_str_eq(real_text(&b, 1.0 / 3.0), "0.3333333333333333"); /* 16 digits suffice, %.17g adds a 1 */
    ck_assert_str_eq(real_text(&b, 2.5), "2.5");
    ck_assert_str_eq(real_text(&b, (double)NAN), "null");
    ck_assert_str_eq(real_text(&b, (double)INFINITY), "null");
    ck_assert_str_eq(real_text(&b, -(double)INFINITY), "null");
    sim_buf_release(&b);
}
END_TEST

START_TEST(fixed_format_reals_should_reproduce_printf_bytes)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    jsonw_array_inline(&w);
    jsonw_real_fixed(&w, "%.4f", 0.123456);
    jsonw_real_fixed(&w, "%.17g", 0.1);
    jsonw_ratio(&w, 1.0 / 3.0);
    jsonw_ratio(&w, (double)NAN); /* as sim_buf_json_real: 0 */
    jsonw_real_fixed(&w, "%.6f", -DBL_MAX);
    jsonw_end(&w);
    char want[512];
    snprintf(want, sizeof want, "[0.1235, 0.10000000000000001, 0.333333, 0.000000, %.6f]", -DBL_MAX);
    ck_assert_str_eq(b.data, want);
    sim_buf_release(&b);
}
END_TEST

START_TEST(a_file_writer_should_write_the_same_bytes_as_a_buffer_writer)
{
    sim_buf b;
    sim_buf_init(&b);
    jsonw w;
    jsonw_init_buf(&w, &b, JSONW_PRETTY, 0);
    sample(&w);
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(fp);
    jsonw_init_file(&w, fp, JSONW_PRETTY, 0);
    sample(&w);
    ck_assert_int_eq(fclose(fp), 0);
    ck_assert_str_eq(text, b.data);
    free(text);
    sim_buf_release(&b);
}
END_TEST

GPUSIM_TCASE("random", 60, NULL, NULL);

START_TEST(random_reals_should_read_back_exactly_and_no_shorter_form_should)
{
    uint64_t state = test_seed("jsonw shortest reals");
    char s[40], shorter[40];
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = test_rand(&state);
        double v;
        if (i % 2) {
            memcpy(&v, &bits, sizeof v); /* any bit pattern: subnormals, huge, tiny */
            if (!isfinite(v))
                continue;
        } else {
            v = (double)(bits >> 11) / 9007199254740992.0 * 1000.0; /* everyday ratios and sizes */
        }
        jsonw_format_real(v, s, sizeof s);
        double back = strtod(s, NULL);
        EXPECT_MSG(memcmp(&back, &v, sizeof v) == 0, "%a printed as %s reads back as %a", v, s, back);
        int prec = 0;
        for (int p = 1; p <= 17 && prec == 0; p++) {
            snprintf(shorter, sizeof shorter, "%.*g", p, v);
            if (strcmp(shorter, s) == 0)
                prec = p;
        }
        EXPECT_MSG(prec > 0, "%a printed as %s, not a %%.Ng form", v, s);
        if (prec > 1) {
            snprintf(shorter, sizeof shorter, "%.*g", prec - 1, v);
            double sb = strtod(shorter, NULL);
            EXPECT_MSG(memcmp(&sb, &v, sizeof v) != 0, "%a: %s is shorter than %s and reads back", v, shorter, s);
        }
    }
}
END_TEST
