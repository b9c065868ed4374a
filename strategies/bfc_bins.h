/* bfc_bins.h — the BFC strategy's binned free set: free chunks ordered by (size,
 * address), in TensorFlow's 21 bins (bin b < 20 holds sizes [256·2^b, 256·2^(b+1)),
 * bin 20 everything ≥ 256 MiB), each cut into 16 slices of increasing sizes (a
 * TLSF-like second level, ours: it only shortens searches). It links the caller's
 * chunk records and never allocates. */

/* Layout: each slice is a treap with parent links and a cached min and max; a 21-bit
 * bitmap over bins and a 16-bit one per bin over slices. The set is intrusive: it links
 * bfc_chunk records (bfc_types.h) of a table ck[] that the caller owns, keyed by their
 * size and addr fields and heap-ordered by their prio field, which the caller sets
 * before inserting; it writes only their child, parent, bin and slice fields, and size
 * and addr in bfc_bins_rekey. ck may move between calls (the table grows) but not during
 * one. Every chunk holds one distinct address.
 *
 * Cost, with f the chunks in one slice: insert, erase, rekey and best fit O(log f)
 * expected (a treap; erase needs no search, by the parent links), largest and the bin
 * and slice of a size O(1), one iteration step O(log f) worst and O(1) amortized over a
 * whole iteration. No allocation ever: the set is the fixed struct bfc_bins plus the
 * links inside the chunks. */
#ifndef GPUSIM_BFC_BINS_H
#define GPUSIM_BFC_BINS_H

#include <stdbool.h>
#include <stdint.h>

#include "bfc_types.h"
#include "sim/units.h"

/* BinNumForSize: min(20, floor(log2(max(size, 256) >> 8))). */
static inline unsigned bfc_bin_for(uint64_t size)
{
    uint64_t q = size >> 8;
    if (q == 0)
        return 0;
    unsigned b = units_log2(q);
    return b < BFC_NUM_BINS - 1 ? b : BFC_NUM_BINS - 1;
}

/* The slice of a size inside bin b: 16 equal parts of [256·2^b, 256·2^(b+1)) for
 * b < 20; for bin 20 (≥ 256 MiB) one slice per power of two. Non-decreasing in size,
 * which is all the (size, address) order needs. Like TLSF's second level (Masmano et
 * al. 2004), it keeps each tree small; TF's bins and best fit are unchanged. */
static inline unsigned bfc_slice_for(uint64_t size, unsigned b)
{
    uint64_t k;
    if (b < BFC_NUM_BINS - 1) {
        uint64_t base = (uint64_t)256 << b;
        k = size >= base ? (size - base) >> (b + 4) : 0;
    } else {
        k = (size >> 28) ? units_log2(size >> 28) : 0;
    }
    return k < BFC_SLICES ? (unsigned)k : BFC_SLICES - 1;
}

/* bfc_bin_for(size), and bfc_slice_for(size, that bin) in *sl, at once: one count of
 * leading zeros. Below bin 20 a size of bin b is 16·2^(b+4) plus its slice times
 * 2^(b+4), so the slice is the four bits below the leading one; sizes below 256
 * count as 256 (bin 0, slice 0). */
static inline unsigned bfc_bin_slice(uint64_t size, unsigned *sl)
{
    uint64_t x = size < 256 ? 256 : size;
    unsigned lg = 63u - (unsigned)__builtin_clzll(x); /* ≥ 8 */
    unsigned below = (unsigned)(x >> (lg - 4)) & 15u;
    unsigned top = lg - 28u < BFC_SLICES - 1 ? lg - 28u : BFC_SLICES - 1; /* bin 20's, if lg ≥ 28 */
    bool big = lg >= 28u;
    *sl = big ? top : below;
    return big ? BFC_NUM_BINS - 1 : lg - 8u;
}

/* The size of the largest chunk, 0 for an empty set: kept up to date by the
 * changes, O(1). */
static inline uint64_t bfc_bins_largest(const bfc_bins *fs)
{
    return fs->largest;
}

/* The same found from the bins, not the kept value: the last chunk of the highest
 * non-empty slice. For the changes and the checker. */
static inline uint64_t bfc_bins_largest_scan(const bfc_bins *fs, const bfc_chunk *ck)
{
    if (fs->bitmap == 0)
        return 0;
    unsigned top = 31u - (unsigned)__builtin_clz(fs->bitmap);
    unsigned sl = 31u - (unsigned)__builtin_clz(fs->slice_mask[top]);
    return ck[fs->slice[top][sl].max].size;
}

/* An empty set. */
void bfc_bins_init(bfc_bins *fs);

/* The out-of-line parts of the inline operations below (bfc_bins.c): insert h into
 * slice bn, which holds chunks already; erase h from its slice bn, which holds more
 * than h; best fit when the slice of size (bin b, slice sl) holds chunks but its
 * first is smaller than size. */
void bfc_bins_insert_tree(bfc_chunk *ck, bfc_bin *bn, uint32_t h);
void bfc_bins_erase_tree(bfc_chunk *ck, bfc_bin *bn, uint32_t h);
uint32_t bfc_bins_fit_after_min(const bfc_bins *fs, const bfc_chunk *ck, uint64_t size, unsigned b, unsigned sl);
/* bfc_bins_rekey when the key keeps h's slice, which holds other chunks too. */
void bfc_bins_rekey_within(bfc_bins *fs, bfc_chunk *ck, uint32_t h, uint64_t size, uint64_t addr);

/* Add chunk h to slice sl of bin b: the body of the inserts below. Inline, as
 * erase, rekey and best fit are: they run once or twice per event, and most slices
 * hold one chunk or none, so the common case is a few stores and bitmap bits. */
static inline void bfc_bins_insert_slice(bfc_bins *fs, bfc_chunk *ck, uint32_t h, unsigned b, unsigned sl)
{
    uint64_t size = ck[h].size;
    bfc_bin *bn = &fs->slice[b][sl];
    ck[h].bin = (uint8_t)b;
    ck[h].slice = (uint8_t)sl;
    ck[h].child[0] = ck[h].child[1] = BFC_NONE;
    fs->largest = size > fs->largest ? size : fs->largest;
    if (bn->root != BFC_NONE) {
        bfc_bins_insert_tree(ck, bn, h);
        return;
    }
    ck[h].parent = BFC_NONE;
    bn->root = bn->min = bn->max = h;
    fs->bitmap |= 1u << b;
    fs->slice_mask[b] = (uint16_t)(fs->slice_mask[b] | (1u << sl));
}

/* Add chunk h to bin b whatever its size: only to corrupt a state on purpose
 * (tests/support/corrupt_bfc.c), since the set's searches assume the bin of the
 * size. */
static inline void bfc_bins_insert_at(bfc_bins *fs, bfc_chunk *ck, uint32_t h, unsigned b)
{
    bfc_bins_insert_slice(fs, ck, h, b, bfc_slice_for(ck[h].size, b));
}

/* Add chunk h, not in the set, to the bin its size maps to. */
static inline void bfc_bins_insert(bfc_bins *fs, bfc_chunk *ck, uint32_t h)
{
    unsigned sl, b = bfc_bin_slice(ck[h].size, &sl);
    bfc_bins_insert_slice(fs, ck, h, b, sl);
}

/* Remove chunk h from the set, leaving its bin BFC_NO_BIN and its links BFC_NONE.
 * A chunk whose bin is BFC_NO_BIN is left alone (only a corrupted state has one
 * where a binned chunk is expected; the checker reports it). */
static inline void bfc_bins_erase(bfc_bins *fs, bfc_chunk *ck, uint32_t h)
{
    unsigned b = ck[h].bin;
    if (b >= BFC_NUM_BINS)
        return;
    unsigned sl = ck[h].slice;
    bfc_bin *bn = &fs->slice[b][sl];
    ck[h].bin = BFC_NO_BIN;
    if (bn->root != h || ck[h].child[0] != BFC_NONE || ck[h].child[1] != BFC_NONE) {
        bfc_bins_erase_tree(ck, bn, h);
    } else {
        /* h was the slice's only chunk, as most are: its links are all BFC_NONE already;
         * the bin's bit goes with its last slice (no branch: which it is, is random) */
        bn->root = bn->min = bn->max = BFC_NONE;
        unsigned mask = fs->slice_mask[b] & ~(1u << sl);
        fs->slice_mask[b] = (uint16_t)mask;
        fs->bitmap &= ~((uint32_t)(mask == 0) << b);
    }
    if (ck[h].size == fs->largest)
        fs->largest = bfc_bins_largest_scan(fs, ck);
}

/* Give chunk h, in the set, the key (size, addr). In place, O(1) plus one step to
 * its in-order neighbour (O(log f) worst), when the key keeps h's slice and its
 * place among the slice's chunks, as a chunk that grows or shrinks by its low or
 * high end mostly does; else an erase and an insert. */
static inline void bfc_bins_rekey(bfc_bins *fs, bfc_chunk *ck, uint32_t h, uint64_t size, uint64_t addr)
{
    unsigned sl, b = bfc_bin_slice(size, &sl);
    if (b != ck[h].bin || sl != ck[h].slice) {
        /* another slice (or h is not binned: only in a corrupted state) */
        bfc_bins_erase(fs, ck, h);
        ck[h].size = size;
        ck[h].addr = addr;
        bfc_bins_insert_slice(fs, ck, h, b, sl);
        return;
    }
    const bfc_bin *bn = &fs->slice[b][sl];
    if (bn->min != h || bn->max != h) {
        bfc_bins_rekey_within(fs, ck, h, size, addr);
        return;
    }
    /* h is its slice's only chunk: no link and no cache changes. The largest size is
     * only in the highest slice (slices part the sizes), so if h had it, it still has. */
    fs->largest = size > fs->largest || ck[h].size == fs->largest ? size : fs->largest;
    ck[h].size = size;
    ck[h].addr = addr;
}

/* Best fit (FindChunkPtr): the chunk of smallest size ≥ size, the lowest address
 * among equal sizes; BFC_NONE if every chunk is smaller. Bins below bin(size) hold
 * only smaller chunks, and every chunk of a higher bin is larger than any of
 * bin(size); the same holds for the slices inside a bin. So the first non-empty
 * slice at or after size's answers with its cached minimum, unless it is size's own
 * slice and that minimum is too small (then bfc_bins_fit_after_min). One mask test
 * instead of a test per level: an empty bin's slice mask is 0. */
static inline uint32_t bfc_bins_best_fit(const bfc_bins *fs, const bfc_chunk *ck, uint64_t size)
{
    unsigned sl, b = bfc_bin_slice(size, &sl);
    unsigned here = fs->slice_mask[b] & (0xFFFFu << sl);
    if (here) {
        unsigned k = (unsigned)__builtin_ctz(here);
        uint32_t m = fs->slice[b][k].min;
        if (k != sl || ck[m].size >= size)
            return m;
        return bfc_bins_fit_after_min(fs, ck, size, b, sl);
    }
    uint32_t above = fs->bitmap & ~((2u << b) - 1u);
    if (above == 0)
        return BFC_NONE;
    unsigned ab = (unsigned)__builtin_ctz(above);
    return fs->slice[ab][__builtin_ctz(fs->slice_mask[ab])].min;
}

/* The first chunk in (size, address) order, and the one after h; BFC_NONE past
 * the end. Changing the set ends an iteration. */
uint32_t bfc_bins_first(const bfc_bins *fs);
uint32_t bfc_bins_next(const bfc_bins *fs, const bfc_chunk *ck, uint32_t h);

/* Whether chunk h can be found by its key in the bin and slice its size maps to,
 * by a descent of at most n_max steps from the root, n_max ≥ the number of records
 * in ck: a bounded search that a checker can run on a corrupted set. */
bool bfc_bins_holds(const bfc_bins *fs, const bfc_chunk *ck, uint32_t n_max, uint32_t h);

#endif
