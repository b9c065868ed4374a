/* async_index.h — private to the async strategy: its block records and its index of
 * free or pending pieces, ordered by (size, address). The pieces are split by size into classes (exact below
 * 64 KiB, 64 per power of two above, in units of 512 B), each class a treap in the same
 * order, with a two-level bitmap of the non-empty classes: the first piece at or after
 * a key is a descent of one small treap, or a `ctz` to the next non-empty class and its
 * leftmost node, instead of a descent of one treap of all the pieces. The order, and so
 * every search's answer, is the same as one treap's. */
#ifndef GPUSIM_ASYNC_INDEX_H
#define GPUSIM_ASYNC_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#define A_NONE UINT32_MAX

typedef enum ab_state { AB_USED = 0, AB_FREE = 1, AB_PENDING = 2 } ab_state;

/* A block of the pool (a piece of a chunk). A free or pending block is a node of its
 * set's index: the key is its size and address, the links are kid, parent and in, in
 * the same record so that a block and its node are one cache line (the block table is
 * 64-byte aligned and a record is 64 bytes). A node's priority is a hash of its block
 * handle (async_index_prio_before), so a class's shape depends only on which blocks
 * it holds. */
typedef struct ablock {
    uint64_t addr;
    uint64_t size;
    uint64_t requested;  /* used: the request; else 0 */
    uint32_t prev, next; /* neighbours in the chunk, address order */
    uint32_t chunk;
    uint32_t stream; /* used: allocating stream; pending: the stream that freed it */
    uint32_t owner;  /* used or pending: the allocation handle; free: A_NONE */
    ab_state state;
    uint32_t kid[2]; /* indexed: the left (lower) and right child; A_NONE where absent */
    uint32_t parent; /* indexed: A_NONE at the root of its class */
    uint8_t in;      /* the tag of the set holding it; A_IN_NONE (0): none */
} ablock;

#define A_BLOCK_ALIGN 64
_Static_assert(sizeof(ablock) == A_BLOCK_ALIGN, "a block record is one cache line");

#define A_IN_NONE ((uint8_t)0)
#define A_IN_FREE ((uint8_t)1)
#define A_IN_PEND ((uint8_t)2)

/* Size classes: u = size / 512; u < 128 is its own class; above, the power of two
 * 2^f <= u and the next 6 bits of u. Sizes below 2^64 need 3,200 classes. */
#define A_CLASS_SUB_BITS 6
#define A_CLASSES 3200u
#define A_CLASS_WORDS ((A_CLASSES + 63) / 64)

typedef struct aset {
    uint32_t last; /* the last node in order (async_index_last), A_NONE: empty */
    uint32_t n;
    uint64_t bytes;
    uint8_t tag;                   /* A_IN_FREE or A_IN_PEND */
    uint64_t summary;              /* bit w: words[w] != 0 */
    uint64_t words[A_CLASS_WORDS]; /* bit c % 64 of word c / 64: class c is not empty */
    uint32_t root[A_CLASSES];      /* each class's treap; A_NONE: empty */
} aset;

/* The class of a size; classes are in the order of sizes (a smaller size never has a
 * higher class). */
static inline uint32_t async_index_class(uint64_t size)
{
    /* without a branch on u < 128, which sizes around 64 KiB take at random: the bit
     * or'ed in makes f = 6 there, a shift of 0 */
    uint64_t u = size >> 9;
    unsigned f = 63u - (unsigned)__builtin_clzll(u | ((uint64_t)1 << A_CLASS_SUB_BITS));
    unsigned shift = f - A_CLASS_SUB_BITS;
    return (uint32_t)(shift << A_CLASS_SUB_BITS) + (uint32_t)(u >> shift);
}

/* The piece index's order: by size, then address. */
static inline int async_index_cmp(uint64_t size, uint64_t addr, const ablock *e)
{
    if (size != e->size)
        return size < e->size ? -1 : 1;
    return (addr > e->addr) - (addr < e->addr);
}

/* The treaps' heap order: a node's priority is a hash of its block handle (the
 * constants of Chris Wellons' lowbias32, from his hash-prospector search), ties broken by
 * the lower handle; a parent always comes before its children. */
static inline uint32_t async_index_prio(uint32_t b)
{
    uint32_t h = (b ^ (b >> 16)) * 0x7feb352du;
    h = (h ^ (h >> 15)) * 0x846ca68bu;
    return h ^ (h >> 16);
}

static inline bool async_index_prio_before(uint32_t a, uint32_t b)
{
    uint32_t pa = async_index_prio(a), pb = async_index_prio(b);
    return pa > pb || (pa == pb && a < b);
}

/* An empty set holding nodes tagged tag. */
void async_index_init(aset *st, uint8_t tag);
/* The node first in order at or after (size, addr), or A_NONE: O(log k) for the k
 * pieces of size's class, plus two bitmap words. */
uint32_t async_index_lower(const ablock *t, const aset *st, uint64_t size, uint64_t addr);
/* The node after indexed node x in order, or A_NONE. */
uint32_t async_index_next(const ablock *t, const aset *st, uint32_t x);
/* The last node in order (the largest piece, the highest address among those), or
 * A_NONE when the set is empty, found from the bitmap and the class's right spine;
 * st->last keeps it. */
uint32_t async_index_last(const ablock *t, const aset *st);
/* Block b of the table t joins the set under its size and address, which must not
 * change while it is indexed. O(log k) expected. */
void async_index_add(ablock *t, aset *st, uint32_t b);
/* Block b leaves the set; nothing when b (below n blocks) is not in it (the checker
 * reports the mismatch). O(log k) expected. */
void async_index_remove(ablock *t, uint32_t n, aset *st, uint32_t b);

#endif
