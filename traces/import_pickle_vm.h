/* import_pickle_vm.h — what the two files of the pickle reader share (import_pickle.c:
 * the opcodes, the exact reading, the API; import_pickle_lean.c: the lean reading of
 * pickle_options): the values and containers a pickle makes, the document that owns
 * them, the reader's state, and the functions each file gives the other. Not for use
 * outside these two files. */
#ifndef GPUSIM_IMPORT_PICKLE_VM_H
#define GPUSIM_IMPORT_PICKLE_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "import_pickle.h"
#include "sim/status.h"
#include "traces/json.h"

#define PK_MAX_DEPTH 100
#define PK_MAX_STACK ((size_t)1 << 26)

typedef enum pk_kind { PK_NONE, PK_TRUE, PK_FALSE, PK_INT, PK_FLOAT, PK_STR, PK_LIST, PK_TUPLE, PK_DICT } pk_kind;

typedef enum pk_conv { PK_UNSEEN, PK_CONVERTING, PK_DONE } pk_conv;

/* Lean reading (pk_obj.flags): a container made for an unread key's value, whose
 * items are checked and dropped; a container whose DOM is made (no more items may
 * come); a value that may be referenced again (memo, interned, shared constant),
 * never recycled; a string checked against, and found among, the unread keys. */
enum { PK_GHOST = 1, PK_FROZEN = 2, PK_PINNED = 4, PK_KEY_CHECKED = 8, PK_KEY_UNREAD = 16 };

/* Lean: an open container's DOM items as they come (json_value for a list or a
 * tuple, json_member for a dict); recycled once the container is complete. */
typedef struct pk_lbox {
    void *buf;
    uint32_t n, cap;
    struct pk_lbox *next;     /* free list */
} pk_lbox;

/* A container's items and its DOM once converted (scalars have none: most values
 * of a snapshot are integers, and they stay 24 bytes). */
typedef struct pk_box {
    uint32_t n, cap;          /* items (dict: 2n entries, key then value) */
    struct pk_obj **items;
    json_value json;          /* the converted value, once PK_DONE (items/members shared) */
} pk_box;

typedef struct pk_obj {
    uint8_t kind;             /* pk_kind */
    uint8_t conv;             /* pk_conv: a container's DOM is built once and shared */
    uint8_t flags;            /* lean: PK_GHOST ... */
    uint16_t height;          /* containers: levels of nesting below, once converted (lean: as stored) */
    uint32_t len;             /* INT/FLOAT/STR: text bytes; lean, frozen container: items */
    uint32_t at;              /* byte offset of the opcode that made it (for messages) */
    union {
        const char *text;     /* INT/FLOAT: decimal text; STR: UTF-8, NUL-terminated */
        pk_box *box;          /* LIST/TUPLE/DICT (exact) */
        pk_lbox *lbox;        /* LIST/TUPLE/DICT (lean, open) */
        json_value *items;    /* LIST/TUPLE (lean, frozen) */
        json_member *members; /* DICT (lean, frozen) */
        struct pk_obj *next;  /* lean: a recycled scalar */
    } u;
} pk_obj;

typedef struct pk_chunk {
    struct pk_chunk *next;
    size_t used, cap;
    max_align_t data[];
} pk_chunk;

typedef struct pk_objs {
    struct pk_objs *next;
    size_t n;
    pk_obj o[4096];
} pk_objs;

typedef struct pk_boxes {
    struct pk_boxes *next;
    size_t n;
    pk_box b[1024];
} pk_boxes;

struct pickle_doc {
    pk_chunk *chunks;
    pk_objs *objs;
    pk_boxes *boxes;
    void **owned;             /* lean: large item arrays, handed over whole */
    size_t n_owned, cap_owned, owned_bytes;
    size_t peak_bytes;        /* pickle_doc_bytes when the reading ended, its graph still held */
    bool restarted;
};

typedef struct pk_reader {
    const char *path;
    const unsigned char *p;
    size_t len, pos;
    pickle_doc *doc;
    sim_error *err;
    pk_obj **stack;
    size_t sp, scap;
    size_t *marks;
    size_t mp, mcap;
    pk_obj **memo;
    size_t memo_cap;
    uint64_t memo_len;     /* distinct keys stored (MEMOIZE's next key, as in Python) */
    size_t op_at;          /* byte offset of the opcode being read */
    pk_obj *small[256];    /* the integers 0..255, made once each (values are read-only) */
    /* the lean reading (pickle_options) */
    bool lean;
    bool retry;            /* the lean reading cannot go on: start again exactly */
    const char *const *unread;
    pk_obj *consts[3];     /* None, True, False, made once */
    pk_obj *free_objs;     /* recycled scalars */
    pk_lbox *free_boxes;
    pk_lbox **boxes;       /* every lbox made (the reader frees them) */
    size_t n_boxes, cap_boxes;
    bool drop_read;        /* pickle_options.drop_read */
    size_t dropped;        /* the bytes before this were handed back */
    pk_obj **strs;         /* strings by text (open addressing, a power of 2 slots) */
    size_t n_strs, cap_strs;
    struct pk_arr *arrs;   /* lean: the small lists made, by content (open addressing) */
    size_t n_arrs, cap_arrs;
} pk_reader;

static inline bool is_container(const pk_obj *o)
{
    return o->kind == PK_LIST || o->kind == PK_TUPLE || o->kind == PK_DICT;
}

/* ---- import_pickle.c */
/* size bytes from the document's arena, aligned for any type; NULL on ENOMEM. */
void *pk_arena(pickle_doc *d, size_t size);
/* A new value of kind k (lean: None, True and False made once, integers and floats
 * recycled, a container made by pk_lean_container); NULL on ENOMEM. */
pk_obj *pk_new_obj(pk_reader *r, pk_kind k);
/* Push o (NULL: out of memory) on the stack. */
sim_status pk_push(pk_reader *r, pk_obj *o);
sim_status pk_nomem(pk_reader *r);

/* ---- import_pickle_lean.c */
/* Whether key is a string among the unread keys (both readings leave their members out). */
bool pk_unread_key(const pk_reader *r, pk_obj *key);
/* Lean: p, a new container, made a ghost or given its lbox; NULL on ENOMEM. */
pk_obj *pk_lean_container(pk_reader *r, pk_obj *p);
/* Lean: the slot in the table of strings of the one with bytes p[0..n) (*slot NULL:
 * none yet, store it there and count it in r->n_strs); NULL on ENOMEM. */
pk_obj **pk_lean_str_slot(pk_reader *r, const unsigned char *p, size_t n);
/* Lean: give up (r->retry), for pickle_parse to read again exactly; no message. */
sim_status pk_lean_retry(pk_reader *r);
/* Lean: a value's DOM header (a container's once frozen). */
json_value pk_lean_json(const pk_obj *o);
/* Lean: o complete; its DOM made. */
sim_status pk_lean_freeze(pk_reader *r, pk_obj *o);
/* Lean: items[0..n) (a dict: key, value pairs) stored into target. */
sim_status pk_lean_store(pk_reader *r, pk_obj *target, pk_obj *const *items, size_t n);
/* Lean TUPLE, TUPLE1..3 of the top k values. */
sim_status pk_lean_tuple(pk_reader *r, size_t k);

#endif
