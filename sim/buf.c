#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sim_buf_init(sim_buf *b)
{
    memset(b, 0, sizeof *b);
}

void sim_buf_release(sim_buf *b)
{
    free(b->data);
    sim_buf_init(b);
}

void sim_buf_reset(sim_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static bool sim_buf_reserve(sim_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) {
        b->oom = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void sim_buf_put(sim_buf *b, const char *s, size_t n)
{
    if (!sim_buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sim_buf_puts(sim_buf *b, const char *s)
{
    sim_buf_put(b, s, strlen(s));
}

void sim_buf_printf(sim_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sim_buf_put(b, small, (size_t)n);
        return;
    }
    if (!sim_buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sim_buf_json_str(sim_buf *b, const char *s)
{
    sim_buf_put(b, "\"", 1);
    const char *run = s;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        sim_buf_put(b, run, (size_t)(p - run));
        switch (c) {
        case '"': sim_buf_puts(b, "\\\""); break;
        case '\\': sim_buf_puts(b, "\\\\"); break;
        case '\n': sim_buf_puts(b, "\\n"); break;
        case '\r': sim_buf_puts(b, "\\r"); break;
        case '\t': sim_buf_puts(b, "\\t"); break;
        default: sim_buf_printf(b, "\\u%04x", c); break;
        }
        run = p + 1;
    }
    sim_buf_puts(b, run);
    sim_buf_put(b, "\"", 1);
}

void sim_buf_json_real(sim_buf *b, double v)
{
    if (v != v || v > 1e300 || v < -1e300)
        v = 0.0; /* JSON has no NaN/inf; ratios here are in [0,1] anyway */
    sim_buf_printf(b, "%.6f", v);
}

sim_status sim_outfile_open(sim_outfile *o, const char *path, sim_error *err)
{
    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
        o->is_stdout = true;
        return SIM_OK;
    }
    if (strlen(path) >= sizeof o->path)
        return sim_error_set(err, SIM_EIO, path, 0, 0, "path is too long");
    snprintf(o->path, sizeof o->path, "%s", path);
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (S_ISDIR(sb.st_mode))
            return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot write: is a directory");
        /* never rename a temporary file over a device node or a pipe */
        o->fp = fopen(path, "w");
        if (o->fp == NULL)
            return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
        o->direct = true;
        return SIM_OK;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0)
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    /* mkstemp creates 0600; give the final file the usual permissions */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    o->fp = fdopen(fd, "w");
    if (o->fp == NULL) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(e));
    }
    return SIM_OK;
}

sim_status sim_outfile_close(sim_outfile *o, bool commit, sim_error *err)
{
    if (o->fp == NULL)
        return SIM_OK;
    if (o->is_stdout) {
        o->fp = NULL;
        if (fflush(stdout) != 0)
            return sim_error_set(err, SIM_EIO, "<stdout>", 0, 0, "write failed: %s", strerror(errno));
        return SIM_OK;
    }
    if (o->direct) {
        int r = fclose(o->fp);
        o->fp = NULL;
        if (r != 0 && commit)
            return sim_error_set(err, SIM_EIO, o->path, 0, 0, "write failed: %s", strerror(errno));
        return SIM_OK;
    }
    bool ok = commit;
    int e = 0;
    if (ok && (fflush(o->fp) != 0 || ferror(o->fp) || fsync(fileno(o->fp)) != 0)) {
        ok = false;
        e = errno;
    }
    if (fclose(o->fp) != 0 && ok) {
        ok = false;
        e = errno;
    }
    o->fp = NULL;
    if (ok && rename(o->tmp, o->path) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        unlink(o->tmp);
        if (commit)
            return sim_error_set(err, SIM_EIO, o->path, 0, 0, "write failed: %s", strerror(e ? e : EIO));
    }
    return SIM_OK;
}

sim_status sim_buf_write_file(const sim_buf *b, const char *path, sim_error *err)
{
    if (b->oom)
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory building the output");
    sim_outfile o;
    sim_status st = sim_outfile_open(&o, path, err);
    if (st != SIM_OK)
        return st;
    if (b->len && fwrite(b->data, 1, b->len, o.fp) != b->len) {
        int e = errno;
        sim_outfile_close(&o, false, err);
        return sim_error_set(err, SIM_EIO, path, 0, 0, "write failed: %s", strerror(e));
    }
    return sim_outfile_close(&o, true, err);
}
