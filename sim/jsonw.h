/* jsonw.h — the one JSON writer: objects, arrays, keys, escaped strings, exact integers,
 * booleans, null and reals, streamed to a sim_buf or a FILE* with the commas, colons and
 * indentation kept inside. It writes what it is told in that order and checks nothing
 * about the document (a key outside an object, an unclosed container): that is the
 * caller's contract, asserted in debug builds. */
#ifndef GPUSIM_JSONW_H
#define GPUSIM_JSONW_H

/* Layouts. Compact: the whole document on one line, "," and ":" without spaces (JSONL
 * lines, sweep results). Pretty: a *block* container puts each member on its own line,
 * indented two spaces deeper than the line that opened it, and closes on a line of its
 * own (an empty one stays "{}"); an *inline* container stays on one line as
 * {"k": v, "k": v} — the mix every renderer printed by hand before (result.c). A block
 * indents from the line it opens on, also inside an inline container; jsonw_wrap breaks
 * an inline container's line, continuing one space deeper than the line it opened on
 * (the hanging rows of compare and sweep).
 *
 * Cost: no allocation beyond the sim_buf's growth; nesting is limited to
 * JSONW_MAX_DEPTH levels (deeper is a contract breach).
 * Thread safety: a writer is not thread-safe; separate writers, each with its own
 * output, may run on separate threads. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

#define JSONW_MAX_DEPTH 32

typedef enum jsonw_layout { JSONW_PRETTY, JSONW_COMPACT } jsonw_layout;

/* One open container. Private to jsonw.c; here so that a writer lives on the stack. */
typedef struct jsonw_level {
    uint8_t step;   /* pretty only: members on their own lines, this much deeper; else 0 */
    uint8_t block;  /* the closing bracket on a line of its own */
    uint8_t object; /* an object (keys) rather than an array */
    uint8_t empty;  /* nothing written in it yet */
    uint8_t wrap;   /* the next member starts a continuation line */
    uint8_t join;   /* the next member stays on the current line */
    uint32_t line;  /* the indent of the line it was opened on */
} jsonw_level;

/* A writer: a small caller-owned struct, set up by jsonw_init_*, with nothing to release. */
typedef struct jsonw {
    sim_buf *buf;  /* the output: buf, or else fp */
    FILE *fp;
    jsonw_layout layout;
    uint32_t line; /* the indent of the line being written */
    uint32_t depth;
    bool after_key;  /* a key was written; its value comes next */
    jsonw_level level[JSONW_MAX_DEPTH];
} jsonw;

/* Start a document in b (appended to what is there) or in fp. base is the indent, in
 * spaces, of the line the document starts on (0 for a whole document; deeper when the
 * value is written into a hand-made surrounding). Nothing is written yet. */
void jsonw_init_buf(jsonw *w, sim_buf *b, jsonw_layout layout, uint32_t base);
void jsonw_init_file(jsonw *w, FILE *fp, jsonw_layout layout, uint32_t base);
/* A writer for more members of an inline object whose opening brace and first members
 * are written elsewhere (synth's trace meta, put together from several parts): each key
 * comes after its comma; the object's jsonw_end is the caller's to write, not w's. */
void jsonw_init_members(jsonw *w, sim_buf *b, jsonw_layout layout);

/* Open an object or an array as a value (after a key, in an array, or at the top):
 * block or inline (the same in compact). jsonw_end closes the innermost one. */
void jsonw_object(jsonw *w);
void jsonw_object_inline(jsonw *w);
void jsonw_array(jsonw *w);
void jsonw_array_inline(jsonw *w);
/* Pretty: an array whose items each start a line `step` (1 to 8) spaces deeper than the
 * line it opens on, with the closing bracket right after the last item (plan's grids);
 * compact: any array. */
void jsonw_array_lines(jsonw *w, uint32_t step);
/* A block object whose members are `step` (1 to 8) spaces deeper instead of two
 * (Python's one-space dicts that --summary imitates). */
void jsonw_object_step(jsonw *w, uint32_t step);
void jsonw_end(jsonw *w);

/* In pretty layout, the next member of the innermost inline container starts a new
 * line ("," then a line break) indented one more than the line that container opened
 * on; nothing in compact layout or in a block. */
void jsonw_wrap(jsonw *w);
/* In pretty layout, the next member of the innermost block stays on the current line,
 * after ", ", instead of starting its own (plan's "visible", "replicas" and "more_jobs"). */
void jsonw_join(jsonw *w);

/* The key of the next member of the innermost object (escaped as a string). */
void jsonw_key(jsonw *w, const char *key);

/* Values. str escapes as sim_buf_json_str does (quotes, backslash, control characters;
 * valid UTF-8 passes through, invalid bytes become \ufffd). u64 and i64 are exact.
 * real is the shortest %.{1..17}g that reads back to the same double (-0.0 stays "-0";
 * NaN and infinities, which JSON cannot say, are written as null). real_fixed writes
 * v with fmt, one printf conversion of a double such as "%.6f" (at most 350 characters
 * come out), for outputs whose bytes are fixed that way. raw writes text as it is: one value rendered elsewhere. */
void jsonw_str(jsonw *w, const char *s);
void jsonw_u64(jsonw *w, uint64_t v);
void jsonw_i64(jsonw *w, int64_t v);
void jsonw_bool(jsonw *w, bool v);
void jsonw_null(jsonw *w);
void jsonw_real(jsonw *w, double v);
void jsonw_real_fixed(jsonw *w, const char *fmt, double v);
/* A ratio exactly as sim_buf_json_real writes it: "%.6f", NaN and |v| > 1e300 as 0. */
void jsonw_ratio(jsonw *w, double v);
void jsonw_raw(jsonw *w, const char *text);

/* A key and its value in one call. */
void jsonw_key_str(jsonw *w, const char *key, const char *s);
void jsonw_key_u64(jsonw *w, const char *key, uint64_t v);
void jsonw_key_bool(jsonw *w, const char *key, bool v);
void jsonw_key_real(jsonw *w, const char *key, double v);

/* The shortest %.{1..17}g form of v that reads back to v, into out (cap >= 32): what
 * jsonw_real writes for a finite v. Returns out. */
const char *jsonw_format_real(double v, char *out, size_t cap);

#endif
