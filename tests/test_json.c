/* Check suite for traces/json: exact integers, strings, errors with positions. */
#include <check.h>
#include <string.h>

#include "support/check_main.h"
#include "traces/json.h"

static json_parser *P;
static char ERR[256];

static void setup(void)
{
    P = json_parser_new();
}

static void teardown(void)
{
    json_parser_free(P);
}

static const json_value *parse(const char *s)
{
    return json_parse(P, s, strlen(s), 1, ERR, sizeof ERR);
}

static json_int_status u64_of(const char *text, uint64_t max, uint64_t *out)
{
    const json_value *v = parse(text);
    ck_assert_msg(v != NULL, "'%s': %s", text, ERR);
    return json_to_u64(v, max, out);
}

GPUSIM_TCASE("json", 0, setup, teardown);

START_TEST(integers_should_be_exact_up_to_2_to_the_64)
{
    uint64_t v;
    ck_assert_int_eq(u64_of("0", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(u64_of("9007199254740992", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 9007199254740992ull);
    /* a double would round this to ...992; the parser keeps it */
    ck_assert_int_eq(u64_of("9007199254740993", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 9007199254740993ull);
    ck_assert_int_eq(u64_of("18446744073709551615", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(u64_of("18446744073709551616", UINT64_MAX, &v), JSON_INT_TOO_LARGE);
    ck_assert_int_eq(u64_of("140737488355328", UINT64_MAX, &v), JSON_INT_OK); /* 2^47, a typical address */
    ck_assert_uint_eq(v, 140737488355328ull);
}
END_TEST

START_TEST(integers_should_honour_the_limit)
{
    uint64_t v;
    const uint64_t lim = (uint64_t)1 << 53;
    ck_assert_int_eq(u64_of("9007199254740992", lim, &v), JSON_INT_OK);
    ck_assert_int_eq(u64_of("9007199254740993", lim, &v), JSON_INT_TOO_LARGE);
    ck_assert_int_eq(u64_of("1e300", lim, &v), JSON_INT_TOO_LARGE);
}
END_TEST

START_TEST(integral_spellings_should_count_as_integers)
{
    uint64_t v;
    ck_assert_int_eq(u64_of("1e3", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 1000);
    ck_assert_int_eq(u64_of("5.0", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 5);
    ck_assert_int_eq(u64_of("2.5e1", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 25);
    ck_assert_int_eq(u64_of("0.000", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(u64_of("1000e-3", UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 1);
}
END_TEST

START_TEST(fractions_and_negatives_should_be_refused)
{
    uint64_t v;
    int64_t s;
    ck_assert_int_eq(u64_of("0.5", UINT64_MAX, &v), JSON_INT_NOT_INTEGER);
    ck_assert_int_eq(u64_of("1.25", UINT64_MAX, &v), JSON_INT_NOT_INTEGER);
    ck_assert_int_eq(u64_of("15e-1", UINT64_MAX, &v), JSON_INT_NOT_INTEGER);
    ck_assert_int_eq(u64_of("-1", UINT64_MAX, &v), JSON_INT_NEGATIVE);
    ck_assert_int_eq(u64_of("-0", UINT64_MAX, &v), JSON_INT_OK);
    const json_value *n = parse("-12345");
    ck_assert_int_eq(json_to_i64(n, UINT64_MAX, &s), JSON_INT_OK);
    ck_assert_int_eq(s, -12345);
    ck_assert_int_eq(json_to_u64(parse("\"5\""), UINT64_MAX, &v), JSON_INT_NOT_NUMBER);
}
END_TEST

START_TEST(strings_should_decode_escapes_and_surrogates)
{
    const json_value *v = parse("\"a\\n\\t\\\"\\\\\\/\\u00e9\\ud83d\\ude00\"");
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(v->type, JSON_STRING);
    ck_assert_str_eq(v->u.str, "a\n\t\"\\/\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_ptr_null(parse("\"\\ud83d\""));
    ck_assert(strstr(ERR, "surrogate") != NULL);
    ck_assert_ptr_null(parse("\"\\q\""));
    ck_assert(strstr(ERR, "bad escape") != NULL);
}
END_TEST

START_TEST(objects_should_keep_order_and_find_the_last_duplicate)
{
    const json_value *v = parse("{\"a\": 1, \"b\": [true, false, null], \"a\": 2}");
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(v->type, JSON_OBJECT);
    ck_assert_uint_eq(v->len, 3);
    ck_assert_str_eq(v->u.members[1].key, "b");
    const json_value *b = json_get(v, "b");
    ck_assert_uint_eq(b->len, 3);
    ck_assert_int_eq(b->u.items[0].type, JSON_TRUE);
    ck_assert_int_eq(b->u.items[2].type, JSON_NULL);
    uint64_t a;
    ck_assert_int_eq(json_to_u64(json_get(v, "a"), UINT64_MAX, &a), JSON_INT_OK);
    ck_assert_uint_eq(a, 2);
    ck_assert_ptr_null(json_get(v, "zzz"));
}
END_TEST

START_TEST(errors_should_give_line_and_column)
{
    ck_assert_ptr_null(parse("{\n  \"a\": 1,\n  \"b\" 2\n}"));
    ck_assert_str_eq(ERR, "line 3, column 7: expected ':' after key");
    ck_assert_ptr_null(parse("[1, 2"));
    ck_assert(strstr(ERR, "expected ',' or ']'") != NULL);
    ck_assert_ptr_null(parse("{} x"));
    ck_assert(strstr(ERR, "unexpected text") != NULL);
    ck_assert_ptr_null(parse(""));
    ck_assert(strstr(ERR, "unexpected end") != NULL);
    ck_assert_ptr_null(parse("01"));
    ck_assert_ptr_null(parse("1."));
    ck_assert_ptr_null(parse("\"a\nb\""));
    ck_assert(strstr(ERR, "control character") != NULL);
}
END_TEST

START_TEST(deep_nesting_should_be_an_error_not_a_crash)
{
    char buf[4096];
    memset(buf, '[', 2000);
    buf[2000] = '\0';
    ck_assert_ptr_null(parse(buf));
    ck_assert(strstr(ERR, "nesting too deep") != NULL);
}
END_TEST

START_TEST(the_arena_should_be_reused_across_parses)
{
    /* a JSONL reader parses line after line with one parser */
    for (int i = 0; i < 10000; i++) {
        const json_value *v = parse("{\"op\":\"alloc\",\"id\":12345,\"size\":4096,\"tag\":\"weights\"}");
        ck_assert_ptr_nonnull(v);
        ck_assert_str_eq(json_get(v, "tag")->u.str, "weights");
    }
}
END_TEST
