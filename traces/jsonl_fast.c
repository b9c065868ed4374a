/* The JSONL reader's fast path (jsonl_fast.h): the usual event line read in one
 * pass, keys dispatched by their first byte, integers eight digits at a time. */
#include "jsonl_fast.h"

#include <string.h>

enum { FK_OP, FK_ID, FK_SIZE, FK_T, FK_STREAM, FK_TAG, FK_PROC, FK_READY, FK_NAME, FK_SHARE, FK_COUNT };

static const uint32_t FAST_ALLOWED[] = {
    [SIM_OP_ALLOC] = 1u << FK_OP | 1u << FK_ID | 1u << FK_SIZE | 1u << FK_T | 1u << FK_STREAM | 1u << FK_TAG |
                     1u << FK_PROC | 1u << FK_SHARE,
    [SIM_OP_FREE] = 1u << FK_OP | 1u << FK_ID | 1u << FK_T | 1u << FK_READY | 1u << FK_PROC,
    [SIM_OP_EMPTY_CACHE] = 1u << FK_OP | 1u << FK_T | 1u << FK_PROC,
    [SIM_OP_MARK] = 1u << FK_OP | 1u << FK_NAME | 1u << FK_T | 1u << FK_PROC,
};
static const uint32_t FAST_REQUIRED[] = {
    [SIM_OP_ALLOC] = 1u << FK_OP | 1u << FK_ID | 1u << FK_SIZE,
    [SIM_OP_FREE] = 1u << FK_OP | 1u << FK_ID,
    [SIM_OP_EMPTY_CACHE] = 1u << FK_OP,
    [SIM_OP_MARK] = 1u << FK_OP | 1u << FK_NAME,
};

static inline const char *fast_ws(const char *p, const char *end)
{
    /* ' ', '\t' and '\r' are all <= ' ': most calls see a byte above it at once */
    while (p < end && (unsigned char)*p <= ' ' && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* A string without escapes or control characters: p at the opening quote;
 * returns the closing quote, or NULL. */
static inline const char *fast_str(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c > '\\')
            continue; /* lower-case letters and the like: neither quote, backslash nor control */
        if (c == '"')
            return p;
        if (c == '\\' || c < 0x20)
            return NULL;
    }
    return NULL;
}

static int fast_key(const char *k, size_t n)
{
    switch (n) {
    case 1: return k[0] == 't' ? FK_T : -1;
    case 2: return k[0] == 'o' && k[1] == 'p' ? FK_OP : k[0] == 'i' && k[1] == 'd' ? FK_ID : -1;
    case 3: return memcmp(k, "tag", 3) == 0 ? FK_TAG : -1;
    case 4:
        if (memcmp(k, "size", 4) == 0)
            return FK_SIZE;
        if (memcmp(k, "proc", 4) == 0)
            return FK_PROC;
        return memcmp(k, "name", 4) == 0 ? FK_NAME : -1;
    case 5: return memcmp(k, "share", 5) == 0 ? FK_SHARE : -1;
    case 6: return memcmp(k, "stream", 6) == 0 ? FK_STREAM : -1;
    case 7: return memcmp(k, "ready_t", 7) == 0 ? FK_READY : -1;
    default: return -1;
    }
}

/* A key as gpusim's writer puts it, "key": with no space: p at its opening quote;
 * its FK_ number, *after just past the colon, or -1 (the general steps read it). */
static inline int compact_key(const char *p, const char *end, const char **after)
{
    size_t room = (size_t)(end - p);
    int k = -1;
    size_t n = 0;
    if (room < 4)
        return -1;
    switch (p[1]) {
    case 'o': k = room >= 5 && memcmp(p, "\"op\":", 5) == 0 ? FK_OP : -1, n = 5; break;
    case 'i': k = room >= 5 && memcmp(p, "\"id\":", 5) == 0 ? FK_ID : -1, n = 5; break;
    case 't':
        if (memcmp(p, "\"t\":", 4) == 0)
            k = FK_T, n = 4;
        else if (room >= 6 && memcmp(p, "\"tag\":", 6) == 0)
            k = FK_TAG, n = 6;
        break;
    case 's':
        if (room >= 7 && memcmp(p, "\"size\":", 7) == 0)
            k = FK_SIZE, n = 7;
        else if (room >= 9 && memcmp(p, "\"stream\":", 9) == 0)
            k = FK_STREAM, n = 9;
        else if (room >= 8 && memcmp(p, "\"share\":", 8) == 0)
            k = FK_SHARE, n = 8;
        break;
    case 'r': k = room >= 10 && memcmp(p, "\"ready_t\":", 10) == 0 ? FK_READY : -1, n = 10; break;
    case 'p': k = room >= 7 && memcmp(p, "\"proc\":", 7) == 0 ? FK_PROC : -1, n = 7; break;
    case 'n': k = room >= 7 && memcmp(p, "\"name\":", 7) == 0 ? FK_NAME : -1, n = 7; break;
    default: break;
    }
    *after = p + n;
    return k;
}

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FAST_SWAR 1
static const uint64_t POW10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* The leading decimal digits (at most 8) of the 8 bytes at p, eight at a time: how
 * many, and their value in *val. A byte is a digit when its high nibble and that
 * of the byte plus 6 are both 3; a carry out of a non-digit byte reaches only the
 * bytes after it. The digits, shifted to the top (the bytes before them zero), are
 * combined pairwise: 10*a+b, 100*ab+cd, 10000*abcd+efgh. */
static inline unsigned swar_digits(const char *p, uint64_t *val)
{
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t bad = ((x & 0xF0F0F0F0F0F0F0F0u) | (((x + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) >> 4)) ^
                   0x3333333333333333u;
    unsigned n = bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
    if (n == 0) {
        *val = 0;
        return 0;
    }
    uint64_t v = (x - 0x3030303030303030u) << (8 * (8 - n));
    v = ((v & 0x0F0F0F0F0F0F0F0Fu) * 2561) >> 8;
    v = ((v & 0x00FF00FF00FF00FFu) * 6553601) >> 16;
    *val = ((v & 0x0000FFFF0000FFFFu) * 42949672960001u) >> 32;
    return n;
}
#else
#define FAST_SWAR 0
#endif

bool jsonl_fast_event(char *line, size_t len, uint64_t ns_per_unit, uint64_t *prev_t, uint64_t line_no, sim_event *ev)
{
    const char *p = line, *end = line + len;
    uint64_t num[FK_COUNT] = {0};
    const char *str[FK_COUNT] = {0}, *str_end[FK_COUNT] = {0};
    uint32_t seen = 0;
    p = fast_ws(p, end);
    if (p >= end || *p != '{')
        return false;
    p++;
    for (;;) {
        p = fast_ws(p, end);
        if (p >= end || *p != '"')
            return false;
        const char *after;
        int k = compact_key(p, end, &after);
        if (k < 0) {
            const char *kq = fast_str(p, end);
            if (kq == NULL)
                return false;
            k = fast_key(p + 1, (size_t)(kq - p - 1));
            if (k < 0)
                return false;
            after = fast_ws(kq + 1, end);
            if (after >= end || *after != ':')
                return false;
            after++;
        }
        if (seen & (1u << k))
            return false;
        seen |= 1u << k;
        p = fast_ws(after, end);
        if (p >= end)
            return false;
        if (k == FK_OP && end - p >= 7 && memcmp(p, "\"alloc\"", 7) == 0) {
            str[k] = p + 1; /* the usual ops, without the byte loop */
            str_end[k] = p + 6;
            p += 7;
        } else if (k == FK_OP && end - p >= 6 && memcmp(p, "\"free\"", 6) == 0) {
            str[k] = p + 1;
            str_end[k] = p + 5;
            p += 6;
        } else if (k == FK_OP || k == FK_TAG || k == FK_PROC || k == FK_NAME) {
            if (*p != '"')
                return false;
            const char *q = fast_str(p, end);
            if (q == NULL)
                return false;
            str[k] = p + 1;
            str_end[k] = q;
            p = q + 1;
        } else {
            const char *d = p;
            uint64_t v = 0;
#if FAST_SWAR
            /* eight digits at a time while eight bytes remain, up to 16 digits */
            while (end - p >= 8 && p - d < 16) {
                uint64_t c;
                unsigned n = swar_digits(p, &c);
                v = v * POW10[n] + c;
                p += n;
                if (n < 8)
                    break;
            }
#endif
            const char *lim = end - d > 17 ? d + 17 : end; /* at most 17 digits are read */
            while (p < lim && (unsigned)(*p - '0') < 10u)
                v = v * 10 + (uint64_t)(*p++ - '0');
            size_t nd = (size_t)(p - d);
            if (nd == 0 || nd > 16 || (nd > 1 && *d == '0') || v > SIM_MAX_SIZE)
                return false;
            if (p < end && (*p == '.' || *p == 'e' || *p == 'E' || (*p >= '0' && *p <= '9')))
                return false;
            num[k] = v;
        }
        p = fast_ws(p, end);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '}') {
            p++;
            break;
        }
        return false;
    }
    if (fast_ws(p, end) != end || !(seen & (1u << FK_OP)))
        return false;
    size_t oplen = (size_t)(str_end[FK_OP] - str[FK_OP]);
    sim_op op;
    if (oplen == 5 && memcmp(str[FK_OP], "alloc", 5) == 0)
        op = SIM_OP_ALLOC;
    else if (oplen == 4 && memcmp(str[FK_OP], "free", 4) == 0)
        op = SIM_OP_FREE;
    else if (oplen == 11 && memcmp(str[FK_OP], "empty_cache", 11) == 0)
        op = SIM_OP_EMPTY_CACHE;
    else if (oplen == 4 && memcmp(str[FK_OP], "mark", 4) == 0)
        op = SIM_OP_MARK;
    else
        return false;
    if ((seen & ~FAST_ALLOWED[op]) || (seen & FAST_REQUIRED[op]) != FAST_REQUIRED[op])
        return false;
    uint64_t m = ns_per_unit, t = *prev_t;
    if (seen & (1u << FK_T)) {
        if (m > 1 && num[FK_T] > UINT64_MAX / m)
            return false;
        t = num[FK_T] * m;
        if (t < *prev_t)
            return false;
    }
    uint64_t ready = t;
    if (seen & (1u << FK_READY)) {
        if (m > 1 && num[FK_READY] > UINT64_MAX / m)
            return false;
        ready = num[FK_READY] * m;
        if (ready < t)
            return false;
    }
    if (num[FK_STREAM] > UINT32_MAX)
        return false;
    /* accepted: commit */
    *prev_t = t;
    ev->op = op;
    ev->id = num[FK_ID];
    ev->size = num[FK_SIZE];
    ev->t = t;
    ev->ready_t = ready;
    ev->stream = (uint32_t)num[FK_STREAM];
    ev->has_ready_stream = false; /* a line with "ready_stream" takes the general path */
    ev->ready_stream = 0;
    ev->has_share = (seen & (1u << FK_SHARE)) != 0;
    ev->share = num[FK_SHARE];
    ev->pool = 0; /* a pool event's line takes the general path */
    ev->pool_flags = 0;
    ev->tag = ev->name = ev->proc = NULL;
    if (str[FK_TAG]) {
        line[str_end[FK_TAG] - line] = '\0';
        ev->tag = str[FK_TAG];
    }
    if (str[FK_PROC]) {
        line[str_end[FK_PROC] - line] = '\0';
        ev->proc = str[FK_PROC];
    }
    if (str[FK_NAME]) {
        line[str_end[FK_NAME] - line] = '\0';
        ev->name = str[FK_NAME];
    }
    ev->line = line_no;
    return true;
}
