/* The free set of a `torch` pool: size bins over small treaps, per-stream bin
 * bitmaps, the largest-size bookkeeping (torch_freeset.h). */
#include "torch_freeset.h"

#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

/* The record array; loaded once per operation (nothing here grows the table). */
static inline tblock *recs(const slots *blocks)
{
    return (tblock *)(void *)blocks->data;
}

/* ==== Treaps over block handles ==== */

/* The order of one treap: (stream, address) when by_addr (the unmapped sets), else
 * (stream, size, tie), the tie a block's address or, when born is set (the free sets
 * under torch_rules.tie_by_creation), its creation number born[handle]. */
typedef struct fsord {
    const tblock *base;
    const uint64_t *born;
    bool by_addr;
} fsord;

static inline fsord ord_addr(const tblock *base, bool by_addr)
{
    return (fsord){.base = base, .born = NULL, .by_addr = by_addr};
}

/* A free set's order (its creation numbers looked up now: the array may have moved). */
static inline fsord ord_of(const tfree *f, const tblock *base)
{
    return (fsord){.base = base, .born = f->born != NULL ? *f->born : NULL, .by_addr = false};
}

static inline uint64_t tie_of(fsord o, const tblock *x)
{
    return o.born != NULL && !o.by_addr ? o.born[x - o.base] : x->addr;
}

static inline bool ord_before(fsord o, const tblock *a, const tblock *b)
{
    return torch_fs_before_tie(a, tie_of(o, a), b, tie_of(o, b), o.by_addr);
}

/* Whether block x orders before the key (stream, size, tie). */
static inline bool key_less(fsord o, const tblock *x, uint32_t stream, uint64_t size, uint64_t tie)
{
    if (x->stream != stream)
        return x->stream < stream;
    if (!o.by_addr && x->size != size)
        return x->size < size;
    return tie_of(o, x) < tie;
}

/* Whether the key orders before block x. */
static inline bool key_greater(fsord o, const tblock *x, uint32_t stream, uint64_t size, uint64_t tie)
{
    if (x->stream != stream)
        return x->stream > stream;
    if (!o.by_addr && x->size != size)
        return x->size > size;
    return tie_of(o, x) > tie;
}

/* Insert h into the treap at *root: descend while the parent's priority is at
 * least h's, then split the subtree found there around h's key (iterative: the
 * links are written in place). */
static inline void tree_insert(tblock *base, uint32_t *root, fsord o, uint32_t h)
{
    tblock *x = base + h;
    uint16_t pri = torch_fs_pri(h);
    x->pri = pri;
    uint32_t *link = root;
    while (*link != T_NONE && base[*link].pri >= pri) {
        tblock *n = base + *link;
        link = ord_before(o, x, n) ? &n->left : &n->right;
    }
    uint32_t t = *link;
    uint32_t *l = &x->left, *r = &x->right;
    while (t != T_NONE) {
        tblock *n = base + t;
        if (ord_before(o, n, x)) {
            *l = t;
            l = &n->right;
            t = n->right;
        } else {
            *r = t;
            r = &n->left;
            t = n->left;
        }
    }
    *l = *r = T_NONE;
    *link = h;
}

/* Unlink the node *link points at: its two subtrees are merged in its place. */
static inline void tree_unlink(tblock *base, uint32_t *link)
{
    tblock *x = base + *link;
    uint32_t l = x->left, r = x->right;
    while (l != T_NONE && r != T_NONE) {
        if (base[l].pri > base[r].pri) {
            *link = l;
            link = &base[l].right;
            l = *link;
        } else {
            *link = r;
            link = &base[r].left;
            r = *link;
        }
    }
    *link = l != T_NONE ? l : r;
    x->left = x->right = T_NONE;
}

/* The link that points at h, found by its key, or NULL when h is not in the treap. */
static inline uint32_t *tree_find(tblock *base, uint32_t *root, fsord o, uint32_t h)
{
    const tblock *x = base + h;
    uint32_t *link = root;
    while (*link != T_NONE && *link != h) {
        tblock *n = base + *link;
        link = ord_before(o, x, n) ? &n->left : &n->right;
    }
    return *link == T_NONE ? NULL : link;
}

/* Erase h; false, the treap unchanged, when h is not in it. */
static inline bool tree_erase(tblock *base, uint32_t *root, fsord o, uint32_t h)
{
    uint32_t *link = tree_find(base, root, o, h);
    if (link == NULL)
        return false;
    tree_unlink(base, link);
    return true;
}

/* The link that points at the first node whose key is ≥ (stream, size, addr), or
 * NULL when there is none (std::set::lower_bound, with its place in the treap). */
static inline uint32_t *tree_lower_link(tblock *base, uint32_t *root, fsord o, uint32_t stream, uint64_t size)
{
    uint32_t *best = NULL;
    for (uint32_t *link = root; *link != T_NONE;) {
        tblock *n = base + *link;
        if (key_less(o, n, stream, size, 0)) {
            link = &n->right;
        } else {
            best = link;
            link = &n->left;
        }
    }
    return best;
}

/* The first node whose key is ≥ (stream, size, addr): std::set::lower_bound. */
static inline uint32_t tree_lower_bound(const tblock *base, uint32_t root, fsord o, uint32_t stream,
                                        uint64_t size, uint64_t addr)
{
    uint32_t best = T_NONE;
    for (uint32_t t = root; t != T_NONE;) {
        const tblock *n = base + t;
        if (key_less(o, n, stream, size, addr)) {
            t = n->right;
        } else {
            best = t;
            t = n->left;
        }
    }
    return best;
}

/* The last node whose key is < (stream, size, addr): std::prev(lower_bound). */
static inline uint32_t tree_last_below(const tblock *base, uint32_t root, fsord o, uint32_t stream,
                                       uint64_t size, uint64_t addr)
{
    uint32_t best = T_NONE;
    for (uint32_t t = root; t != T_NONE;) {
        const tblock *n = base + t;
        if (key_less(o, n, stream, size, addr)) {
            best = t;
            t = n->right;
        } else {
            t = n->left;
        }
    }
    return best;
}

static inline uint32_t tree_next(const tblock *base, uint32_t root, fsord o, uint32_t h)
{
    const tblock *x = base + h;
    uint32_t best = T_NONE;
    for (uint32_t t = root; t != T_NONE;) {
        const tblock *n = base + t;
        if (key_greater(o, n, x->stream, x->size, tie_of(o, x))) {
            best = t;
            t = n->left;
        } else {
            t = n->right;
        }
    }
    return best;
}

static inline uint32_t tree_prev(const tblock *base, uint32_t root, fsord o, uint32_t h)
{
    const tblock *x = base + h;
    return tree_last_below(base, root, o, x->stream, x->size, tie_of(o, x));
}

/* The last node of one stream (keys (stream, size, addr); sizes < 2^64 - 1). */
static inline uint32_t tree_last_of(const tblock *base, uint32_t root, fsord o, uint32_t stream)
{
    return tree_last_below(base, root, o, stream, UINT64_MAX, UINT64_MAX);
}

void torch_fs_tree_insert(const slots *blocks, uint32_t *root, bool by_addr, uint32_t h)
{
    tree_insert(recs(blocks), root, ord_addr(recs(blocks), by_addr), h);
}

bool torch_fs_tree_erase(const slots *blocks, uint32_t *root, bool by_addr, uint32_t h)
{
    return tree_erase(recs(blocks), root, ord_addr(recs(blocks), by_addr), h);
}

uint32_t torch_fs_tree_lower_bound(const slots *blocks, uint32_t root, bool by_addr, uint32_t stream, uint64_t size,
                                   uint64_t addr)
{
    return tree_lower_bound(recs(blocks), root, ord_addr(recs(blocks), by_addr), stream, size, addr);
}

uint32_t torch_fs_tree_next(const slots *blocks, uint32_t root, bool by_addr, uint32_t h)
{
    return tree_next(recs(blocks), root, ord_addr(recs(blocks), by_addr), h);
}

/* ==== Per-stream bin bitmaps ==== */

static inline void bits_set(tstream *e, uint32_t b)
{
    e->bits[b >> 6] |= (uint64_t)1 << (b & 63);
    e->summary |= (uint64_t)1 << (b >> 6);
}

static inline void bits_clear(tstream *e, uint32_t b)
{
    uint64_t w = e->bits[b >> 6] & ~((uint64_t)1 << (b & 63));
    e->bits[b >> 6] = w;
    e->summary &= ~((uint64_t)(w == 0) << (b >> 6)); /* no branch on whether the word emptied */
}

static inline bool bits_test(const tstream *e, uint32_t b)
{
    return (e->bits[b >> 6] >> (b & 63)) & 1;
}

/* The first set bin above b, or FB_NONE. */
static inline uint32_t bits_next(const tstream *e, uint32_t b)
{
    uint32_t w = b >> 6;
    uint64_t m = e->bits[w] & (~(uint64_t)1 << (b & 63));
    if (m != 0)
        return w * 64 + (uint32_t)__builtin_ctzll(m);
    uint64_t sm = e->summary & (~(uint64_t)1 << w);
    if (sm == 0)
        return FB_NONE;
    w = (uint32_t)__builtin_ctzll(sm);
    return w * 64 + (uint32_t)__builtin_ctzll(e->bits[w]);
}

/* The last set bin below b, or FB_NONE. */
static inline uint32_t bits_prev(const tstream *e, uint32_t b)
{
    uint32_t w = b >> 6;
    uint64_t m = e->bits[w] & (((uint64_t)1 << (b & 63)) - 1);
    if (m != 0)
        return w * 64 + 63u - (uint32_t)__builtin_clzll(m);
    uint64_t sm = e->summary & (((uint64_t)1 << w) - 1);
    if (sm == 0)
        return FB_NONE;
    w = 63u - (uint32_t)__builtin_clzll(sm);
    return w * 64 + 63u - (uint32_t)__builtin_clzll(e->bits[w]);
}

/* The highest set bin, or FB_NONE. */
static inline uint32_t bits_top(const tstream *e)
{
    if (e->summary == 0)
        return FB_NONE;
    uint32_t w = 63u - (uint32_t)__builtin_clzll(e->summary);
    return w * 64 + 63u - (uint32_t)__builtin_clzll(e->bits[w]);
}

/* ==== The stream index ==== */

static inline uint32_t stream_search(const tfree *f, uint32_t stream)
{
    uint32_t lo = 0, hi = f->n_ent;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->ent[mid].stream < stream)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The search when the hint missed; out of line, so that the operations' usual
 * case (the hint holds) keeps few registers live. */
static __attribute__((noinline)) tstream *stream_entry_search(tfree *f, uint32_t stream)
{
    uint32_t i = stream_search(f, stream);
    if (i < f->n_ent && f->ent[i].stream == stream) {
        f->hint[stream & (FB_HINTS - 1)] = i;
        return &f->ent[i];
    }
    return NULL;
}

static inline tstream *stream_entry(tfree *f, uint32_t stream)
{
    uint32_t hint = f->hint[stream & (FB_HINTS - 1)];
    if (hint < f->n_ent && f->ent[hint].stream == stream)
        return &f->ent[hint];
    return stream_entry_search(f, stream);
}

/* A new, empty entry for the stream (host memory out: NULL). Out of line: rare. */
static __attribute__((noinline)) tstream *stream_add(tfree *f, uint32_t stream)
{
    if (!SIM_GROW(f->ent, f->n_ent + 1, f->cap_ent))
        return NULL;
    uint32_t i = stream_search(f, stream);
    memmove(&f->ent[i + 1], &f->ent[i], (size_t)(f->n_ent - i) * sizeof *f->ent);
    memset(&f->ent[i], 0, sizeof *f->ent);
    f->ent[i].stream = stream;
    f->n_ent++;
    f->hint[stream & (FB_HINTS - 1)] = i;
    return &f->ent[i];
}

uint32_t torch_fs_stream_slot(const tfree *f, uint32_t stream)
{
    return stream_search(f, stream);
}

tstream *torch_fs_stream_entry(tfree *f, uint32_t stream)
{
    return stream_entry(f, stream);
}

void torch_fs_stream_drop(tfree *f, tstream *e)
{
    uint32_t i = (uint32_t)(e - f->ent);
    memmove(&f->ent[i], &f->ent[i + 1], (size_t)(f->n_ent - i - 1) * sizeof *f->ent);
    f->n_ent--;
    /* the hints past the entry are one off now: their next lookup searches */
}

/* ==== The free set ==== */

void torch_fs_init(tfree *f, const slots *blocks)
{
    memset(f, 0, sizeof *f);
    for (uint32_t b = 0; b < FB_BINS; b++)
        f->root[b] = T_NONE;
    f->blocks = blocks;
}

void torch_fs_order_by_creation(tfree *f, uint64_t *const *born)
{
    f->born = born;
}

void torch_fs_release(tfree *f)
{
    free(f->ent);
    f->ent = NULL;
    f->n_ent = f->cap_ent = 0;
}

/* bin_has_stream's search below a root of another stream; out of line: rare. */
static __attribute__((noinline)) bool bin_search_stream(const tblock *base, uint32_t root, uint32_t stream)
{
    uint32_t t = tree_lower_bound(base, root, ord_addr(base, false), stream, 0, 0); /* size 0: no tie decides */
    return t != T_NONE && base[t].stream == stream;
}

/* Whether bin root holds a block of the stream (the root itself, in the usual
 * one-stream case). */
static inline bool bin_has_stream(const tblock *base, uint32_t root, uint32_t stream)
{
    if (root == T_NONE)
        return false;
    if (base[root].stream == stream)
        return true;
    return bin_search_stream(base, root, stream);
}

bool torch_fs_insert(tfree *f, uint32_t h)
{
    tblock *base = recs(f->blocks);
    const tblock *b = base + h;
    uint32_t bin = torch_fs_bin(b->size);
    tstream *e = stream_entry(f, b->stream);
    if (e == NULL && (e = stream_add(f, b->stream)) == NULL)
        return false;
    base[h].bin = (uint16_t)bin;
    tree_insert(base, &f->root[bin], ord_of(f, base), h);
    e->n++;
    bits_set(e, bin);
    f->bytes += b->size;
    if (b->size > f->largest)
        f->largest = b->size; /* a dirty value only grows toward the truth too */
    return true;
}

/* The bookkeeping of h leaving the set, once its treap has unlinked it. */
static inline void erase_done(tfree *f, const tblock *base, const tblock *b, tstream *e)
{
    f->bytes -= b->size;
    f->largest_dirty |= b->size >= f->largest; /* no branch: whether it held the largest is data */
    if (e == NULL)
        return; /* an index out of step with its bins: the checker says so */
    e->n--;
    if (!bin_has_stream(base, f->root[b->bin], b->stream))
        bits_clear(e, b->bin);
    /* keep a few empty entries (no churn of the index in the usual case), drop
     * the rest: the index stays O(streams with free blocks) */
    if (e->n == 0 && f->n_ent > FB_KEEP_EMPTY)
        torch_fs_stream_drop(f, e);
}

bool torch_fs_erase(tfree *f, uint32_t h)
{
    tblock *base = recs(f->blocks);
    const tblock *b = base + h;
    /* b->bin = torch_fs_bin(b->size): its key has not changed since torch_fs_insert */
    if (!tree_erase(base, &f->root[b->bin], ord_of(f, base), h))
        return false;
    erase_done(f, base, b, stream_entry(f, b->stream));
    return true;
}

/* The first block of the stream in a bin its bitmap marks, with its link. */
static inline torch_fs_pos bin_first(tblock *base, tfree *f, uint32_t bin, uint32_t stream, tstream *e)
{
    uint32_t *link = &f->root[bin];
    if (*link == T_NONE)
        return (torch_fs_pos){T_NONE, NULL, NULL}; /* a bitmap out of step with its bins: the checker says so */
    const tblock *n = base + *link;
    if (!(n->left == T_NONE && n->stream == stream))
        link = tree_lower_link(base, link, ord_of(f, base), stream, 0);
    return link == NULL ? (torch_fs_pos){T_NONE, NULL, NULL} : (torch_fs_pos){*link, link, e};
}

torch_fs_pos torch_fs_find(tfree *f, uint32_t stream, uint64_t size)
{
    tstream *e = stream_entry(f, stream);
    if (e == NULL)
        return (torch_fs_pos){T_NONE, NULL, NULL};
    tblock *base = recs(f->blocks);
    uint32_t bin = torch_fs_bin(size);
    if (bits_test(e, bin)) {
        uint32_t *link = tree_lower_link(base, &f->root[bin], ord_of(f, base), stream, size);
        if (link != NULL && base[*link].stream == stream)
            return (torch_fs_pos){*link, link, e};
    }
    bin = bits_next(e, bin);
    return bin == FB_NONE ? (torch_fs_pos){T_NONE, NULL, NULL} : bin_first(base, f, bin, stream, e);
}

void torch_fs_take(tfree *f, torch_fs_pos p)
{
    tblock *base = recs(f->blocks);
    tree_unlink(base, p.link);
    erase_done(f, base, base + p.h, p.e);
}

uint32_t torch_fs_lower_bound(tfree *f, uint32_t stream, uint64_t size)
{
    return torch_fs_find(f, stream, size).h;
}

uint32_t torch_fs_last_below(tfree *f, uint32_t stream, uint64_t size)
{
    const tstream *e = stream_entry(f, stream);
    if (e == NULL)
        return T_NONE;
    const tblock *base = recs(f->blocks);
    uint32_t bin = torch_fs_bin(size);
    if (bits_test(e, bin)) {
        uint32_t t = tree_last_below(base, f->root[bin], ord_of(f, base), stream, size, 0);
        if (t != T_NONE && base[t].stream == stream)
            return t;
    }
    bin = bits_prev(e, bin);
    return bin == FB_NONE ? T_NONE : tree_last_of(base, f->root[bin], ord_of(f, base), stream);
}

uint32_t torch_fs_next(tfree *f, uint32_t h)
{
    tblock *base = recs(f->blocks);
    const tblock *x = base + h;
    uint32_t bin = x->bin;
    uint32_t t = tree_next(base, f->root[bin], ord_of(f, base), h);
    if (t != T_NONE && base[t].stream == x->stream)
        return t;
    const tstream *e = stream_entry(f, x->stream);
    if (e == NULL || (bin = bits_next(e, bin)) == FB_NONE)
        return T_NONE;
    return bin_first(base, f, bin, x->stream, NULL).h;
}

uint32_t torch_fs_prev(tfree *f, uint32_t h)
{
    const tblock *base = recs(f->blocks);
    const tblock *x = base + h;
    uint32_t bin = x->bin;
    uint32_t t = tree_prev(base, f->root[bin], ord_of(f, base), h);
    if (t != T_NONE && base[t].stream == x->stream)
        return t;
    const tstream *e = stream_entry(f, x->stream);
    if (e == NULL || (bin = bits_prev(e, bin)) == FB_NONE)
        return T_NONE;
    return tree_last_of(base, f->root[bin], ord_of(f, base), x->stream);
}

uint64_t torch_fs_largest_recompute(tfree *f)
{
    const tblock *base = recs(f->blocks);
    uint64_t m = 0;
    if (f->n_ent == 1) {
        /* one stream in the index: every block of the set is of it (an entry leaves only
         * empty), so the largest is the last node of its highest bin, down the right
         * spine without comparing keys (sizes are below 2^64 - 1: tree_last_of's node) */
        uint32_t bin = bits_top(&f->ent[0]);
        uint32_t t = bin == FB_NONE ? T_NONE : f->root[bin];
        if (t != T_NONE) {
            while (base[t].right != T_NONE)
                t = base[t].right;
            m = base[t].size;
        }
        f->largest = m;
        f->largest_dirty = false;
        return m;
    }
    for (uint32_t i = 0; i < f->n_ent; i++) {
        const tstream *e = &f->ent[i];
        uint32_t bin = bits_top(e);
        if (bin == FB_NONE)
            continue;
        uint32_t t = tree_last_of(base, f->root[bin], ord_of(f, base), e->stream);
        if (t != T_NONE && base[t].size > m)
            m = base[t].size;
    }
    f->largest = m;
    f->largest_dirty = false;
    return m;
}

/* ==== Collecting a set in order ==== */

bool torch_fs_list_push(tlist *l, uint32_t h)
{
    if (!SIM_GROW(l->h, l->len + 1, l->cap))
        return false;
    l->h[l->len++] = h;
    return true;
}

void torch_fs_list_release(tlist *l)
{
    free(l->h);
    *l = (tlist){0};
}

/* In-order walk of the stream's nodes in a treap (subtrees wholly on other
 * streams are skipped): O(depth + nodes of the stream). */
static bool collect_at(const tblock *base, uint32_t t, uint32_t stream, tlist *out)
{
    bool ok = true;
    while (t != T_NONE) {
        const tblock *n = base + t;
        if (n->stream < stream) {
            t = n->right;
            continue;
        }
        if (n->stream > stream) {
            t = n->left;
            continue;
        }
        ok = collect_at(base, n->left, stream, out) && ok;
        ok = torch_fs_list_push(out, t) && ok;
        t = n->right;
    }
    return ok;
}

bool torch_fs_collect(const tfree *f, tlist *out)
{
    const tblock *base = recs(f->blocks);
    bool ok = true;
    out->len = 0;
    for (uint32_t i = 0; i < f->n_ent; i++) {
        const tstream *e = &f->ent[i];
        for (uint32_t bin = bits_test(e, 0) ? 0 : bits_next(e, 0); bin != FB_NONE; bin = bits_next(e, bin))
            ok = collect_at(base, f->root[bin], e->stream, out) && ok;
    }
    return ok;
}
