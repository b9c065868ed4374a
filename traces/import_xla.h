/* import_xla.h — XLA's buffer assignment of one compiled module: the HloProto that
 * XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_proto" writes as
 * DIR/module_*.{cpu,gpu}_after_optimizations.hlo.pb (traces/IMPORT.md, "XLA").
 *
 * Read with the protobuf wire-format reader of traces/protowire.h, for the four messages needed
 * (HloProto.buffer_assignment; BufferAssignmentProto's logical_buffers,
 * buffer_allocations and heap_simulator_traces); every other field is skipped,
 * nothing is allocated from a length before it is checked against the file.
 * One heap simulator trace becomes the trace (--device=N picks trace N; default the
 * one with most events): each ALLOC and SHARE_WITH an alloc of the logical buffer's
 * size (a SHARE_WITH: the size of the buffer it shares), each FREE its free, in the
 * simulator's order, so that gpusim's XLA clock is the simulator's. The tag is the
 * instruction's name and its allocation's kind. Recorded: every alloc's offset in
 * the heap (placements, segment 0) and the heap's size (peak reserved). */
#ifndef GPUSIM_IMPORT_XLA_H
#define GPUSIM_IMPORT_XLA_H

#include <stdbool.h>
#include <stddef.h>

#include "traces/import_common.h"

/* Whether data (the first len bytes of a file, maybe fewer than the whole) starts
 * like an HloProto with a module or a buffer assignment. */
bool import_xla_sniff(const unsigned char *data, size_t len);
/* The dump in data[0 .. len) into d; a file that starts like JSON is an error saying
 * that the dump is the binary .hlo.pb. */
sim_status import_xla(const unsigned char *data, size_t len, const input_options *opt, imp_doc *d);

#endif
