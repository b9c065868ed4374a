/* A restricted unpickler: plain data only, never executes anything. */
#include "import_pickle.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "import_pickle_vm.h"
#include "sim/grow.h"

/* size bytes from the arena, aligned for any type (align) or not (text). */
static void *arena_take(pickle_doc *d, size_t size, bool align)
{
    if (d->chunks != NULL && align)
        d->chunks->used = (d->chunks->used + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (d->chunks == NULL || d->chunks->used > d->chunks->cap || d->chunks->cap - d->chunks->used < size) {
        size_t cap = size > ((size_t)1 << 20) ? size : ((size_t)1 << 20);
        pk_chunk *c = malloc(sizeof *c + cap);
        if (c == NULL)
            return NULL;
        c->next = d->chunks;
        c->used = 0;
        c->cap = cap;
        d->chunks = c;
    }
    void *p = (char *)d->chunks->data + d->chunks->used;
    d->chunks->used += size;
    return p;
}

void *pk_arena(pickle_doc *d, size_t size)
{
    return arena_take(d, size, true);
}

static char *arena_text(pickle_doc *d, size_t size)
{
    return arena_take(d, size, false);
}

/* The decimal text of an integer into buf (≥ 21 bytes); returns its length. Two
 * digits per division: time_us and addresses have 15-16 digits. */
static int u64_text(char *buf, bool neg, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char tmp[24];
    int n = 24;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        tmp[--n] = pairs[d + 1];
        tmp[--n] = pairs[d];
    }
    if (v >= 10) {
        unsigned d = (unsigned)v * 2;
        tmp[--n] = pairs[d + 1];
        tmp[--n] = pairs[d];
    } else {
        tmp[--n] = (char)('0' + v);
    }
    int k = 0;
    if (neg)
        buf[k++] = '-';
    memcpy(buf + k, tmp + n, (size_t)(24 - n));
    k += 24 - n;
    buf[k] = '\0';
    return k;
}

size_t pickle_doc_bytes(const pickle_doc *d)
{
    size_t n = d->owned_bytes + d->cap_owned * sizeof *d->owned;
    for (const pk_chunk *c = d->chunks; c; c = c->next)
        n += sizeof *c + c->cap;
    for (const pk_objs *o = d->objs; o; o = o->next)
        n += sizeof *o;
    for (const pk_boxes *b = d->boxes; b; b = b->next) {
        n += sizeof *b;
        for (size_t i = 0; i < b->n; i++)
            n += (size_t)b->b[i].cap * sizeof *b->b[i].items;
    }
    return n;
}

bool pickle_doc_restarted(const pickle_doc *d)
{
    return d->restarted;
}

size_t pickle_doc_peak_bytes(const pickle_doc *d)
{
    return d->peak_bytes;
}

/* The values and containers the reading made: the DOM points into neither (its text
 * and items are in the arena and the owned arrays). */
static void drop_graph(pickle_doc *d)
{
    for (pk_objs *o = d->objs, *next; o; o = next) {
        next = o->next;
        free(o);
    }
    for (pk_boxes *b = d->boxes, *next; b; b = next) {
        next = b->next;
        for (size_t i = 0; i < b->n; i++)
            free(b->b[i].items);
        free(b);
    }
    d->objs = NULL;
    d->boxes = NULL;
}

void pickle_free(pickle_doc *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->n_owned; i++)
        free(d->owned[i]);
    free(d->owned);
    drop_graph(d);
    for (pk_chunk *c = d->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(d);
}

/* Room for `more` items in container (SETITEMS/APPENDS know how many come): one
 * realloc to at least the size needed instead of several doublings. */
static bool obj_reserve(pk_obj *container, size_t more)
{
    pk_box *o = container->u.box;
    if (more > UINT32_MAX - o->n)
        return false;
    uint32_t need = o->n + (uint32_t)more;
    if (need <= o->cap)
        return true;
    uint32_t c = o->cap > UINT32_MAX / 2 ? UINT32_MAX : o->cap * 2;
    if (c < need)
        c = need;
    pk_obj **it = realloc(o->items, (size_t)c * sizeof *it);
    if (it == NULL)
        return false;
    o->items = it;
    o->cap = c;
    return true;
}

static bool obj_push(pk_obj *container, pk_obj *item)
{
    pk_box *o = container->u.box;
    if (!SIM_GROW(o->items, o->n + 1, o->cap))
        return false;
    o->items[o->n++] = item;
    return true;
}

pk_obj *pk_new_obj(pk_reader *r, pk_kind k)
{
    pickle_doc *d = r->doc;
    if (r->lean && (k == PK_NONE || k == PK_TRUE || k == PK_FALSE) && r->consts[k] != NULL)
        return r->consts[k];
    if (r->lean && r->free_objs != NULL && (k == PK_INT || k == PK_FLOAT)) {
        pk_obj *p = r->free_objs;
        r->free_objs = p->u.next;
        memset(p, 0, sizeof *p);
        p->kind = (uint8_t)k;
        p->at = r->op_at > UINT32_MAX ? UINT32_MAX : (uint32_t)r->op_at;
        return p;
    }
    if (d->objs == NULL || d->objs->n == sizeof d->objs->o / sizeof d->objs->o[0]) {
        pk_objs *o = malloc(sizeof *o);
        if (o == NULL)
            return NULL;
        o->next = d->objs;
        o->n = 0;
        d->objs = o;
    }
    pk_obj *p = &d->objs->o[d->objs->n++];
    memset(p, 0, sizeof *p);
    p->kind = (uint8_t)k;
    p->at = r->op_at > UINT32_MAX ? UINT32_MAX : (uint32_t)r->op_at;
    if (r->lean && (k == PK_NONE || k == PK_TRUE || k == PK_FALSE)) {
        p->flags |= PK_PINNED;
        r->consts[k] = p;
    }
    if (r->lean && is_container(p))
        return pk_lean_container(r, p);
    if (k == PK_LIST || k == PK_TUPLE || k == PK_DICT) {
        if (d->boxes == NULL || d->boxes->n == sizeof d->boxes->b / sizeof d->boxes->b[0]) {
            pk_boxes *b = malloc(sizeof *b);
            if (b == NULL)
                return NULL;
            b->next = d->boxes;
            b->n = 0;
            d->boxes = b;
        }
        p->u.box = &d->boxes->b[d->boxes->n++];
        memset(p->u.box, 0, sizeof *p->u.box);
    }
    return p;
}

static sim_status fail(pk_reader *r, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static const char *opcode_name(unsigned char op)
{
    switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x82: case 0x83: case 0x84: return "EXT";
    case 'B': case 'C': case 0x8e: return "BINBYTES";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 'I': return "INT (protocol 0)";
    case 'L': return "LONG (protocol 0)";
    case 'F': return "FLOAT (protocol 0)";
    case 'S': case 'T': case 'U': case 'V': return "STRING (protocol 0/1)";
    case 'p': case 'g': return "PUT/GET (protocol 0)";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'l': return "LIST";
    case 'd': return "DICT";
    case 0x80: return "PROTO";
    case 0x95: return "FRAME";
    case '}': return "EMPTY_DICT";
    case ']': return "EMPTY_LIST";
    case ')': return "EMPTY_TUPLE";
    case 'N': return "NONE";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case '(': return "MARK";
    case 'u': return "SETITEMS";
    case 'e': return "APPENDS";
    case 't': return "TUPLE";
    case 's': return "SETITEM";
    case 'a': return "APPEND";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 'X': return "BINUNICODE";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 'K': return "BININT1";
    case 'M': return "BININT2";
    case 'J': return "BININT";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 'G': return "BINFLOAT";
    case 0x94: return "MEMOIZE";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 'h': return "BINGET";
    case 'j': return "LONG_BINGET";
    case '.': return "STOP";
    default: return "unknown";
    }
}

/* Every refusal names the byte offset and the opcode found there. */
static sim_status fail(pk_reader *r, size_t at, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at >= r->len)
        return sim_error_set(r->err, SIM_ETRACE, r->path, 0, 0, "pickle byte %zu (the end): %s", at, msg);
    return sim_error_set(r->err, SIM_ETRACE, r->path, 0, 0, "pickle byte %zu (opcode 0x%02x %s): %s", at, r->p[at],
                         opcode_name(r->p[at]), msg);
}

sim_status pk_nomem(pk_reader *r)
{
    return sim_error_set(r->err, SIM_ENOMEM, r->path, 0, 0, "out of memory reading the pickle");
}

static bool need(pk_reader *r, size_t n)
{
    return r->len - r->pos >= n;
}

static uint64_t le(const unsigned char *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = (v << 8) | b[i];
    return v;
}

sim_status pk_push(pk_reader *r, pk_obj *o)
{
    if (o == NULL)
        return pk_nomem(r);
    if (r->sp == r->scap) {
        size_t c = r->scap ? r->scap * 2 : 256;
        if (c > PK_MAX_STACK)
            return fail(r, r->pos, "the pickle stack grows beyond %zu entries", PK_MAX_STACK);
        pk_obj **s = realloc(r->stack, c * sizeof *s);
        if (s == NULL)
            return pk_nomem(r);
        r->stack = s;
        r->scap = c;
    }
    r->stack[r->sp++] = o;
    return SIM_OK;
}

static pk_obj *int_obj(pk_reader *r, bool neg, uint64_t mag)
{
    bool small = !neg && mag < 256;
    if (small && r->small[mag] != NULL)
        return r->small[mag];
    pk_obj *o = pk_new_obj(r, PK_INT);
    char buf[24];
    int n = u64_text(buf, neg, mag);
    char *t = o ? arena_text(r->doc, (size_t)n + 1) : NULL;
    if (t == NULL)
        return NULL;
    memcpy(t, buf, (size_t)n + 1);
    o->u.text = t;
    o->len = (uint32_t)n;
    if (small) {
        r->small[mag] = o;
        o->flags |= PK_PINNED;
    }
    return o;
}

/* LONG1/LONG4: little-endian two's complement of n bytes. */
static sim_status read_long(pk_reader *r, size_t at, const unsigned char *b, size_t n)
{
    while (n > 1 && ((b[n - 1] == 0x00 && !(b[n - 2] & 0x80)) || (b[n - 1] == 0xFF && (b[n - 2] & 0x80))))
        n--;
    if (n == 0)
        return pk_push(r, int_obj(r, false, 0));
    if (n == 9 && b[8] == 0x00)
        return pk_push(r, int_obj(r, false, le(b, 8)));
    if (n > 8)
        return fail(r, at, "an integer wider than 64 bits");
    uint64_t v = le(b, n);
    if (b[n - 1] & 0x80) {
        if (n < 8)
            v |= ~(uint64_t)0 << (8 * n); /* sign-extend */
        return pk_push(r, int_obj(r, true, ~v + 1));
    }
    return pk_push(r, int_obj(r, false, v));
}

static sim_status read_str(pk_reader *r, size_t at, size_t n)
{
    if (!need(r, n))
        return fail(r, at, "truncated (a string of %zu bytes runs past the end)", n);
    if (n > UINT32_MAX)
        return fail(r, at, "a string longer than 4 GiB");
    pk_obj **slot = NULL;
    if (r->lean) {
        /* one record per distinct text: a pickler memoizes a string object, but
         * a program makes the same text as many objects ("??" in every frame) */
        if ((slot = pk_lean_str_slot(r, r->p + r->pos, n)) == NULL)
            return pk_nomem(r);
        if (*slot != NULL) {
            r->pos += n;
            return pk_push(r, *slot);
        }
    }
    pk_obj *o = pk_new_obj(r, PK_STR);
    char *t = o ? arena_text(r->doc, n + 1) : NULL;
    if (t == NULL)
        return pk_nomem(r);
    memcpy(t, r->p + r->pos, n);
    t[n] = '\0';
    r->pos += n;
    o->u.text = t;
    o->len = (uint32_t)n;
    if (slot != NULL) {
        o->flags |= PK_PINNED;
        *slot = o;
        r->n_strs++;
    }
    return pk_push(r, o);
}

static sim_status memo_put(pk_reader *r, size_t at, uint64_t key)
{
    if (r->sp == 0)
        return fail(r, at, "memo store with an empty stack");
    /* a pickler numbers memo entries 0, 1, 2, ...: each takes an opcode of the
     * input, so an index beyond the input's length is corrupt (and would make a
     * few bytes allocate gigabytes; found by fuzz_input) */
    if (key >= (1u << 28) || key > r->len)
        return fail(r, at, "memo index %" PRIu64 " is too large", key);
    if (key >= r->memo_cap) {
        size_t c = r->memo_cap ? r->memo_cap : 256;
        while (c <= key)
            c *= 2;
        pk_obj **m = realloc(r->memo, c * sizeof *m);
        if (m == NULL)
            return pk_nomem(r);
        memset(m + r->memo_cap, 0, (c - r->memo_cap) * sizeof *m);
        r->memo = m;
        r->memo_cap = c;
    }
    if (r->memo[key] == NULL)
        r->memo_len++;
    r->memo[key] = r->stack[r->sp - 1];
    r->memo[key]->flags |= PK_PINNED;
    return SIM_OK;
}

static sim_status memo_get(pk_reader *r, size_t at, uint64_t key)
{
    if (key >= r->memo_cap || r->memo[key] == NULL)
        return fail(r, at, "memo index %" PRIu64 " was never stored", key);
    return pk_push(r, r->memo[key]);
}

/* Pop back to the last MARK; the items are r->stack[*base .. r->sp). */
static sim_status pop_mark(pk_reader *r, size_t at, size_t *base)
{
    if (r->mp == 0)
        return fail(r, at, "no MARK to pop to");
    *base = r->marks[--r->mp];
    if (*base > r->sp)
        return fail(r, at, "corrupt MARK");
    return SIM_OK;
}

/* The width in bytes of the little-endian argument that follows op in the stream
 * (read before op's case runs); 0 for an opcode without one, or one whose case reads
 * its own (BINFLOAT's big-endian double). */
static size_t arg_width(unsigned char op)
{
    switch (op) {
    case 0x80: /* PROTO */
    case 0x8c: /* SHORT_BINUNICODE */
    case 'K':  /* BININT1 */
    case 0x8a: /* LONG1 */
    case 'q':  /* BINPUT */
    case 'h':  /* BINGET */
        return 1;
    case 'M': /* BININT2 */
        return 2;
    case 'X':  /* BINUNICODE */
    case 'J':  /* BININT */
    case 0x8b: /* LONG4 */
    case 'r':  /* LONG_BINPUT */
    case 'j':  /* LONG_BINGET */
        return 4;
    case 0x95: /* FRAME */
    case 0x8d: /* BINUNICODE8 */
        return 8;
    default:
        return 0;
    }
}

#define PK_DROP_STEP ((size_t)64 << 20) /* pickle_options.drop_read hands pages back this many bytes at a time */

/* The whole pages of the mapping before offset upto, handed back. */
static void drop_read(pk_reader *r, size_t upto)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base = (uintptr_t)r->p;
    uintptr_t from = (base + r->dropped + page - 1) / page * page, to = (base + upto) / page * page;
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_DONTNEED); /* only a hint: nothing is lost if it fails */
    r->dropped = upto;
}

static sim_status run(pk_reader *r, pk_obj **result)
{
    for (;;) {
        size_t at = r->pos;
        if (r->drop_read && at - r->dropped >= PK_DROP_STEP)
            drop_read(r, at);
        if (!need(r, 1))
            return fail(r, at, "truncated (the pickle ends without STOP)");
        unsigned char op = r->p[r->pos++];
        r->op_at = at;
        sim_status st = SIM_OK;
        size_t base = 0;
        size_t w = arg_width(op);
        if (!need(r, w))
            return fail(r, at, "truncated");
        uint64_t arg = le(r->p + r->pos, w);
        r->pos += w;
        switch (op) {
        case 0x80: /* PROTO */
            if (arg < 2 || arg > 5)
                return fail(r, at, "pickle protocol %u (gpusim reads protocols 2 to 5)", (unsigned)arg);
            break;
        case 0x95: /* FRAME: a length prefix only (the frame must fit in the data) */
            if (arg > r->len - r->pos)
                return fail(r, at, "truncated (a frame of %" PRIu64 " bytes runs past the end)", arg);
            break;
        case '}': st = pk_push(r, pk_new_obj(r, PK_DICT)); break;
        case ']': st = pk_push(r, pk_new_obj(r, PK_LIST)); break;
        case ')': st = pk_push(r, pk_new_obj(r, PK_TUPLE)); break;
        case 'N': st = pk_push(r, pk_new_obj(r, PK_NONE)); break;
        case 0x88: st = pk_push(r, pk_new_obj(r, PK_TRUE)); break;
        case 0x89: st = pk_push(r, pk_new_obj(r, PK_FALSE)); break;
        case '(': /* MARK */
            if (!SIM_GROW(r->marks, r->mp + 1, r->mcap))
                return pk_nomem(r);
            r->marks[r->mp++] = r->sp;
            break;
        case 'u': /* SETITEMS */
        case 'e': /* APPENDS */
        case 't': /* TUPLE */ {
            if ((st = pop_mark(r, at, &base)) != SIM_OK)
                return st;
            if (r->lean && op == 't') {
                st = pk_lean_tuple(r, r->sp - base);
                break;
            }
            pk_obj *target;
            if (op == 't') {
                target = pk_new_obj(r, PK_TUPLE);
                if (target == NULL)
                    return pk_nomem(r);
            } else {
                if (base == 0)
                    return fail(r, at, "%s without a container below the MARK", op == 'u' ? "SETITEMS" : "APPENDS");
                target = r->stack[base - 1];
                if (target->kind != (op == 'u' ? PK_DICT : PK_LIST))
                    return fail(r, at, "%s on something that is not a %s", op == 'u' ? "SETITEMS" : "APPENDS",
                                op == 'u' ? "dict" : "list");
                if (op == 'u' && (r->sp - base) % 2)
                    return fail(r, at, "SETITEMS with an odd number of items");
            }
            if (r->lean) {
                st = pk_lean_store(r, target, &r->stack[base], r->sp - base);
                r->sp = base;
                break;
            }
            if (!obj_reserve(target, r->sp - base))
                return pk_nomem(r);
            for (size_t i = base; i < r->sp; i++)
                if (!obj_push(target, r->stack[i]))
                    return pk_nomem(r);
            r->sp = base;
            if (op == 't')
                st = pk_push(r, target);
            break;
        }
        case 's': /* SETITEM */
        case 'a': /* APPEND */ {
            size_t k = op == 's' ? 3 : 2;
            if (r->sp < k)
                return fail(r, at, "%s with too few items on the stack", op == 's' ? "SETITEM" : "APPEND");
            pk_obj *target = r->stack[r->sp - k];
            if (target->kind != (op == 's' ? PK_DICT : PK_LIST))
                return fail(r, at, "%s on something that is not a %s", op == 's' ? "SETITEM" : "APPEND",
                            op == 's' ? "dict" : "list");
            if (r->lean) {
                st = pk_lean_store(r, target, &r->stack[r->sp - k + 1], k - 1);
                r->sp -= k - 1;
                break;
            }
            for (size_t i = r->sp - k + 1; i < r->sp; i++)
                if (!obj_push(target, r->stack[i]))
                    return pk_nomem(r);
            r->sp -= k - 1;
            break;
        }
        case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
            size_t k = (size_t)(op - 0x84);
            if (r->sp < k)
                return fail(r, at, "TUPLE%zu with too few items on the stack", k);
            if (r->lean) {
                st = pk_lean_tuple(r, k);
                break;
            }
            pk_obj *t = pk_new_obj(r, PK_TUPLE);
            if (t == NULL)
                return pk_nomem(r);
            for (size_t i = r->sp - k; i < r->sp; i++)
                if (!obj_push(t, r->stack[i]))
                    return pk_nomem(r);
            r->sp -= k;
            st = pk_push(r, t);
            break;
        }
        case 'X': /* BINUNICODE */
        case 0x8c: /* SHORT_BINUNICODE */
            st = read_str(r, at, (size_t)arg);
            break;
        case 0x8d: /* BINUNICODE8 */
            if (arg > SIZE_MAX)
                return fail(r, at, "a string longer than the address space");
            st = read_str(r, at, (size_t)arg);
            break;
        case 'K': /* BININT1 */
        case 'M': /* BININT2 */
            st = pk_push(r, int_obj(r, false, arg));
            break;
        case 'J': { /* BININT: signed 32-bit */
            uint32_t u = (uint32_t)arg;
            bool neg = (u & 0x80000000u) != 0;
            st = pk_push(r, int_obj(r, neg, neg ? (uint64_t)(~u + 1u) : u));
            break;
        }
        case 0x8a: case 0x8b: /* LONG1, LONG4 */
            if (op == 0x8b && (arg & 0x80000000u))
                return fail(r, at, "LONG4 with a negative length");
            if (!need(r, (size_t)arg))
                return fail(r, at, "truncated (an integer runs past the end)");
            st = read_long(r, at, r->p + r->pos, (size_t)arg);
            r->pos += (size_t)arg;
            break;
        case 'G': { /* BINFLOAT: big-endian IEEE double */
            if (!need(r, 8))
                return fail(r, at, "truncated");
            uint64_t u = 0;
            for (int i = 0; i < 8; i++)
                u = (u << 8) | r->p[r->pos + (size_t)i];
            r->pos += 8;
            double x;
            memcpy(&x, &u, sizeof x);
            if (!isfinite(x))
                return fail(r, at, "a float that is not finite");
            pk_obj *o = pk_new_obj(r, PK_FLOAT);
            char buf[40];
            int n = snprintf(buf, sizeof buf, "%.17g", x);
            char *t = o ? arena_text(r->doc, (size_t)n + 1) : NULL;
            if (t == NULL)
                return pk_nomem(r);
            memcpy(t, buf, (size_t)n + 1);
            o->u.text = t;
            o->len = (uint32_t)n;
            st = pk_push(r, o);
            break;
        }
        case 0x94: /* MEMOIZE: the key is the number of memo entries so far */
            st = memo_put(r, at, r->memo_len);
            break;
        case 'q': /* BINPUT */
        case 'r': /* LONG_BINPUT */
            st = memo_put(r, at, arg);
            break;
        case 'h': /* BINGET */
        case 'j': /* LONG_BINGET */
            st = memo_get(r, at, arg);
            break;
        case '.': /* STOP */
            if (r->sp != 1 || r->mp != 0)
                return fail(r, at, "STOP with %zu values on the stack (expected exactly one)", r->sp);
            *result = r->stack[0];
            if (r->lean && is_container(*result)) {
                if ((*result)->flags & PK_GHOST)
                    return pk_lean_retry(r);
                if (!((*result)->flags & PK_FROZEN))
                    return pk_lean_freeze(r, *result);
            }
            return SIM_OK;
        default:
            return fail(r, at,
                        "this opcode is outside the subset gpusim reads: a memory snapshot is plain data "
                        "(dicts, lists, tuples, strings, numbers, booleans, None), and gpusim never imports or "
                        "calls anything a pickle names");
        }
        if (st != SIM_OK)
            return st;
    }
}

/* ---------------------------------------------------------------- to the JSON DOM */

/* The DOM shares what the pickle shares: a container is converted once, and every
 * further reference to it (a memo GET) copies only its json_value header, which
 * points at the same items. So time and memory are linear in the pickle, whatever
 * the sharing. The DOM is read-only, so sharing is invisible to readers. A
 * container reached again while it is being converted contains itself (a memo
 * cycle, which JSON cannot hold); depth counts the nesting of the DOM as a reader
 * sees it, so a shared subtree is checked against every depth it is used at. */
static sim_status to_json(pk_reader *r, pk_obj *o, int depth, json_value *v, uint16_t *height)
{
    memset(v, 0, sizeof *v);
    *height = 0;
    switch (o->kind) {
    case PK_NONE: v->type = JSON_NULL; return SIM_OK;
    case PK_TRUE: v->type = JSON_TRUE; return SIM_OK;
    case PK_FALSE: v->type = JSON_FALSE; return SIM_OK;
    case PK_INT:
    case PK_FLOAT:
        v->type = JSON_NUMBER;
        v->u.num = o->u.text;
        v->len = o->len;
        return SIM_OK;
    case PK_STR:
        v->type = JSON_STRING;
        v->u.str = o->u.text;
        v->len = o->len;
        return SIM_OK;
    case PK_LIST:
    case PK_TUPLE:
    case PK_DICT:
        break;
    }
    if (o->conv == PK_CONVERTING)
        return fail(r, o->at, "a memo cycle: the %s made here contains itself", o->kind == PK_DICT ? "dict" : "list");
    if (o->conv == PK_DONE) {
        if (depth + (int)o->height - 1 > PK_MAX_DEPTH)
            return fail(r, o->at, "nesting deeper than %d", PK_MAX_DEPTH);
        *v = o->u.box->json;
        *height = o->height;
        return SIM_OK;
    }
    if (depth > PK_MAX_DEPTH)
        return fail(r, o->at, "nesting deeper than %d", PK_MAX_DEPTH);
    o->conv = PK_CONVERTING;
    const pk_box *bx = o->u.box;
    uint16_t h = 0, hc = 0;
    if (o->kind == PK_DICT) {
        v->type = JSON_OBJECT;
        v->len = bx->n / 2;
        json_member *m = pk_arena(r->doc, (size_t)(v->len ? v->len : 1) * sizeof *m);
        if (m == NULL)
            return pk_nomem(r);
        v->u.members = m;
        uint32_t kept = 0;
        for (uint32_t i = 0; i < v->len; i++) {
            pk_obj *k = bx->items[2 * i];
            if (k->kind != PK_STR && k->kind != PK_INT)
                return fail(r, k->at, "a dict key that is not a string or an integer");
            /* an unread key's value is converted all the same (it is checked), not kept */
            json_value unused;
            bool keep = !pk_unread_key(r, k);
            if (keep)
                m[kept].key = k->u.text;
            sim_status st = to_json(r, bx->items[2 * i + 1], depth + 1, keep ? &m[kept].value : &unused, &hc);
            if (st != SIM_OK)
                return st;
            kept += keep;
            h = hc > h ? hc : h;
        }
        v->len = kept;
    } else {
        v->type = JSON_ARRAY;
        v->len = bx->n;
        json_value *items = pk_arena(r->doc, (size_t)(bx->n ? bx->n : 1) * sizeof *items);
        if (items == NULL)
            return pk_nomem(r);
        v->u.items = items;
        for (uint32_t i = 0; i < bx->n; i++) {
            sim_status st = to_json(r, bx->items[i], depth + 1, &items[i], &hc);
            if (st != SIM_OK)
                return st;
            h = hc > h ? hc : h;
        }
    }
    o->height = (uint16_t)(h + 1);
    o->u.box->json = *v;
    o->conv = PK_DONE;
    *height = o->height;
    return SIM_OK;
}

static void reader_release(pk_reader *r)
{
    free(r->stack);
    free(r->marks);
    free(r->memo);
    free(r->strs);
    free(r->arrs);
    for (size_t i = 0; i < r->n_boxes; i++) {
        free(r->boxes[i]->buf);
        free(r->boxes[i]);
    }
    free(r->boxes);
}

/* One reading, lean or exact; *retry: the lean one gave up (no message set). */
static sim_status parse_once(const char *path, const unsigned char *data, size_t len, const pickle_options *opt,
                             bool lean, pickle_doc **doc, const json_value **root, bool *retried, sim_error *err)
{
    pk_reader r = {.path = path, .p = data, .len = len, .err = err, .lean = lean,
                   .unread = opt ? opt->unread_keys : NULL, .drop_read = opt && opt->drop_read};
    r.doc = calloc(1, sizeof *r.doc);
    if (r.doc == NULL)
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    pk_obj *top = NULL;
    sim_status st = run(&r, &top);
    json_value *v = NULL;
    if (st == SIM_OK) {
        uint16_t height = 0;
        v = pk_arena(r.doc, sizeof *v);
        if (v == NULL)
            st = pk_nomem(&r);
        else if (lean)
            *v = pk_lean_json(top);
        else
            st = to_json(&r, top, 0, v, &height);
    }
    *retried = r.retry;
    reader_release(&r);
    if (st != SIM_OK) {
        pickle_free(r.doc);
        return st;
    }
    r.doc->peak_bytes = pickle_doc_bytes(r.doc);
    drop_graph(r.doc); /* the DOM is all the caller reads: the import then holds it and its events only */
    *doc = r.doc;
    *root = v;
    return SIM_OK;
}

sim_status pickle_parse(const char *path, const unsigned char *data, size_t len, const pickle_options *opt,
                        pickle_doc **doc, const json_value **root, sim_error *err)
{
    *doc = NULL;
    *root = NULL;
    bool lean = opt == NULL || !opt->exact, retried = false;
    sim_status st = parse_once(path, data, len, opt, lean, doc, root, &retried, err);
    if (lean && st != SIM_OK && st != SIM_ENOMEM) {
        /* a refusal, or a pickle the lean reading cannot be sure of: the exact
         * reading's result or message (a refusal is found again, at the same byte) */
        st = parse_once(path, data, len, opt, false, doc, root, &retried, err);
        if (st == SIM_OK)
            (*doc)->restarted = true;
    }
    return st;
}
