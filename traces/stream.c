/* Reading a trace front to back (stream.h).
 *
 * The prefix buffer holds the first IN_STREAM_PREFIX bytes of content once peeked;
 * reads drain it before reading on. Compressed input goes through a 64 KiB input
 * buffer and zlib's inflate (gzip header detected by inflateInit2's +16), one
 * member after another: memory is the two buffers and zlib's window, whatever the
 * size of the file. */
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef GPUSIM_HAVE_ZLIB
#include <zlib.h>
#endif

#define RAW_CHUNK ((size_t)64 << 10)
#define PRE_CAP (IN_STREAM_PREFIX + 3) /* the prefix and a byte order mark before it */

struct in_stream {
    char path[512];
    FILE *fp;
    bool own_fp;
    bool started;            /* the first bytes were looked at (gzip or not) */
    bool gz;
    bool eof;                /* no more content */
    bool bom_checked;
    unsigned char *raw;      /* compressed bytes read ahead */
    size_t raw_pos, raw_len;
    bool raw_eof;
#ifdef GPUSIM_HAVE_ZLIB
    z_stream z;
    bool z_live;
    bool member_ended;
#endif
    char *pre;               /* the prefix: content peeked and not yet read */
    size_t pre_pos, pre_len;
};

sim_status in_stream_open(const char *path, const char *name, in_stream **out, sim_error *err)
{
    *out = NULL;
    in_stream *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, name, 0, 0, "out of memory");
    snprintf(s->path, sizeof s->path, "%s", name);
    if (strcmp(path, "-") == 0) {
        s->fp = stdin;
    } else {
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            free(s);
            return sim_error_set(err, SIM_EIO, name, 0, 0, "is a directory, not a trace file");
        }
        s->fp = fopen(path, "rb");
        if (s->fp == NULL) {
            int e = errno;
            free(s);
            return sim_error_set(err, SIM_EIO, name, 0, 0, "cannot open: %s", strerror(e));
        }
        s->own_fp = true;
    }
    *out = s;
    return SIM_OK;
}

void in_stream_close(in_stream *s)
{
    if (s == NULL)
        return;
#ifdef GPUSIM_HAVE_ZLIB
    if (s->z_live)
        inflateEnd(&s->z);
#endif
    if (s->own_fp)
        fclose(s->fp);
    free(s->raw);
    free(s->pre);
    free(s);
}

bool in_stream_is_gzip(const in_stream *s)
{
    return s->gz;
}

/* More compressed bytes into raw (after the unread ones); *any false at the end. */
static sim_status raw_more(in_stream *s, bool *any, sim_error *err)
{
    if (s->raw_pos > 0) {
        memmove(s->raw, s->raw + s->raw_pos, s->raw_len - s->raw_pos);
        s->raw_len -= s->raw_pos;
        s->raw_pos = 0;
    }
    size_t k = fread(s->raw + s->raw_len, 1, RAW_CHUNK - s->raw_len, s->fp);
    if (k == 0 && ferror(s->fp))
        return sim_error_set(err, SIM_EIO, s->path, 0, 0, "read failed: %s", strerror(errno));
    if (k == 0)
        s->raw_eof = true;
    s->raw_len += k;
    *any = k > 0;
    return SIM_OK;
}

/* Look at the first two bytes: gzip or plain. */
static sim_status start(in_stream *s, sim_error *err)
{
    s->started = true;
    s->raw = malloc(RAW_CHUNK);
    if (s->raw == NULL)
        return sim_error_set(err, SIM_ENOMEM, s->path, 0, 0, "out of memory");
    bool any = true;
    sim_status st = SIM_OK;
    while (s->raw_len < 2 && any && (st = raw_more(s, &any, err)) == SIM_OK) {
    }
    if (st != SIM_OK)
        return st;
    s->gz = s->raw_len >= 2 && s->raw[0] == 0x1f && s->raw[1] == 0x8b;
    if (!s->gz)
        return SIM_OK;
#ifndef GPUSIM_HAVE_ZLIB
    return sim_error_set(err, SIM_EIO, s->path, 0, 0,
                         "is gzip-compressed, but this gpusim was built without zlib (gunzip it first)");
#else
    if (inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK)
        return sim_error_set(err, SIM_ENOMEM, s->path, 0, 0, "cannot start zlib");
    s->z_live = true;
    return SIM_OK;
#endif
}

#ifdef GPUSIM_HAVE_ZLIB
static sim_status inflate_some(in_stream *s, char *buf, size_t n, size_t *got, sim_error *err)
{
    *got = 0;
    while (*got == 0 && !s->eof) {
        if (s->raw_pos == s->raw_len && !s->raw_eof) {
            bool any = false;
            sim_status st = raw_more(s, &any, err);
            if (st != SIM_OK)
                return st;
        }
        if (s->member_ended) {
            /* after a member: another one, or the end; anything else is not gzip */
            if (s->raw_len - s->raw_pos < 2 && !s->raw_eof) {
                bool any = false;
                sim_status st = raw_more(s, &any, err);
                if (st != SIM_OK)
                    return st;
                continue;
            }
            if (s->raw_pos == s->raw_len) {
                s->eof = true;
                break;
            }
            if (s->raw_len - s->raw_pos < 2 || s->raw[s->raw_pos] != 0x1f || s->raw[s->raw_pos + 1] != 0x8b)
                return sim_error_set(err, SIM_ETRACE, s->path, 0, 0,
                                     "not a valid gzip file: trailing data after the compressed stream");
            inflateReset(&s->z);
            s->member_ended = false;
        }
        s->z.next_in = s->raw + s->raw_pos;
        s->z.avail_in = (uInt)(s->raw_len - s->raw_pos);
        s->z.next_out = (Bytef *)buf;
        s->z.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
        uInt before_in = s->z.avail_in, before_out = s->z.avail_out;
        int zr = inflate(&s->z, Z_NO_FLUSH);
        s->raw_pos += before_in - s->z.avail_in;
        *got = before_out - s->z.avail_out;
        if (zr == Z_STREAM_END) {
            s->member_ended = true;
            continue;
        }
        if (zr == Z_OK)
            continue;
        if (zr == Z_BUF_ERROR) {
            if (s->raw_eof && s->raw_pos == s->raw_len)
                return sim_error_set(err, SIM_ETRACE, s->path, 0, 0,
                                     "truncated gzip file (the compressed stream ends early)");
            continue;
        }
        if (zr == Z_MEM_ERROR)
            return sim_error_set(err, SIM_ENOMEM, s->path, 0, 0, "out of memory inflating the file");
        return sim_error_set(err, SIM_ETRACE, s->path, 0, 0, "not a valid gzip file (zlib: %s)",
                             s->z.msg ? s->z.msg : "data error");
    }
    return SIM_OK;
}
#endif

/* Content bytes from the source itself (the prefix aside). */
static sim_status fill(in_stream *s, char *buf, size_t n, size_t *got, sim_error *err)
{
    *got = 0;
    if (!s->started) {
        sim_status st = start(s, err);
        if (st != SIM_OK)
            return st;
    }
    if (s->eof || n == 0)
        return SIM_OK;
#ifdef GPUSIM_HAVE_ZLIB
    if (s->gz)
        return inflate_some(s, buf, n, got, err);
#endif
    /* plain: what start() read ahead first */
    if (s->raw_pos < s->raw_len) {
        size_t k = s->raw_len - s->raw_pos < n ? s->raw_len - s->raw_pos : n;
        memcpy(buf, s->raw + s->raw_pos, k);
        s->raw_pos += k;
        *got = k;
        return SIM_OK;
    }
    size_t k = fread(buf, 1, n, s->fp);
    if (k == 0 && ferror(s->fp))
        return sim_error_set(err, SIM_EIO, s->path, 0, 0, "read failed: %s", strerror(errno));
    if (k == 0)
        s->eof = true;
    *got = k;
    return SIM_OK;
}

sim_status in_stream_peek(in_stream *s, size_t want, const char **data, size_t *len, sim_error *err)
{
    if (want > IN_STREAM_PREFIX)
        want = IN_STREAM_PREFIX;
    if (s->pre == NULL) {
        s->pre = malloc(PRE_CAP);
        if (s->pre == NULL)
            return sim_error_set(err, SIM_ENOMEM, s->path, 0, 0, "out of memory");
    }
    /* a UTF-8 byte order mark (EF BB BF) is not content */
    size_t need = s->bom_checked ? s->pre_pos + want : 3;
    while (s->pre_len < need && s->pre_len < PRE_CAP) {
        size_t got = 0;
        sim_status st = fill(s, s->pre + s->pre_len, PRE_CAP - s->pre_len, &got, err);
        if (st != SIM_OK)
            return st;
        if (got == 0)
            break;
        s->pre_len += got;
        if (!s->bom_checked && s->pre_len >= 3)
            break;
    }
    if (!s->bom_checked) {
        s->bom_checked = true;
        if (s->pre_len >= 3 && memcmp(s->pre, "\xEF\xBB\xBF", 3) == 0)
            s->pre_pos = 3;
        return in_stream_peek(s, want, data, len, err);
    }
    *data = s->pre + s->pre_pos;
    *len = s->pre_len - s->pre_pos < want ? s->pre_len - s->pre_pos : want;
    return SIM_OK;
}

sim_status in_stream_read(in_stream *s, void *buf, size_t n, size_t *got, sim_error *err)
{
    *got = 0;
    if (!s->bom_checked) {
        const char *d;
        size_t l;
        sim_status st = in_stream_peek(s, 3, &d, &l, err);
        if (st != SIM_OK)
            return st;
    }
    if (s->pre_pos < s->pre_len) {
        size_t k = s->pre_len - s->pre_pos < n ? s->pre_len - s->pre_pos : n;
        memcpy(buf, s->pre + s->pre_pos, k);
        s->pre_pos += k;
        *got = k;
        return SIM_OK;
    }
    return fill(s, buf, n, got, err);
}
