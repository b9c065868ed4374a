/* synth_file.h — a generated transformer trace written to a temporary JSONL file and
 * opened again for reading, for tests that scan its events (tags, marks); each step
 * that fails fails the test. synth_file_close closes it and removes the file. */
#ifndef GPUSIM_TEST_SYNTH_FILE_H
#define GPUSIM_TEST_SYNTH_FILE_H

#include "traces/synth/transformer.h"
#include "traces/trace.h"

typedef struct synth_file {
    char dir[64];
    char path[96];
    trace_reader *r;
} synth_file;

/* Generate c into a fresh temporary file and open it: f->r reads it. */
void synth_file_open(synth_file *f, const transformer_config *c);
void synth_file_close(synth_file *f);

#endif
