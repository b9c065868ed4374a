/* The async strategy's piece index (async_index.h): a treap per size class and a
 * two-level bitmap of the classes that hold pieces. */
#include "async_index.h"

void async_index_init(aset *st, uint8_t tag)
{
    st->last = A_NONE;
    st->n = 0;
    st->bytes = 0;
    st->tag = tag;
    st->summary = 0;
    for (uint32_t w = 0; w < A_CLASS_WORDS; w++)
        st->words[w] = 0;
    for (uint32_t c = 0; c < A_CLASSES; c++)
        st->root[c] = A_NONE;
}

/* ==== the bitmap of non-empty classes ==== */

static void mark(aset *st, uint32_t c)
{
    st->words[c >> 6] |= (uint64_t)1 << (c & 63);
    st->summary |= (uint64_t)1 << (c >> 6);
}

/* Class c's bit cleared when its treap is empty, the word's summary bit when the word
 * is then zero; without branches (a removal empties its class about half the time). */
static void unmark_if_empty(aset *st, uint32_t c)
{
    uint64_t gone = (uint64_t)(st->root[c] == A_NONE) << (c & 63);
    uint64_t w = st->words[c >> 6] & ~gone;
    st->words[c >> 6] = w;
    st->summary &= ~((uint64_t)(w == 0) << (c >> 6));
}

/* The first non-empty class at or above c, or A_CLASSES. */
static uint32_t class_at_or_above(const aset *st, uint32_t c)
{
    if (c >= A_CLASSES)
        return A_CLASSES;
    uint32_t w = c >> 6;
    uint64_t m = st->words[w] & (~(uint64_t)0 << (c & 63));
    if (m != 0)
        return (w << 6) + (uint32_t)__builtin_ctzll(m);
    uint64_t above = w + 1 < 64 ? st->summary & (~(uint64_t)0 << (w + 1)) : 0;
    if (above == 0)
        return A_CLASSES;
    w = (uint32_t)__builtin_ctzll(above);
    return (w << 6) + (uint32_t)__builtin_ctzll(st->words[w]);
}

/* ==== one class's treap ==== */

static uint32_t leftmost(const ablock *t, uint32_t x)
{
    while (t[x].kid[0] != A_NONE)
        x = t[x].kid[0];
    return x;
}

/* key <= e in the order, without a branch (the descents). */
static inline bool key_le(uint64_t size, uint64_t addr, const ablock *e)
{
    return (size < e->size) | ((size == e->size) & (addr <= e->addr));
}

static inline bool key_lt(uint64_t size, uint64_t addr, const ablock *e)
{
    return (size < e->size) | ((size == e->size) & (addr < e->addr));
}

/* Where the parent g (A_NONE: the class's root) pointed at old, point at nw. */
static void relink(ablock *t, uint32_t *root, uint32_t g, uint32_t old, uint32_t nw)
{
    if (g == A_NONE)
        *root = nw;
    else
        t[g].kid[t[g].kid[1] == old] = nw;
}

/* Rotate x above its parent, keeping the in-order sequence. */
static void rotate_up(ablock *t, uint32_t *root, uint32_t x)
{
    uint32_t p = t[x].parent, g = t[p].parent;
    unsigned side = t[p].kid[1] == x; /* x is p's child on this side */
    uint32_t mid = t[x].kid[!side];
    t[p].kid[side] = mid;
    t[x].kid[!side] = p;
    if (mid != A_NONE)
        t[mid].parent = p;
    t[p].parent = x;
    t[x].parent = g;
    relink(t, root, g, p, x);
}

/* ==== the set ==== */

uint32_t async_index_lower(const ablock *t, const aset *st, uint64_t size, uint64_t addr)
{
    uint32_t c = async_index_class(size), at = A_NONE;
    /* the descent chooses a child by index and keeps the candidate with a conditional
     * move: a branch there is mispredicted at every other level (docs/performance.md) */
    for (uint32_t x = st->root[c]; x != A_NONE;) {
        const ablock *n = &t[x];
        unsigned right = !key_le(size, addr, n);
        at = right ? at : x;
        x = n->kid[right];
    }
    if (at != A_NONE)
        return at;
    c = class_at_or_above(st, c + 1);
    return c == A_CLASSES ? A_NONE : leftmost(t, st->root[c]);
}

uint32_t async_index_next(const ablock *t, const aset *st, uint32_t x)
{
    uint64_t size = t[x].size;
    if (t[x].kid[1] != A_NONE)
        return leftmost(t, t[x].kid[1]);
    uint32_t p = t[x].parent;
    while (p != A_NONE && t[p].kid[1] == x) {
        x = p;
        p = t[p].parent;
    }
    if (p != A_NONE)
        return p;
    uint32_t c = class_at_or_above(st, async_index_class(size) + 1);
    return c == A_CLASSES ? A_NONE : leftmost(t, st->root[c]);
}

uint32_t async_index_last(const ablock *t, const aset *st)
{
    if (st->summary == 0)
        return A_NONE;
    uint32_t w = 63u - (uint32_t)__builtin_clzll(st->summary);
    uint32_t x = st->root[(w << 6) + 63u - (uint32_t)__builtin_clzll(st->words[w])];
    while (t[x].kid[1] != A_NONE)
        x = t[x].kid[1];
    return x;
}

void async_index_add(ablock *t, aset *st, uint32_t b)
{
    uint64_t size = t[b].size, addr = t[b].addr;
    uint32_t c = async_index_class(size), *root = &st->root[c];
    t[b].kid[0] = A_NONE;
    t[b].kid[1] = A_NONE;
    t[b].parent = A_NONE;
    t[b].in = st->tag;
    if (*root == A_NONE) {
        *root = b;
        mark(st, c);
    } else {
        uint32_t p = A_NONE, *link = root;
        while (*link != A_NONE) {
            p = *link;
            link = &t[p].kid[!key_lt(size, addr, &t[p])]; /* by index, as the lower bound */
        }
        t[b].parent = p;
        *link = b;
        /* up while b comes first in the heap order (async_index_prio_before, b's hash once) */
        uint32_t pb = async_index_prio(b);
        while (t[b].parent != A_NONE) {
            uint32_t q = t[b].parent, pq = async_index_prio(q);
            if (!(pb > pq || (pb == pq && b < q)))
                break;
            rotate_up(t, root, b);
        }
    }
    if (st->last == A_NONE || async_index_cmp(size, addr, &t[st->last]) > 0)
        st->last = b;
    st->n++;
    st->bytes += size;
}

/* Rotated down below its higher-priority child until it has at most one, then
 * spliced out. */
void async_index_remove(ablock *t, uint32_t n, aset *st, uint32_t b)
{
    if (b >= n || t[b].in != st->tag)
        return;
    uint32_t c = async_index_class(t[b].size), *root = &st->root[c];
    while (t[b].kid[0] != A_NONE && t[b].kid[1] != A_NONE)
        rotate_up(t, root, t[b].kid[!async_index_prio_before(t[b].kid[0], t[b].kid[1])]);
    uint32_t child = t[b].kid[0] != A_NONE ? t[b].kid[0] : t[b].kid[1];
    if (child != A_NONE)
        t[child].parent = t[b].parent;
    relink(t, root, t[b].parent, b, child);
    unmark_if_empty(st, c);
    t[b].in = A_IN_NONE;
    if (st->last == b)
        st->last = async_index_last(t, st);
    st->n--;
    st->bytes -= t[b].size;
}
