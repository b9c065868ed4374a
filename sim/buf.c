#include "buf.h"

#include "grow.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
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
    if (extra >= SIZE_MAX - b->len || !SIM_GROW(b->data, (uint64_t)b->len + extra + 1, b->cap)) {
        b->oom = true;
        return false;
    }
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

size_t sim_utf8_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte (RFC 3629, section 4) */
    if (u[0] >= 0xC2 && u[0] <= 0xDF)
        n = 2;
    else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
        n = 3;
        if (u[0] == 0xE0)
            lo = 0xA0; /* no overlong forms */
        else if (u[0] == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
        n = 4;
        if (u[0] == 0xF0)
            lo = 0x90;
        else if (u[0] == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else
        return 0;
    if (u[1] < lo || u[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (u[i] < 0x80 || u[i] > 0xBF)
            return 0;
    return n;
}

void sim_json_escape(sim_put_fn put, void *ctx, const char *s)
{
    put(ctx, "\"", 1);
    const char *run = s;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80) {
            size_t n = sim_utf8_len(p);
            if (n > 0) {
                p += n - 1;
                continue;
            }
            put(ctx, run, (size_t)(p - run));
            put(ctx, "\\ufffd", 6); /* not UTF-8: the replacement character */
            run = p + 1;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(ctx, run, (size_t)(p - run));
        char u[8];
        switch (c) {
        case '"': put(ctx, "\\\"", 2); break;
        case '\\': put(ctx, "\\\\", 2); break;
        case '\n': put(ctx, "\\n", 2); break;
        case '\r': put(ctx, "\\r", 2); break;
        case '\t': put(ctx, "\\t", 2); break;
        default:
            snprintf(u, sizeof u, "\\u%04x", c);
            put(ctx, u, 6);
            break;
        }
        run = p + 1;
    }
    put(ctx, run, strlen(run));
    put(ctx, "\"", 1);
}

static void put_buf(void *ctx, const char *s, size_t n)
{
    sim_buf_put(ctx, s, n);
}

void sim_buf_json_str(sim_buf *b, const char *s)
{
    sim_json_escape(put_buf, b, s);
}

void sim_buf_xml_escape(sim_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': sim_buf_puts(b, "&amp;"); break;
        case '<': sim_buf_puts(b, "&lt;"); break;
        case '>': sim_buf_puts(b, "&gt;"); break;
        case '"': sim_buf_puts(b, "&quot;"); break;
        case '\'': sim_buf_puts(b, "&#39;"); break;
        default:
            if ((unsigned char)*s >= 0x80) {
                size_t n = sim_utf8_len(s);
                if (n == 0) {
                    sim_buf_puts(b, "&#xFFFD;"); /* not UTF-8: the page stays valid */
                } else {
                    sim_buf_put(b, s, n);
                    s += n - 1;
                }
            } else {
                sim_buf_put(b, s, 1);
            }
        }
    }
}

void sim_buf_json_real(sim_buf *b, double v)
{
    if (isnan(v) || v > 1e300 || v < -1e300)
        v = 0.0; /* JSON has no NaN/inf; ratios here are in [0,1] anyway */
    sim_buf_printf(b, "%.6f", v);
}

/* Cleanup on a signal. An interrupted run must not leave OUT.tmp.XXXXXX behind,
 * and a signal handler can only reach what is global: this is gpusim's one piece
 * of mutable global state, kept to the minimum a handler needs. A fixed table of
 * pointers to the temporary names of the outfiles being written (the names live
 * in their sim_outfile); a slot is set after the file is created and cleared
 * after it was renamed or removed, so the handler at worst unlinks a name that
 * no longer exists. The handler only calls async-signal-safe functions (unlink,
 * signal, raise), then dies of the same signal with the default action, so the
 * exit status still tells the caller what happened. Single-threaded use only,
 * like the rest of the CLI. */
#define OUTFILE_SLOTS 16
static char *volatile tmp_paths[OUTFILE_SLOTS];
static volatile sig_atomic_t handlers_installed;

static void on_fatal_signal(int sig)
{
    for (int i = 0; i < OUTFILE_SLOTS; i++) {
        char *p = tmp_paths[i];
        if (p)
            unlink(p);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    if (handlers_installed)
        return;
    handlers_installed = 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue; /* ignored (nohup) or handled by someone else: leave it */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static void register_tmp(sim_outfile *o)
{
    install_handlers();
    o->slot = -1;
    for (int i = 0; i < OUTFILE_SLOTS; i++)
        if (tmp_paths[i] == NULL) {
            tmp_paths[i] = o->tmp;
            o->slot = i;
            return;
        }
}

static void unregister_tmp(sim_outfile *o)
{
    if (o->slot >= 0)
        tmp_paths[o->slot] = NULL;
    o->slot = -1;
}

sim_status sim_outfile_open(sim_outfile *o, const char *path, sim_error *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
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
    register_tmp(o);
    /* mkstemp creates 0600; give the final file the usual permissions */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    o->fp = fdopen(fd, "w");
    if (o->fp == NULL) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        unregister_tmp(o);
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
    if (!ok)
        unlink(o->tmp);
    unregister_tmp(o);
    if (!ok) {
        if (commit)
            return sim_error_set(err, SIM_EIO, o->path, 0, 0, "write failed: %s", strerror(e ? e : EIO));
    }
    return SIM_OK;
}

sim_status sim_outfile_finish(sim_outfile *o, sim_status st, sim_error *err)
{
    sim_error cerr;
    sim_error_clear(&cerr);
    sim_status cst = sim_outfile_close(o, st == SIM_OK, &cerr);
    if (st == SIM_OK && cst != SIM_OK) {
        *err = cerr;
        return cst;
    }
    return st;
}

sim_status sim_read_file(const char *path, uint64_t max_bytes, char **text, size_t *len, sim_error *err)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    char *buf = NULL;
    size_t cap = 0, n = 0;
    sim_status st = SIM_OK;
    for (;;) {
        /* room for one byte past max_bytes (to see that the file is too large) and the NUL */
        if (n + 1 >= cap) {
            uint64_t want = (uint64_t)cap * 2 < 65536 ? 65536 : (uint64_t)cap * 2;
            if (max_bytes < UINT64_MAX - 2 && want > max_bytes + 2)
                want = max_bytes + 2;
            if (want > SIZE_MAX || !SIM_GROW(buf, (size_t)want, cap)) {
                st = sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory reading the file");
                break;
            }
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n > max_bytes) {
            st = sim_error_set(err, SIM_EIO, path, 0, 0, "larger than %llu bytes", (unsigned long long)max_bytes);
            break;
        }
        if (got == 0) {
            if (ferror(f))
                st = sim_error_set(err, SIM_EIO, path, 0, 0, "read failed: %s", strerror(errno));
            break;
        }
    }
    fclose(f);
    if (st != SIM_OK) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
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
