#include "synth_file.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "traces/synth/synth.h"

void synth_file_open(synth_file *f, const transformer_config *c)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gpusim_synth_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.jsonl", f->dir);
    trace_header h;
    memset(&h, 0, sizeof h);
    snprintf(h.name, sizeof h.name, "test");
    sim_error err;
    sim_error_clear(&err);
    synth_out *o = NULL;
    ck_assert_int_eq(synth_out_open(f->path, &h, 0, NULL, &o, &err), SIM_OK);
    ck_assert_msg(transformer_generate(c, o, &err) == SIM_OK, "generate failed: %s", err.msg);
    ck_assert_int_eq(synth_out_close(o, true, NULL, &err), SIM_OK);
    ck_assert_msg(trace_open(f->path, &f->r, &err) == SIM_OK, "%s", err.msg);
}

void synth_file_close(synth_file *f)
{
    trace_close(f->r);
    f->r = NULL;
    unlink(f->path);
    rmdir(f->dir);
}
