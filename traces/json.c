/* JSON parser: recursive descent over a byte buffer.
 * Memory: all values, members and decoded strings go into an arena of chunks that
 * is reset (not freed) between parses, so parsing line after line of a JSONL file
 * allocates nothing once the arena is big enough. Containers collect children on
 * a scratch stack and copy them into the arena when closed. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

#define JSON_MAX_DEPTH 128
#define ARENA_CHUNK ((size_t)64 * 1024)

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t cap, used;
    unsigned char data[];
} arena_chunk;

struct json_parser {
    arena_chunk *chunks;   /* current chunk first */
    arena_chunk *spare;    /* chunks kept after a reset */
    /* scratch stack of children: values for arrays, members for objects */
    json_member *stack;
    size_t stack_len, stack_cap;
    /* parse state */
    const char *text, *pos, *end;
    const char *line_start;
    uint32_t line;
    char *err;
    size_t errcap;
    bool failed;
};

json_parser *json_parser_new(void)
{
    return calloc(1, sizeof(json_parser));
}

static void chunks_free(arena_chunk *c)
{
    while (c) {
        arena_chunk *n = c->next;
        free(c);
        c = n;
    }
}

void json_parser_free(json_parser *p)
{
    if (p == NULL)
        return;
    chunks_free(p->chunks);
    chunks_free(p->spare);
    free(p->stack);
    free(p);
}

static void arena_reset(json_parser *p)
{
    /* keep chunks for reuse; big one-off chunks are freed to bound memory */
    while (p->chunks) {
        arena_chunk *c = p->chunks;
        p->chunks = c->next;
        if (c->cap > 4 * ARENA_CHUNK) {
            free(c);
            continue;
        }
        c->used = 0;
        c->next = p->spare;
        p->spare = c;
    }
}

static void *arena_alloc(json_parser *p, size_t n)
{
    n = (n + 7u) & ~(size_t)7u;
    arena_chunk *c = p->chunks;
    if (c == NULL || c->cap - c->used < n) {
        if (p->spare && n <= p->spare->cap) {
            c = p->spare;
            p->spare = c->next;
        } else {
            size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
            c = malloc(sizeof *c + cap);
            if (c == NULL)
                return NULL;
            c->cap = cap;
        }
        c->used = 0;
        c->next = p->chunks;
        p->chunks = c;
    }
    void *r = c->data + c->used;
    c->used += n;
    return r;
}

static void *fail(json_parser *p, const char *msg)
{
    if (!p->failed) {
        p->failed = true;
        unsigned long col = (unsigned long)(p->pos - p->line_start) + 1;
        snprintf(p->err, p->errcap, "line %u, column %lu: %s", p->line, col, msg);
    }
    return NULL;
}

static void skip_ws(json_parser *p)
{
    while (p->pos < p->end) {
        char c = *p->pos;
        if (c == '\n') {
            p->line++;
            p->line_start = p->pos + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        p->pos++;
    }
}

static bool stack_push(json_parser *p, const json_member *m)
{
    if (!SIM_GROW(p->stack, p->stack_len + 1, p->stack_cap))
        return false;
    p->stack[p->stack_len++] = *m;
    return true;
}

static void put_utf8(char **o, uint32_t cp)
{
    unsigned char *u = (unsigned char *)*o;
    if (cp < 0x80) {
        *u++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *u++ = (unsigned char)(0xC0 | (cp >> 6));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *u++ = (unsigned char)(0xE0 | (cp >> 12));
        *u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        *u++ = (unsigned char)(0xF0 | (cp >> 18));
        *u++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    *o = (char *)u;
}

static bool hex4(json_parser *p, uint32_t *out)
{
    if (p->end - p->pos < 4)
        return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->pos[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return false;
    }
    p->pos += 4;
    *out = v;
    return true;
}

/* On entry pos is at the opening quote. Returns the decoded string. */
static const char *parse_string(json_parser *p, uint32_t *len_out)
{
    p->pos++; /* opening quote */
    const char *start = p->pos;
    /* fast scan: find the closing quote, note whether escapes occur */
    bool escapes = false;
    const char *q = start;
    while (q < p->end && *q != '"') {
        if ((unsigned char)*q < 0x20) {
            p->pos = q;
            return fail(p, "control character in string (strings must be on one line)");
        }
        if (*q == '\\') {
            escapes = true;
            q++;
        }
        q++;
    }
    if (q >= p->end) {
        return fail(p, "unterminated string");
    }
    size_t raw = (size_t)(q - start);
    char *out = arena_alloc(p, raw + 1);
    if (out == NULL)
        return fail(p, "out of memory");
    if (!escapes) {
        memcpy(out, start, raw);
        out[raw] = '\0';
        p->pos = q + 1;
        *len_out = (uint32_t)raw;
        return out;
    }
    char *o = out;
    while (p->pos < q) {
        char c = *p->pos++;
        if (c != '\\') {
            *o++ = c;
            continue;
        }
        char e = *p->pos++;
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!hex4(p, &cp))
                return fail(p, "bad \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (p->pos + 2 <= q && p->pos[0] == '\\' && p->pos[1] == 'u') {
                    p->pos += 2;
                    if (!hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return fail(p, "bad surrogate pair");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    return fail(p, "lone surrogate");
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(p, "lone surrogate");
            }
            /* a \u escape never expands: 6 source bytes give ≤ 4 output bytes */
            put_utf8(&o, cp);
            break;
        }
        default:
            p->pos--;
            return fail(p, "bad escape in string");
        }
    }
    *o = '\0';
    p->pos = q + 1;
    *len_out = (uint32_t)(o - out);
    return out;
}

static bool parse_number_text(json_parser *p)
{
    const char *s = p->pos;
    if (s < p->end && *s == '-')
        s++;
    if (s >= p->end)
        return false;
    if (*s == '0') {
        s++;
    } else if (*s >= '1' && *s <= '9') {
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    } else {
        return false;
    }
    if (s < p->end && *s == '.') {
        s++;
        if (s >= p->end || *s < '0' || *s > '9')
            return false;
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < p->end && (*s == '+' || *s == '-'))
            s++;
        if (s >= p->end || *s < '0' || *s > '9')
            return false;
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    }
    p->pos = s;
    return true;
}

static bool parse_value(json_parser *p, json_value *v, int depth);

static bool parse_container(json_parser *p, json_value *v, int depth, bool is_object)
{
    if (depth >= JSON_MAX_DEPTH) {
        fail(p, "nesting too deep");
        return false;
    }
    char close = is_object ? '}' : ']';
    p->pos++;
    size_t base = p->stack_len;
    skip_ws(p);
    if (p->pos < p->end && *p->pos == close) {
        p->pos++;
    } else {
        for (;;) {
            json_member m = {NULL, {0}};
            if (is_object) {
                skip_ws(p);
                if (p->pos >= p->end || *p->pos != '"') {
                    fail(p, "expected a string key");
                    return false;
                }
                uint32_t klen;
                m.key = parse_string(p, &klen);
                if (m.key == NULL)
                    return false;
                skip_ws(p);
                if (p->pos >= p->end || *p->pos != ':') {
                    fail(p, "expected ':' after key");
                    return false;
                }
                p->pos++;
            }
            if (!parse_value(p, &m.value, depth + 1))
                return false;
            if (!stack_push(p, &m)) {
                fail(p, "out of memory");
                return false;
            }
            skip_ws(p);
            if (p->pos < p->end && *p->pos == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->end && *p->pos == close) {
                p->pos++;
                break;
            }
            fail(p, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
            return false;
        }
    }
    size_t n = p->stack_len - base;
    if (n > UINT32_MAX) {
        fail(p, "too many items");
        return false;
    }
    v->type = is_object ? JSON_OBJECT : JSON_ARRAY;
    v->len = (uint32_t)n;
    if (is_object) {
        json_member *ms = arena_alloc(p, n * sizeof *ms + 1);
        if (ms == NULL) {
            fail(p, "out of memory");
            return false;
        }
        if (n)
            memcpy(ms, p->stack + base, n * sizeof *ms); /* the stack is NULL before its first push */
        v->u.members = ms;
    } else {
        json_value *vs = arena_alloc(p, n * sizeof *vs + 1);
        if (vs == NULL) {
            fail(p, "out of memory");
            return false;
        }
        for (size_t i = 0; i < n; i++)
            vs[i] = p->stack[base + i].value;
        v->u.items = vs;
    }
    p->stack_len = base;
    return true;
}

static bool match_word(json_parser *p, const char *w, size_t n)
{
    if ((size_t)(p->end - p->pos) < n || memcmp(p->pos, w, n) != 0)
        return false;
    p->pos += n;
    return true;
}

static bool parse_value(json_parser *p, json_value *v, int depth)
{
    skip_ws(p);
    memset(v, 0, sizeof *v);
    v->line = p->line;
    v->col = (uint32_t)(p->pos - p->line_start) + 1;
    if (p->pos >= p->end) {
        fail(p, "unexpected end of input");
        return false;
    }
    switch (*p->pos) {
    case '{': return parse_container(p, v, depth, true);
    case '[': return parse_container(p, v, depth, false);
    case '"': {
        uint32_t len;
        v->type = JSON_STRING;
        v->u.str = parse_string(p, &len);
        v->len = len;
        return v->u.str != NULL;
    }
    case 't':
        v->type = JSON_TRUE;
        if (match_word(p, "true", 4))
            return true;
        break;
    case 'f':
        v->type = JSON_FALSE;
        if (match_word(p, "false", 5))
            return true;
        break;
    case 'n':
        v->type = JSON_NULL;
        if (match_word(p, "null", 4))
            return true;
        break;
    default: {
        const char *s = p->pos;
        if (parse_number_text(p)) {
            v->type = JSON_NUMBER;
            v->u.num = s;
            v->len = (uint32_t)(p->pos - s);
            return true;
        }
        p->pos = s;
        break;
    }
    }
    fail(p, "invalid JSON value");
    return false;
}

const json_value *json_parse(json_parser *p, const char *text, size_t len, uint32_t line_base,
                             char *errbuf, size_t errcap)
{
    arena_reset(p);
    p->stack_len = 0;
    p->text = p->pos = p->line_start = text;
    p->end = text + len;
    p->line = line_base ? line_base : 1;
    p->err = errbuf;
    p->errcap = errcap;
    p->failed = false;
    if (errcap)
        errbuf[0] = '\0';
    json_value *root = arena_alloc(p, sizeof *root);
    if (root == NULL) {
        fail(p, "out of memory");
        return NULL;
    }
    if (!parse_value(p, root, 0))
        return NULL;
    skip_ws(p);
    if (p->pos != p->end) {
        fail(p, "unexpected text after the JSON value");
        return NULL;
    }
    return root;
}

const json_value *json_get(const json_value *obj, const char *key)
{
    if (obj == NULL || obj->type != JSON_OBJECT)
        return NULL;
    for (uint32_t i = obj->len; i-- > 0;)
        if (strcmp(obj->u.members[i].key, key) == 0)
            return &obj->u.members[i].value;
    return NULL;
}

/* Exact magnitude of a number's text as an integer. */
static json_int_status number_magnitude(const json_value *v, uint64_t max, uint64_t *out, bool *neg)
{
    if (v == NULL || v->type != JSON_NUMBER)
        return JSON_INT_NOT_NUMBER;
    const char *s = v->u.num, *e = s + v->len;
    *neg = false;
    if (s < e && *s == '-') {
        *neg = true;
        s++;
    }
    /* significant digits D (integer then fraction part) and decimal exponent E */
    char digits[64];
    size_t nd = 0;
    int64_t exp10 = 0;
    bool overflow_digits = false;
    for (; s < e && *s >= '0' && *s <= '9'; s++) {
        if (nd == 0 && *s == '0')
            continue; /* leading zeros */
        if (nd < sizeof digits)
            digits[nd++] = *s;
        else {
            overflow_digits = true;
            exp10++;
        }
    }
    if (s < e && *s == '.') {
        for (s++; s < e && *s >= '0' && *s <= '9'; s++) {
            if (nd == 0 && *s == '0') {
                exp10--;
                continue;
            }
            if (nd < sizeof digits) {
                digits[nd++] = *s;
                exp10--;
            } else if (*s != '0') {
                overflow_digits = true;
            }
        }
    }
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = false;
        if (*s == '+' || *s == '-')
            eneg = *s++ == '-';
        int64_t ev = 0;
        for (; s < e; s++) {
            if (ev < 100000)
                ev = ev * 10 + (*s - '0');
        }
        exp10 += eneg ? -ev : ev;
    }
    while (nd > 0 && digits[nd - 1] == '0') {
        nd--;
        exp10++;
    }
    if (nd == 0) {
        *out = 0;
        *neg = false;
        return JSON_INT_OK;
    }
    if (exp10 < 0)
        return JSON_INT_NOT_INTEGER;
    if (overflow_digits || (int64_t)nd + exp10 > 20)
        return JSON_INT_TOO_LARGE;
    uint64_t val = 0;
    for (size_t i = 0; i < nd; i++) {
        uint64_t d = (uint64_t)(digits[i] - '0');
        if (val > (UINT64_MAX - d) / 10)
            return JSON_INT_TOO_LARGE;
        val = val * 10 + d;
    }
    for (int64_t i = 0; i < exp10; i++) {
        if (val > UINT64_MAX / 10)
            return JSON_INT_TOO_LARGE;
        val *= 10;
    }
    if (val > max)
        return JSON_INT_TOO_LARGE;
    *out = val;
    return JSON_INT_OK;
}

json_int_status json_to_u64(const json_value *v, uint64_t max, uint64_t *out)
{
    bool neg;
    uint64_t m;
    json_int_status st = number_magnitude(v, max, &m, &neg);
    if (st != JSON_INT_OK)
        return st;
    if (neg)
        return JSON_INT_NEGATIVE;
    *out = m;
    return JSON_INT_OK;
}

json_int_status json_to_i64(const json_value *v, uint64_t max, int64_t *out)
{
    bool neg;
    uint64_t m;
    if (max > (uint64_t)INT64_MAX)
        max = (uint64_t)INT64_MAX;
    json_int_status st = number_magnitude(v, max, &m, &neg);
    if (st != JSON_INT_OK)
        return st;
    *out = neg ? -(int64_t)m : (int64_t)m;
    return JSON_INT_OK;
}

double json_to_double(const json_value *v)
{
    if (v == NULL || v->type != JSON_NUMBER)
        return 0.0;
    char buf[128];
    size_t n = v->len < sizeof buf - 1 ? v->len : sizeof buf - 1;
    memcpy(buf, v->u.num, n);
    buf[n] = '\0';
    return strtod(buf, NULL);
}

const char *json_int_status_text(json_int_status st)
{
    switch (st) {
    case JSON_INT_OK: return "is ok";
    case JSON_INT_NOT_NUMBER: return "is not a number";
    case JSON_INT_NOT_INTEGER: return "is not an integer";
    case JSON_INT_NEGATIVE: return "is negative";
    case JSON_INT_TOO_LARGE: return "is too large";
    }
    return "is invalid";
}

bool json_equal(const json_value *a, const json_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case JSON_NULL:
    case JSON_TRUE:
    case JSON_FALSE: return true;
    case JSON_NUMBER: return a->len == b->len && memcmp(a->u.num, b->u.num, a->len) == 0;
    case JSON_STRING: return a->len == b->len && memcmp(a->u.str, b->u.str, a->len) == 0;
    case JSON_ARRAY:
        if (a->len != b->len)
            return false;
        for (uint32_t i = 0; i < a->len; i++)
            if (!json_equal(&a->u.items[i], &b->u.items[i]))
                return false;
        return true;
    case JSON_OBJECT:
        if (a->len != b->len)
            return false;
        for (uint32_t i = 0; i < a->len; i++)
            if (strcmp(a->u.members[i].key, b->u.members[i].key) != 0 ||
                !json_equal(&a->u.members[i].value, &b->u.members[i].value))
                return false;
        return true;
    }
    return false;
}

const char *json_type_name(json_type t)
{
    switch (t) {
    case JSON_NULL: return "null";
    case JSON_FALSE:
    case JSON_TRUE: return "a boolean";
    case JSON_NUMBER: return "a number";
    case JSON_STRING: return "a string";
    case JSON_ARRAY: return "an array";
    case JSON_OBJECT: return "an object";
    }
    return "?";
}
