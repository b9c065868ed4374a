#include "jsonw.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put(jsonw *w, const char *s, size_t n)
{
    if (w->buf != NULL)
        sim_buf_put(w->buf, s, n);
    else if (n > 0)
        fwrite(s, 1, n, w->fp);
}

static void puts_(jsonw *w, const char *s)
{
    put(w, s, strlen(s));
}

static void put_to(void *ctx, const char *s, size_t n)
{
    put(ctx, s, n);
}

static void init(jsonw *w, sim_buf *b, FILE *fp, jsonw_layout layout, uint32_t base)
{
    memset(w, 0, sizeof *w);
    w->buf = b;
    w->fp = fp;
    w->layout = layout;
    w->line = base;
}

void jsonw_init_buf(jsonw *w, sim_buf *b, jsonw_layout layout, uint32_t base)
{
    init(w, b, NULL, layout, base);
}

void jsonw_init_members(jsonw *w, sim_buf *b, jsonw_layout layout)
{
    init(w, b, NULL, layout, 0);
    w->level[0] = (jsonw_level){0, 0, 1, 0, 0, 0, 0}; /* an inline object, not empty */
    w->depth = 1;
}

void jsonw_init_file(jsonw *w, FILE *fp, jsonw_layout layout, uint32_t base)
{
    init(w, NULL, fp, layout, base);
}

/* A line break and n spaces: the line the writer is on now is indented n. */
static void newline(jsonw *w, uint32_t n)
{
    static const char SPACES[] = "                                ";
    put(w, "\n", 1);
    w->line = n;
    while (n > 0) {
        uint32_t k = n < sizeof SPACES - 1 ? n : (uint32_t)(sizeof SPACES - 1);
        put(w, SPACES, k);
        n -= k;
    }
}

/* What goes before a value or a key in the innermost container: its comma, and in a
 * block (or at a wrap) its line break. A value right after its key has had that already. */
static void separate(jsonw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0)
        return;
    jsonw_level *l = &w->level[w->depth - 1];
    bool pretty = w->layout == JSONW_PRETTY;
    if (!l->empty)
        puts_(w, pretty && (l->step == 0 || l->join) && !l->wrap ? ", " : ",");
    l->empty = 0;
    if (pretty && l->join)
        l->join = 0;
    else if (pretty && l->step)
        newline(w, l->line + l->step);
    else if (pretty && l->wrap)
        newline(w, l->line + 1);
    l->wrap = 0;
}

/* Open a container whose members go on lines `step` deeper (0: on one line), closing
 * on a line of its own when block. */
static void begin(jsonw *w, bool object, uint32_t step, bool block)
{
    separate(w);
    assert(w->depth < JSONW_MAX_DEPTH && step <= 8);
    if (w->depth >= JSONW_MAX_DEPTH)
        return;
    if (w->layout != JSONW_PRETTY)
        step = 0;
    w->level[w->depth++] = (jsonw_level){(uint8_t)step, (uint8_t)(block && step), (uint8_t)object, 1, 0, 0, w->line};
    put(w, object ? "{" : "[", 1);
}

void jsonw_object(jsonw *w)
{
    begin(w, true, 2, true);
}

void jsonw_object_inline(jsonw *w)
{
    begin(w, true, 0, false);
}

void jsonw_array(jsonw *w)
{
    begin(w, false, 2, true);
}

void jsonw_array_inline(jsonw *w)
{
    begin(w, false, 0, false);
}

void jsonw_object_step(jsonw *w, uint32_t step)
{
    begin(w, true, step < 1 ? 1 : step > 8 ? 8 : step, true);
}

void jsonw_array_lines(jsonw *w, uint32_t step)
{
    begin(w, false, step < 1 ? 1 : step > 8 ? 8 : step, false);
}

void jsonw_end(jsonw *w)
{
    assert(w->depth > 0 && !w->after_key);
    if (w->depth == 0)
        return;
    jsonw_level l = w->level[--w->depth];
    if (l.block && !l.empty)
        newline(w, l.line);
    put(w, l.object ? "}" : "]", 1);
}

void jsonw_wrap(jsonw *w)
{
    assert(w->depth > 0);
    if (w->depth > 0)
        w->level[w->depth - 1].wrap = 1;
}

void jsonw_join(jsonw *w)
{
    assert(w->depth > 0);
    if (w->depth > 0)
        w->level[w->depth - 1].join = 1;
}

void jsonw_key(jsonw *w, const char *key)
{
    assert(w->depth > 0 && w->level[w->depth - 1].object && !w->after_key);
    separate(w);
    sim_json_escape(put_to, w, key);
    puts_(w, w->layout == JSONW_PRETTY ? ": " : ":");
    w->after_key = true;
}

void jsonw_str(jsonw *w, const char *s)
{
    separate(w);
    sim_json_escape(put_to, w, s);
}

void jsonw_u64(jsonw *w, uint64_t v)
{
    char s[24];
    separate(w);
    int n = snprintf(s, sizeof s, "%" PRIu64, v);
    put(w, s, (size_t)n);
}

void jsonw_i64(jsonw *w, int64_t v)
{
    char s[24];
    separate(w);
    int n = snprintf(s, sizeof s, "%" PRId64, v);
    put(w, s, (size_t)n);
}

void jsonw_bool(jsonw *w, bool v)
{
    separate(w);
    puts_(w, v ? "true" : "false");
}

void jsonw_null(jsonw *w)
{
    separate(w);
    puts_(w, "null");
}

const char *jsonw_format_real(double v, char *out, size_t cap)
{
    /* %.17g always reads back (a double has at most 17 significant decimal digits);
     * the first shorter precision whose text parses to the same bits is the shortest. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, v);
        double back = strtod(out, NULL);
        if (memcmp(&back, &v, sizeof v) == 0)
            break;
    }
    return out;
}

void jsonw_real(jsonw *w, double v)
{
    if (!isfinite(v)) {
        jsonw_null(w);
        return;
    }
    char s[40];
    separate(w);
    puts_(w, jsonw_format_real(v, s, sizeof s));
}

void jsonw_real_fixed(jsonw *w, const char *fmt, double v)
{
    char s[352]; /* %.6f of the largest double is 316 characters */
    separate(w);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    int n = snprintf(s, sizeof s, fmt, v);
#pragma GCC diagnostic pop
    if (n > 0)
        put(w, s, (size_t)n < sizeof s ? (size_t)n : sizeof s - 1);
}

void jsonw_ratio(jsonw *w, double v)
{
    if (isnan(v) || v > 1e300 || v < -1e300)
        v = 0.0; /* as sim_buf_json_real */
    jsonw_real_fixed(w, "%.6f", v);
}

void jsonw_raw(jsonw *w, const char *text)
{
    separate(w);
    puts_(w, text);
}

void jsonw_key_str(jsonw *w, const char *key, const char *s)
{
    jsonw_key(w, key);
    jsonw_str(w, s);
}

void jsonw_key_u64(jsonw *w, const char *key, uint64_t v)
{
    jsonw_key(w, key);
    jsonw_u64(w, v);
}

void jsonw_key_bool(jsonw *w, const char *key, bool v)
{
    jsonw_key(w, key);
    jsonw_bool(w, v);
}

void jsonw_key_real(jsonw *w, const char *key, double v)
{
    jsonw_key(w, key);
    jsonw_real(w, v);
}
