/* Deliberate breaches of the BFC strategy's state (corrupt_bfc.h), made from the
 * test side through its private types, as the async tests do. */
#include "corrupt_bfc.h"

#include "strategies/bfc_bins.h"
#include "strategies/bfc_types.h"

static const bfc_bin *first_slice(const strategy *s, bool (*want)(const bfc_bin *))
{
    for (unsigned b = 0; b < BFC_NUM_BINS; b++)
        for (unsigned k = 0; k < BFC_SLICES; k++)
            if (want(&s->bins.slice[b][k]))
                return &s->bins.slice[b][k];
    return NULL;
}

static bool slice_nonempty(const bfc_bin *bn)
{
    return bn->root != BFC_NONE;
}

static uint32_t find_free_chunk(const strategy *s)
{
    const bfc_bin *bn = first_slice(s, slice_nonempty);
    return bn ? bn->root : BFC_NONE;
}

bool corrupt_bfc(strategy *s, bfc_corruption kind)
{
    bfc_chunk *ck = bfc_chunk_table(s);
    switch (kind) {
    case BFC_CORRUPT_GAP: {
        /* a used chunk followed by another chunk: shrink it by 256, leaving a gap */
        for (uint32_t i = 0; i < s->n_regions; i++)
            for (uint32_t h = s->regions[i].live ? s->regions[i].first : BFC_NONE; h != BFC_NONE; h = ck[h].next)
                if (ck[h].state == CHUNK_USED && ck[h].next != BFC_NONE && ck[h].size > BFC_MIN_ALLOC) {
                    ck[h].size -= BFC_MIN_ALLOC;
                    s->bytes_in_use -= BFC_MIN_ALLOC;
                    return true;
                }
        return false;
    }
    case BFC_CORRUPT_ADJACENT_FREE: {
        /* a used chunk whose next neighbour is free turns free and is binned as it is */
        for (uint32_t i = 0; i < s->n_regions; i++)
            for (uint32_t h = s->regions[i].live ? s->regions[i].first : BFC_NONE; h != BFC_NONE; h = ck[h].next)
                if (ck[h].state == CHUNK_USED && ck[h].next != BFC_NONE && ck[ck[h].next].state == CHUNK_FREE) {
                    ck[h].state = CHUNK_FREE;
                    s->bytes_in_use -= ck[h].size;
                    bfc_bins_insert(&s->bins, ck, h);
                    return true;
                }
        return false;
    }
    case BFC_CORRUPT_WRONG_BIN: {
        uint32_t h = find_free_chunk(s);
        if (h == BFC_NONE)
            return false;
        unsigned b = ck[h].bin;
        bfc_bins_erase(&s->bins, ck, h);
        bfc_bins_insert_at(&s->bins, ck, h, b == 0 ? 1u : b - 1u);
        return true;
    }
    case BFC_CORRUPT_NOT_IN_BIN: {
        uint32_t h = find_free_chunk(s);
        if (h == BFC_NONE)
            return false;
        bfc_bins_erase(&s->bins, ck, h);
        return true;
    }
    case BFC_CORRUPT_BIN_ORDER: {
        for (unsigned b = 0; b < BFC_NUM_BINS; b++)
            for (unsigned k = 0; k < BFC_SLICES; k++) {
                uint32_t root = s->bins.slice[b][k].root;
                if (root != BFC_NONE && (ck[root].child[0] != BFC_NONE || ck[root].child[1] != BFC_NONE)) {
                    uint32_t l = ck[root].child[0];
                    ck[root].child[0] = ck[root].child[1];
                    ck[root].child[1] = l;
                    return true;
                }
            }
        return false;
    }
    case BFC_CORRUPT_BITMAP:
        for (unsigned b = 0; b < BFC_NUM_BINS; b++)
            if (s->bins.slice_mask[b] == 0) {
                s->bins.bitmap |= 1u << b;
                return true;
            }
        return false;
    case BFC_CORRUPT_BYTES_IN_USE:
        s->bytes_in_use += BFC_MIN_ALLOC;
        s->peak_bytes_in_use += BFC_MIN_ALLOC;
        return true;
    case BFC_CORRUPT_POOL_BYTES:
        s->pool_bytes += BFC_MIN_ALLOC;
        s->peak_pool_bytes += BFC_MIN_ALLOC;
        return true;
    case BFC_CORRUPT_PEAK_IN_USE:
        if (s->bytes_in_use == 0)
            return false;
        s->peak_bytes_in_use = s->bytes_in_use - 1;
        return true;
    case BFC_CORRUPT_PEAK_POOL:
        if (s->pool_bytes == 0)
            return false;
        s->peak_pool_bytes = s->pool_bytes - 1;
        return true;
    case BFC_CORRUPT_REGION_COUNT:
        s->live_regions++;
        return true;
    case BFC_CORRUPT_BIN_CACHE:
        for (unsigned b = 0; b < BFC_NUM_BINS; b++)
            for (unsigned k = 0; k < BFC_SLICES; k++)
                if (s->bins.slice[b][k].root != BFC_NONE && s->bins.slice[b][k].min != s->bins.slice[b][k].max) {
                    s->bins.slice[b][k].max = s->bins.slice[b][k].min;
                    return true;
                }
        return false;
    case BFC_CORRUPT_LARGEST:
        s->bins.largest += BFC_MIN_ALLOC;
        return true;
    case BFC_CORRUPT_SPARE: {
        /* a chunk of a region's chain is also kept as a spare record */
        uint32_t first = s->n_regions > 0 && s->regions[0].live ? s->regions[0].first : BFC_NONE;
        if (first == BFC_NONE)
            return false;
        ck[first].parent = s->spare_head;
        s->spare_head = first;
        s->n_spares++;
        return true;
    }
    case BFC_CORRUPT_SPARE_COUNT:
        s->n_spares++;
        return true;
    case BFC_CORRUPT_SECOND_GAP: {
        uint32_t h = find_free_chunk(s);
        if (!s->opt.spatial || s->gap == BFC_NONE || h == BFC_NONE)
            return false;
        ck[h].tag = BFC_TAG_GAP; /* still binned, and not the recorded gap */
        return true;
    }
    case BFC_CORRUPT_GAP_AS_HOLE: {
        uint32_t h = s->gap;
        if (h == BFC_NONE)
            return false;
        ck[h].tag = BFC_TAG_LOWER; /* a hole at the region's end, with nothing above it */
        s->gap = BFC_NONE;
        bfc_bins_insert(&s->bins, ck, h);
        return true;
    }
    }
    return false;
}

