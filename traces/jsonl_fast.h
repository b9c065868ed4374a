/* jsonl_fast.h — the usual JSON Lines event line, parsed straight into an event without
 * building a DOM: an object of known keys, each once, with plain-digit integers (no
 * sign, fraction, exponent or leading zero, at most 16 digits) and strings without
 * escapes. */

/* It returns false, having changed nothing, for anything else, including every line
 * that is an error: trace.c's reader then reads the line the general way and words the
 * message, so accepted traces and messages are exactly the same. On success the closing
 * quotes of tag, proc and name in the line (the caller's buffer, mutable) become NULs,
 * so the strings need no copy. */
#ifndef GPUSIM_JSONL_FAST_H
#define GPUSIM_JSONL_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/event.h"

/* line: len bytes without the newline; times are multiplied by ns_per_unit and must
 * not be before *prev_t, which becomes the event's t on success; ev->line = line_no
 * (ev->index is the caller's). */
bool jsonl_fast_event(char *line, size_t len, uint64_t ns_per_unit, uint64_t *prev_t, uint64_t line_no,
                      sim_event *ev);

#endif
