/* The BFC strategy's binned free set (bfc_bins.h).
 *
 * Each slice is a treap (Seidel & Aragon 1996) with parent links: a search tree in
 * (size, address) order and a max-heap in the random priorities, so its expected
 * depth is O(log n). Parent links let a chunk leave its bin without a search from
 * the root. Descents choose the child by index (child[go_right]) rather than by
 * branch: the comparisons are data-dependent and would mispredict about half the
 * time. A sorted array per bin was rejected: a training step can leave thousands of
 * free chunks in one bin, and O(n) inserts. */
#include "bfc_bins.h"

static inline unsigned key_below(const bfc_chunk *ck, uint32_t a, uint32_t b)
{
    /* 1 when chunk a orders before chunk b: (size, address) */
    return (unsigned)(ck[a].size < ck[b].size) | ((unsigned)(ck[a].size == ck[b].size) & (unsigned)(ck[a].addr < ck[b].addr));
}

static uint32_t tree_leftmost(const bfc_chunk *ck, uint32_t t)
{
    while (ck[t].child[0] != BFC_NONE)
        t = ck[t].child[0];
    return t;
}

static uint32_t tree_rightmost(const bfc_chunk *ck, uint32_t t)
{
    while (ck[t].child[1] != BFC_NONE)
        t = ck[t].child[1];
    return t;
}

/* h's in-order neighbour in its slice, below (dir 0) or above (dir 1); BFC_NONE at
 * the slice's end: the extreme of the subtree on that side, else the first ancestor
 * reached from the other side. */
static uint32_t tree_neighbour(const bfc_chunk *ck, uint32_t h, unsigned dir)
{
    uint32_t t = ck[h].child[dir];
    if (t != BFC_NONE) {
        while (ck[t].child[!dir] != BFC_NONE)
            t = ck[t].child[!dir];
        return t;
    }
    t = h;
    uint32_t p = ck[t].parent;
    while (p != BFC_NONE && ck[p].child[dir] == t) {
        t = p;
        p = ck[t].parent;
    }
    return p;
}

/* The link that points at n: its parent's child slot, or the slice's root. */
static inline uint32_t *link_to(bfc_chunk *ck, bfc_bin *bn, uint32_t n)
{
    uint32_t p = ck[n].parent;
    return p == BFC_NONE ? &bn->root : &ck[p].child[ck[p].child[1] == n];
}

/* Rotate n above its parent, keeping key order:
 *      p            n
 *     / \          / \
 *    n   c   =>   a   p        (and the mirror image)
 *   / \              / \
 *  a   b            b   c */
static void rotate_up(bfc_chunk *ck, bfc_bin *bn, uint32_t n)
{
    uint32_t p = ck[n].parent;
    unsigned dir = ck[p].child[1] == n;
    uint32_t b = ck[n].child[!dir];
    *link_to(ck, bn, p) = n;
    ck[n].parent = ck[p].parent;
    ck[p].child[dir] = b;
    if (b != BFC_NONE)
        ck[b].parent = p;
    ck[n].child[!dir] = p;
    ck[p].parent = n;
}

void bfc_bins_init(bfc_bins *fs)
{
    for (unsigned b = 0; b < BFC_NUM_BINS; b++) {
        for (unsigned k = 0; k < BFC_SLICES; k++)
            fs->slice[b][k] = (bfc_bin){BFC_NONE, BFC_NONE, BFC_NONE};
        fs->slice_mask[b] = 0;
    }
    fs->bitmap = 0;
    fs->largest = 0;
}

/* Insert h into a non-empty slice: descend, link, then rotate up by priority. Out
 * of line, so that the common empty-slice case (bfc_bins_insert_at) stays short. */
void bfc_bins_insert_tree(bfc_chunk *ck, bfc_bin *bn, uint32_t h)
{
    uint32_t parent = BFC_NONE;
    unsigned dir = 0;
    for (uint32_t t = bn->root; t != BFC_NONE; t = ck[t].child[dir]) {
        parent = t;
        dir = key_below(ck, t, h);
    }
    ck[h].parent = parent;
    ck[parent].child[dir] = h;
    if (key_below(ck, h, bn->min))
        bn->min = h;
    if (key_below(ck, bn->max, h))
        bn->max = h;
    /* restore the heap order: expected fewer than two rotations */
    while (ck[h].parent != BFC_NONE && ck[ck[h].parent].prio < ck[h].prio)
        rotate_up(ck, bn, h);
}

/* Erase h from a slice that holds more than h (out of line, as the insert's descent). */
void bfc_bins_erase_tree(bfc_chunk *ck, bfc_bin *bn, uint32_t h)
{
    /* the caches move to h's in-order neighbour: a minimum has no left child, so its
     * successor is the leftmost of its right subtree, else its parent (and mirrored) */
    if (bn->min == h)
        bn->min = ck[h].child[1] != BFC_NONE ? tree_leftmost(ck, ck[h].child[1]) : ck[h].parent;
    if (bn->max == h)
        bn->max = ck[h].child[0] != BFC_NONE ? tree_rightmost(ck, ck[h].child[0]) : ck[h].parent;
    /* rotate h down below its higher-priority child until it has at most one child */
    while (ck[h].child[0] != BFC_NONE && ck[h].child[1] != BFC_NONE) {
        uint32_t l = ck[h].child[0], r = ck[h].child[1];
        rotate_up(ck, bn, ck[l].prio > ck[r].prio ? l : r);
    }
    uint32_t only = ck[h].child[0] != BFC_NONE ? ck[h].child[0] : ck[h].child[1];
    *link_to(ck, bn, h) = only;
    if (only != BFC_NONE)
        ck[only].parent = ck[h].parent;
    ck[h].child[0] = ck[h].child[1] = ck[h].parent = BFC_NONE;
}

void bfc_bins_rekey_within(bfc_bins *fs, bfc_chunk *ck, uint32_t h, uint64_t size, uint64_t addr)
{
    /* a key that moves up (down) keeps h's place iff it stays below (above) the next
     * (previous) chunk of the slice: then no link and no cache changes */
    const bfc_bin *bn = &fs->slice[ck[h].bin][ck[h].slice];
    unsigned up = (unsigned)(size > ck[h].size) | ((unsigned)(size == ck[h].size) & (unsigned)(addr > ck[h].addr));
    if ((up ? bn->max : bn->min) != h) {
        uint32_t nb = tree_neighbour(ck, h, up);
        bool keeps = up ? size < ck[nb].size || (size == ck[nb].size && addr < ck[nb].addr)
                        : size > ck[nb].size || (size == ck[nb].size && addr > ck[nb].addr);
        if (!keeps) {
            bfc_bins_erase(fs, ck, h);
            ck[h].size = size;
            ck[h].addr = addr;
            bfc_bins_insert(fs, ck, h);
            return;
        }
    }
    /* h keeps its place. The largest size is only in the highest slice (slices part
     * the sizes), so if h had it, its slice's last chunk has it now. */
    bool was_largest = ck[h].size == fs->largest;
    ck[h].size = size;
    ck[h].addr = addr;
    if (size > fs->largest)
        fs->largest = size;
    else if (was_largest)
        fs->largest = ck[bn->max].size;
}

/* The minimum of the first non-empty slice at or after slice sl of bin b. */
static uint32_t first_from(const bfc_bins *fs, unsigned b, unsigned sl)
{
    if (b >= BFC_NUM_BINS)
        return BFC_NONE;
    unsigned here = sl < BFC_SLICES ? fs->slice_mask[b] & ~((1u << sl) - 1u) : 0;
    if (here)
        return fs->slice[b][__builtin_ctz(here)].min;
    uint32_t above = fs->bitmap & ~((2u << b) - 1u);
    if (above == 0)
        return BFC_NONE;
    unsigned ab = (unsigned)__builtin_ctz(above);
    return fs->slice[ab][__builtin_ctz(fs->slice_mask[ab])].min;
}

/* bfc_bins_best_fit's slow case: the slice of size holds chunks, its first is too
 * small. A later chunk of the slice may fit, else the first of a later slice. */
uint32_t bfc_bins_fit_after_min(const bfc_bins *fs, const bfc_chunk *ck, uint64_t size, unsigned b, unsigned sl)
{
    const bfc_bin *bn = &fs->slice[b][sl];
    if (ck[bn->max].size >= size) {
        /* lower bound of (size, 0): the leftmost node with size ≥ size */
        uint32_t best = BFC_NONE;
        for (uint32_t t = bn->root; t != BFC_NONE;) {
            unsigned fits = ck[t].size >= size;
            best = fits ? t : best;
            t = ck[t].child[!fits];
        }
        return best;
    }
    return first_from(fs, b, sl + 1u);
}

uint32_t bfc_bins_first(const bfc_bins *fs)
{
    return first_from(fs, 0, 0);
}

uint32_t bfc_bins_next(const bfc_bins *fs, const bfc_chunk *ck, uint32_t h)
{
    if (ck[h].child[1] != BFC_NONE)
        return tree_leftmost(ck, ck[h].child[1]);
    /* climb while h is a right child; the first ancestor reached from the left
     * follows h in its slice */
    uint32_t t = h, p = ck[t].parent;
    while (p != BFC_NONE && ck[p].child[1] == t) {
        t = p;
        p = ck[t].parent;
    }
    if (p != BFC_NONE)
        return p;
    return first_from(fs, ck[h].bin, ck[h].slice + 1u);
}

bool bfc_bins_holds(const bfc_bins *fs, const bfc_chunk *ck, uint32_t n_max, uint32_t h)
{
    unsigned b = bfc_bin_for(ck[h].size);
    uint32_t t = fs->slice[b][bfc_slice_for(ck[h].size, b)].root;
    for (uint64_t steps = 0; t != BFC_NONE && t < n_max && steps <= n_max; steps++) {
        if (t == h)
            return true;
        t = ck[t].child[key_below(ck, t, h)];
    }
    return false;
}
