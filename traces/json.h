/* json.h — a small JSON parser for trace files: a DOM in a reusable arena, every value
 * with its line and column, numbers kept as their source text so integers up to 2^64−1
 * (PyTorch addresses, byte counts) are read exactly, never through a double. */

/* It reads traces, check's baselines and validate's measurements, where "never silently
 * rounded" is the contract (design.md §2); only the sweep reads its own spec and
 * results with cJSON. Strings are decoded to UTF-8; nesting depth is bounded. */
#ifndef GPUSIM_JSON_H
#define GPUSIM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum json_type {
    JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} json_type;

typedef struct json_value json_value;
typedef struct json_member json_member;

struct json_value {
    json_type type;
    uint32_t line;  /* 1-based, relative to the parsed text plus line_base */
    uint32_t col;   /* 1-based byte column */
    uint32_t len;   /* string bytes, number text bytes, array/object items */
    union {
        const char *str;        /* JSON_STRING: decoded, NUL-terminated */
        const char *num;        /* JSON_NUMBER: source text, NOT terminated (use len) */
        json_value *items;      /* JSON_ARRAY */
        json_member *members;   /* JSON_OBJECT (in source order) */
    } u;
};

struct json_member {
    const char *key; /* decoded, NUL-terminated */
    json_value value;
};

typedef struct json_parser json_parser;

json_parser *json_parser_new(void);
void json_parser_free(json_parser *p);

/* Parse text[0..len) as exactly one JSON value (whitespace around it allowed).
 * Returns the root, or NULL with a message ("line L, column C: ...") in errbuf.
 * The DOM lives until the next parse on p. line_base is added to line numbers. */
const json_value *json_parse(json_parser *p, const char *text, size_t len, uint32_t line_base,
                             char *errbuf, size_t errcap);

/* Member of an object by key (the last one if repeated), or NULL. */
const json_value *json_get(const json_value *obj, const char *key);

typedef enum json_int_status {
    JSON_INT_OK = 0,
    JSON_INT_NOT_NUMBER,
    JSON_INT_NOT_INTEGER,
    JSON_INT_NEGATIVE,
    JSON_INT_TOO_LARGE
} json_int_status;

/* The exact value of a number that is a non-negative integer ≤ max ("1e3" and
 * "5.0" count as integers; "0.5" does not). Works on the source text. */
json_int_status json_to_u64(const json_value *v, uint64_t max, uint64_t *out);
/* Same for signed values (|value| ≤ max). */
json_int_status json_to_i64(const json_value *v, uint64_t max, int64_t *out);
/* The number as a double (for ratios and times where rounding is harmless). */
double json_to_double(const json_value *v);
/* A sentence for an integer status: "is not an integer", ... */
const char *json_int_status_text(json_int_status st);
const char *json_type_name(json_type t);
/* Whether a and b are the same value: same types, numbers of the same text, strings
 * of the same bytes, arrays item by item, objects member by member in order (keys
 * included); line and column are not compared. */
bool json_equal(const json_value *a, const json_value *b);

#endif
