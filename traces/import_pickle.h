/* import_pickle.h — a reader for the pickles torch.cuda.memory._dump_snapshot writes
 * (pickle.dump of a plain dict): only the opcodes that plain data needs (protocols 2–5:
 * dicts, lists, tuples, str, int, float, bool, None, memo, frames) are understood;
 * anything else (GLOBAL, REDUCE, BUILD, persistent ids, bytes, sets ...) is refused
 * with the opcode and its byte offset. */

/* Nothing is ever imported or called. The result is the same DOM json.h produces
 * (tuples become arrays, int keys become decimal strings, numbers keep exact decimal
 * text), so the snapshot importer reads JSON and pickle alike. Line numbers are 0 (a
 * pickle has none). */
#ifndef GPUSIM_IMPORT_PICKLE_H
#define GPUSIM_IMPORT_PICKLE_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/status.h"
#include "traces/json.h"

typedef struct pickle_doc pickle_doc;

/* How to read: unread_keys (NULL-terminated, or NULL) lists the dict keys whose
 * values the caller never reads; such members are left out of the DOM, and a list
 * or dict made for one of them is parsed and checked but never kept. exact builds
 * the whole object graph first and converts it at the end (the reference reading:
 * every value kept, twice the memory); without it, each container becomes its DOM
 * as it is completed (when a pickle stores it into another, which Python's pickler
 * does only once it is whole), a list's items are kept once per content (a
 * recording's call stacks repeat), strings once per distinct text, integers stored
 * in a container are recycled, and the graph is never held. Where the lean reading cannot be sure to give what the
 * exact one would (a container changed after it was stored, a kept value made in
 * an unread one, a memo cycle, deep nesting, any error), it starts again exactly,
 * so results and messages are those of the exact reading in every case. */
typedef struct pickle_options {
    const char *const *unread_keys;
    bool exact;
    /* data is a private read-only mapping of a file (mmap): the reader hands back the
     * pages it has read as it goes (the kernel reads them again should they be
     * touched, as an exact reading after a lean one does), so the file is never
     * resident whole */
    bool drop_read;
} pickle_options;

/* Parse data[0..len) (one pickle, STOP-terminated). On success *doc owns the DOM
 * and *root points into it. opt may be NULL (lean, every key kept). Errors:
 * SIM_ETRACE naming path and byte offset, SIM_ENOMEM. */
sim_status pickle_parse(const char *path, const unsigned char *data, size_t len, const pickle_options *opt,
                        pickle_doc **doc, const json_value **root, sim_error *err);
/* Bytes the DOM holds (its blocks, as allocated); the bytes the document held when
 * the reading ended, with the values and containers it made (freed then); whether
 * the lean reading had to start again exactly. */
size_t pickle_doc_bytes(const pickle_doc *doc);
size_t pickle_doc_peak_bytes(const pickle_doc *doc);
bool pickle_doc_restarted(const pickle_doc *doc);
void pickle_free(pickle_doc *doc);

#endif
