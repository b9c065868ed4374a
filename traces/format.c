/* The table of trace formats (format.h): the one place that lists them. */
#include "format.h"

#include <stdio.h>
#include <string.h>

#include "import_common.h"
#include "import_jaxprof.h"
#include "import_kineto.h"
#include "import_pickle.h"
#include "import_snapshot.h"
#include "import_tfprof.h"
#include "import_xla.h"

/* The members of a snapshot that import_snapshot never reads: two strings of every
 * trace entry. The pickle reader leaves them out of the DOM (a key the importer comes
 * to read must leave this list; "frames" did, for an alloc's tag). */
static const char *const SNAPSHOT_UNREAD_KEYS[] = {"compile_context", "user_metadata", NULL};

/* A snapshot written by torch.cuda.memory._dump_snapshot: the pickle, read into the
 * same JSON values as a snapshot saved as JSON. */
static sim_status import_snapshot_pickle(const unsigned char *data, size_t len, const input_options *opt,
                                         imp_doc *d)
{
    pickle_doc *pk = NULL;
    const json_value *root = NULL;
    const pickle_options po = {.unread_keys = SNAPSHOT_UNREAD_KEYS, .drop_read = imp_input_mapped(d)};
    sim_status st = pickle_parse(d->path, data, len, &po, &pk, &root, d->err);
    if (st == SIM_OK) {
        imp_release_input(d); /* the DOM holds copies: the file is not needed beside the events */
        st = import_snapshot(root, opt, d);
    }
    pickle_free(pk);
    return st;
}

/* "version"/"time_unit" name the native format too, so that a native trace missing
 * "format" gets the native reader's precise message rather than "not a format gpusim
 * reads". */
static const char *const NATIVE_KEYS[] = {"format", "events", "version", "time_unit", NULL};
static const char *const SNAPSHOT_KEYS[] = {"segments", "device_traces", "allocator_settings", "total_size",
                                            "blocks", NULL};
static const char *const KINETO_KEYS[] = {"traceEvents", "ph", NULL};
static const char *const TFPROF_KEYS[] = {"memoryProfilePerAllocator", "memoryIds", "numHosts", NULL};
static const char *const NO_KEYS[] = {NULL};

static const input_format FORMATS[] = {
    {
        .name = "gpusim",
        .summary = "a gpusim trace",
        .sniff_keys = NATIVE_KEYS,
    },
    {
        .name = "torch-snapshot",
        .summary = "a PyTorch memory snapshot as JSON or pickle",
        .sniff_keys = SNAPSHOT_KEYS,
        .magic = "\x80", /* a pickle: protocol 2+ starts with PROTO */
        .magic_len = 1,
        .import = import_snapshot,
        .import_magic = import_snapshot_pickle,
        .recorded = "a PyTorch snapshot with segments",
        .against_strategy = "torch",
        .one_rank = true,
    },
    {
        .name = "kineto",
        .summary = "a PyTorch profiler/Kineto trace",
        .sniff_keys = KINETO_KEYS,
        .import = import_kineto,
        .recorded = "a profiler trace with \"Total Allocated\"",
        .against_strategy = "torch",
    },
    {
        .name = "tf-profile",
        .summary = "a TensorFlow memory profile",
        .sniff_keys = TFPROF_KEYS,
        .import = import_tfprof,
        .recorded = "a TensorFlow memory profile",
        .against_strategy = "greedy",
    },
    {
        .name = "xla",
        .summary = "an XLA buffer assignment (HloProto dump)",
        .sniff_keys = NO_KEYS,
        .magic_test = import_xla_sniff,
        .import_magic = import_xla,
        .recorded = "an XLA buffer assignment",
        .against_strategy = "planned",
    },
    {
        .name = "jax-memory",
        .summary = "a JAX device memory profile (pprof)",
        .sniff_keys = NO_KEYS,
        .magic_test = import_jaxprof_sniff,
        .import_magic = import_jaxprof,
    },
};

#define N_FORMATS (sizeof FORMATS / sizeof FORMATS[0])

size_t input_format_count(void)
{
    return N_FORMATS;
}

const input_format *input_format_get(size_t i)
{
    return i < N_FORMATS ? &FORMATS[i] : NULL;
}

const char *input_format_name(const input_format *f)
{
    return f != NULL ? f->name : "auto";
}

bool input_format_parse(const char *name, const input_format **out)
{
    *out = NULL;
    if (name == NULL || strcmp(name, "auto") == 0)
        return true;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcmp(name, FORMATS[i].name) == 0) {
            *out = &FORMATS[i];
            return true;
        }
    return false;
}

bool input_format_is_native(const input_format *f)
{
    return f != NULL && f->import == NULL && f->import_magic == NULL;
}

const input_format *input_format_native(void)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (input_format_is_native(&FORMATS[i]))
            return &FORMATS[i];
    return NULL;
}

static const char *text_of(const input_format *f, input_format_text what)
{
    switch (what) {
    case INPUT_FORMAT_NAMES: return f->name;
    case INPUT_FORMAT_SUMMARIES: return f->summary;
    case INPUT_FORMAT_RECORDED: return f->recorded;
    }
    return NULL;
}

char *input_format_join(input_format_text what, const char *sep, const char *last, char *buf, size_t cap)
{
    const char *item[N_FORMATS + 1];
    size_t n = 0;
    if (what == INPUT_FORMAT_NAMES)
        item[n++] = "auto";
    for (size_t i = 0; i < N_FORMATS; i++)
        if (text_of(&FORMATS[i], what) != NULL)
            item[n++] = text_of(&FORMATS[i], what);
    size_t at = 0;
    if (cap > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < n && at < cap; i++) {
        int k = snprintf(buf + at, cap - at, "%s%s", i == 0 ? "" : i + 1 == n ? last : sep, item[i]);
        if (k < 0)
            break;
        at += (size_t)k;
    }
    return buf;
}
