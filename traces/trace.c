/* Native trace format v1: the reader (JSON document or JSON Lines; the writer is in
 * trace_writer.c). */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gtrace.h"
#include "json.h"
#include "jsonl_fast.h"
#include "sim/buf.h"
#include "sim/gpus.h"

#define TRACE_MAX_LINE ((size_t)64 << 20) /* a longer line is an error, not a crash */
#define READ_CHUNK ((size_t)1 << 20)

struct trace_reader {
    char path[512];
    trace_header header;
    trace_container container;
    json_parser *jp;
    gtrace_reader *gt;  /* the binary container: everything is delegated to it */
    /* source: a file (JSONL streaming) or a whole buffer */
    FILE *fp;
    trace_bytes src;    /* instead of fp: trace_open_bytes (src.read set) */
    char *buf;          /* JSONL: read buffer; JSON: the whole document */
    size_t buf_len, buf_cap, buf_pos;
    bool eof;
    uint64_t line;      /* JSONL: line number of the last line read */
    /* JSON document */
    const json_value *events;
    uint32_t next_index;
    /* validation state */
    uint64_t prev_t;
    uint64_t n_events;
    char errtext[256];
};

/* ---------------------------------------------------------------- reading lines */

static sim_status read_more(trace_reader *r, sim_error *err)
{
    if (r->eof || (r->fp == NULL && r->src.read == NULL)) {
        r->eof = true;
        return SIM_OK;
    }
    if (r->buf_pos > 0) {
        memmove(r->buf, r->buf + r->buf_pos, r->buf_len - r->buf_pos);
        r->buf_len -= r->buf_pos;
        r->buf_pos = 0;
    }
    if (r->buf_cap - r->buf_len < READ_CHUNK) {
        size_t cap = r->buf_cap ? r->buf_cap * 2 : 2 * READ_CHUNK;
        if (cap > TRACE_MAX_LINE + 2 * READ_CHUNK)
            return sim_error_set(err, SIM_ETRACE, r->path, r->line + 1, 0, "line is longer than %zu MiB",
                                 TRACE_MAX_LINE >> 20);
        char *b = realloc(r->buf, cap);
        if (b == NULL)
            return sim_error_set(err, SIM_ENOMEM, r->path, r->line + 1, 0, "out of memory reading the line");
        r->buf = b;
        r->buf_cap = cap;
    }
    size_t n = 0;
    if (r->src.read) {
        sim_status st = r->src.read(r->src.ctx, r->buf + r->buf_len, r->buf_cap - r->buf_len, &n, err);
        if (st != SIM_OK)
            return st;
        if (n == 0)
            r->eof = true;
    } else {
        n = fread(r->buf + r->buf_len, 1, r->buf_cap - r->buf_len, r->fp);
        if (n == 0) {
            if (ferror(r->fp))
                return sim_error_set(err, SIM_EIO, r->path, 0, 0, "read failed: %s", strerror(errno));
            r->eof = true;
        }
    }
    r->buf_len += n;
    return SIM_OK;
}

/* Next line (without '\n'); *line NULL at end of input. */
static sim_status next_line(trace_reader *r, const char **line, size_t *len, sim_error *err)
{
    for (;;) {
        char *start = r->buf + r->buf_pos;
        size_t avail = r->buf_len - r->buf_pos;
        char *nl = avail ? memchr(start, '\n', avail) : NULL;
        if (nl) {
            *line = start;
            *len = (size_t)(nl - start);
            r->buf_pos += *len + 1;
            r->line++;
            return SIM_OK;
        }
        if (r->eof) {
            if (avail == 0) {
                *line = NULL;
                *len = 0;
                return SIM_OK;
            }
            *line = start;
            *len = avail;
            r->buf_pos = r->buf_len;
            r->line++;
            return SIM_OK;
        }
        if (avail > TRACE_MAX_LINE)
            return sim_error_set(err, SIM_ETRACE, r->path, r->line + 1, 0, "line is longer than %zu MiB",
                                 TRACE_MAX_LINE >> 20);
        sim_status st = read_more(r, err);
        if (st != SIM_OK)
            return st;
    }
}

static bool is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* ---------------------------------------------------------------- validation */

static sim_status get_uint(trace_reader *r, const json_value *obj, const char *key, bool required,
                           uint64_t *out, bool *present, uint64_t line, uint64_t event, sim_error *err)
{
    const json_value *v = json_get(obj, key);
    if (present)
        *present = v != NULL;
    if (v == NULL) {
        if (required)
            return sim_error_set(err, SIM_ETRACE, r->path, line, event, "missing \"%s\"", key);
        return SIM_OK;
    }
    if (v->type != JSON_NUMBER)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"%s\" must be an integer, not %s", key,
                             json_type_name(v->type));
    json_int_status st = json_to_u64(v, SIM_MAX_SIZE, out);
    if (st == JSON_INT_TOO_LARGE)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"%s\" %.*s exceeds 2^53", key,
                             (int)(v->len > 40 ? 40 : v->len), v->u.num);
    if (st != JSON_INT_OK)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"%s\" %.*s %s (expected an integer 0..2^53)",
                             key, (int)(v->len > 40 ? 40 : v->len), v->u.num, json_int_status_text(st));
    return SIM_OK;
}

static sim_status get_str(trace_reader *r, const json_value *obj, const char *key, const char **out,
                          uint64_t line, uint64_t event, sim_error *err)
{
    const json_value *v = json_get(obj, key);
    *out = NULL;
    if (v == NULL || v->type == JSON_NULL)
        return SIM_OK;
    if (v->type != JSON_STRING)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"%s\" must be a string, not %s", key,
                             json_type_name(v->type));
    *out = v->u.str;
    return SIM_OK;
}

static sim_status to_ns(trace_reader *r, uint64_t t, uint64_t *out, const char *key, uint64_t line,
                        uint64_t event, sim_error *err)
{
    uint64_t m = r->header.ns_per_unit;
    if (m > 1 && t > UINT64_MAX / m)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"%s\" overflows when converted to ns", key);
    *out = t * m;
    return SIM_OK;
}

#define EVENT_KEYS_MAX 9 /* the most keys an op has, plus the NULL that ends them */

static const char *const EVENT_KEYS[][EVENT_KEYS_MAX] = {
    [SIM_OP_ALLOC] = {"op", "id", "size", "t", "stream", "tag", "proc", "share", NULL},
    [SIM_OP_FREE] = {"op", "id", "t", "ready_t", "ready_stream", "proc", NULL},
    [SIM_OP_EMPTY_CACHE] = {"op", "t", "proc", NULL},
    [SIM_OP_MARK] = {"op", "name", "t", "proc", NULL},
    [SIM_OP_POOL_BEGIN] = {"op", "pool", "t", "stream", "capture", "use_on_oom", "no_split", "proc", NULL},
    [SIM_OP_POOL_END] = {"op", "pool", "t", "proc", NULL},
    [SIM_OP_POOL_RELEASE] = {"op", "pool", "t", "proc", NULL},
    [SIM_OP_GRAPH_REPLAY] = {"op", "pool", "t", "name", "proc", NULL},
};

/* An optional boolean key: *out unchanged when absent. */
static sim_status get_bool(trace_reader *r, const json_value *obj, const char *key, bool *out, uint64_t line,
                           uint64_t event, sim_error *err)
{
    const json_value *v = json_get(obj, key);
    if (v == NULL)
        return SIM_OK;
    if (v->type != JSON_TRUE && v->type != JSON_FALSE)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"%s\" must be true or false, not %s", key,
                             json_type_name(v->type));
    *out = v->type == JSON_TRUE;
    return SIM_OK;
}

/* The pool events' "pool" (required, > 0) and pool_begin's scope (design.md §2). */
static sim_status parse_pool(trace_reader *r, const json_value *o, uint64_t line, uint64_t event, sim_event *ev,
                             sim_error *err)
{
    sim_status st = get_uint(r, o, "pool", true, &ev->pool, NULL, line, event, err);
    if (st != SIM_OK)
        return st;
    if (ev->pool == 0)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event,
                             "\"pool\" must be at least 1 (0 is the default pool, never a private one)");
    if (ev->op == SIM_OP_GRAPH_REPLAY)
        return get_str(r, o, "name", &ev->name, line, event, err);
    if (ev->op != SIM_OP_POOL_BEGIN)
        return SIM_OK;
    bool has_stream = false, use_on_oom = false, no_split = false;
    uint64_t stream = 0;
    if ((st = get_uint(r, o, "stream", false, &stream, &has_stream, line, event, err)) != SIM_OK)
        return st;
    if (stream > UINT32_MAX)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"stream\" must be below 2^32");
    bool capture = has_stream; /* a capture follows its stream; use_mem_pool takes every stream */
    if ((st = get_bool(r, o, "capture", &capture, line, event, err)) != SIM_OK ||
        (st = get_bool(r, o, "use_on_oom", &use_on_oom, line, event, err)) != SIM_OK ||
        (st = get_bool(r, o, "no_split", &no_split, line, event, err)) != SIM_OK)
        return st;
    ev->stream = (uint32_t)stream;
    ev->pool_flags = (has_stream ? 0u : SIM_POOL_ALL_STREAMS) | (capture ? SIM_POOL_CAPTURE : 0u) |
                     (use_on_oom ? SIM_POOL_USE_ON_OOM : 0u) | (no_split ? SIM_POOL_NO_SPLIT : 0u);
    return SIM_OK;
}

static sim_status parse_event(trace_reader *r, const json_value *o, uint64_t line, uint64_t event,
                              sim_event *ev, sim_error *err)
{
    if (o->type != JSON_OBJECT)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "an event must be a JSON object, not %s",
                             json_type_name(o->type));
    const json_value *opv = json_get(o, "op");
    if (opv == NULL)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "missing \"op\"");
    if (opv->type != JSON_STRING)
        return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"op\" must be a string, not %s",
                             json_type_name(opv->type));
    memset(ev, 0, sizeof *ev);
    ev->line = line;
    ev->index = event;
    const char *op = opv->u.str;
    if (strcmp(op, "alloc") == 0)
        ev->op = SIM_OP_ALLOC;
    else if (strcmp(op, "free") == 0)
        ev->op = SIM_OP_FREE;
    else if (strcmp(op, "empty_cache") == 0)
        ev->op = SIM_OP_EMPTY_CACHE;
    else if (strcmp(op, "mark") == 0)
        ev->op = SIM_OP_MARK;
    else if (strcmp(op, "pool_begin") == 0)
        ev->op = SIM_OP_POOL_BEGIN;
    else if (strcmp(op, "pool_end") == 0)
        ev->op = SIM_OP_POOL_END;
    else if (strcmp(op, "pool_release") == 0)
        ev->op = SIM_OP_POOL_RELEASE;
    else if (strcmp(op, "graph_replay") == 0)
        ev->op = SIM_OP_GRAPH_REPLAY;
    else
        return sim_error_set(err, SIM_ETRACE, r->path, line, event,
                             "unknown op \"%.60s\" (expected alloc, free, empty_cache, mark, pool_begin, pool_end, "
                             "pool_release or graph_replay)",
                             op);
    /* keys that belong to another op are errors: they are almost always typos; a key
     * given twice is one too (JSON leaves it open which one counts) */
    uint32_t seen = 0;
    for (uint32_t i = 0; i < o->len; i++) {
        const char *k = o->u.members[i].key;
        uint32_t bit = 0;
        for (uint32_t j = 0; j < EVENT_KEYS_MAX && EVENT_KEYS[ev->op][j] && bit == 0; j++)
            if (strcmp(EVENT_KEYS[ev->op][j], k) == 0)
                bit = 1u << j;
        if (bit == 0)
            return sim_error_set(err, SIM_ETRACE, r->path, line, event, "unknown key \"%.60s\" in a %s event", k,
                                 op);
        if (seen & bit)
            return sim_error_set(err, SIM_ETRACE, r->path, line, event, "duplicate key \"%.60s\" in a %s event", k,
                                 op);
        seen |= bit;
    }
    sim_status st;
    bool has_t = false;
    uint64_t t = 0;
    if ((st = get_uint(r, o, "t", false, &t, &has_t, line, event, err)) != SIM_OK)
        return st;
    if (has_t) {
        if ((st = to_ns(r, t, &t, "t", line, event, err)) != SIM_OK)
            return st;
        if (t < r->prev_t)
            return sim_error_set(err, SIM_ETRACE, r->path, line, event,
                                 "t goes backwards (%llu ns after %llu ns; times must not decrease)",
                                 (unsigned long long)t, (unsigned long long)r->prev_t);
        r->prev_t = t;
    }
    ev->t = r->prev_t;
    ev->ready_t = ev->t;
    if ((st = get_str(r, o, "proc", &ev->proc, line, event, err)) != SIM_OK)
        return st;
    switch (ev->op) {
    case SIM_OP_ALLOC: {
        uint64_t stream = 0;
        if ((st = get_uint(r, o, "id", true, &ev->id, NULL, line, event, err)) != SIM_OK ||
            (st = get_uint(r, o, "size", true, &ev->size, NULL, line, event, err)) != SIM_OK ||
            (st = get_uint(r, o, "stream", false, &stream, NULL, line, event, err)) != SIM_OK ||
            (st = get_str(r, o, "tag", &ev->tag, line, event, err)) != SIM_OK ||
            (st = get_uint(r, o, "share", false, &ev->share, &ev->has_share, line, event, err)) != SIM_OK)
            return st;
        if (stream > UINT32_MAX)
            return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"stream\" must be below 2^32");
        ev->stream = (uint32_t)stream;
        break;
    }
    case SIM_OP_FREE: {
        bool has_ready = false;
        uint64_t ready = 0, ready_stream = 0;
        if ((st = get_uint(r, o, "id", true, &ev->id, NULL, line, event, err)) != SIM_OK ||
            (st = get_uint(r, o, "ready_t", false, &ready, &has_ready, line, event, err)) != SIM_OK ||
            (st = get_uint(r, o, "ready_stream", false, &ready_stream, &ev->has_ready_stream, line, event, err)) !=
                SIM_OK)
            return st;
        if (ready_stream > UINT32_MAX)
            return sim_error_set(err, SIM_ETRACE, r->path, line, event, "\"ready_stream\" must be below 2^32");
        ev->ready_stream = (uint32_t)ready_stream;
        if (has_ready) {
            if ((st = to_ns(r, ready, &ready, "ready_t", line, event, err)) != SIM_OK)
                return st;
            if (ready < ev->t)
                return sim_error_set(err, SIM_ETRACE, r->path, line, event,
                                     "ready_t %llu ns is before t %llu ns (a free cannot complete before it is made)",
                                     (unsigned long long)ready, (unsigned long long)ev->t);
            ev->ready_t = ready;
        }
        break;
    }
    case SIM_OP_EMPTY_CACHE:
        break;
    case SIM_OP_MARK:
        if ((st = get_str(r, o, "name", &ev->name, line, event, err)) != SIM_OK)
            return st;
        if (ev->name == NULL)
            return sim_error_set(err, SIM_ETRACE, r->path, line, event, "missing \"name\" in a mark event");
        break;
    case SIM_OP_POOL_BEGIN:
    case SIM_OP_POOL_END:
    case SIM_OP_POOL_RELEASE:
    case SIM_OP_GRAPH_REPLAY:
        return parse_pool(r, o, line, event, ev, err);
    }
    return SIM_OK;
}

/* Serialize a DOM value compactly (numbers keep their source text). */
static void json_dump(sim_buf *b, const json_value *v)
{
    switch (v->type) {
    case JSON_NULL: sim_buf_puts(b, "null"); break;
    case JSON_TRUE: sim_buf_puts(b, "true"); break;
    case JSON_FALSE: sim_buf_puts(b, "false"); break;
    case JSON_NUMBER: sim_buf_put(b, v->u.num, v->len); break;
    case JSON_STRING: sim_buf_json_str(b, v->u.str); break;
    case JSON_ARRAY:
        sim_buf_puts(b, "[");
        for (uint32_t i = 0; i < v->len; i++) {
            if (i)
                sim_buf_puts(b, ",");
            json_dump(b, &v->u.items[i]);
        }
        sim_buf_puts(b, "]");
        break;
    case JSON_OBJECT:
        sim_buf_puts(b, "{");
        for (uint32_t i = 0; i < v->len; i++) {
            if (i)
                sim_buf_puts(b, ",");
            sim_buf_json_str(b, v->u.members[i].key);
            sim_buf_puts(b, ":");
            json_dump(b, &v->u.members[i].value);
        }
        sim_buf_puts(b, "}");
        break;
    }
}

static sim_status parse_header(trace_reader *r, const json_value *h, uint64_t line, sim_error *err)
{
    trace_header *hd = &r->header;
    if (h->type != JSON_OBJECT)
        return sim_error_set(err, SIM_ETRACE, r->path, line, 0, "the trace must start with a JSON object header");
    const json_value *f = json_get(h, "format");
    if (f == NULL)
        return sim_error_set(err, SIM_ETRACE, r->path, line, 0,
                             "missing \"format\" (expected \"gpusim-trace\"; is this a gpusim trace?)");
    if (f->type != JSON_STRING || strcmp(f->u.str, "gpusim-trace") != 0)
        return sim_error_set(err, SIM_ETRACE, r->path, line, 0, "\"format\" must be \"gpusim-trace\"");
    const json_value *v = json_get(h, "version");
    if (v == NULL)
        return sim_error_set(err, SIM_ETRACE, r->path, line, 0, "missing \"version\" (expected 1)");
    uint64_t ver = 0;
    if (json_to_u64(v, SIM_MAX_SIZE, &ver) != JSON_INT_OK || ver != 1)
        return sim_error_set(err, SIM_ETRACE, r->path, line, 0,
                             "unsupported \"version\" (this gpusim reads version 1)");
    const char *s = NULL;
    sim_status st;
    if ((st = get_str(r, h, "name", &s, line, 0, err)) != SIM_OK)
        return st;
    snprintf(hd->name, sizeof hd->name, "%s", s ? s : "");
    if ((st = get_str(r, h, "time_unit", &s, line, 0, err)) != SIM_OK)
        return st;
    if (s == NULL || strcmp(s, "ns") == 0)
        hd->ns_per_unit = 1;
    else if (strcmp(s, "us") == 0)
        hd->ns_per_unit = 1000;
    else if (strcmp(s, "ms") == 0)
        hd->ns_per_unit = 1000000;
    else
        return sim_error_set(err, SIM_ETRACE, r->path, line, 0, "\"time_unit\" must be \"ns\", \"us\" or \"ms\"");
    snprintf(hd->time_unit, sizeof hd->time_unit, "%s", s ? s : "ns");
    const json_value *dev = json_get(h, "device");
    if (dev && dev->type != JSON_NULL) {
        if (dev->type != JSON_OBJECT)
            return sim_error_set(err, SIM_ETRACE, r->path, line, 0, "\"device\" must be an object");
        if ((st = get_str(r, dev, "name", &s, line, 0, err)) != SIM_OK)
            return st;
        snprintf(hd->device_name, sizeof hd->device_name, "%s", s ? s : "");
        if ((st = get_uint(r, dev, "capacity_bytes", false, &hd->device_capacity, NULL, line, 0, err)) != SIM_OK)
            return st;
        if ((st = get_str(r, dev, "compute_capability", &s, line, 0, err)) != SIM_OK)
            return st;
        if (s && (!gpus_parse_cc(s, &hd->device_cc_major, &hd->device_cc_minor) || hd->device_cc_major == 0))
            return sim_error_set(err, SIM_ETRACE, r->path, line, 0,
                                 "\"device\".\"compute_capability\" must be \"X.Y\" (e.g. \"8.0\"), not \"%s\"", s);
    }
    const json_value *meta = json_get(h, "meta");
    if (meta && meta->type != JSON_NULL) {
        sim_buf b;
        sim_buf_init(&b);
        json_dump(&b, meta);
        if (b.oom) {
            sim_buf_release(&b);
            return sim_error_set(err, SIM_ENOMEM, r->path, line, 0, "out of memory");
        }
        hd->meta_json = b.data;
    }
    return SIM_OK;
}

/* ---------------------------------------------------------------- opening */

static sim_status reader_new(const char *path, trace_reader **out, sim_error *err)
{
    trace_reader *r = calloc(1, sizeof *r);
    if (r == NULL || (r->jp = json_parser_new()) == NULL) {
        free(r);
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    *out = r;
    return SIM_OK;
}

/* Decide the container and read the header. r->buf holds the start of the input. */
static sim_status detect_and_start(trace_reader *r, sim_error *err)
{
    const char *line;
    size_t len;
    sim_status st;
    /* skip leading blank lines */
    do {
        if ((st = next_line(r, &line, &len, err)) != SIM_OK)
            return st;
    } while (line != NULL && is_blank(line, len));
    if (line == NULL)
        return sim_error_set(err, SIM_ETRACE, r->path, 0, 0, "empty file (expected a gpusim trace)");
    uint64_t first_line = r->line;
    const json_value *h = json_parse(r->jp, line, len, (uint32_t)first_line, r->errtext, sizeof r->errtext);
    if (h != NULL && h->type == JSON_OBJECT && json_get(h, "events") == NULL) {
        r->container = TRACE_JSONL;
        return parse_header(r, h, first_line, err);
    }
    /* a JSON document: read everything and parse it whole */
    r->container = TRACE_JSON;
    r->buf_pos = 0; /* rewind to the start of the buffered text */
    r->line = 0;
    while (!r->eof)
        if ((st = read_more(r, err)) != SIM_OK)
            return st;
    const char *text = r->buf ? r->buf : "";
    /* blank lines before the document were consumed by next_line; the buffer still holds them */
    h = json_parse(r->jp, text, r->buf_len, 1, r->errtext, sizeof r->errtext);
    if (h == NULL) {
        /* report the error at the line the parser names */
        unsigned long l = 0, c = 0;
        int off = 0;
        if (sscanf(r->errtext, "line %lu, column %lu: %n", &l, &c, &off) == 2 && off > 0)
            return sim_error_set(err, SIM_ETRACE, r->path, l, 0, "not valid JSON (column %lu: %s)", c,
                                 r->errtext + off);
        return sim_error_set(err, SIM_ETRACE, r->path, 0, 0, "not valid JSON (%s)", r->errtext);
    }
    if ((st = parse_header(r, h, 0, err)) != SIM_OK)
        return st;
    const json_value *evs = json_get(h, "events");
    if (evs == NULL)
        return sim_error_set(err, SIM_ETRACE, r->path, 0, 0, "missing \"events\" array");
    if (evs->type != JSON_ARRAY)
        return sim_error_set(err, SIM_ETRACE, r->path, 0, 0, "\"events\" must be an array");
    r->events = evs;
    return SIM_OK;
}

static sim_status reader_start(trace_reader *r, trace_reader **out, sim_error *err)
{
    sim_status st = detect_and_start(r, err);
    if (st != SIM_OK) {
        trace_close(r);
        *out = NULL;
        return st;
    }
    *out = r;
    return SIM_OK;
}

sim_status trace_open(const char *path, trace_reader **out, sim_error *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return sim_error_set(err, SIM_EIO, path, 0, 0, "is a directory, not a trace file");
    trace_reader *r;
    sim_status st = reader_new(path, &r, err);
    if (st != SIM_OK)
        return st;
    r->fp = fopen(path, "rb");
    if (r->fp == NULL) {
        int e = errno;
        trace_close(r);
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(e));
    }
    /* detection by content: the first bytes decide between gtrace and JSON text */
    r->buf = malloc(2 * READ_CHUNK);
    if (r->buf == NULL) {
        trace_close(r);
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    r->buf_cap = 2 * READ_CHUNK;
    r->buf_len = fread(r->buf, 1, GTRACE_MAGIC_LEN, r->fp);
    if (gtrace_is_magic(r->buf, r->buf_len)) {
        FILE *fp = r->fp;
        r->fp = NULL; /* the gtrace reader owns it now */
        r->container = TRACE_GTRACE;
        st = gtrace_open_file(path, fp, r->buf, r->buf_len, &r->header, &r->gt, err);
        free(r->buf);
        r->buf = NULL;
        r->buf_len = r->buf_cap = 0;
        if (st != SIM_OK) {
            trace_close(r);
            return st;
        }
        *out = r;
        return SIM_OK;
    }
    if (r->buf_len < GTRACE_MAGIC_LEN && ferror(r->fp)) {
        int e = errno;
        trace_close(r);
        return sim_error_set(err, SIM_EIO, path, 0, 0, "read failed: %s", strerror(e));
    }
    return reader_start(r, out, err);
}

sim_status trace_open_bytes(const char *name, const trace_bytes *src, trace_reader **out, sim_error *err)
{
    *out = NULL;
    trace_reader *r;
    sim_status st = reader_new(name, &r, err);
    if (st != SIM_OK)
        return st;
    r->src = *src;
    r->buf = malloc(2 * READ_CHUNK);
    if (r->buf == NULL) {
        trace_close(r);
        return sim_error_set(err, SIM_ENOMEM, name, 0, 0, "out of memory");
    }
    r->buf_cap = 2 * READ_CHUNK;
    return reader_start(r, out, err);
}

sim_status trace_open_mem(const char *name, const char *text, uint64_t len, trace_reader **out, sim_error *err)
{
    *out = NULL;
    trace_reader *r;
    sim_status st = reader_new(name, &r, err);
    if (st != SIM_OK)
        return st;
    r->buf = malloc((size_t)len + 1);
    if (r->buf == NULL) {
        trace_close(r);
        return sim_error_set(err, SIM_ENOMEM, name, 0, 0, "out of memory");
    }
    memcpy(r->buf, text, (size_t)len);
    r->buf_len = r->buf_cap = (size_t)len;
    r->eof = true;
    if (gtrace_is_magic(r->buf, r->buf_len)) {
        r->container = TRACE_GTRACE;
        st = gtrace_open_mem(name, r->buf, r->buf_len, &r->header, &r->gt, err);
        if (st != SIM_OK) {
            trace_close(r);
            return st;
        }
        *out = r;
        return SIM_OK;
    }
    return reader_start(r, out, err);
}

void trace_close(trace_reader *r)
{
    if (r == NULL)
        return;
    if (r->fp)
        fclose(r->fp);
    gtrace_close(r->gt);
    free(r->buf);
    free(r->header.meta_json);
    json_parser_free(r->jp);
    free(r);
}

const trace_header *trace_get_header(const trace_reader *r)
{
    return &r->header;
}

trace_container trace_get_container(const trace_reader *r)
{
    return r->container;
}

static sim_status reader_next(void *ctx, sim_event *ev, sim_error *err)
{
    trace_reader *r = ctx;
    if (r->gt)
        return gtrace_next(r->gt, ev, err);
    if (r->container == TRACE_JSON) {
        if (r->next_index >= r->events->len)
            return SIM_END;
        const json_value *o = &r->events->u.items[r->next_index++];
        r->n_events++;
        return parse_event(r, o, o->line, r->next_index, ev, err);
    }
    for (;;) {
        const char *line;
        size_t len;
        sim_status st = next_line(r, &line, &len, err);
        if (st != SIM_OK)
            return st;
        if (line == NULL)
            return SIM_END;
        if (is_blank(line, len))
            continue;
        /* line points into r->buf, which is ours: the fast path may write into it */
        if (jsonl_fast_event(r->buf + (line - r->buf), len, r->header.ns_per_unit, &r->prev_t, r->line, ev)) {
            ev->index = ++r->n_events;
            return SIM_OK;
        }
        const json_value *o = json_parse(r->jp, line, len, (uint32_t)r->line, r->errtext, sizeof r->errtext);
        if (o == NULL) {
            const char *msg = strstr(r->errtext, ": ");
            return sim_error_set(err, SIM_ETRACE, r->path, r->line, 0, "not valid JSON (%s)",
                                 msg ? msg + 2 : r->errtext);
        }
        r->n_events++;
        sim_status st2 = parse_event(r, o, r->line, 0, ev, err);
        ev->index = r->n_events;
        return st2;
    }
}

sim_event_source trace_source(trace_reader *r)
{
    sim_event_source s = {
        .next = reader_next,
        .ctx = r,
        .path = r->path,
        .name = r->header.name[0] ? r->header.name : NULL,
    };
    return s;
}
