/* import_jaxprof.h — JAX's device memory profile: the pprof Profile (gzipped, as
 * jax.profiler.save_device_memory_profile writes it, or inflated) of the buffers live
 * on the devices at one moment (traces/IMPORT.md, "JAX device memory profile").
 *
 * Read with the wire-format reader of traces/protowire.h: the sample types, the
 * samples (values, location ids, labels "kind" and "device"), the locations, the
 * functions and the string table; every other field is skipped. The profile is a
 * start state: each live buffer of one device (--device=N, N the number of the
 * "device" label "cpu:N" / "cuda:N"; default the device with most live bytes) is an
 * allocation at the start, of the sample's space/bytes divided by its
 * allocations/count (JAX folds buffers of one size, stack and device into one
 * sample), tagged "buffer" and the stack's frames outside the installed packages.
 * Samples of kind "executable" (generated code, outside the allocator) are counted
 * in a warning and not imported. No event follows: a replay answers whether what
 * was live then fits. */
#ifndef GPUSIM_IMPORT_JAXPROF_H
#define GPUSIM_IMPORT_JAXPROF_H

#include <stdbool.h>
#include <stddef.h>

#include "traces/import_common.h"

/* Whether data (the first len bytes, maybe fewer than the whole) starts like a pprof
 * Profile: a first sample_type of varint fields only, then another field of the Profile. */
bool import_jaxprof_sniff(const unsigned char *data, size_t len);
/* The profile in data[0 .. len) (already inflated) into d. */
sim_status import_jaxprof(const unsigned char *data, size_t len, const input_options *opt, imp_doc *d);

#endif
