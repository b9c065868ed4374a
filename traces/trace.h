/* trace.h — the native trace format v1 (design.md §2, traces/FORMAT.md): a reader for
 * both containers, detected by content (a JSON document with "events", or JSON Lines: a
 * header line then one event per line, streamed with memory independent of the file's
 * length), and a writer for both. */

/* The reader checks everything that can be checked without replaying: keys, types,
 * exact integers, time order; the engine checks the rest (unknown ids, double frees). */
#ifndef GPUSIM_TRACE_H
#define GPUSIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/event.h"
#include "sim/status.h"

typedef enum trace_container {
    TRACE_JSON = 0,   /* one document with an "events" array */
    TRACE_JSONL = 1,  /* header line + one event per line */
    TRACE_GTRACE = 2  /* the binary container (traces/gtrace.h), detected by its magic bytes */
} trace_container;

typedef struct trace_header {
    char name[256];              /* "" if absent */
    char time_unit[4];           /* "ns", "us" or "ms" as written ("ns" default) */
    uint64_t ns_per_unit;        /* 1, 1000 or 1000000; event times are converted to ns */
    char device_name[128];       /* "" if absent */
    uint64_t device_capacity;    /* 0 if absent */
    unsigned device_cc_major;    /* compute capability X.Y of that device; 0.0 if absent */
    unsigned device_cc_minor;
    char *meta_json;             /* the "meta" object re-serialized compactly, or NULL */
} trace_header;

typedef struct trace_reader trace_reader;

/* Open and read the header. Errors: SIM_EIO (cannot open/read; exit 2) or
 * SIM_ETRACE (not a valid v1 trace; exit 3), with file and line in err. */
sim_status trace_open(const char *path, trace_reader **out, sim_error *err);
/* Same over a memory buffer (tests, fuzzing); the text is copied. */
sim_status trace_open_mem(const char *name, const char *text, uint64_t len, trace_reader **out,
                          sim_error *err);
/* A byte source read front to back (traces/stream.h's in_stream: a pipe, a gzip
 * stream): read fills up to n bytes, *got 0 only at the end. */
typedef struct trace_bytes {
    sim_status (*read)(void *ctx, void *buf, size_t n, size_t *got, sim_error *err);
    void *ctx;
} trace_bytes;
/* Same over such a source, for the text containers (JSONL, JSON): nothing seeks, and
 * JSONL is streamed. The source is the caller's and must outlive the reader. */
sim_status trace_open_bytes(const char *name, const trace_bytes *src, trace_reader **out, sim_error *err);
void trace_close(trace_reader *r);

const trace_header *trace_get_header(const trace_reader *r);
trace_container trace_get_container(const trace_reader *r);
/* The pull interface the engine reads (valid while r lives). Event times are ns. */
sim_event_source trace_source(trace_reader *r);

/* ---- writer ---- */
typedef struct trace_writer trace_writer;

/* Start writing path (temporary name until trace_writer_close commits).
 * Event times are written in ns with time_unit "ns". */
sim_status trace_writer_open(const char *path, trace_container c, const trace_header *h, trace_writer **out,
                             sim_error *err);
sim_status trace_writer_event(trace_writer *w, const sim_event *ev, sim_error *err);
/* commit=true: finish and rename into place; false: discard. Frees w. */
sim_status trace_writer_close(trace_writer *w, bool commit, sim_error *err);
/* The container a path's name suggests when writing: .jsonl → JSONL, .gtrace →
 * the binary container, else JSON. */
trace_container trace_container_for_path(const char *path);

#endif
