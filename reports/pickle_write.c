/* A plain-data pickle writer (pickle_write.h). The opcodes and their encodings are
 * those of Python's pickle protocol as documented in CPython's Lib/pickletools.py
 * (little-endian lengths and integers, BINFLOAT big-endian). */
#include "pickle_write.h"

#include <string.h>

enum { /* the opcodes used, by their names in pickletools */
    OP_MARK = '(', OP_STOP = '.', OP_NONE = 'N', OP_PROTO = 0x80,
    OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M', OP_LONG1 = 0x8a, OP_BINFLOAT = 'G',
    OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_BINUNICODE = 'X', OP_SHORT_BINUNICODE = 0x8c,
    OP_EMPTY_LIST = ']', OP_APPENDS = 'e', OP_EMPTY_DICT = '}', OP_SETITEMS = 'u',
};

#define BATCH 1000u /* list items (or dict key/value pairs) per APPENDS/SETITEMS */

static void fail(pickle_writer *w, const char *why)
{
    if (w->error == NULL)
        w->error = why;
}

static void put(pickle_writer *w, const void *p, size_t n)
{
    if (w->error == NULL && fwrite(p, 1, n, w->f) != n)
        fail(w, "write failed");
}

static void op(pickle_writer *w, unsigned char c)
{
    put(w, &c, 1);
}

/* One value completed inside the innermost container: close its batch when full. */
static void value_done(pickle_writer *w)
{
    if (w->depth == 0)
        return;
    uint32_t d = w->depth - 1;
    uint32_t limit = w->is_dict[d] ? 2 * BATCH : BATCH;
    if (++w->items[d] == limit) {
        op(w, w->is_dict[d] ? OP_SETITEMS : OP_APPENDS);
        op(w, OP_MARK);
        w->items[d] = 0;
    }
}

void pickle_write_init(pickle_writer *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    unsigned char proto[2] = {OP_PROTO, 4};
    put(w, proto, sizeof proto);
}

void pickle_write_int(pickle_writer *w, int64_t v)
{
    unsigned char b[10];
    size_t n;
    if (v >= 0 && v <= 0xff) {
        b[0] = OP_BININT1;
        b[1] = (unsigned char)v;
        n = 2;
    } else if (v >= 0 && v <= 0xffff) {
        b[0] = OP_BININT2;
        b[1] = (unsigned char)(v & 0xff);
        b[2] = (unsigned char)(v >> 8);
        n = 3;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        uint32_t u = (uint32_t)(int32_t)v;
        b[0] = OP_BININT;
        for (int i = 0; i < 4; i++)
            b[1 + i] = (unsigned char)(u >> (8 * i));
        n = 5;
    } else {
        /* LONG1: the shortest two's-complement little-endian form, at most 8 bytes */
        uint64_t u = (uint64_t)v;
        size_t len = 8;
        while (len > 1) {
            unsigned char top = (unsigned char)(u >> (8 * (len - 1)));
            unsigned char next = (unsigned char)(u >> (8 * (len - 2)));
            if ((top == 0 && !(next & 0x80)) || (top == 0xff && (next & 0x80)))
                len--;
            else
                break;
        }
        b[0] = OP_LONG1;
        b[1] = (unsigned char)len;
        for (size_t i = 0; i < len; i++)
            b[2 + i] = (unsigned char)(u >> (8 * i));
        n = 2 + len;
    }
    put(w, b, n);
    value_done(w);
}

void pickle_write_u64(pickle_writer *w, uint64_t v)
{
    if (v > (uint64_t)INT64_MAX) {
        fail(w, "an integer above 2^63 - 1 (it would need more than 8 bytes)");
        return;
    }
    pickle_write_int(w, (int64_t)v);
}

void pickle_write_str(pickle_writer *w, const char *s)
{
    size_t n = strlen(s);
    if (n > UINT32_MAX) {
        fail(w, "a string longer than 4 GiB");
        return;
    }
    if (n < 256) {
        unsigned char h[2] = {OP_SHORT_BINUNICODE, (unsigned char)n};
        put(w, h, 2);
    } else {
        unsigned char h[5] = {OP_BINUNICODE};
        for (int i = 0; i < 4; i++)
            h[1 + i] = (unsigned char)(n >> (8 * i));
        put(w, h, 5);
    }
    put(w, s, n);
    value_done(w);
}

void pickle_write_float(pickle_writer *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    unsigned char b[9] = {OP_BINFLOAT};
    for (int i = 0; i < 8; i++)
        b[1 + i] = (unsigned char)(u >> (8 * (7 - i)));
    put(w, b, sizeof b);
    value_done(w);
}

void pickle_write_bool(pickle_writer *w, bool v)
{
    op(w, v ? OP_NEWTRUE : OP_NEWFALSE);
    value_done(w);
}

void pickle_write_none(pickle_writer *w)
{
    op(w, OP_NONE);
    value_done(w);
}

static void open_container(pickle_writer *w, bool dict)
{
    if (w->depth == PICKLE_WRITE_DEPTH) {
        fail(w, "containers nested too deep");
        return;
    }
    op(w, dict ? OP_EMPTY_DICT : OP_EMPTY_LIST);
    op(w, OP_MARK);
    w->is_dict[w->depth] = dict;
    w->items[w->depth] = 0;
    w->depth++;
}

void pickle_write_list(pickle_writer *w)
{
    open_container(w, false);
}

void pickle_write_dict(pickle_writer *w)
{
    open_container(w, true);
}

void pickle_write_end(pickle_writer *w)
{
    if (w->depth == 0) {
        fail(w, "end without an open container");
        return;
    }
    uint32_t d = w->depth - 1;
    if (w->is_dict[d] && (w->items[d] & 1u))
        fail(w, "a dict key without its value");
    op(w, w->is_dict[d] ? OP_SETITEMS : OP_APPENDS);
    w->depth--;
    value_done(w);
}

void pickle_write_key_str(pickle_writer *w, const char *key, const char *value)
{
    pickle_write_str(w, key);
    pickle_write_str(w, value);
}

void pickle_write_key_u64(pickle_writer *w, const char *key, uint64_t value)
{
    pickle_write_str(w, key);
    pickle_write_u64(w, value);
}

void pickle_write_key_int(pickle_writer *w, const char *key, int64_t value)
{
    pickle_write_str(w, key);
    pickle_write_int(w, value);
}

void pickle_write_key_bool(pickle_writer *w, const char *key, bool value)
{
    pickle_write_str(w, key);
    pickle_write_bool(w, value);
}

void pickle_write_finish(pickle_writer *w)
{
    if (w->depth != 0)
        fail(w, "a container left open");
    op(w, OP_STOP);
}

bool pickle_write_ok(const pickle_writer *w)
{
    return w->error == NULL;
}

const char *pickle_write_error(const pickle_writer *w)
{
    return w->error ? w->error : "";
}
