/* gtrace.h — the compact binary trace container (*.gtrace, traces/FORMAT.md, "Binary
 * container"): the same events as the native JSON/JSONL format v1, losslessly (ids,
 * sizes, times in ns, ready_t, streams, tags, marks, procs, the header, and the source
 * line of every event, so that replaying a converted trace gives byte-identical
 * results), at about 4-8 bytes per event. */

/* Layout: an 8-byte magic, a versioned and checksummed header, then blocks of up to
 * 65536 events (each with its own CRC-32C and its own string table), then an end block
 * holding the event count. Reading is sequential with large buffered reads, one block
 * at a time: memory is bounded by the largest block (about 1 MiB as written by gpusim,
 * GTRACE_MAX_BLOCK at most), never by the file.
 *
 * Readers here never trust the file: every length, index, varint and value is checked,
 * a checksum mismatch or a truncated file is SIM_ETRACE (exit 3) with a message naming
 * the file and the event, and no event of a block is delivered before the block's
 * checksum was verified. */
#ifndef GPUSIM_GTRACE_H
#define GPUSIM_GTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/event.h"
#include "sim/status.h"
#include "traces/trace.h"

#define GTRACE_MAGIC "\x89GTRACE\n"  /* 8 bytes; 0x89 is never the start of a text file */
#define GTRACE_MAGIC_LEN 8u
#define GTRACE_VERSION 1u
#define GTRACE_MAX_BLOCK ((uint32_t)128 << 20)  /* payload bytes of one block, at most */
#define GTRACE_BLOCK_EVENTS 65536u              /* the writer's block size in events */

/* True when p[0..n) starts with the gtrace magic. */
bool gtrace_is_magic(const void *p, size_t n);

/* CRC-32C (Castagnoli), the checksum of headers and blocks. */
typedef struct gtrace_crc {
    uint32_t t[8][256];  /* slicing-by-8 tables, built per instance (no globals) */
} gtrace_crc;
void gtrace_crc_init(gtrace_crc *c);
/* Continue a CRC: start with crc = 0; returns the CRC of everything fed so far. */
uint32_t gtrace_crc_update(const gtrace_crc *c, uint32_t crc, const void *p, size_t n);

/* ---- reader ---- */
typedef struct gtrace_reader gtrace_reader;

/* Read a gtrace from fp (taken over: closed by gtrace_close, also on failure).
 * prefix[0..prefix_len) are the bytes already read from fp for detection (at
 * most 64). The header is read into *h (h->meta_json is malloc'ed and owned by
 * the caller). Errors: SIM_EIO, SIM_ETRACE (corrupt, truncated, wrong version). */
sim_status gtrace_open_file(const char *path, FILE *fp, const void *prefix, size_t prefix_len,
                            trace_header *h, gtrace_reader **out, sim_error *err);
/* The same over memory (borrowed: data must outlive the reader). */
sim_status gtrace_open_mem(const char *name, const void *data, size_t len, trace_header *h,
                           gtrace_reader **out, sim_error *err);
void gtrace_close(gtrace_reader *r);
/* The next event (strings valid until the next call), SIM_END, or an error. */
sim_status gtrace_next(gtrace_reader *r, sim_event *ev, sim_error *err);

/* ---- writer ---- */
typedef struct gtrace_writer gtrace_writer;

/* Start writing path (a temporary name until gtrace_writer_close commits). */
sim_status gtrace_writer_open(const char *path, const trace_header *h, gtrace_writer **out, sim_error *err);
/* Append one event. Event times must not decrease; SIM_EUSAGE otherwise. */
sim_status gtrace_writer_event(gtrace_writer *w, const sim_event *ev, sim_error *err);
/* commit=true: write the end block and rename into place; false: discard. Frees w. */
sim_status gtrace_writer_close(gtrace_writer *w, bool commit, sim_error *err);

#endif
