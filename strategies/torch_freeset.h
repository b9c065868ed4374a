/* torch_freeset.h — the free set of one pool of the `torch` strategy (the role of
 * jemalloc's eset): free block records, held by handle in a slots table, ordered as
 * PyTorch's BlockPool std::set, by (stream, size, address). Also the raw treaps that
 * order expandable segments' unmapped ranges. */

/* Stored TLSF-like: size bins (exact below 16 KiB, then 32 per power of two;
 * torch_fs_bin is monotone in size), each a treap by (stream, size, address) whose
 * priorities hash the handle (torch_fs_pri, kept in the record; deterministic, expected
 * depth O(log b), b = blocks in the bin), and an index sorted by stream holding, per
 * stream with free blocks, a bitmap of its bins with a summary word, so the next
 * occupied bin is two count-trailing-zeros away. The set also keeps the sum of its sizes
 * and its largest size; a block in the set keeps its bin in its record. The raw treaps
 * (torch_fs_tree_*) serve the unmapped ranges of expandable segments too, ordered by
 * (stream, address). Costs: s = streams with free blocks in the set (lookup O(1) when
 * the stream is the one found last among those ≡ it mod FB_HINTS, else O(log s)); b =
 * blocks in one bin. No allocation except when a stream first enters the index or a list
 * grows. */
#ifndef GPUSIM_TORCH_FREESET_H
#define GPUSIM_TORCH_FREESET_H

#include <stdbool.h>
#include <stdint.h>

#include "torch_types.h"

/* The bin of a free block of this size: exact below 32·512 B, then 32 bins per
 * power of two (TLSF's two-level mapping). Monotone in size, so bins in index
 * order are blocks in size order. O(1). */
static inline uint32_t torch_fs_bin(uint64_t size)
{
    /* without a branch: with fl = max(floor(log2 u), FB_SL), u >> (fl − FB_SL) is u
     * itself below FB_SUB, else FB_SUB + its FB_SL bits below the top one, so the
     * sum below is u, or (fl − FB_SL + 1) · FB_SUB + those bits */
    uint64_t u = size >> 9;
    uint32_t fl = 63u - (uint32_t)__builtin_clzll(u | FB_SUB);
    return (fl - FB_SL) * FB_SUB + (uint32_t)(u >> (fl - FB_SL));
}

/* Whether a orders strictly before b: by (stream, size, tie), or by (stream, tie)
 * when by_addr; ta and tb are their ties (the address, or a free set's creation
 * number, torch_fs_order_by_creation). O(1). */
static inline bool torch_fs_before_tie(const tblock *a, uint64_t ta, const tblock *b, uint64_t tb, bool by_addr)
{
    if (a->stream != b->stream)
        return a->stream < b->stream;
    if (!by_addr && a->size != b->size)
        return a->size < b->size;
    return ta < tb;
}

/* torch_fs_before_tie with the addresses as ties. O(1). */
static inline bool torch_fs_before(const tblock *a, const tblock *b, bool by_addr)
{
    return torch_fs_before_tie(a, a->addr, b, b->addr, by_addr);
}

/* A node's treap priority: the top 16 bits of a mix of its handle (murmur3's
 * finalizer), deterministic, and random enough that the expected depth is
 * O(log n) whatever the key order (equal priorities only cost a level now and
 * then). Written into the record (tblock.pri) as the node enters its treap, so
 * that a step down the tree reads it from the node it loads anyway. O(1). */
static inline uint16_t torch_fs_pri(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return (uint16_t)(h >> 16);
}

/* ==== The free set ==== */

/* An empty set over the records of blocks (borrowed; it may grow, it must not move). O(bins). */
void torch_fs_init(tfree *f, const slots *blocks);
void torch_fs_release(tfree *f);
/* Order the set's blocks of equal stream and size by born[handle] (lowest first)
 * instead of by address (PyTorch 2.12, torch_rules.tie_by_creation); *born is read
 * at every operation, so the array may move between them. The set must be empty. */
void torch_fs_order_by_creation(tfree *f, uint64_t *const *born);

/* Put block h in (its addr, size and stream are its key; they must not change while
 * it is in). False, the set unchanged, when host memory is out. O(log b + log s). */
bool torch_fs_insert(tfree *f, uint32_t h);
/* Take h out. False, the set unchanged, when h is not in it. O(log b + log s). */
bool torch_fs_erase(tfree *f, uint32_t h);

/* std::set::lower_bound of (stream, size, 0) among the stream's blocks: the smallest
 * block ≥ size, the lowest address (or creation number) among equal sizes; T_NONE if
 * there is none.
 * O(log b + log s). */
uint32_t torch_fs_lower_bound(tfree *f, uint32_t stream, uint64_t size);

/* A block found by torch_fs_find and where the set holds it, so that torch_fs_take need not
 * look for it again (the malloc path's best fit, then its removal). */
typedef struct torch_fs_pos {
    uint32_t h;     /* the block, T_NONE if none */
    uint32_t *link; /* the treap link that points at it */
    tstream *e;     /* its stream's index entry */
} torch_fs_pos;

/* torch_fs_lower_bound, with the block's place in the set. O(log b + log s). */
torch_fs_pos torch_fs_find(tfree *f, uint32_t stream, uint64_t size);
/* Take out the block p names; p from torch_fs_find on this set, nothing inserted or
 * erased since (the block records may not have moved either). O(log b). */
void torch_fs_take(tfree *f, torch_fs_pos p);
/* The stream's last block below (stream, size, 0) (std::prev of lower_bound), or
 * T_NONE. O(log b + log s). */
uint32_t torch_fs_last_below(tfree *f, uint32_t stream, uint64_t size);
/* The next / previous block of h's stream in (size, address) order, or T_NONE; h in
 * the set. O(log b + log s). */
uint32_t torch_fs_next(tfree *f, uint32_t h);
uint32_t torch_fs_prev(tfree *f, uint32_t h);

/* The largest size in the set, recomputed (O(s · log b): per stream, the last
 * block of its highest bin). */
uint64_t torch_fs_largest_recompute(tfree *f);

/* The largest size in the set (0 when empty): the kept value, recomputed first if
 * the block holding it has left (torch_fs_largest_recompute), else O(1). */
static inline uint64_t torch_fs_largest(tfree *f)
{
    return f->largest_dirty ? torch_fs_largest_recompute(f) : f->largest;
}

/* The sum of the sizes in the set. O(1). */
static inline uint64_t torch_fs_bytes(const tfree *f)
{
    return f->bytes;
}

/* Every block of the set in (stream, size, address) order into out (emptied first):
 * streams in index order, each stream's bins in size order. False when host memory
 * ran out (out then lacks some). O(n + s · bins / 64). */
bool torch_fs_collect(const tfree *f, tlist *out);

/* ==== For the checker and the test hooks (torch_check.c) ==== */

/* Where the stream's entry is in the index, or where it would go. O(log s). */
uint32_t torch_fs_stream_slot(const tfree *f, uint32_t stream);
/* The stream's entry, or NULL. O(1) when its hint holds, else O(log s). */
tstream *torch_fs_stream_entry(tfree *f, uint32_t stream);
/* Remove an entry from the index (whatever its blocks). O(s). */
void torch_fs_stream_drop(tfree *f, tstream *e);

/* ==== Raw treaps over block records (one bin; the unmapped sets) ==== */

/* Insert h into the treap at *root. O(depth). */
void torch_fs_tree_insert(const slots *blocks, uint32_t *root, bool by_addr, uint32_t h);
/* Erase h; false, the treap unchanged, when h is not in it. O(depth). */
bool torch_fs_tree_erase(const slots *blocks, uint32_t *root, bool by_addr, uint32_t h);
/* The first node whose key is ≥ (stream, size, addr) (size ignored when by_addr), or
 * T_NONE. O(depth). */
uint32_t torch_fs_tree_lower_bound(const slots *blocks, uint32_t root, bool by_addr, uint32_t stream, uint64_t size,
                                   uint64_t addr);
/* The node after h in the treap's order, or T_NONE. O(depth). */
uint32_t torch_fs_tree_next(const slots *blocks, uint32_t root, bool by_addr, uint32_t h);

/* ==== Lists of handles ==== */

/* Append h; false (the list unchanged) when host memory is out. Amortized O(1). */
bool torch_fs_list_push(tlist *l, uint32_t h);
void torch_fs_list_release(tlist *l);

#endif
