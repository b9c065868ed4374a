/* JAX device memory profile (pprof Profile, protobuf wire format) → allocations at the start. */
#include "import_jaxprof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buf.h"
#include "sim/grow.h"
#include "traces/protowire.h"

#define JP_MAX_BUFFERS ((uint64_t)1 << 22) /* buffers imported from one profile, at most */
#define JP_MAX_FRAMES 4                    /* frames of a tag */

/* perftools.profiles.Profile field numbers */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_LOCATION = 4, P_FUNCTION = 5, P_STRING = 6 };

typedef struct jp_str {
    const unsigned char *p;
    size_t n;
} jp_str;

typedef struct jp_func {
    uint64_t id, name, file; /* name and file: string indices */
} jp_func;

typedef struct jp_line {
    uint64_t func, line;
} jp_line;

typedef struct jp_loc {
    uint64_t id;
    size_t first, n; /* its lines: lines[first .. first + n) */
} jp_loc;

typedef struct jp_dev {
    int64_t dev;
    uint64_t buffers, bytes;
} jp_dev;

typedef struct jaxprof {
    imp_doc *d;
    pb_errors pe; /* where protowire_fail reports */
    jp_str *str;
    size_t n_str, cap_str;
    uint64_t type[2][16]; /* the first 16 sample types: type and unit string indices */
    size_t n_types;
    pb_msg *smp; /* the samples, unparsed */
    size_t n_smp, cap_smp;
    jp_func *fn;
    size_t n_fn, cap_fn;
    jp_loc *loc;
    size_t n_loc, cap_loc;
    jp_line *line;
    size_t n_line, cap_line;
    jp_dev *dev;
    size_t n_dev, cap_dev;
    size_t i_bytes, i_count; /* value indices of space/bytes and allocations/count (SIZE_MAX: none) */
    uint64_t executables, executable_bytes, unlabelled;
} jaxprof;

/* One sample as read: its two values, its kind and device labels. */
typedef struct jp_sample {
    uint64_t count, bytes;
    uint64_t kind;  /* string index of the "kind" label, 0 = none */
    int64_t device; /* the number of the "device" label; -1 none */
    uint64_t device_str;
    size_t where;
} jp_sample;

static sim_status nomem(const jaxprof *x)
{
    return sim_error_set(x->d->err, SIM_ENOMEM, x->d->path, 0, 0, "out of memory");
}

/* A string index: below the string table's size (read whole before any use). */
static sim_status want_str(const jaxprof *x, const pb_field *f, const char *what, uint64_t *out)
{
    sim_status st = protowire_want_wire(&x->pe, f, PB_VARINT, what);
    if (st == SIM_OK && f->v >= x->n_str)
        st = protowire_fail(&x->pe, f->where, "%s: string index %" PRIu64 " beyond the string table (%zu strings)",
                            what, f->v, x->n_str);
    if (st == SIM_OK)
        *out = f->v;
    return st;
}

static bool str_is(const jaxprof *x, uint64_t i, const char *s)
{
    size_t n = strlen(s);
    return i < x->n_str && x->str[i].n == n && memcmp(x->str[i].p, s, n) == 0;
}

/* ---------------------------------------------------------------- the Profile */

/* First pass: the string table and the samples' places (indices are checked after). */
static sim_status read_top(jaxprof *x, const unsigned char *data, size_t len)
{
    pb_msg m = {.p = data, .n = len};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num != P_STRING && f.num != P_SAMPLE)
            continue;
        if ((st = protowire_want_wire(&x->pe, &f, PB_LEN, "Profile")) != SIM_OK)
            break;
        if (f.num == P_STRING && SIM_GROW(x->str, x->n_str + 1, x->cap_str))
            x->str[x->n_str++] = (jp_str){f.sub.p, f.sub.n};
        else if (f.num == P_SAMPLE && SIM_GROW(x->smp, x->n_smp + 1, x->cap_smp))
            x->smp[x->n_smp++] = f.sub;
        else
            st = nomem(x);
    }
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "the Profile (a truncated file?)");
    if (st == SIM_OK && (x->n_str == 0 || x->str[0].n != 0))
        st = protowire_fail(&x->pe, len, "the string table %s (a pprof's first string is \"\")",
                            x->n_str ? "does not start with \"\"" : "is empty");
    return st;
}

static sim_status read_value_type(jaxprof *x, pb_msg m)
{
    pb_field f;
    pb_step s;
    uint64_t t = 0, u = 0;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1)
            st = want_str(x, &f, "sample type", &t);
        else if (f.num == 2)
            st = want_str(x, &f, "sample unit", &u);
    }
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "a sample type");
    if (st == SIM_OK && x->n_types < 16) {
        x->type[0][x->n_types] = t;
        x->type[1][x->n_types] = u;
    }
    x->n_types++;
    return st;
}

static sim_status read_function(jaxprof *x, pb_msg m)
{
    jp_func fn = {0};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1)
            st = protowire_want_wire(&x->pe, &f, PB_VARINT, "function id");
        if (f.num == 1)
            fn.id = f.v;
        else if (f.num == 2)
            st = want_str(x, &f, "function name", &fn.name);
        else if (f.num == 4)
            st = want_str(x, &f, "function file", &fn.file);
    }
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "a function");
    if (st == SIM_OK && !SIM_GROW(x->fn, x->n_fn + 1, x->cap_fn))
        st = nomem(x);
    if (st == SIM_OK)
        x->fn[x->n_fn++] = fn;
    return st;
}

static sim_status read_line(jaxprof *x, pb_msg m)
{
    jp_line l = {0};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD)
        if ((f.num == 1 || f.num == 2) && (st = protowire_want_wire(&x->pe, &f, PB_VARINT, "line")) == SIM_OK)
            *(f.num == 1 ? &l.func : &l.line) = f.v;
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "a line");
    if (st == SIM_OK && !SIM_GROW(x->line, x->n_line + 1, x->cap_line))
        st = nomem(x);
    if (st == SIM_OK)
        x->line[x->n_line++] = l;
    return st;
}

static sim_status read_location(jaxprof *x, pb_msg m)
{
    jp_loc l = {.first = x->n_line};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1 && (st = protowire_want_wire(&x->pe, &f, PB_VARINT, "location id")) == SIM_OK)
            l.id = f.v;
        else if (f.num == 4 && (st = protowire_want_wire(&x->pe, &f, PB_LEN, "location line")) == SIM_OK)
            st = read_line(x, f.sub);
    }
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "a location");
    l.n = x->n_line - l.first;
    if (st == SIM_OK && !SIM_GROW(x->loc, x->n_loc + 1, x->cap_loc))
        st = nomem(x);
    if (st == SIM_OK)
        x->loc[x->n_loc++] = l;
    return st;
}

/* Second pass: sample types, functions and locations, now that strings are known. */
static sim_status read_tables(jaxprof *x, const unsigned char *data, size_t len)
{
    pb_msg m = {.p = data, .n = len};
    pb_field f;
    sim_status st = SIM_OK;
    while (st == SIM_OK && protowire_next(&m, &f) == PB_FIELD) {
        if (f.num != P_SAMPLE_TYPE && f.num != P_FUNCTION && f.num != P_LOCATION)
            continue;
        if ((st = protowire_want_wire(&x->pe, &f, PB_LEN, "Profile")) != SIM_OK)
            break;
        if (f.num == P_SAMPLE_TYPE)
            st = read_value_type(x, f.sub);
        else if (f.num == P_FUNCTION)
            st = read_function(x, f.sub);
        else if (f.num == P_LOCATION)
            st = read_location(x, f.sub);
    }
    return st;
}

/* space/bytes (required) and allocations/count among the sample types. */
static sim_status find_types(jaxprof *x, size_t len)
{
    x->i_bytes = x->i_count = SIZE_MAX;
    for (size_t i = 0; i < x->n_types && i < 16; i++) {
        if (x->i_bytes == SIZE_MAX && str_is(x, x->type[0][i], "space") && str_is(x, x->type[1][i], "bytes"))
            x->i_bytes = i;
        if (x->i_count == SIZE_MAX && str_is(x, x->type[0][i], "allocations") && str_is(x, x->type[1][i], "count"))
            x->i_count = i;
    }
    if (x->i_bytes != SIZE_MAX)
        return SIM_OK;
    return protowire_fail(&x->pe, len,
                          "no sample type space/bytes among its %zu sample types: a pprof, but not a device memory "
                          "profile (jax.profiler.save_device_memory_profile writes allocations/count and space/bytes)",
                          x->n_types);
}

/* ---------------------------------------------------------------- samples */

static int func_cmp(const void *a, const void *b)
{
    const jp_func *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int loc_cmp(const void *a, const void *b)
{
    const jp_loc *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The number at the end of a device label ("cpu:3", "cuda:0", "TPU_1"), or -1. */
static int64_t device_number(const jp_str *s)
{
    size_t i = s->n;
    while (i > 0 && s->p[i - 1] >= '0' && s->p[i - 1] <= '9' && s->n - i < 9)
        i--;
    if (i == s->n)
        return -1;
    int64_t v = 0;
    for (; i < s->n; i++)
        v = v * 10 + (s->p[i] - '0');
    return v;
}

static sim_status read_label(const jaxprof *x, pb_msg m, jp_sample *out)
{
    uint64_t key = 0, str = 0;
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1)
            st = want_str(x, &f, "label key", &key);
        else if (f.num == 2)
            st = want_str(x, &f, "label value", &str);
    }
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "a label");
    if (st == SIM_OK && str_is(x, key, "kind"))
        out->kind = str;
    if (st == SIM_OK && str_is(x, key, "device")) {
        out->device_str = str;
        out->device = device_number(&x->str[str]);
    }
    return st;
}

/* A value of the sample's repeated int64 value field: one varint, or packed. */
static sim_status read_values(const jaxprof *x, const pb_field *f, size_t *k, jp_sample *out)
{
    pb_msg m = f->wire == PB_LEN ? f->sub : (pb_msg){0};
    uint64_t v = f->v;
    do {
        if (f->wire == PB_LEN && !protowire_varint(&m, &v))
            return protowire_bad_field(&x->pe, f, "a sample's values");
        if (*k == x->i_bytes)
            out->bytes = v;
        if (*k == x->i_count)
            out->count = v;
        (*k)++;
    } while (f->wire == PB_LEN && m.at < m.n);
    return SIM_OK;
}

static sim_status read_sample(const jaxprof *x, pb_msg m, jp_sample *out)
{
    *out = (jp_sample){.count = 1, .device = -1, .where = m.base};
    size_t k = 0;
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 2 && f.wire != PB_VARINT && f.wire != PB_LEN)
            st = protowire_want_wire(&x->pe, &f, PB_LEN, "sample value");
        else if (f.num == 2 && (f.wire == PB_VARINT || f.sub.n > 0))
            st = read_values(x, &f, &k, out);
        else if (f.num == 3 && (st = protowire_want_wire(&x->pe, &f, PB_LEN, "sample label")) == SIM_OK)
            st = read_label(x, f.sub, out);
    }
    if (st == SIM_OK && s == PB_BAD)
        return protowire_bad_field(&x->pe, &f, "a sample");
    if (st != SIM_OK)
        return st;
    if (k != x->n_types)
        return protowire_fail(&x->pe, out->where, "a sample with %zu values where the profile has %zu sample types", k,
                              x->n_types);
    if (out->bytes > SIM_MAX_SIZE)
        return protowire_fail(&x->pe, out->where, "a sample of %" PRIu64 " bytes, negative or above 2^53", out->bytes);
    if (out->count == 0 || out->count > JP_MAX_BUFFERS || out->bytes % out->count != 0)
        return protowire_fail(&x->pe, out->where,
                              "a sample of %" PRIu64 " buffers and %" PRIu64 " bytes: not a whole number of "
                              "bytes per buffer (or more than %" PRIu64 " buffers)",
                              out->count, out->bytes, JP_MAX_BUFFERS);
    return SIM_OK;
}

static bool is_buffer(const jaxprof *x, const jp_sample *s)
{
    return str_is(x, s->kind, "buffer") || s->kind == 0;
}

static jp_dev *device_entry(jaxprof *x, int64_t dev)
{
    for (size_t i = 0; i < x->n_dev; i++)
        if (x->dev[i].dev == dev)
            return &x->dev[i];
    if (!SIM_GROW(x->dev, x->n_dev + 1, x->cap_dev))
        return NULL;
    x->dev[x->n_dev] = (jp_dev){.dev = dev};
    return &x->dev[x->n_dev++];
}

/* Every sample read once: the devices with their buffers, the executables. */
static sim_status count_devices(jaxprof *x)
{
    uint64_t total = 0;
    for (size_t i = 0; i < x->n_smp; i++) {
        jp_sample s;
        sim_status st = read_sample(x, x->smp[i], &s);
        if (st != SIM_OK)
            return st;
        if (!is_buffer(x, &s)) {
            x->executables += s.count;
            x->executable_bytes += s.bytes;
            continue;
        }
        if (s.device < 0)
            x->unlabelled += s.count;
        jp_dev *e = device_entry(x, s.device < 0 ? 0 : s.device);
        if (e == NULL)
            return nomem(x);
        e->buffers += s.count;
        e->bytes += s.bytes;
        if ((total += s.count) > JP_MAX_BUFFERS)
            return protowire_fail(&x->pe, s.where, "more than %" PRIu64 " live buffers", JP_MAX_BUFFERS);
    }
    return SIM_OK;
}

static int dev_cmp(const void *a, const void *b)
{
    const jp_dev *x = a, *y = b;
    return x->dev < y->dev ? -1 : x->dev > y->dev;
}

/* --device=N, else the device with most live bytes (the lowest number on a tie). */
static sim_status choose_device(jaxprof *x, const input_options *opt, int64_t *out)
{
    char list[512] = "";
    const jp_dev *best = NULL;
    if (x->n_dev)
        qsort(x->dev, x->n_dev, sizeof *x->dev, dev_cmp);
    for (size_t i = 0; i < x->n_dev; i++) {
        const jp_dev *e = &x->dev[i];
        if (best == NULL || e->bytes > best->bytes || (e->bytes == best->bytes && e->dev < best->dev))
            best = e;
        char one[80];
        snprintf(one, sizeof one, "%s%" PRId64 " (%" PRIu64 " buffers, %" PRIu64 " B)", i ? ", " : "", e->dev,
                 e->buffers, e->bytes);
        strncat(list, one, sizeof list - strlen(list) - 1);
    }
    *out = best != NULL ? best->dev : 0;
    if (opt != NULL && opt->device >= 0) {
        for (size_t i = 0; i < x->n_dev; i++)
            if (x->dev[i].dev == opt->device) {
                *out = opt->device;
                return SIM_OK;
            }
        return sim_error_set(x->d->err, SIM_EUSAGE, x->d->path, 0, 0,
                             "--device=%" PRId64 ": no live buffer on that device (the profile has: %s)", opt->device,
                             x->n_dev ? list : "none");
    }
    if (x->n_dev > 1)
        imp_warn(x->d, "the profile holds buffers on %zu devices: %s; device %" PRId64 " imported (--device=N picks "
                       "another)", x->n_dev, list, *out);
    return SIM_OK;
}

/* ---------------------------------------------------------------- tags */

/* Whether a frame's file is JAX's or another installed package's, not the program's. */
static bool library_file(const jp_str *s)
{
    static const char *const LIB[] = {"-packages/", "/jax/_src/", "/jaxlib/", "/jax/experimental/"};
    for (size_t i = 0; i < sizeof LIB / sizeof LIB[0]; i++) {
        size_t n = strlen(LIB[i]);
        for (size_t k = 0; k + n <= s->n; k++)
            if (memcmp(s->p + k, LIB[i], n) == 0)
                return true;
    }
    return false;
}

static void tag_frame(const jaxprof *x, sim_buf *b, const jp_line *l, unsigned *frames)
{
    jp_func key = {.id = l->func};
    const jp_func *fn = x->n_fn ? bsearch(&key, x->fn, x->n_fn, sizeof key, func_cmp) : NULL;
    if (fn == NULL || library_file(&x->str[fn->file]) || *frames >= JP_MAX_FRAMES)
        return;
    const jp_str *name = &x->str[fn->name];
    int n = name->n < 80 ? (int)name->n : 80;
    sim_buf_printf(b, "%s%.*s:%" PRIu64, *frames ? " < " : " ", n, (const char *)name->p, l->line);
    (*frames)++;
}

/* "buffer cpu:0 mlp_adam:14 < <module>:71": the kind, the device label and the
 * program's innermost frames (those outside JAX and the installed packages). */
static uint64_t sample_tag(jaxprof *x, pb_msg m, const jp_sample *s)
{
    sim_buf b;
    sim_buf_init(&b);
    const jp_str *dev = &x->str[s->device_str];
    sim_buf_printf(&b, "buffer%s%.*s", dev->n ? " " : "", dev->n < 40 ? (int)dev->n : 40, (const char *)dev->p);
    unsigned frames = 0;
    pb_field f;
    while (protowire_next(&m, &f) == PB_FIELD) {
        if (f.num != 1 || (f.wire != PB_VARINT && f.wire != PB_LEN))
            continue;
        pb_msg ids = f.wire == PB_LEN ? f.sub : (pb_msg){0};
        uint64_t id = f.v;
        while (f.wire == PB_VARINT || (ids.at < ids.n && protowire_varint(&ids, &id))) {
            jp_loc key = {.id = id};
            const jp_loc *l = x->n_loc ? bsearch(&key, x->loc, x->n_loc, sizeof key, loc_cmp) : NULL;
            for (size_t i = 0; l != NULL && i < l->n; i++)
                tag_frame(x, &b, &x->line[l->first + i], &frames);
            if (f.wire == PB_VARINT)
                break;
        }
    }
    uint64_t str = b.oom ? 0 : imp_str(x->d, b.data);
    sim_buf_release(&b);
    return str;
}

/* ---------------------------------------------------------------- import */

/* Every buffer of device dev, an allocation at the start, in the profile's order. */
static sim_status push_buffers(jaxprof *x, int64_t dev)
{
    for (size_t i = 0; i < x->n_smp; i++) {
        jp_sample s;
        sim_status st = read_sample(x, x->smp[i], &s);
        if (st != SIM_OK)
            return st;
        if (!is_buffer(x, &s) || (s.device < 0 ? 0 : s.device) != dev)
            continue;
        uint64_t tag = sample_tag(x, x->smp[i], &s);
        if (tag == 0)
            return nomem(x);
        for (uint64_t k = 0; k < s.count; k++) {
            imp_event *p = imp_push_pre(x->d, s.bytes / s.count);
            if (p == NULL)
                return nomem(x);
            p->str = tag;
        }
    }
    return SIM_OK;
}

static sim_status finish(jaxprof *x, int64_t dev)
{
    imp_doc *d = x->d;
    uint64_t bytes = 0;
    for (size_t i = 0; i < d->n_pre; i++)
        bytes += d->pre[i].size;
    imp_warn(d, "a JAX device memory profile is one moment: its %zu live buffers (%" PRIu64 " B) on device %" PRId64
                " are allocations at the start, and nothing follows them", d->n_pre, bytes, dev);
    if (x->executables)
        imp_warn(d, "%" PRIu64 " executables (%" PRIu64 " B of generated code, loaded outside the allocator) are not "
                    "imported", x->executables, x->executable_bytes);
    if (x->unlabelled)
        imp_warn(d, "%" PRIu64 " buffers have no \"device\" label; they are counted on device 0", x->unlabelled);
    sim_buf extra;
    sim_buf_init(&extra);
    sim_buf_printf(&extra, ",\"jax_memory\":{\"device\":%" PRId64 ",\"devices\":%zu,\"buffers\":%zu,\"bytes\":%" PRIu64
                   ",\"executables\":%" PRIu64 ",\"executable_bytes\":%" PRIu64 "}", dev, x->n_dev, d->n_pre, bytes,
                   x->executables, x->executable_bytes);
    sim_status st = extra.oom ? nomem(x) : imp_doc_finish(d, extra.data, d->err);
    sim_buf_release(&extra);
    return st;
}

sim_status import_jaxprof(const unsigned char *data, size_t len, const input_options *opt, imp_doc *d)
{
    jaxprof x = {.d = d, .pe = {d->err, d->path, "JAX memory profile (pprof)", "a pprof profile"}};
    int64_t dev = 0;
    sim_status st = SIM_OK;
    if (len > 0 && (data[0] == '{' || data[0] == '['))
        st = sim_error_set(d->err, SIM_ETRACE, d->path, 0, 0, "not a JAX memory profile: --from=jax-memory reads the "
                           "gzipped pprof that jax.profiler.save_device_memory_profile writes, not JSON");
    if (st == SIM_OK)
        st = read_top(&x, data, len);
    if (st == SIM_OK)
        st = read_tables(&x, data, len);
    if (st == SIM_OK)
        st = find_types(&x, len);
    if (st == SIM_OK) {
        if (x.n_fn)
            qsort(x.fn, x.n_fn, sizeof *x.fn, func_cmp);
        if (x.n_loc)
            qsort(x.loc, x.n_loc, sizeof *x.loc, loc_cmp);
        st = count_devices(&x);
    }
    if (st == SIM_OK)
        st = choose_device(&x, opt, &dev);
    if (st == SIM_OK)
        st = push_buffers(&x, dev);
    if (st == SIM_OK)
        st = finish(&x, dev);
    free(x.str);
    free(x.smp);
    free(x.fn);
    free(x.loc);
    free(x.line);
    free(x.dev);
    return st;
}

/* ---------------------------------------------------------------- sniffing */

/* A Profile starts with its sample types (field 1): ValueType messages of varint
 * fields type (1) and unit (2) only, at most 40 bytes; the next field is another
 * sample type or a sample (2). An HloProto's first field 1 starts with a string. */
bool import_jaxprof_sniff(const unsigned char *data, size_t len)
{
    pb_msg m = {.p = data, .n = len};
    pb_field f;
    if (len < 4 || data[0] != 0x0A || protowire_next(&m, &f) != PB_FIELD || f.sub.n < 2 || f.sub.n > 40)
        return false;
    pb_msg vt = f.sub;
    pb_field g;
    pb_step s;
    while ((s = protowire_next(&vt, &g)) == PB_FIELD)
        if (g.wire != PB_VARINT || (g.num != 1 && g.num != 2))
            return false;
    return s == PB_END && m.at < len && (data[m.at] == 0x0A || data[m.at] == 0x12);
}
