/* buf.h — a growable byte buffer for building output (JSON, CSV, text, HTML), the
 * JSON string escaper every writer shares, the one way gpusim writes a file (to a
 * temporary name in the same directory, then rename, so an interrupted or failed run
 * never leaves half a file behind, design.md §6) and the one way it reads one whole. */

/* Thread safety: a sim_buf is not thread-safe, separate buffers may be used on separate
 * threads, and so may sim_buf_write_file and sim_read_file; sim_outfile_open and _close
 * register the temporary name in one process-wide table, so only one thread opens and
 * closes outfiles. */
#ifndef GPUSIM_BUF_H
#define GPUSIM_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

typedef struct sim_buf {
    char *data;   /* NUL-terminated when len > 0 */
    size_t len, cap;
    bool oom;     /* a growth failed; the content is truncated */
} sim_buf;

void sim_buf_init(sim_buf *b);
void sim_buf_release(sim_buf *b);
void sim_buf_reset(sim_buf *b);
void sim_buf_put(sim_buf *b, const char *s, size_t n);
void sim_buf_puts(sim_buf *b, const char *s);
void sim_buf_printf(sim_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal with quotes and escapes. */
void sim_buf_json_str(sim_buf *b, const char *s);
/* The same literal, handed to put(ctx, bytes, n) piece by piece (the JSON writer's
 * outputs, sim/jsonw.h): the one escaper. */
typedef void (*sim_put_fn)(void *ctx, const char *s, size_t n);
void sim_json_escape(sim_put_fn put, void *ctx, const char *s);
/* Text with &, <, >, " and ' escaped, for HTML and XML element content and
 * attributes (the report, JUnit); bytes that are not UTF-8 become &#xFFFD;. */
void sim_buf_xml_escape(sim_buf *b, const char *s);
/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the bytes there
 * are not one (a stray continuation byte, a truncated, overlong or surrogate form).
 * sim_buf_json_str writes such a byte as \ufffd, so output stays valid JSON. */
size_t sim_utf8_len(const char *s);
/* A JSON number for a ratio: fixed 6 decimals, so output is byte-stable. */
void sim_buf_json_real(sim_buf *b, double v);

/* Write b to path atomically (temp file + fsync + rename). "-" writes stdout.
 * SIM_EIO with a message naming the path on failure; no partial file remains. */
sim_status sim_buf_write_file(const sim_buf *b, const char *path, sim_error *err);

/* Read the whole of path into a new NUL-terminated string: *text (the caller frees it)
 * and *len (bytes, without the NUL). SIM_EIO with a message when the file cannot be
 * opened or read, or is larger than max_bytes; SIM_ENOMEM. On error *text is NULL.
 * Reads until end of file, so pipes and /dev/stdin work. */
sim_status sim_read_file(const char *path, uint64_t max_bytes, char **text, size_t *len, sim_error *err);

/* A file being written incrementally under a temporary name. */
typedef struct sim_outfile {
    FILE *fp;
    char path[1024];
    char tmp[1100];
    bool is_stdout;
    bool direct;   /* a device or pipe (/dev/null, a FIFO): written in place, never renamed over */
    int slot;      /* where tmp is registered for removal on SIGINT/SIGTERM/SIGHUP, or -1 */
} sim_outfile;

/* While the temporary file exists, SIGINT, SIGTERM and SIGHUP remove it before the
 * process dies of the signal (unless the signal was ignored when gpusim started). */
sim_status sim_outfile_open(sim_outfile *o, const char *path, sim_error *err);
/* Commit (flush, fsync, rename) or, with commit false, discard the temporary file. */
sim_status sim_outfile_close(sim_outfile *o, bool commit, sim_error *err);
/* Close o after work that ended with st: commit when st is SIM_OK, else discard.
 * Returns st with *err as that work left it, or, when st was SIM_OK and the
 * commit failed, the close's failure in *err. */
sim_status sim_outfile_finish(sim_outfile *o, sim_status st, sim_error *err);

#endif
