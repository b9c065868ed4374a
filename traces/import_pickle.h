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

#include <stddef.h>

#include "sim/status.h"
#include "traces/json.h"

typedef struct pickle_doc pickle_doc;

/* Parse data[0..len) (one pickle, STOP-terminated). On success *doc owns the DOM
 * and *root points into it. Errors: SIM_ETRACE naming path and byte offset, SIM_ENOMEM. */
sim_status pickle_parse(const char *path, const unsigned char *data, size_t len, pickle_doc **doc,
                        const json_value **root, sim_error *err);
void pickle_free(pickle_doc *doc);

#endif
