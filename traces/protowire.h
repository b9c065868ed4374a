/* protowire.h — a reader of the protobuf wire format, for the binary formats
 * (import_xla: XLA's HloProto; import_jaxprof: pprof profiles). It walks a message's
 * fields in order, checks every length against the bytes there are before using it,
 * allocates nothing and keeps each field's file offset for messages. Varints (0) and
 * length-delimited fields (2) are returned; fixed 64- and 32-bit fields (1, 5) are
 * stepped over; groups (3, 4) are malformed. */
#ifndef GPUSIM_PROTOWIRE_H
#define GPUSIM_PROTOWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/status.h"

/* A message: bytes p[0 .. n), read up to at; base = the offset of p[0] in the file. */
typedef struct pb_msg {
    const unsigned char *p;
    size_t n, at, base;
} pb_msg;

typedef struct pb_field {
    uint32_t num, wire;
    uint64_t v;   /* wire 0 */
    pb_msg sub;   /* wire 2: its payload, at = 0 */
    size_t where; /* the field's key, as a file offset */
} pb_field;

typedef enum pb_step { PB_END, PB_FIELD, PB_BAD } pb_step;

#define PB_VARINT 0u
#define PB_LEN 2u

/* The varint at m->at (advancing it); false when m ends first or it runs past 10 bytes. */
bool protowire_varint(pb_msg *m, uint64_t *out);
/* The next field of m; PB_END at its end, PB_BAD for a truncated or malformed one. */
pb_step protowire_next(pb_msg *m, pb_field *f);

/* Where a reader of one protobuf format reports what is wrong: into err, naming path,
 * the format ("XLA dump") and what a wrong wire type suggests the file is not ("a
 * buffer assignment"). Each message reads "FORMAT byte N: ...", N a file offset. */
typedef struct pb_errors {
    sim_error *err;
    const char *path, *format, *expected;
} pb_errors;

/* SIM_ETRACE with "FORMAT byte at: " and the message. */
sim_status protowire_fail(const pb_errors *e, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* f: the field protowire_next failed on (PB_BAD), inside what. */
sim_status protowire_bad_field(const pb_errors *e, const pb_field *f, const char *what);
/* SIM_OK when f has the wire type its message declares, else the error. */
sim_status protowire_want_wire(const pb_errors *e, const pb_field *f, uint32_t wire, const char *what);

#endif
