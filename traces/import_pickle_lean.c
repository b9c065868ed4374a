/* The lean reading of a pickle (import_pickle.h, pickle_options): each container
 * becomes its DOM when the pickle stores it into another, an unread key's value is
 * checked but not kept, a string is kept once per text; whatever it cannot be sure
 * of makes pickle_parse read again exactly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import_pickle_vm.h"
#include "sim/grow.h"

/* Lean: whether key is a string among the unread keys (the answer kept in the
 * string, which the lean reading makes once per text). */
bool pk_unread_key(const pk_reader *r, pk_obj *key)
{
    if (key->kind != PK_STR || r->unread == NULL)
        return false;
    if (!(key->flags & PK_KEY_CHECKED)) {
        key->flags |= PK_KEY_CHECKED;
        for (const char *const *u = r->unread; *u != NULL; u++)
            if (strcmp(*u, key->u.text) == 0)
                key->flags |= PK_KEY_UNREAD;
    }
    return (key->flags & PK_KEY_UNREAD) != 0;
}

/* Lean: whether a container made now, with the stack as it is, is (as far as the
 * stack tells) an unread key's value or part of one. A guess: one made a ghost
 * that ends up anywhere else makes the reading start again (lean_store), and one
 * not made a ghost inside a ghost only costs its memory. */
static bool ghost_context(pk_reader *r)
{
    if (r->sp == 0)
        return false;
    pk_obj *top = r->stack[r->sp - 1];
    if (is_container(top) && (top->flags & PK_GHOST))
        return true;
    size_t base = r->mp ? r->marks[r->mp - 1] : 0;
    if (base > 0 && base <= r->sp) {
        const pk_obj *c = r->stack[base - 1];
        if (is_container(c) && (c->flags & PK_GHOST))
            return true;
        /* SETITEMS: the top is at a key's place */
        if (c->kind == PK_DICT && (r->sp - base) % 2 == 1 && pk_unread_key(r, top))
            return true;
    }
    /* SETITEM: dict, key, value */
    return r->sp >= 2 && r->sp - 2 >= base && r->stack[r->sp - 2]->kind == PK_DICT && pk_unread_key(r, top);
}

/* Lean: a container's record and, unless it is a ghost, its lbox. */
pk_obj *pk_lean_container(pk_reader *r, pk_obj *p)
{
    p->height = 1;
    if (ghost_context(r)) {
        p->flags |= PK_GHOST;
        return p;
    }
    pk_lbox *b = r->free_boxes;
    if (b != NULL) {
        r->free_boxes = b->next;
    } else {
        if (!SIM_GROW(r->boxes, r->n_boxes + 1, r->cap_boxes) || (b = calloc(1, sizeof *b)) == NULL)
            return NULL;
        r->boxes[r->n_boxes++] = b;
    }
    b->n = 0;
    p->u.lbox = b;
    return p;
}

/* FNV-1a, 64 bits */
static uint64_t text_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

/* Lean: the slot of the string with these bytes in r->strs, or of the empty slot
 * where it goes. */
static pk_obj **str_slot(pk_reader *r, const unsigned char *p, size_t n)
{
    size_t mask = r->cap_strs - 1;
    for (size_t i = (size_t)text_hash(p, n) & mask;; i = (i + 1) & mask) {
        pk_obj *o = r->strs[i];
        if (o == NULL || (o->len == n && memcmp(o->u.text, p, n) == 0))
            return &r->strs[i];
    }
}

static bool strs_grow(pk_reader *r)
{
    size_t cap = r->cap_strs ? r->cap_strs * 2 : 1024;
    pk_obj **old = r->strs;
    size_t old_cap = r->cap_strs;
    if ((r->strs = calloc(cap, sizeof *r->strs)) == NULL) {
        r->strs = old;
        return false;
    }
    r->cap_strs = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i] != NULL)
            *str_slot(r, (const unsigned char *)old[i]->u.text, old[i]->len) = old[i];
    free(old);
    return true;
}

pk_obj **pk_lean_str_slot(pk_reader *r, const unsigned char *p, size_t n)
{
    if (2 * (r->n_strs + 1) > r->cap_strs && !strs_grow(r))
        return NULL;
    return str_slot(r, p, n);
}

/* Lean: give up, and let pickle_parse read the pickle again exactly. */
sim_status pk_lean_retry(pk_reader *r)
{
    r->retry = true;
    return SIM_ETRACE;
}

/* Lean: a value's DOM header (a container's once frozen). */
json_value pk_lean_json(const pk_obj *o)
{
    json_value v;
    memset(&v, 0, sizeof v);
    switch ((pk_kind)o->kind) {
    case PK_NONE: v.type = JSON_NULL; break;
    case PK_TRUE: v.type = JSON_TRUE; break;
    case PK_FALSE: v.type = JSON_FALSE; break;
    case PK_INT:
    case PK_FLOAT:
        v.type = JSON_NUMBER;
        v.u.num = o->u.text;
        v.len = o->len;
        break;
    case PK_STR:
        v.type = JSON_STRING;
        v.u.str = o->u.text;
        v.len = o->len;
        break;
    case PK_LIST:
    case PK_TUPLE:
        v.type = JSON_ARRAY;
        v.u.items = o->u.items;
        v.len = o->len;
        break;
    case PK_DICT:
        v.type = JSON_OBJECT;
        v.u.members = o->u.members;
        v.len = o->len;
        break;
    }
    return v;
}

#define PK_HAND_OVER ((size_t)64 << 10) /* item arrays from this size are kept as they are */

/* Lean: no more items may come into o; its DOM is made from its lbox (copied into
 * the arena, or a large one handed over whole), and the lbox is recycled. */
/* A list's DOM items made once per content: a recording gives every trace entry a
 * new call stack list, but the same few hundred stacks of the same shared frames
 * come again and again, and equal item headers (the same types, texts and
 * containers) are the same items. The DOM is read-only, so sharing is invisible. */
struct pk_arr {
    json_value *items;     /* NULL: an empty slot */
    uint32_t n;
    uint64_t hash;
};

/* a multiply-xor over each item's type, length and pointer (two words an item) */
static uint64_t items_hash(const json_value *v, uint32_t n)
{
    const uint64_t k = 0x9E3779B97F4A7C15u;
    uint64_t h = n * k;
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ ((uint64_t)v[i].type | (uint64_t)v[i].len << 32)) * k;
        h = (h ^ (uint64_t)(uintptr_t)v[i].u.items) * k;
        h ^= h >> 29;
    }
    return h;
}

static struct pk_arr *arr_slot(struct pk_arr *t, size_t cap, const json_value *v, uint32_t n, uint64_t h)
{
    for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1))
        if (t[i].items == NULL ||
            (t[i].hash == h && t[i].n == n && memcmp(t[i].items, v, (size_t)n * sizeof *v) == 0))
            return &t[i];
}

/* The arena's copy of the n items at v: an equal one made before, or a new one
 * (NULL on ENOMEM). */
static json_value *shared_items(pk_reader *r, const json_value *v, uint32_t n)
{
    if (2 * (r->n_arrs + 1) > r->cap_arrs) {
        size_t cap = r->cap_arrs ? r->cap_arrs * 2 : 1024;
        struct pk_arr *t = calloc(cap, sizeof *t);
        if (t == NULL)
            return NULL;
        for (size_t i = 0; i < r->cap_arrs; i++)
            if (r->arrs[i].items != NULL)
                *arr_slot(t, cap, r->arrs[i].items, r->arrs[i].n, r->arrs[i].hash) = r->arrs[i];
        free(r->arrs);
        r->arrs = t;
        r->cap_arrs = cap;
    }
    uint64_t h = items_hash(v, n);
    struct pk_arr *s = arr_slot(r->arrs, r->cap_arrs, v, n, h);
    if (s->items != NULL)
        return s->items;
    json_value *items = pk_arena(r->doc, (size_t)n * sizeof *v);
    if (items == NULL)
        return NULL;
    memcpy(items, v, (size_t)n * sizeof *v);
    *s = (struct pk_arr){items, n, h};
    r->n_arrs++;
    return items;
}

sim_status pk_lean_freeze(pk_reader *r, pk_obj *o)
{
    o->flags |= PK_FROZEN;
    if (o->height > PK_MAX_DEPTH + 1)
        return pk_lean_retry(r); /* nesting the exact reading refuses, if it is in the DOM */
    if (o->flags & PK_GHOST)
        return SIM_OK;
    pk_lbox *b = o->u.lbox;
    size_t es = o->kind == PK_DICT ? sizeof(json_member) : sizeof(json_value), bytes = (size_t)b->n * es;
    void *items;
    if (bytes >= PK_HAND_OVER) {
        pickle_doc *d = r->doc;
        if (!SIM_GROW(d->owned, d->n_owned + 1, d->cap_owned))
            return pk_nomem(r);
        void *fit = realloc(b->buf, bytes);
        items = fit ? fit : b->buf;
        d->owned[d->n_owned++] = items;
        d->owned_bytes += bytes;
        b->buf = NULL;
        b->cap = 0;
    } else if (o->kind != PK_DICT && b->n > 0) {
        if ((items = shared_items(r, b->buf, b->n)) == NULL)
            return pk_nomem(r);
    } else {
        if ((items = pk_arena(r->doc, bytes ? bytes : es)) == NULL)
            return pk_nomem(r);
        if (bytes)
            memcpy(items, b->buf, bytes);
    }
    o->len = b->n;
    o->u.items = items; /* members for a dict: the same pointer */
    b->n = 0;
    b->next = r->free_boxes;
    r->free_boxes = b;
    return SIM_OK;
}

/* Lean: store items[0..n) into target (a dict: key, value pairs). Each container
 * stored is complete from now on (frozen); a kept value's DOM is appended to the
 * target's lbox, an unread key's member is left out, a ghost's items are only
 * checked; integers and floats stored are recycled. Whatever the exact reading
 * would refuse or build differently makes it start again: an item stored into a
 * frozen container or into itself, a dict key neither string nor integer, a ghost
 * kept, nesting too deep. */
sim_status pk_lean_store(pk_reader *r, pk_obj *target, pk_obj *const *items, size_t n)
{
    if (target->flags & PK_FROZEN)
        return pk_lean_retry(r);
    bool dict = target->kind == PK_DICT, ghost = (target->flags & PK_GHOST) != 0;
    for (size_t i = 0; i < n; i++) {
        pk_obj *o = items[i];
        if (o == target || (dict && i % 2 == 0 && o->kind != PK_STR && o->kind != PK_INT))
            return pk_lean_retry(r);
        if (!is_container(o))
            continue;
        sim_status st;
        if (!(o->flags & PK_FROZEN) && (st = pk_lean_freeze(r, o)) != SIM_OK)
            return st;
        if (o->height >= target->height)
            target->height = o->height == UINT16_MAX ? UINT16_MAX : (uint16_t)(o->height + 1);
    }
    if (!ghost) {
        pk_lbox *b = target->u.lbox;
        size_t es = dict ? sizeof(json_member) : sizeof(json_value);
        if ((size_t)b->n + n > UINT32_MAX)
            return pk_nomem(r);
        if (b->n + n > b->cap) {
            size_t cap = b->cap ? (size_t)b->cap * 2 : 8;
            if (cap < b->n + n)
                cap = b->n + n;
            if (cap > UINT32_MAX)
                cap = UINT32_MAX;
            void *nb = realloc(b->buf, cap * es);
            if (nb == NULL)
                return pk_nomem(r);
            b->buf = nb;
            b->cap = (uint32_t)cap;
        }
        for (size_t i = 0; i < n; i += dict ? 2 : 1) {
            const pk_obj *v = items[dict ? i + 1 : i];
            if (dict && pk_unread_key(r, items[i]))
                continue;
            if (is_container(v) && (v->flags & PK_GHOST))
                return pk_lean_retry(r); /* a value made as unread is kept after all */
            if (dict)
                ((json_member *)b->buf)[b->n++] = (json_member){items[i]->u.text, pk_lean_json(v)};
            else
                ((json_value *)b->buf)[b->n++] = pk_lean_json(v);
        }
    }
    for (size_t i = 0; i < n; i++) {
        pk_obj *o = items[i];
        if ((o->kind == PK_INT || o->kind == PK_FLOAT) && !(o->flags & PK_PINNED)) {
            o->u.next = r->free_objs;
            r->free_objs = o;
        }
    }
    return SIM_OK;
}

/* Lean TUPLE, TUPLE1..3: a tuple of the top k values (made as the stack below them
 * tells), pushed in their place. */
sim_status pk_lean_tuple(pk_reader *r, size_t k)
{
    size_t top = r->sp;
    r->sp -= k;
    pk_obj *t = pk_new_obj(r, PK_TUPLE);
    r->sp = top;
    if (t == NULL)
        return pk_nomem(r);
    /* an empty tuple may come before anything was pushed: no stack to index yet */
    sim_status st = pk_lean_store(r, t, k ? &r->stack[top - k] : NULL, k);
    if (st != SIM_OK)
        return st;
    r->sp -= k;
    return pk_push(r, t);
}
