/* XLA buffer assignment (HloProto, protobuf wire format) → native events. */
#include "import_xla.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buf.h"
#include "sim/grow.h"
#include "traces/protowire.h"

/* ---------------------------------------------------------------- the dump */

typedef enum xla_kind { XLA_TEMP, XLA_PARAM, XLA_OUTPUT, XLA_CONSTANT, XLA_THREAD_LOCAL } xla_kind;

static const char *const KIND_NAMES[] = {"temp", "parameter", "output", "constant", "thread-local"};

typedef struct xla_lbuf {
    uint64_t id, size;
} xla_lbuf;

typedef struct xla_asg {
    uint64_t buf, offset, size;
    uint32_t alloc; /* its allocation, as an index of xla_dump.al */
} xla_asg;

typedef struct xla_alloc {
    uint64_t index, size;
    xla_kind kind;
} xla_alloc;

typedef struct xla_dump {
    imp_doc *d;
    pb_errors pe; /* where protowire_fail reports */
    xla_lbuf *lb;
    size_t n_lb, cap_lb;
    xla_asg *as;
    size_t n_as, cap_as;
    xla_alloc *al;
    size_t n_al, cap_al;
    pb_msg *tr; /* the heap simulator traces, unparsed */
    size_t n_tr, cap_tr;
    char module[256];
} xla_dump;

static sim_status nomem(const xla_dump *x)
{
    return sim_error_set(x->d->err, SIM_ENOMEM, x->d->path, 0, 0, "out of memory");
}

/* An int64 field that must be a size or offset: 0 ≤ v ≤ 2^53. */
static sim_status want_size(const xla_dump *x, const pb_field *f, const char *what, uint64_t *out)
{
    sim_status st = protowire_want_wire(&x->pe, f, PB_VARINT, what);
    if (st != SIM_OK)
        return st;
    if (f->v > SIM_MAX_SIZE)
        return protowire_fail(&x->pe, f->where, "%s %" PRIu64 " is negative or above 2^53", what, f->v);
    *out = f->v;
    return SIM_OK;
}

static sim_status read_lbuf(xla_dump *x, pb_msg m)
{
    xla_lbuf b = {0};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1)
            st = want_size(x, &f, "logical buffer id", &b.id);
        else if (f.num == 2)
            st = want_size(x, &f, "logical buffer size", &b.size);
    }
    if (st != SIM_OK)
        return st;
    if (s == PB_BAD)
        return protowire_bad_field(&x->pe, &f, "a logical buffer");
    if (!SIM_GROW(x->lb, x->n_lb + 1, x->cap_lb))
        return nomem(x);
    x->lb[x->n_lb++] = b;
    return SIM_OK;
}

static sim_status read_assigned(xla_dump *x, pb_msg m)
{
    xla_asg a = {.alloc = (uint32_t)x->n_al};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1)
            st = want_size(x, &f, "assigned buffer id", &a.buf);
        else if (f.num == 2)
            st = want_size(x, &f, "assigned offset", &a.offset);
        else if (f.num == 3)
            st = want_size(x, &f, "assigned size", &a.size);
    }
    if (st != SIM_OK)
        return st;
    if (s == PB_BAD)
        return protowire_bad_field(&x->pe, &f, "an assigned buffer");
    if (!SIM_GROW(x->as, x->n_as + 1, x->cap_as))
        return nomem(x);
    x->as[x->n_as++] = a;
    return SIM_OK;
}

/* The kind of an allocation from its flags, the most specific first. */
static xla_kind kind_of(const bool flag[13])
{
    if (flag[5])
        return XLA_PARAM;
    if (flag[12])
        return XLA_CONSTANT;
    if (flag[3])
        return XLA_THREAD_LOCAL;
    if (flag[7])
        return XLA_OUTPUT;
    return XLA_TEMP;
}

static sim_status read_alloc(xla_dump *x, pb_msg m)
{
    xla_alloc a = {0};
    bool flag[13] = {false};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    if (x->n_al >= UINT32_MAX)
        return protowire_fail(&x->pe, m.base, "more than 2^32 allocations");
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1)
            st = want_size(x, &f, "allocation index", &a.index);
        else if (f.num == 2)
            st = want_size(x, &f, "allocation size", &a.size);
        else if (f.num == 3 || f.num == 5 || f.num == 7 || f.num == 12) {
            if ((st = protowire_want_wire(&x->pe, &f, PB_VARINT, "allocation flag")) == SIM_OK)
                flag[f.num] = f.v != 0;
        } else if (f.num == 9 && (st = protowire_want_wire(&x->pe, &f, PB_LEN, "allocation")) == SIM_OK)
            st = read_assigned(x, f.sub);
    }
    if (st != SIM_OK)
        return st;
    if (s == PB_BAD)
        return protowire_bad_field(&x->pe, &f, "a buffer allocation");
    a.kind = kind_of(flag);
    if (!SIM_GROW(x->al, x->n_al + 1, x->cap_al))
        return nomem(x);
    x->al[x->n_al++] = a;
    return SIM_OK;
}

static sim_status read_assignment(xla_dump *x, pb_msg m)
{
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num != 1 && f.num != 3 && f.num != 4)
            continue;
        if ((st = protowire_want_wire(&x->pe, &f, PB_LEN, "buffer assignment")) != SIM_OK)
            break;
        if (f.num == 1)
            st = read_lbuf(x, f.sub);
        else if (f.num == 3)
            st = read_alloc(x, f.sub);
        else if (SIM_GROW(x->tr, x->n_tr + 1, x->cap_tr))
            x->tr[x->n_tr++] = f.sub;
        else
            st = nomem(x);
    }
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "the buffer assignment");
    return st;
}

/* The module's name (HloModuleProto.name), for the trace's name. */
static void read_module_name(xla_dump *x, pb_msg m)
{
    pb_field f;
    while (protowire_next(&m, &f) == PB_FIELD)
        if (f.num == 1 && f.wire == PB_LEN) {
            int n = f.sub.n < sizeof x->module ? (int)f.sub.n : (int)sizeof x->module - 1;
            snprintf(x->module, sizeof x->module, "%.*s", n, (const char *)f.sub.p);
            return;
        }
}

static sim_status read_top(xla_dump *x, const unsigned char *data, size_t len)
{
    pb_msg m = {.p = data, .n = len};
    pb_field f;
    pb_step s;
    bool found = false;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1 && f.wire == PB_LEN)
            read_module_name(x, f.sub);
        if (f.num != 3)
            continue;
        if ((st = protowire_want_wire(&x->pe, &f, PB_LEN, "HloProto")) == SIM_OK)
            st = read_assignment(x, f.sub);
        found = true;
    }
    if (st != SIM_OK)
        return st;
    if (s == PB_BAD)
        return protowire_bad_field(&x->pe, &f, "the HloProto (a truncated file?)");
    if (!found)
        return protowire_fail(&x->pe, len,
                              "no buffer_assignment in this HloProto: dump the module after optimizations "
                              "(module_*.cpu_after_optimizations.hlo.pb or gpu_after_optimizations)");
    if (x->n_tr == 0)
        return protowire_fail(&x->pe, len,
                              "the buffer assignment holds no heap simulator trace (XLA records one per heap it "
                              "simulated; this module has none)");
    return SIM_OK;
}

/* ---------------------------------------------------------------- lookups */

static int lbuf_cmp(const void *a, const void *b)
{
    const xla_lbuf *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int asg_cmp(const void *a, const void *b)
{
    const xla_asg *x = a, *y = b;
    return x->buf < y->buf ? -1 : x->buf > y->buf;
}

static const xla_lbuf *find_lbuf(const xla_dump *x, uint64_t id)
{
    xla_lbuf key = {.id = id};
    return x->n_lb ? bsearch(&key, x->lb, x->n_lb, sizeof key, lbuf_cmp) : NULL;
}

static const xla_asg *find_asg(const xla_dump *x, uint64_t id)
{
    xla_asg key = {.buf = id};
    return x->n_as ? bsearch(&key, x->as, x->n_as, sizeof key, asg_cmp) : NULL;
}

/* ---------------------------------------------------------------- the heap trace */

enum { XLA_ALLOC = 0, XLA_FREE = 1, XLA_SHARE_WITH = 2 };

typedef struct xla_event {
    uint64_t kind, buf, share;
    const unsigned char *name; /* instruction_name, name_len bytes */
    size_t name_len;
    size_t where;
} xla_event;

typedef struct conv {
    imp_map live;        /* XLA buffer id → a: native id */
    imp_map seen;        /* every buffer allocated so far, freed or not → a: native id, b: size */
    uint32_t heap_alloc; /* the allocation holding the heap's buffers; UINT32_MAX before the first */
    uint64_t heap;       /* max(offset + size) over them */
    uint64_t k;          /* events so far */
    uint64_t shares, elsewhere;
} conv;

static sim_status read_event(const xla_dump *x, pb_msg m, xla_event *e)
{
    *e = (xla_event){.where = m.base};
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num == 1)
            st = protowire_want_wire(&x->pe, &f, PB_VARINT, "event kind");
        else if (f.num == 2)
            st = want_size(x, &f, "event buffer id", &e->buf);
        else if (f.num == 5)
            st = want_size(x, &f, "share_with_canonical_id", &e->share);
        else if (f.num == 4 && (st = protowire_want_wire(&x->pe, &f, PB_LEN, "instruction name")) == SIM_OK) {
            e->name = f.sub.p;
            e->name_len = f.sub.n;
        }
        if (f.num == 1)
            e->kind = f.v;
    }
    if (st != SIM_OK)
        return st;
    if (s == PB_BAD)
        return protowire_bad_field(&x->pe, &f, "a heap simulator event");
    if (e->kind > XLA_SHARE_WITH)
        return protowire_fail(&x->pe, e->where,
                              "heap simulator event of kind %" PRIu64 " (ALLOC 0, FREE 1, SHARE_WITH 2)", e->kind);
    return SIM_OK;
}

/* The instruction, its allocation's kind and the logical buffer's id: "fusion.3 (temp,
 * buffer 82)", "fusion.4 (temp, buffer 84, shares 83)". */
static uint64_t tag_of(xla_dump *x, const xla_event *e, const xla_asg *a)
{
    char tag[360], share[40] = "";
    int n = e->name_len < 256 ? (int)e->name_len : 256;
    const char *kind = a != NULL ? KIND_NAMES[x->al[a->alloc].kind] : "unassigned";
    if (e->kind == XLA_SHARE_WITH)
        snprintf(share, sizeof share, ", shares %" PRIu64, e->share);
    const char *name = e->name != NULL ? (const char *)e->name : "";
    snprintf(tag, sizeof tag, "%.*s (%s, buffer %" PRIu64 "%s)", n, name, kind, e->buf, share);
    return imp_str(x->d, tag);
}

static void place(conv *c, const xla_asg *a, imp_event *ev)
{
    ev->place_seg = UINT32_MAX;
    if (a == NULL) {
        c->elsewhere++;
        return;
    }
    if (c->heap_alloc == UINT32_MAX)
        c->heap_alloc = a->alloc;
    if (a->alloc != c->heap_alloc) {
        c->elsewhere++;
        return;
    }
    ev->place_seg = 0;
    ev->place_off = a->offset;
    if (a->offset + a->size > c->heap)
        c->heap = a->offset + a->size;
}

/* ALLOC or SHARE_WITH: an alloc of the buffer's size; a SHARE_WITH is one of the
 * shared buffer's size (HeapSimulator::ShareBuffer sizes it so) that shares its memory
 * (trace v1 "share": the native id the shared buffer got, live or freed by now). */
static sim_status on_alloc(xla_dump *x, conv *c, const xla_event *e)
{
    const imp_map_slot *shared = NULL;
    const xla_lbuf *lb = find_lbuf(x, e->buf);
    if (lb == NULL)
        return protowire_fail(&x->pe, e->where,
                              "heap simulator event %" PRIu64 ": buffer %" PRIu64
                              " is not a logical buffer of this assignment",
                              c->k, e->buf);
    if (e->kind == XLA_SHARE_WITH && (shared = imp_map_find(&c->seen, e->share)) == NULL)
        return protowire_fail(&x->pe, e->where,
                              "heap simulator event %" PRIu64 ": buffer %" PRIu64 " shares buffer %" PRIu64
                              ", which the trace has not allocated before",
                              c->k, e->buf, e->share);
    if (imp_map_find(&c->live, e->buf) != NULL || imp_map_find(&c->seen, e->buf) != NULL)
        return protowire_fail(&x->pe, e->where, "heap simulator event %" PRIu64 ": buffer %" PRIu64 " allocated twice",
                              c->k, e->buf);
    uint64_t size = shared != NULL ? shared->b : lb->size, share = shared != NULL ? shared->a : 0;
    imp_map_slot *s = imp_map_insert(&c->live, e->buf);
    imp_map_slot *h = s != NULL ? imp_map_insert(&c->seen, e->buf) : NULL;
    imp_event *ev = h != NULL ? imp_push(x->d) : NULL;
    if (ev == NULL)
        return nomem(x);
    ev->op = SIM_OP_ALLOC;
    ev->t = ev->ready_t = c->k;
    ev->id = s->a = h->a = imp_new_id(x->d);
    ev->size = h->b = size;
    ev->has_share = shared != NULL;
    ev->share = share;
    const xla_asg *a = find_asg(x, e->buf);
    place(c, a, ev);
    c->shares += e->kind == XLA_SHARE_WITH;
    if ((ev->str = tag_of(x, e, a)) == 0)
        return nomem(x);
    return SIM_OK;
}

static sim_status on_free(xla_dump *x, conv *c, const xla_event *e)
{
    imp_map_slot *s = imp_map_find(&c->live, e->buf);
    if (s == NULL)
        return protowire_fail(&x->pe, e->where,
                              "heap simulator event %" PRIu64 ": FREE of buffer %" PRIu64 ", which is not live", c->k,
                              e->buf);
    imp_event *ev = imp_push(x->d);
    if (ev == NULL)
        return nomem(x);
    ev->op = SIM_OP_FREE;
    ev->t = ev->ready_t = c->k;
    ev->id = s->a;
    imp_map_remove(&c->live, s);
    return SIM_OK;
}

static sim_status convert_trace(xla_dump *x, conv *c, pb_msg m)
{
    pb_field f;
    pb_step s;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (s = protowire_next(&m, &f)) == PB_FIELD) {
        if (f.num != 1)
            continue;
        xla_event e;
        if ((st = protowire_want_wire(&x->pe, &f, PB_LEN, "heap simulator trace")) != SIM_OK ||
            (st = read_event(x, f.sub, &e)) != SIM_OK)
            break;
        st = e.kind == XLA_FREE ? on_free(x, c, &e) : on_alloc(x, c, &e);
        c->k++;
    }
    if (st == SIM_OK && s == PB_BAD)
        st = protowire_bad_field(&x->pe, &f, "a heap simulator trace");
    return st;
}

static uint64_t count_events(pb_msg m)
{
    pb_field f;
    uint64_t n = 0;
    while (protowire_next(&m, &f) == PB_FIELD)
        n += f.num == 1;
    return n;
}

/* --device=N, else the trace with most events. */
static sim_status choose_trace(xla_dump *x, const input_options *opt, size_t *out)
{
    size_t best = 0;
    uint64_t most = 0;
    char list[256] = "";
    for (size_t i = 0; i < x->n_tr; i++) {
        uint64_t n = count_events(x->tr[i]);
        char one[48];
        snprintf(one, sizeof one, "%s%zu (%" PRIu64 " events)", i ? ", " : "", i, n);
        strncat(list, one, sizeof list - strlen(list) - 1);
        if (n > most) {
            most = n;
            best = i;
        }
    }
    if (opt != NULL && opt->device >= 0) {
        if ((uint64_t)opt->device >= x->n_tr)
            return sim_error_set(x->d->err, SIM_EUSAGE, x->d->path, 0, 0,
                                 "--device=%" PRId64 ": no such heap simulator trace (the dump has: %s)", opt->device,
                                 list);
        best = (size_t)opt->device;
    } else if (x->n_tr > 1) {
        imp_warn(x->d, "the buffer assignment holds %zu heap simulator traces: %s; trace %zu imported (--device=N "
                       "picks another)", x->n_tr, list, best);
    }
    *out = best;
    return SIM_OK;
}

static void warn_about(xla_dump *x, const conv *c)
{
    imp_warn(x->d, "XLA:CPU aligns buffers to 64 bytes, XLA:GPU to 256: replay a CPU dump with --strategy=planned "
                   "--planner=xla --alignment=64");
    if (c->elsewhere)
        imp_warn(x->d, "%" PRIu64 " buffers of the trace are not in its heap's allocation: their offsets are not "
                       "compared", c->elsewhere);
    if (c->heap_alloc == UINT32_MAX)
        return;
    const xla_alloc *a = &x->al[c->heap_alloc];
    if (a->size != c->heap)
        imp_warn(x->d, "allocation %" PRIu64 " is %" PRIu64 " bytes, of which the simulated heap is %" PRIu64 ": XLA "
                       "placed %" PRIu64 " more bytes of buffers assigned outside the simulator (colocated sets, "
                       "combined temp allocations) after it", a->index, a->size, c->heap, a->size - c->heap);
}

static sim_status finish(xla_dump *x, const conv *c, size_t trace)
{
    imp_doc *d = x->d;
    d->has_placement = true;
    d->rec.has_peak_reserved = true;
    d->rec.peak_reserved = c->heap;
    d->rec.reserved_source = "XLA's heap simulator (the heap's buffers at their assigned offsets)";
    if (x->module[0])
        snprintf(d->header.name, sizeof d->header.name, "%s", x->module);
    sim_buf extra;
    sim_buf_init(&extra);
    sim_buf_printf(&extra, ",\"xla\":{\"heap_trace\":%zu,\"heap_size\":%" PRIu64 ",\"share_with\":%" PRIu64, trace,
                   c->heap, c->shares);
    if (c->heap_alloc != UINT32_MAX) {
        const xla_alloc *a = &x->al[c->heap_alloc];
        sim_buf_printf(&extra, ",\"allocation\":%" PRIu64 ",\"allocation_kind\":\"%s\",\"allocation_size\":%" PRIu64,
                       a->index, KIND_NAMES[a->kind], a->size);
    }
    sim_buf_puts(&extra, "}");
    sim_status st = extra.oom ? nomem(x) : imp_doc_finish(d, extra.data, d->err);
    sim_buf_release(&extra);
    return st;
}

sim_status import_xla(const unsigned char *data, size_t len, const input_options *opt, imp_doc *d)
{
    xla_dump x = {.d = d, .pe = {d->err, d->path, "XLA dump", "a buffer assignment"}};
    conv c = {.heap_alloc = UINT32_MAX};
    imp_map_init(&c.live);
    imp_map_init(&c.seen);
    size_t trace = 0;
    if (len > 0 && (data[0] == '{' || data[0] == '['))
        return sim_error_set(d->err, SIM_ETRACE, d->path, 0, 0,
                             "not an XLA dump: --from=xla reads the binary HloProto that --xla_dump_hlo_as_proto "
                             "writes (module_*.cpu_after_optimizations.hlo.pb), not JSON");
    sim_status st = read_top(&x, data, len);
    if (st == SIM_OK) {
        if (x.n_lb)
            qsort(x.lb, x.n_lb, sizeof *x.lb, lbuf_cmp);
        if (x.n_as)
            qsort(x.as, x.n_as, sizeof *x.as, asg_cmp);
        st = choose_trace(&x, opt, &trace);
    }
    if (st == SIM_OK)
        st = convert_trace(&x, &c, x.tr[trace]);
    if (st == SIM_OK) {
        warn_about(&x, &c);
        st = finish(&x, &c, trace);
    }
    imp_map_release(&c.live);
    imp_map_release(&c.seen);
    free(x.lb);
    free(x.as);
    free(x.al);
    free(x.tr);
    return st;
}

/* ---------------------------------------------------------------- sniffing */

static bool sniff_varint(const unsigned char *p, size_t n, size_t *at, uint64_t *out)
{
    pb_msg m = {.p = p, .n = n, .at = *at};
    bool ok = protowire_varint(&m, out);
    *at = m.at;
    return ok;
}

/* An HloProto starts with its module (field 1), whose first fields are its name (1)
 * and entry computation's name (2), both printable; or, without a module, with the
 * buffer assignment (field 3), whose first field is a logical buffer (1) whose first
 * is its id (1). The outer length may run past the prefix. */
bool import_xla_sniff(const unsigned char *data, size_t len)
{
    size_t at = 1;
    uint64_t outer, inner;
    if (len < 4 || (data[0] != 0x0A && data[0] != 0x1A) || !sniff_varint(data, len, &at, &outer) || at + 2 > len)
        return false;
    if (data[0] == 0x1A) {
        size_t i = at + 1;
        return data[at] == 0x0A && sniff_varint(data, len, &i, &inner) && inner > 0 && i < len && data[i] == 0x08;
    }
    if (data[at++] != 0x0A || !sniff_varint(data, len, &at, &inner) || inner == 0 || inner > 1024 ||
        inner >= len - at)
        return false;
    for (size_t i = 0; i < inner; i++)
        if (data[at + i] < 0x20 || data[at + i] > 0x7E)
            return false;
    return data[at + inner] == 0x12;
}
