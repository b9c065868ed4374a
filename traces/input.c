/* Opening any supported trace: gzip, content sniffing, dispatch to the importers. */
#include "input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef GPUSIM_HAVE_ZLIB
#include <zlib.h>
#endif

#include "gtrace.h"
#include "import_common.h"
#include "json.h"
#include "prefetch.h"
#include "stream.h"

#define SNIFF_PREFIX ((size_t)64 << 10)
#define INPUT_MAX_BYTES ((uint64_t)32 << 30) /* a decompressed document above this is refused */

struct trace_input {
    char path[512];
    const input_format *format;
    trace_reader *native;
    bool has_doc;
    imp_doc doc;
    uint64_t next;
    char *alloc_conf;    /* native: from meta.imported_from.alloc_conf */
    in_stream *stream;   /* native text read front to back (the reader reads it); else NULL */
    bool read_ahead;     /* native, a regular file, opt->prefetch: input_source() reads ahead */
    prefetch *pf;        /* that reader, made at the first input_source() */
};


/* ---------------------------------------------------------------- reading bytes */

/* All of a stream's content (recorded formats are read whole, but for a binary one in a
 * regular file: map_file), NUL-terminated. */
static sim_status stream_read_all(in_stream *st_in, const char *path, char **out, size_t *len, sim_error *err)
{
    *out = NULL;
    size_t cap = (size_t)1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    if (buf == NULL)
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory reading the file");
    for (;;) {
        if (n == cap) {
            if ((uint64_t)cap * 2 > INPUT_MAX_BYTES) {
                free(buf);
                return sim_error_set(err, SIM_ETRACE, path, 0, 0, "larger than %llu GiB; gpusim reads recorded "
                                     "formats whole", (unsigned long long)(INPUT_MAX_BYTES >> 30));
            }
            char *b = realloc(buf, cap * 2 + 1);
            if (b == NULL) {
                free(buf);
                return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory reading the file");
            }
            buf = b;
            cap *= 2;
        }
        size_t k = 0;
        sim_status st = in_stream_read(st_in, buf + n, cap - n, &k, err);
        if (st != SIM_OK) {
            free(buf);
            return st;
        }
        if (k == 0)
            break;
        n += k;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return SIM_OK;
}

static sim_status stream_bytes(void *ctx, void *buf, size_t n, size_t *got, sim_error *err)
{
    return in_stream_read(ctx, buf, n, got, err);
}

static bool is_gzip(const void *p, size_t n)
{
    const unsigned char *b = p;
    return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Inflate one or more concatenated gzip members. */
static sim_status gunzip(const char *path, const unsigned char *in, size_t n, char **out, size_t *out_len,
                         sim_error *err)
{
    *out = NULL;
#ifndef GPUSIM_HAVE_ZLIB
    (void)in;
    (void)n;
    (void)out_len;
    return sim_error_set(err, SIM_EIO, path, 0, 0,
                         "is gzip-compressed, but this gpusim was built without zlib (gunzip it first)");
#else
    size_t cap = n * 4 + 4096, len = 0;
    char *buf = malloc(cap + 1);
    if (buf == NULL)
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        free(buf);
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "cannot start zlib");
    }
    size_t pos = 0;
    sim_status st = SIM_OK;
    for (;;) {
        if (len == cap) {
            if ((uint64_t)cap * 2 > INPUT_MAX_BYTES) {
                st = sim_error_set(err, SIM_ETRACE, path, 0, 0, "inflates to more than %llu GiB",
                                   (unsigned long long)(INPUT_MAX_BYTES >> 30));
                break;
            }
            char *b = realloc(buf, cap * 2 + 1);
            if (b == NULL) {
                st = sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory inflating the file");
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t in_chunk = n - pos > (1u << 30) ? (1u << 30) : n - pos;
        size_t out_chunk = cap - len > (1u << 30) ? (1u << 30) : cap - len;
        zs.next_in = (Bytef *)(uintptr_t)(in + pos);
        zs.avail_in = (uInt)in_chunk;
        zs.next_out = (Bytef *)(buf + len);
        zs.avail_out = (uInt)out_chunk;
        int zr = inflate(&zs, Z_NO_FLUSH);
        pos += in_chunk - zs.avail_in;
        len += out_chunk - zs.avail_out;
        if (zr == Z_STREAM_END) {
            if (pos == n)
                break;
            if (!is_gzip(in + pos, n - pos)) {
                st = sim_error_set(err, SIM_ETRACE, path, 0, 0, "not a valid gzip file: %zu bytes of trailing "
                                   "data after the compressed stream", n - pos);
                break;
            }
            inflateReset(&zs);
            continue;
        }
        if (zr == Z_OK)
            continue;
        if (zr == Z_BUF_ERROR && pos == n) {
            st = sim_error_set(err, SIM_ETRACE, path, 0, 0, "truncated gzip file (the compressed stream ends early)");
            break;
        }
        if (zr == Z_BUF_ERROR)
            continue;
        if (zr == Z_MEM_ERROR)
            st = sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory inflating the file");
        else
            st = sim_error_set(err, SIM_ETRACE, path, 0, 0, "not a valid gzip file (zlib: %s)",
                               zs.msg ? zs.msg : "data error");
        break;
    }
    inflateEnd(&zs);
    if (st != SIM_OK) {
        free(buf);
        return st;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return SIM_OK;
#endif
}

/* ---------------------------------------------------------------- sniffing */

typedef enum sniff_result { SNIFF_UNKNOWN, SNIFF_MORE, SNIFF_FOUND } sniff_result;

typedef struct scanner {
    const char *s;
    size_t n, i;
} scanner;

static void skip_ws(scanner *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
}

/* Skip a string starting at '"'; copy up to cap-1 bytes of it (raw) into key. */
static bool skip_string(scanner *c, char *key, size_t cap)
{
    size_t k = 0;
    c->i++;
    while (c->i < c->n) {
        char ch = c->s[c->i++];
        if (ch == '"') {
            if (key)
                key[k] = '\0';
            return true;
        }
        if (ch == '\\')
            c->i++;
        else if (key && k + 1 < cap)
            key[k++] = ch;
    }
    return false;
}

/* Skip any value; false if the text ends first. */
static bool skip_value(scanner *c)
{
    int depth = 0;
    while (c->i < c->n) {
        char ch = c->s[c->i];
        if (ch == '"') {
            if (!skip_string(c, NULL, 0))
                return false;
            if (depth == 0)
                return true;
            continue;
        }
        if (ch == '{' || ch == '[')
            depth++;
        else if (ch == '}' || ch == ']') {
            if (depth == 0)
                return true; /* the end of the enclosing container */
            depth--;
            c->i++;
            if (depth == 0)
                return true;
            continue;
        } else if (depth == 0 && (ch == ',')) {
            return true;
        }
        c->i++;
    }
    return false;
}

/* The format whose sniff key k is (the first in table order), or NULL. */
static const input_format *format_of_key(const char *k)
{
    for (size_t i = 0; i < input_format_count(); i++) {
        const input_format *f = input_format_get(i);
        for (const char *const *key = f->sniff_keys; key && *key; key++)
            if (strcmp(k, *key) == 0)
                return f;
    }
    return NULL;
}

/* Keys of the object at c->i ('{'), until one names a format. */
static sniff_result scan_object(scanner *c, const input_format **out)
{
    c->i++;
    for (;;) {
        skip_ws(c);
        if (c->i >= c->n)
            return SNIFF_MORE;
        if (c->s[c->i] == '}')
            return SNIFF_UNKNOWN;
        if (c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->s[c->i] != '"')
            return SNIFF_UNKNOWN;
        char key[64];
        if (!skip_string(c, key, sizeof key))
            return SNIFF_MORE;
        const input_format *f = format_of_key(key);
        if (f != NULL) {
            *out = f;
            return SNIFF_FOUND;
        }
        skip_ws(c);
        if (c->i >= c->n)
            return SNIFF_MORE;
        if (c->s[c->i] != ':')
            return SNIFF_UNKNOWN;
        c->i++;
        skip_ws(c);
        if (!skip_value(c))
            return SNIFF_MORE;
    }
}

/* Whether text starts with f's magic bytes, or passes its magic test. */
static bool has_magic(const input_format *f, const char *s, size_t n)
{
    if (f->magic_test != NULL && f->magic_test((const unsigned char *)s, n))
        return true;
    return f->magic != NULL && n >= f->magic_len && memcmp(s, f->magic, f->magic_len) == 0;
}

static sniff_result sniff(const char *s, size_t n, const input_format **out)
{
    for (size_t i = 0; i < input_format_count(); i++)
        if (has_magic(input_format_get(i), s, n)) {
            *out = input_format_get(i);
            return SNIFF_FOUND;
        }
    scanner c = {s, n, 0};
    if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        c.i = 3;
    skip_ws(&c);
    if (c.i >= n)
        return n == 0 ? SNIFF_UNKNOWN : SNIFF_MORE;
    if (s[c.i] == '{')
        return scan_object(&c, out);
    if (s[c.i] == '[') {
        /* a bare array: Chrome events, a one-element TF profile, or a list of segments */
        c.i++;
        skip_ws(&c);
        if (c.i >= n)
            return SNIFF_MORE;
        if (s[c.i] == '{')
            return scan_object(&c, out);
    }
    return SNIFF_UNKNOWN;
}

/* ---------------------------------------------------------------- opening */

static sim_status unknown_format(const char *path, sim_error *err)
{
    char formats[512];
    return sim_error_set(err, SIM_ETRACE, path, 0, 0, "not a format gpusim reads (expected %s; see traces/IMPORT.md)",
                         input_format_join(INPUT_FORMAT_SUMMARIES, ", ", ", or ", formats, sizeof formats));
}

static void native_alloc_conf(trace_input *in)
{
    const char *meta = trace_get_header(in->native)->meta_json;
    if (meta == NULL)
        return;
    json_parser *p = json_parser_new();
    if (p == NULL)
        return;
    char errbuf[128];
    const json_value *root = json_parse(p, meta, strlen(meta), 1, errbuf, sizeof errbuf);
    const json_value *imp = root ? json_get(root, "imported_from") : NULL;
    const json_value *ac = imp && imp->type == JSON_OBJECT ? json_get(imp, "alloc_conf") : NULL;
    if (ac && ac->type == JSON_STRING)
        in->alloc_conf = strdup(ac->u.str);
    json_parser_free(p);
}

static sim_status parse_json(const char *path, json_parser *p, const char *text, size_t len,
                             const json_value **root, sim_error *err)
{
    char errtext[256];
    *root = json_parse(p, text, len, 1, errtext, sizeof errtext);
    if (*root != NULL)
        return SIM_OK;
    unsigned long l = 0, c = 0;
    int off = 0;
    if (sscanf(errtext, "line %lu, column %lu: %n", &l, &c, &off) == 2 && off > 0)
        return sim_error_set(err, SIM_ETRACE, path, l, 0, "not valid JSON (column %lu: %s)", c, errtext + off);
    return sim_error_set(err, SIM_ETRACE, path, 0, 0, "not valid JSON (%s)", errtext);
}

/* Import a whole document in memory (*bytes, malloc'd and NUL-terminated at len, or
 * for a binary format a file's mapping; a binary importer may release it,
 * imp_release_input, leaving NULL). */
static sim_status import_doc(trace_input *in, const input_format *f, char **bytes, size_t len, bool mapped,
                             const input_options *opt, sim_error *err)
{
    const char *text = *bytes;
    imp_doc *d = &in->doc;
    imp_doc_init(d, in->path, f);
    imp_set_err(d, err);
    in->has_doc = true;
    /* a binary format (magic_test) is read by its importer whatever its first bytes */
    if (f->import_magic != NULL && (f->magic_test != NULL || has_magic(f, text, len))) {
        d->input = bytes;
        d->input_len = len;
        d->input_mapped = mapped;
        sim_status st = f->import_magic((const unsigned char *)text, len, opt, d);
        d->input = NULL;
        return st;
    }
    if (f->import == NULL)
        return sim_error_set(err, SIM_EINTERNAL, in->path, 0, 0, "no importer for this format");
    json_parser *p = json_parser_new();
    if (p == NULL)
        return sim_error_set(err, SIM_ENOMEM, in->path, 0, 0, "out of memory");
    const json_value *root = NULL;
    sim_status st = parse_json(in->path, p, text, len, &root, err);
    if (st == SIM_OK)
        st = f->import(root, opt, d);
    json_parser_free(p);
    return st;
}

/* Open from bytes already in memory (a whole file, maybe inflated): *bytes, malloc'd,
 * which an importer may free (then NULL; the caller frees what is left). */
static sim_status open_bytes(trace_input *in, const input_format *f, char **bytes, size_t len,
                             const input_options *opt, sim_error *err)
{
    const char *text = *bytes;
    if (f == NULL && gtrace_is_magic(text, len))
        f = input_format_native(); /* the native binary container: trace_open_mem reads it */
    if (f == NULL) {
        sniff_result r = sniff(text, len, &f);
        if (r != SNIFF_FOUND)
            return len == 0 ? sim_error_set(err, SIM_ETRACE, in->path, 0, 0, "empty file (expected a trace)")
                            : unknown_format(in->path, err);
    }
    in->format = f;
    if (input_format_is_native(f)) {
        sim_status st = trace_open_mem(in->path, text, len, &in->native, err);
        if (st == SIM_OK)
            native_alloc_conf(in);
        return st;
    }
    return import_doc(in, f, bytes, len, false, opt, err);
}

/* A binary recording in a regular file (a pickle) is mapped rather than read: its
 * importer reads it once front to back and hands back the pages it has read
 * (imp_input_mapped), so the file is never resident whole. NULL when it cannot be
 * mapped (then it is read as any other). */
static char *map_file(const char *path, size_t *len)
{
    struct stat sb;
    int fd = strcmp(path, "-") == 0 ? -1 : open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    char *p = NULL;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 && (uint64_t)sb.st_size <= INPUT_MAX_BYTES) {
        void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            p = m;
            *len = (size_t)sb.st_size;
        }
    }
    close(fd);
    return p;
}

static sim_status input_new(const char *path, const char *from, const input_format **f, trace_input **out,
                            sim_error *err)
{
    *out = NULL;
    char names[256];
    if (!input_format_parse(from, f))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--from: unknown format '%s' (expected %s)", from,
                             input_format_join(INPUT_FORMAT_NAMES, ", ", " or ", names, sizeof names));
    trace_input *in = calloc(1, sizeof *in);
    if (in == NULL)
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    snprintf(in->path, sizeof in->path, "%s", path);
    *out = in;
    return SIM_OK;
}

static sim_status finish_open(trace_input *in, sim_status st, trace_input **out)
{
    if (st != SIM_OK) {
        input_close(in);
        *out = NULL;
        return st;
    }
    *out = in;
    return SIM_OK;
}

/* A native trace is read ahead on a second thread (traces/prefetch.h) when the
 * caller asks, the input is a regular file (a read that may block for ever, on a
 * pipe, a FIFO or a terminal, would keep input_close from ending that thread) and
 * there is a second CPU to run it on. */
static bool wants_read_ahead(const char *path, const input_options *opt)
{
    struct stat sb;
    return opt != NULL && opt->prefetch && strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
           sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

sim_status input_open(const char *path, const char *from, const input_options *opt, trace_input **out,
                      sim_error *err)
{
    return input_open_named(path, path, from, opt, out, err);
}

sim_status input_open_named(const char *path, const char *name, const char *from, const input_options *opt,
                            trace_input **out, sim_error *err)
{
    const input_format *f;
    trace_input *in;
    sim_status st = input_new(name, from, &f, &in, err);
    if (st != SIM_OK)
        return st;
    /* one pass, front to back, whatever the input is (a pipe, a FIFO, stdin as "-"):
     * the format is decided on a bounded prefix that the readers then read again */
    in_stream *src = NULL;
    if ((st = in_stream_open(path, name, &src, err)) != SIM_OK)
        return finish_open(in, st, out);
    const char *pre = NULL;
    size_t plen = 0;
    if ((st = in_stream_peek(src, SNIFF_PREFIX, &pre, &plen, err)) != SIM_OK) {
        in_stream_close(src);
        return finish_open(in, st, out);
    }
    bool whole_prefix = plen < SNIFF_PREFIX; /* the prefix is the whole content */
    bool gtrace = gtrace_is_magic(pre, plen);
    if (f == NULL && !gtrace) {
        const input_format *g = NULL;
        sniff_result r = sniff(pre, plen, &g);
        if (r == SNIFF_FOUND)
            f = g;
        else if (r == SNIFF_UNKNOWN || whole_prefix) {
            /* rejected on the prefix: a large file that is not a trace is not read on */
            in_stream_close(src);
            return finish_open(in, plen == 0 ? sim_error_set(err, SIM_ETRACE, name, 0, 0, "empty file (expected a trace)")
                                             : unknown_format(name, err),
                               out);
        }
    }
    if (gtrace && (f == NULL || input_format_is_native(f)) && !in_stream_is_gzip(src)) {
        /* the binary container is read by its own reader, which needs a file */
        in_stream_close(src);
        struct stat sb;
        if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            return finish_open(in, sim_error_set(err, SIM_EIO, name, 0, 0, "a binary .gtrace must be a regular file, "
                                                 "not a pipe (write it to a file, or convert it to .jsonl)"),
                               out);
        in->format = input_format_native();
        in->read_ahead = wants_read_ahead(path, opt);
        st = trace_open(path, &in->native, err);
        if (st == SIM_OK)
            native_alloc_conf(in);
        return finish_open(in, st, out);
    }
    if (input_format_is_native(f) && !gtrace) {
        /* native text is streamed, never held whole, compressed or not */
        in->format = input_format_native();
        in->stream = src;
        in->read_ahead = wants_read_ahead(path, opt);
        trace_bytes b = {stream_bytes, src};
        st = trace_open_bytes(name, &b, &in->native, err);
        if (st == SIM_OK)
            native_alloc_conf(in);
        return finish_open(in, st, out);
    }
    char *data = NULL;
    size_t len = 0;
    if (f != NULL && f->import_magic != NULL && f->magic_test == NULL && has_magic(f, pre, plen) &&
        !in_stream_is_gzip(src) && (data = map_file(path, &len)) != NULL) {
        in_stream_close(src);
        in->format = f;
        st = import_doc(in, f, &data, len, true, opt, err);
        if (data != NULL)
            munmap(data, len);
        return finish_open(in, st, out);
    }
    st = stream_read_all(src, name, &data, &len, err);
    in_stream_close(src);
    if (st == SIM_OK)
        st = open_bytes(in, f, &data, len, opt, err);
    free(data);
    return finish_open(in, st, out);
}

sim_status input_open_mem(const char *name, const void *data, size_t len, const char *from,
                          const input_options *opt, trace_input **out, sim_error *err)
{
    const input_format *f;
    trace_input *in;
    sim_status st = input_new(name, from, &f, &in, err);
    if (st != SIM_OK)
        return st;
    if (is_gzip(data, len)) {
        char *text = NULL;
        size_t tlen = 0;
        st = gunzip(name, data, len, &text, &tlen, err);
        if (st == SIM_OK)
            st = open_bytes(in, f, &text, tlen, opt, err);
        free(text);
        return finish_open(in, st, out);
    }
    /* importers want NUL-terminated text */
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return finish_open(in, sim_error_set(err, SIM_ENOMEM, name, 0, 0, "out of memory"), out);
    memcpy(copy, data, len);
    copy[len] = '\0';
    st = open_bytes(in, f, &copy, len, opt, err);
    free(copy);
    return finish_open(in, st, out);
}

void input_close(trace_input *in)
{
    if (in == NULL)
        return;
    prefetch_free(in->pf); /* first: its thread reads the native reader */
    trace_close(in->native);
    in_stream_close(in->stream);
    if (in->has_doc)
        imp_doc_release(&in->doc);
    free(in->alloc_conf);
    free(in);
}

const input_format *input_get_format(const trace_input *in)
{
    return in->format;
}

static sim_status doc_next(void *ctx, sim_event *ev, sim_error *err)
{
    (void)err;
    trace_input *in = ctx;
    if (in->next >= in->doc.rec.n)
        return SIM_END;
    *ev = in->doc.out[in->next++];
    return SIM_OK;
}

const sim_seed *input_seed(const trace_input *in)
{
    return in->has_doc && in->doc.has_seed ? &in->doc.seed : NULL;
}

uint64_t input_seed_events(const trace_input *in)
{
    return input_seed(in) ? in->doc.n_pre : 0;
}

sim_event_source input_source_seeded(trace_input *in)
{
    sim_event_source s = input_source(in);
    if (input_seed(in) != NULL) {
        in->next = in->doc.n_pre;
        s.seed = &in->doc.seed;
    }
    return s;
}

sim_event_source input_source(trace_input *in)
{
    if (in->native) {
        sim_error ignored;
        if (in->read_ahead && in->pf == NULL && prefetch_new(trace_source(in->native), &in->pf, &ignored) != SIM_OK)
            in->read_ahead = false; /* no memory for the ring: read in the caller's thread */
        return in->pf ? prefetch_source(in->pf) : trace_source(in->native);
    }
    in->next = 0;
    sim_event_source s = {
        .next = doc_next,
        .ctx = in,
        .path = in->path,
        .name = in->doc.header.name[0] ? in->doc.header.name : NULL,
    };
    return s;
}

const trace_header *input_header(const trace_input *in)
{
    return in->native ? trace_get_header(in->native) : &in->doc.header;
}

const char *input_alloc_conf(const trace_input *in)
{
    return in->native ? in->alloc_conf : in->doc.alloc_conf;
}

bool input_records_settings(const trace_input *in)
{
    return in->has_doc && in->doc.has_settings;
}

uint32_t input_warning_count(const trace_input *in)
{
    return in->has_doc ? in->doc.n_warnings : 0;
}

const char *input_warning(const trace_input *in, uint32_t i)
{
    return in->has_doc && i < in->doc.n_warnings ? in->doc.warnings[i] : NULL;
}

const input_recorded *input_get_recorded(const trace_input *in)
{
    if (!in->has_doc)
        return NULL;
    return &in->doc.rec;
}

uint64_t input_event_count(const trace_input *in)
{
    return in->has_doc ? in->doc.rec.n : 0;
}

const sim_event *input_event_at(const trace_input *in, uint64_t i)
{
    return in->has_doc && i < in->doc.rec.n ? &in->doc.out[i] : NULL;
}
