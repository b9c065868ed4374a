/* Check suite for reports/pickle_write: the exact bytes of the plain-data opcodes
 * (CPython Lib/pickletools.py documents each encoding), the 8-byte limit on
 * integers, batches of 1000, and what gpusim's own pickle reader
 * (traces/import_pickle.h) reads back from it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/pickle_write.h"
#include "support/check_main.h"
#include "traces/import_pickle.h"

/* What the writer put in a tmpfile: a malloc'd copy and its length. */
static unsigned char *written(FILE *f, size_t *len)
{
    long n = ftell(f);
    ck_assert(n >= 0);
    unsigned char *b = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(b);
    rewind(f);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    *len = (size_t)n;
    return b;
}

/* A writer on a fresh tmpfile. */
static FILE *start(pickle_writer *w)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    pickle_write_init(w, f);
    return f;
}

/* One integer alone: PROTO 4, its opcode and bytes, STOP. */
static void int_bytes(int64_t v, const unsigned char *want, size_t n)
{
    pickle_writer w;
    FILE *f = start(&w);
    pickle_write_int(&w, v);
    pickle_write_finish(&w);
    ck_assert(pickle_write_ok(&w));
    size_t len;
    unsigned char *b = written(f, &len);
    ck_assert_uint_eq(len, 2 + n + 1);
    ck_assert_int_eq(b[0], 0x80);
    ck_assert_int_eq(b[1], 4);
    ck_assert_msg(memcmp(b + 2, want, n) == 0, "%lld: other bytes", (long long)v);
    ck_assert_int_eq(b[2 + n], '.');
    free(b);
    fclose(f);
}

START_TEST(integers_should_take_the_fewest_bytes_and_never_more_than_eight)
{
    int_bytes(0, (const unsigned char[]){'K', 0}, 2);
    int_bytes(255, (const unsigned char[]){'K', 0xff}, 2);
    int_bytes(256, (const unsigned char[]){'M', 0x00, 0x01}, 3);        /* BININT2, little-endian */
    int_bytes(65535, (const unsigned char[]){'M', 0xff, 0xff}, 3);
    int_bytes(65536, (const unsigned char[]){'J', 0x00, 0x00, 0x01, 0x00}, 5); /* BININT, signed 32 */
    int_bytes(-1, (const unsigned char[]){'J', 0xff, 0xff, 0xff, 0xff}, 5);
    int_bytes(INT32_MIN, (const unsigned char[]){'J', 0x00, 0x00, 0x00, 0x80}, 5);
    /* 2^31 needs 5 bytes of two's complement (the top bit of 4 would make it negative) */
    int_bytes((int64_t)1 << 31, (const unsigned char[]){0x8a, 5, 0x00, 0x00, 0x00, 0x80, 0x00}, 7);
    /* a device address, 0x7f0000200000: 6 bytes */
    int_bytes(0x7f0000200000, (const unsigned char[]){0x8a, 6, 0x00, 0x00, 0x20, 0x00, 0x00, 0x7f}, 8);
    int_bytes(INT64_MAX, (const unsigned char[]){0x8a, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 10);
    int_bytes(INT64_MIN, (const unsigned char[]){0x8a, 8, 0, 0, 0, 0, 0, 0, 0, 0x80}, 10);
    int_bytes((int64_t)INT32_MIN - 1, (const unsigned char[]){0x8a, 5, 0xff, 0xff, 0xff, 0x7f, 0xff}, 7);
}
END_TEST

START_TEST(an_unsigned_value_above_int64_should_be_an_error_not_nine_bytes)
{
    pickle_writer w;
    FILE *f = start(&w);
    pickle_write_u64(&w, (uint64_t)INT64_MAX);
    ck_assert(pickle_write_ok(&w));
    pickle_write_u64(&w, (uint64_t)INT64_MAX + 1);
    ck_assert(!pickle_write_ok(&w));
    ck_assert_ptr_nonnull(strstr(pickle_write_error(&w), "8 bytes"));
    fclose(f);
}
END_TEST

START_TEST(unbalanced_containers_should_be_errors)
{
    pickle_writer w;
    FILE *f = start(&w);
    pickle_write_end(&w); /* nothing open */
    ck_assert(!pickle_write_ok(&w));
    pickle_write_init(&w, f);
    pickle_write_list(&w);
    pickle_write_finish(&w); /* the list left open */
    ck_assert(!pickle_write_ok(&w));
    pickle_write_init(&w, f);
    pickle_write_dict(&w);
    pickle_write_str(&w, "key without a value");
    pickle_write_end(&w);
    ck_assert(!pickle_write_ok(&w));
    fclose(f);
}
END_TEST

/* The first n bytes equal to what, in b[0..len), or NULL. */
static const unsigned char *find(const unsigned char *b, size_t len, const char *what, size_t n)
{
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(b + i, what, n) == 0)
            return b + i;
    return NULL;
}

static size_t count_byte(const unsigned char *b, size_t n, unsigned char c)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += b[i] == c;
    return k;
}

START_TEST(a_long_list_should_be_appended_in_batches_and_read_back_whole)
{
    pickle_writer w;
    FILE *f = start(&w);
    pickle_write_dict(&w);
    pickle_write_str(&w, "items");
    pickle_write_list(&w);
    for (int i = 0; i < 2500; i++)
        pickle_write_int(&w, 7); /* 'K' 7: neither byte is an opcode we count */
    pickle_write_end(&w);
    char longer[301];
    memset(longer, 'x', 300);
    longer[300] = '\0';
    pickle_write_key_str(&w, "long", longer);
    pickle_write_key_str(&w, "state", "active_allocated");
    pickle_write_str(&w, "threshold");
    pickle_write_float(&w, 0.5);
    pickle_write_key_bool(&w, "expandable", true);
    pickle_write_str(&w, "none");
    pickle_write_none(&w);
    pickle_write_end(&w);
    pickle_write_finish(&w);
    ck_assert(pickle_write_ok(&w));
    size_t len;
    unsigned char *b = written(f, &len);
    /* the list's bytes: from the end of the key "items" to the key "long" (the keys
     * themselves hold an 'e') */
    const unsigned char *from = find(b, len, "items", 5), *to = find(b, len, "\x8c\x04long", 6);
    ck_assert(from != NULL && to != NULL && from < to);
    from += 5;
    /* 2500 items: APPENDS after 1000, after 2000, and the last 500 at the end */
    ck_assert_uint_eq(count_byte(from, (size_t)(to - from), 'e'), 3);
    /* the list's MARK and one after each full batch */
    ck_assert_uint_eq(count_byte(from, (size_t)(to - from), '('), 3);
    ck_assert_uint_eq(count_byte(b, len, 'X'), 1); /* BINUNICODE for the 300-byte string; 'x' is lowercase */
    pickle_doc *doc = NULL;
    const json_value *root = NULL;
    sim_error err;
    ck_assert_int_eq(pickle_parse("t.pickle", b, len, NULL, &doc, &root, &err), SIM_OK);
    const json_value *items = json_get(root, "items");
    ck_assert_ptr_nonnull(items);
    ck_assert_int_eq(items->type, JSON_ARRAY);
    ck_assert_uint_eq(items->len, 2500);
    uint64_t v = 0;
    ck_assert_int_eq(json_to_u64(&items->u.items[2499], UINT64_MAX, &v), JSON_INT_OK);
    ck_assert_uint_eq(v, 7);
    ck_assert_str_eq(json_get(root, "long")->u.str, longer);
    ck_assert_str_eq(json_get(root, "state")->u.str, "active_allocated");
    ck_assert(test_same_double(json_to_double(json_get(root, "threshold")), 0.5));
    ck_assert_int_eq(json_get(root, "expandable")->type, JSON_TRUE);
    ck_assert_int_eq(json_get(root, "none")->type, JSON_NULL);
    pickle_free(doc);
    free(b);
    fclose(f);
}
END_TEST

START_TEST(large_and_negative_integers_should_read_back_exactly)
{
    static const int64_t values[] = {0, 255, 256, 65536, -1, 0x7f0000200000, INT64_MAX, -(INT64_C(1) << 40)};
    const size_t n = sizeof values / sizeof values[0];
    pickle_writer w;
    FILE *f = start(&w);
    pickle_write_list(&w);
    for (size_t i = 0; i < n; i++)
        pickle_write_int(&w, values[i]);
    pickle_write_end(&w);
    pickle_write_finish(&w);
    ck_assert(pickle_write_ok(&w));
    size_t len;
    unsigned char *b = written(f, &len);
    pickle_doc *doc = NULL;
    const json_value *root = NULL;
    sim_error err;
    ck_assert_int_eq(pickle_parse("t.pickle", b, len, NULL, &doc, &root, &err), SIM_OK);
    ck_assert_uint_eq(root->len, n);
    for (size_t i = 0; i < n; i++) {
        int64_t got = 0;
        ck_assert_int_eq(json_to_i64(&root->u.items[i], UINT64_MAX, &got), JSON_INT_OK);
        ck_assert_int_eq(got, values[i]);
    }
    pickle_free(doc);
    free(b);
    fclose(f);
}
END_TEST
