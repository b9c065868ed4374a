/* input.h — how gpusim's commands open a trace: any format of the table in format.h,
 * detected by content (`from` = "auto") or named (`--from=`), gzip inflated first.
 * Only the tools that replay validate/'s own native traces read them straight through
 * trace.h: the harness (validate/vrun.c, validate/upstream/torch) and `gpusim
 * validate-report`. */

/* The native format v1 is streamed through trace.h; the recorded formats (a PyTorch
 * memory snapshot as JSON or as the pickle torch.cuda.memory._dump_snapshot writes, a
 * Kineto / PyTorch profiler Chrome trace `*.pt.trace.json[.gz]`, a TensorFlow/XProf
 * memory profile JSON) are converted, in memory, into the native event stream: exact
 * ids, sizes, times in ns (rebased so the first recorded event is at 0), streams, and
 * ready_t for stream-ordered frees. What the recording says about the real allocator
 * (its allocated/reserved curves and peaks) is kept as reference data for `replay
 * --against-recorded`. traces/IMPORT.md tells users how to record each format and what
 * gpusim does with it. */
#ifndef GPUSIM_INPUT_H
#define GPUSIM_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/event.h"
#include "sim/seed.h"
#include "sim/status.h"
#include "traces/format.h"
#include "traces/trace.h"


typedef struct trace_input trace_input;

/* Open path as format `from` (NULL or "auto" = detect). opt may be NULL (defaults).
 * Errors: SIM_EUSAGE (unknown `from`, a --device that the trace does not have),
 * SIM_EIO (cannot read; no zlib for a .gz), SIM_ETRACE (invalid or unsupported
 * content; err names the file and the event or line), SIM_ENOMEM. */
sim_status input_open(const char *path, const char *from, const input_options *opt, trace_input **out,
                      sim_error *err);
/* Same, reading path but naming it `name` in messages and results (a pipe spooled
 * to a temporary file keeps the name the user gave, "-"). */
sim_status input_open_named(const char *path, const char *name, const char *from, const input_options *opt,
                            trace_input **out, sim_error *err);
/* Same over bytes in memory (tests, fuzzing); name is used in messages. */
sim_status input_open_mem(const char *name, const void *data, size_t len, const char *from,
                          const input_options *opt, trace_input **out, sim_error *err);
void input_close(trace_input *in);

/* The format that was read (never NULL). */
const input_format *input_get_format(const trace_input *in);
/* The pull interface the engine reads (valid while in lives). A native trace in a
 * regular file opened with opt->prefetch is read ahead on a second thread
 * (traces/prefetch.h): the same events, strings and errors in the same order. */
sim_event_source input_source(trace_input *in);
/* The allocator state at the first recorded event, when the importer rebuilt it
 * (a PyTorch snapshot recorded mid-run, traces/IMPORT.md), or NULL. It holds the
 * allocations that input_source() replays as the first input_seed_events() events. */
const sim_seed *input_seed(const trace_input *in);
uint64_t input_seed_events(const trace_input *in);
/* Like input_source(), but starting from the seed (source.seed set): the
 * allocations the seed holds are not events; the rest keep their index. Same as
 * input_source() when there is no seed. */
sim_event_source input_source_seeded(trace_input *in);
/* Name, device name and capacity where the recording has them; meta_json says
 * where an imported trace came from ({"imported_from":{...}}). */
const trace_header *input_header(const trace_input *in);
/* The recorded PYTORCH_CUDA_ALLOC_CONF (snapshot allocator_settings, or the value
 * kept in a converted native trace's meta), or NULL. */
const char *input_alloc_conf(const trace_input *in);
/* Whether the recording states its allocator's settings (a snapshot's
 * allocator_settings): input_alloc_conf() NULL then means PyTorch's defaults. */
bool input_records_settings(const trace_input *in);
/* Things a user must know about the import ("pairing inferred", "sampled"). */
uint32_t input_warning_count(const trace_input *in);
const char *input_warning(const trace_input *in, uint32_t i);
/* Recorded reference numbers, or NULL when the input has none (native traces). */
const input_recorded *input_get_recorded(const trace_input *in);
/* Events in the converted stream (0 for native traces, which are streamed). */
uint64_t input_event_count(const trace_input *in);
/* The events of an imported trace (NULL for native): for tests and --against-recorded
 * (which needs each free's ready_t ahead of the replay). */
const sim_event *input_event_at(const trace_input *in, uint64_t i);

#endif
