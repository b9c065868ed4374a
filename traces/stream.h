/* stream.h — a trace's bytes read front to back, as users pipe them: a regular
 * file, `-` or /dev/stdin, a FIFO, `<(zcat f.gz)`. Nothing seeks: the format is
 * sniffed from a bounded prefix that is kept and read again (in_stream_peek), and a
 * gzip stream (one or more concatenated members) is inflated as it is read, in
 * bounded memory, never whole. A UTF-8 byte order mark at the start is skipped. */
#ifndef GPUSIM_STREAM_H
#define GPUSIM_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/status.h"

typedef struct in_stream in_stream;

/* Open path ("-" is standard input), named `name` in messages. SIM_EIO (cannot open,
 * a directory), SIM_ENOMEM. */
sim_status in_stream_open(const char *path, const char *name, in_stream **out, sim_error *err);
/* The first bytes of the (inflated) content, at most want (want ≤ IN_STREAM_PREFIX),
 * fewer only at the end of the input; they are still read by in_stream_read. Errors:
 * SIM_EIO, SIM_ETRACE (bad gzip), SIM_ENOMEM. */
#define IN_STREAM_PREFIX ((size_t)64 << 10)
sim_status in_stream_peek(in_stream *s, size_t want, const char **data, size_t *len, sim_error *err);
/* Up to n bytes of content into buf; *got is 0 only at the end of the input. */
sim_status in_stream_read(in_stream *s, void *buf, size_t n, size_t *got, sim_error *err);
/* Whether the input is gzip-compressed (known after the first peek or read). */
bool in_stream_is_gzip(const in_stream *s);
void in_stream_close(in_stream *s);

#endif
