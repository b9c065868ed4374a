/* pickle_write.h — writes plain data (dicts with string keys, lists, strings,
 * integers, floats, booleans, None) as a Python pickle, protocol 4, streamed to a
 * FILE as it is built, with no GLOBAL, REDUCE or memo, so unpickling it runs nothing
 * and any small reader (the one in pytorch.org/memory_viz, gpusim's own
 * traces/import_pickle.h) reads it. */

/* Only the opcodes a plain-data reader needs are used: PROTO, EMPTY_DICT, EMPTY_LIST,
 * MARK, SETITEMS, APPENDS, BININT1/BININT2/BININT, LONG1 of at most 8 bytes,
 * SHORT_BINUNICODE/BINUNICODE, BINFLOAT, NEWTRUE/NEWFALSE, NONE, STOP. Integers are at
 * most 8 bytes (the viewer reads no longer ones): a value outside the int64 range is an
 * error. Lists and dicts are emitted in batches of 1000 items (as Python's pickler
 * does), so no reader holds a huge MARK on its stack.
 *
 * Usage: pickle_write_init, then values; a container is opened with
 * pickle_write_list/pickle_write_dict, filled (a dict: key, value, key, value ...) and
 * closed with pickle_write_end; pickle_write_finish writes STOP. Errors (a write that
 * failed, an integer out of range, containers nested deeper than PICKLE_WRITE_DEPTH,
 * an unbalanced end) are sticky: pickle_write_ok tells, pickle_write_error says why. */
#ifndef GPUSIM_REPORTS_PICKLE_WRITE_H
#define GPUSIM_REPORTS_PICKLE_WRITE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PICKLE_WRITE_DEPTH 16

typedef struct pickle_writer {
    FILE *f;                          /* borrowed */
    uint32_t depth;
    uint32_t items[PICKLE_WRITE_DEPTH]; /* values written in the open batch of each container */
    bool is_dict[PICKLE_WRITE_DEPTH];
    const char *error;                /* NULL while everything went well */
} pickle_writer;

/* Start a pickle on f: writes PROTO 4. */
void pickle_write_init(pickle_writer *w, FILE *f);

void pickle_write_int(pickle_writer *w, int64_t v);
/* An unsigned value; above INT64_MAX it is an error (it would need 9 bytes). */
void pickle_write_u64(pickle_writer *w, uint64_t v);
/* A UTF-8 string (copied as is). */
void pickle_write_str(pickle_writer *w, const char *s);
void pickle_write_float(pickle_writer *w, double v);
void pickle_write_bool(pickle_writer *w, bool v);
void pickle_write_none(pickle_writer *w);

/* Open a list or a dict; pickle_write_end closes the innermost one. */
void pickle_write_list(pickle_writer *w);
void pickle_write_dict(pickle_writer *w);
void pickle_write_end(pickle_writer *w);

/* Shorthands for one dict entry: the key and its value. */
void pickle_write_key_str(pickle_writer *w, const char *key, const char *value);
void pickle_write_key_u64(pickle_writer *w, const char *key, uint64_t value);
void pickle_write_key_int(pickle_writer *w, const char *key, int64_t value);
void pickle_write_key_bool(pickle_writer *w, const char *key, bool value);

/* STOP; an error when a container is still open. */
void pickle_write_finish(pickle_writer *w);

bool pickle_write_ok(const pickle_writer *w);
/* Why it failed ("" while it did not). */
const char *pickle_write_error(const pickle_writer *w);

#endif
