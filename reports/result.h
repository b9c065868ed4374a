/* result.h — renders a replay (sim_run) for people and machines: the design.md §5
 * JSON object, the text summary with the OOM explained in a sentence, and the
 * timeline CSV. Output goes into a sim_buf; writing files is the caller's job
 * (sim_buf_write_file, atomic). Deterministic: same run, same bytes. */
#ifndef GPUSIM_RESULT_H
#define GPUSIM_RESULT_H

#include "answers/graphs.h"
#include "answers/whatif.h"
#include "sim/buf.h"
#include "sim/engine.h"
#include "sim/jsonw.h"

/* The whole §5 object, pretty-printed, ending in a newline. */
void report_json(const sim_run *run, sim_buf *out);
/* The same object on one line, without a space outside strings and without the
 * newline (a JSONL record; sweep result lines). */
void report_json_line(const sim_run *run, sim_buf *out);
/* Only the "result" object of process p, or of the device when p == UINT32_MAX
 * (for embedding in compare/plan output). indent: spaces before each line; < 0:
 * compact, as report_json_line. */
void report_json_result(const sim_run *run, uint32_t p, int indent, sim_buf *out);
/* The strategy's effective options (ops->options of the first process) as a
 * one-line JSON object, "{}" when there is no process. */
void report_json_options(const sim_run *run, sim_buf *out);
/* One trace of the run as a one-line JSON object {"path", "name", "events", "allocs", "frees"}. */
void report_json_source(const sim_run_source *s, sim_buf *out);
/* The same three as values of an open writer, in its layout (result: a block object;
 * options and source: inline ones): for renderers that embed them. */
void report_jsonw_result(const sim_run *run, uint32_t p, jsonw *w);
void report_jsonw_options(const sim_run *run, jsonw *w);
void report_jsonw_source(const sim_run_source *s, jsonw *w);
/* The §5 object's members into the object open in w, for a document that adds its
 * own (a sweep job's line): all of them, or only those before "device" when head_only
 * ("gpusim", "trace", "traces", "strategy"). */
void report_jsonw_members(const sim_run *run, bool head_only, jsonw *w);
/* A human summary. */
void report_text(const sim_run *run, sim_buf *out);
/* The same two with the answer to a what-if (w NULL or not present: none). */
void report_json_whatif(const sim_run *run, const whatif *w, sim_buf *out);
void report_text_whatif(const sim_run *run, const whatif *w, sim_buf *out);
/* The same two with the CUDA graphs' answer too (g NULL or not present: none;
 * reports/graphs.h): the JSON's "cuda_graphs" member, the text's section at the end. */
void report_json_answers(const sim_run *run, const whatif *w, const graphs_answer *g, sim_buf *out);
void report_text_answers(const sim_run *run, const whatif *w, const graphs_answer *g, sim_buf *out);
/* The what-if answer in one sentence, without a newline ("what if SETTING: ..."). */
void report_whatif_sentence(const whatif *w, sim_buf *out);
/* t,event,requested,allocated,reserved,fragmentation — one row per timeline row. */
void report_timeline_csv(const sim_run *run, sim_buf *out);
/* One sentence explaining an OOM, e.g. for the text summary and compare tables. */
void report_oom_sentence(const sim_run *run, const sim_oom_record *o, sim_buf *out);
/* The pool events (pool_begin, pool_end, pool_release, graph_replay) of the run's
 * traces that its strategy did not model, having no private pools (ops->pools NULL;
 * design.md §3 "Pools"): their number, 0 when there are none or the model has pools. */
uint64_t report_pool_events_ignored(const sim_run *run);
/* Why, and where the pools' allocations went (the strategy's no_pools_note, else a
 * general clause). */
const char *report_no_pools_reason(const strategy_ops *ops);
/* The sentence that says so, with the strategy's name, into buf (at most cap bytes;
 * returned): "async: private pools are not modelled (...); the pools' allocations
 * were replayed in the default pool". */
const char *report_no_pools_text(const sim_run *run, char *buf, size_t cap);
/* The header line that says so ("  pools   SENTENCE (N pool events)\n"), nothing when 0. */
void report_text_pools_ignored(const sim_run *run, sim_buf *b);
/* The same lines for the strategies ops[0..n) of a command that replays traces holding
 * pool_events pool events under several (compare, plan, tune): one line per reason, the
 * strategies without pools that share it named together, in their order; nothing when
 * pool_events is 0 or every one has pools. A strategy given twice is named once. */
void report_text_pools_ignored_by(const strategy_ops *const *ops, uint32_t n, uint64_t pool_events, sim_buf *b);
/* The limit an allocator works under (answers/limit.h limit_find). */
uint64_t report_limit_bytes(const sim_run *run);
/* The same for a header, with where it comes from, into buf (at most cap bytes;
 * returned): "12.80 GiB (0.8 x 16.00 GiB, --memory-fraction)", "14.50 GiB (--limit)". */
const char *report_limit_text(const sim_run *run, char *buf, size_t cap);
/* The lines under a text header's device line that say where the context comes from:
 * the published default ("  context 256.00 MiB: CUDA 12 default, ...") and NCCL's
 * buffers when they are part of it ("  nccl    528.00 MiB: NCCL buffers from the trace
 * header, ..."); nothing for a context given with --context. */
void report_context_lines(const device_info *d, sim_buf *b);

#endif
