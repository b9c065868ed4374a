/* The BFC strategy's walker and invariant checker (tests/support/corrupt_bfc.c
 * breaks the state on purpose). The checker trusts nothing it reads: every chain and tree walk
 * is bounded by the number of chunk records, so a corrupted state is reported, never
 * looped over. */
#include <stdlib.h>

#include "bfc_bins.h"
#include "bfc_types.h"

static inline bool chunk_less(const bfc_chunk *ck, uint32_t a, uint32_t b)
{
    return ck[a].size < ck[b].size || (ck[a].size == ck[b].size && ck[a].addr < ck[b].addr);
}

/* ==== walker and locate ==== */

/* What the walker shows of chunk c of region r. */
static strategy_block chunk_block(const strategy *s, const bfc_chunk *c, uint32_t r)
{
    /* with spatial partitioning, the partition: the central gap, or the lower one
     * (used chunks and its holes); classic BFC has no partitions */
    const char *part = !s->opt.spatial ? NULL : c->tag == BFC_TAG_GAP ? "central gap" : "lower";
    return (strategy_block){
        .addr = c->addr,
        .size_bytes = c->size,
        .requested_bytes = c->state == CHUNK_FREE ? 0 : c->requested,
        .region_addr = s->regions[r].addr,
        .region = r,
        .stream = c->state == CHUNK_FREE ? 0 : c->stream,
        .state = c->state == CHUNK_FREE ? BLOCK_FREE : c->state == CHUNK_PENDING ? BLOCK_PENDING : BLOCK_USED,
        .pool = part,
    };
}

/* Blocks in address order: regions are created at increasing addresses (design.md §3),
 * so creation order is address order. The step budget keeps a corrupted (cyclic)
 * chain from looping forever. */
int bfc_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    const bfc_chunk *ck = bfc_chunk_table(s);
    uint64_t budget = s->chunks.n_used_hw;
    for (uint32_t r = 0; r < s->n_regions; r++) {
        const bfc_region *rg = &s->regions[r];
        if (!rg->live)
            continue;
        for (uint32_t h = rg->first; h != BFC_NONE && h < s->chunks.n_used_hw && budget > 0;
             h = ck[h].next, budget--) {
            strategy_block b = chunk_block(s, &ck[h], r);
            int rc = v(ctx, &b);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* An allocation's handle is its chunk's record, which stays the allocation's until
 * its free_ready (a split or merge moves only free neighbours' records): O(1). */
bool bfc_locate(const strategy *s, strategy_handle h, strategy_block *out)
{
    if (!slots_valid(&s->chunks, h))
        return false;
    const bfc_chunk *c = &bfc_chunk_table(s)[h];
    if (c->state != CHUNK_USED && c->state != CHUNK_PENDING)
        return false; /* a zero-byte allocation holds no chunk */
    *out = chunk_block(s, c, c->region);
    return true;
}

/* ==== invariant checker ==== */

typedef struct check_totals {
    uint64_t used_bytes;   /* USED + PENDING chunk sizes */
    uint64_t pool;         /* sum of live regions */
    uint64_t free_chunks;  /* binned ones: every free chunk but the central gap */
    uint64_t gaps;         /* GAP-tagged chunks */
    uint64_t region_chunks;
    uint64_t largest_binned; /* the largest binnable free chunk (not the central gap) */
    uint32_t regions;
} check_totals;

/* The partition rules (bfc.c rule 10) for chunk h of a region's chain. */
static void check_tag(const strategy *s, sim_report *r, uint32_t h, check_totals *t)
{
    const bfc_chunk *ck = bfc_chunk_table(s);
    const bfc_chunk *c = &ck[h];
    uint32_t hw = s->chunks.n_used_hw;
    bool is_free = c->state == CHUNK_FREE;
    if (!sim_report_insist(r, c->tag == BFC_TAG_GAP || c->tag == BFC_TAG_LOWER, "bfc: chunk %u has tag %u", h,
                           c->tag))
        return;
    if (c->tag == BFC_TAG_GAP) {
        t->gaps++;
        sim_report_insist(r, s->opt.spatial, "bfc: chunk %u is a central gap without spatial partitioning", h);
        sim_report_insist(r, is_free && h == s->gap && c->bin == BFC_NO_BIN,
                          "bfc: chunk %u is tagged central gap but is not the free, unbinned central gap %u", h,
                          s->gap);
        /* carves take the gap's low end, so the gap always reaches its region's end */
        sim_report_insist(r, c->next == BFC_NONE, "bfc: the central gap %u does not end its region", h);
    } else if (s->opt.spatial && is_free && s->xla_aborts == 0) {
        /* a lower hole is interior: a boundary chunk returns to the gap when freed
         * (unless that would have been a second gap, where XLA aborts: bfc.c) */
        sim_report_insist(r, c->next != BFC_NONE && c->next < hw && ck[c->next].state != CHUNK_FREE,
                          "bfc: lower hole %u at %llu borders no used chunk above it (should be the central gap)",
                          h, (unsigned long long)c->addr);
    }
}

static void check_regions(const strategy *s, sim_report *r, check_totals *t)
{
    const bfc_chunk *ck = bfc_chunk_table(s);
    uint32_t hw = s->chunks.n_used_hw;
    for (uint32_t i = 0; i < s->n_regions; i++) {
        const bfc_region *rg = &s->regions[i];
        if (!rg->live)
            continue;
        t->regions++;
        t->pool += rg->size;
        uint64_t expect = rg->addr, sum = 0, steps = 0;
        uint32_t prev = BFC_NONE;
        bool prev_free = false;
        for (uint32_t h = rg->first; h != BFC_NONE; h = ck[h].next) {
            if (!sim_report_insist(r, h < hw && slots_valid(&s->chunks, h) && steps++ < hw,
                                   "bfc: region %u: chain reaches an invalid or repeated chunk %u", i, h))
                break;
            const bfc_chunk *c = &ck[h];
            t->region_chunks++;
            sim_report_insist(r, c->addr == expect,
                              "bfc: region %u: chunk %u at %llu, expected %llu (gap or overlap in the tiling)",
                              i, h, (unsigned long long)c->addr, (unsigned long long)expect);
            sim_report_insist(r, c->prev == prev, "bfc: region %u: chunk %u has prev %u, expected %u", i, h,
                              c->prev, prev);
            sim_report_insist(r, c->region == i, "bfc: chunk %u claims region %u, sits in %u", h, c->region, i);
            sim_report_insist(r, c->size >= BFC_MIN_ALLOC && c->size % BFC_MIN_ALLOC == 0,
                              "bfc: chunk %u has size %llu, not a positive multiple of 256", h,
                              (unsigned long long)c->size);
            bool is_free = c->state == CHUNK_FREE;
            sim_report_insist(r, c->state <= CHUNK_PENDING, "bfc: chunk %u in region %u has state %u", h, i,
                              c->state);
            sim_report_insist(r, !(is_free && prev_free),
                              "bfc: region %u: adjacent free chunks %u and %u at %llu (should have coalesced)",
                              i, prev, h, (unsigned long long)c->addr);
            check_tag(s, r, h, t);
            if (is_free && c->tag != BFC_TAG_GAP) {
                t->free_chunks++;
                if (c->size > t->largest_binned)
                    t->largest_binned = c->size;
            }
            else if (!is_free) {
                t->used_bytes += c->size;
                sim_report_insist(r, c->bin == BFC_NO_BIN, "bfc: used chunk %u is marked as in bin %u", h,
                                  c->bin);
                sim_report_insist(r, c->size <= s->largest_alloc_size,
                                  "bfc: used chunk %u of %llu exceeds largest_alloc_size %llu", h,
                                  (unsigned long long)c->size, (unsigned long long)s->largest_alloc_size);
            }
            expect = c->addr + c->size;
            sum += c->size;
            prev = h;
            prev_free = is_free;
        }
        sim_report_insist(r, sum == rg->size,
                          "bfc: region %u: chunks tile %llu bytes of %llu (gap or overlap in the tiling)", i,
                          (unsigned long long)sum, (unsigned long long)rg->size);
    }
}

/* Walks slice sl of bin b in order with an explicit stack; checks order (continuing
 * from *last, the previous slice's last chunk), mapping, state, the treap's heap order
 * and parent links, and the cached min/max. Returns the number of chunks seen. */
static uint64_t check_slice(const strategy *s, sim_report *r, unsigned b, unsigned sl, uint32_t *last,
                            uint32_t *stack, uint32_t cap)
{
    const bfc_chunk *ck = bfc_chunk_table(s);
    const bfc_bin *bn = &s->bins.slice[b][sl];
    uint32_t hw = s->chunks.n_used_hw;
    uint32_t sp = 0, first = BFC_NONE, mine = BFC_NONE;
    uint64_t seen = 0;
    uint32_t t = bn->root;
    while (t != BFC_NONE || sp > 0) {
        while (t != BFC_NONE) {
            if (!sim_report_insist(r, t < hw && sp < cap && seen + sp <= hw,
                                   "bfc: bin %u.%u: tree reaches an invalid chunk or a cycle at %u", b, sl, t))
                return seen;
            const bfc_chunk *c = &ck[t];
            for (unsigned d = 0; d < 2; d++) {
                uint32_t k = c->child[d];
                if (k == BFC_NONE || k >= hw)
                    continue;
                sim_report_insist(r, ck[k].prio <= c->prio, "bfc: bin %u.%u: treap priority order broken at %u", b,
                                  sl, t);
                sim_report_insist(r, ck[k].parent == t, "bfc: bin %u.%u: chunk %u's parent link is %u, not %u", b,
                                  sl, k, ck[k].parent, t);
            }
            stack[sp++] = t;
            t = c->child[0];
        }
        t = stack[--sp];
        const bfc_chunk *c = &ck[t];
        seen++;
        if (first == BFC_NONE)
            first = t;
        sim_report_insist(r, slots_valid(&s->chunks, t) && c->state == CHUNK_FREE,
                          "bfc: bin %u holds chunk %u that is not free", b, t);
        sim_report_insist(r, bfc_bin_for(c->size) == b,
                          "bfc: free chunk %u of size %llu sits in bin %u, belongs in bin %u (wrong bin)", t,
                          (unsigned long long)c->size, b, bfc_bin_for(c->size));
        sim_report_insist(r, bfc_slice_for(c->size, b) == sl, "bfc: free chunk %u of size %llu sits in slice %u.%u, "
                          "belongs in slice %u (wrong bin)", t, (unsigned long long)c->size, b, sl,
                          bfc_slice_for(c->size, b));
        sim_report_insist(r, c->bin == b && c->slice == sl, "bfc: chunk %u in bin %u.%u records bin %u.%u", t, b,
                          sl, c->bin, c->slice);
        if (*last != BFC_NONE)
            sim_report_insist(r, chunk_less(ck, *last, t),
                              "bfc: bin %u out of (size, address) order: %llu@%llu before %llu@%llu (bin order)",
                              b, (unsigned long long)ck[*last].size, (unsigned long long)ck[*last].addr,
                              (unsigned long long)c->size, (unsigned long long)c->addr);
        *last = mine = t;
        t = c->child[1];
    }
    sim_report_insist(r, bn->root == BFC_NONE || bn->root >= hw || ck[bn->root].parent == BFC_NONE,
                      "bfc: bin %u.%u: root %u has a parent", b, sl, bn->root);
    bool nonempty = bn->root != BFC_NONE;
    bool bit = (s->bins.slice_mask[b] >> sl) & 1u;
    sim_report_insist(r, bit == nonempty, "bfc: bitmap bit %u of bin %u's slices is %d but the slice is %s", sl, b,
                      bit, nonempty ? "non-empty" : "empty");
    sim_report_insist(r, bn->min == first && bn->max == mine,
                      "bfc: bin %u.%u caches min %u max %u, its first and last chunks are %u and %u (bin cache)", b,
                      sl, bn->min, bn->max, first, mine);
    return seen;
}

static uint64_t check_bin(const strategy *s, sim_report *r, unsigned b, uint32_t *stack, uint32_t cap)
{
    uint32_t last = BFC_NONE;
    uint64_t seen = 0;
    for (unsigned sl = 0; sl < BFC_SLICES; sl++)
        seen += check_slice(s, r, b, sl, &last, stack, cap);
    bool nonempty = seen > 0;
    bool bit = (s->bins.bitmap >> b) & 1u;
    sim_report_insist(r, bit == nonempty, "bfc: bitmap bit %u is %d but bin %u is %s", b, bit, b,
                      nonempty ? "non-empty" : "empty");
    sim_report_insist(r, bit == (s->bins.slice_mask[b] != 0), "bfc: bitmap bit %u is %d but the slice mask is %#x", b,
                      bit, s->bins.slice_mask[b]);
    return seen;
}

void bfc_check(const strategy *s, sim_report *r)
{
    check_totals t = {0};
    check_regions(s, r, &t);

    uint32_t cap = s->chunks.n_used_hw + 1;
    uint32_t *stack = malloc((size_t)cap * sizeof *stack);
    if (!sim_report_insist(r, stack != NULL, "bfc: checker out of host memory"))
        return;
    uint64_t binned = 0;
    for (unsigned b = 0; b < BFC_NUM_BINS; b++)
        binned += check_bin(s, r, b, stack, cap);
    free(stack);
    sim_report_insist(r, (s->bins.bitmap >> BFC_NUM_BINS) == 0, "bfc: bitmap has bits above bin 20");
    sim_report_insist(r, binned == t.free_chunks, "bfc: bins hold %llu chunks, regions have %llu free chunks",
                      (unsigned long long)binned, (unsigned long long)t.free_chunks);
    sim_report_insist(r, bfc_bins_largest(&s->bins) == t.largest_binned,
                      "bfc: the bins keep %llu as their largest chunk, the largest free chunk is %llu (largest cache)",
                      (unsigned long long)bfc_bins_largest(&s->bins), (unsigned long long)t.largest_binned);
    sim_report_insist(r, t.gaps == (s->gap != BFC_NONE ? 1u : 0u),
                      "bfc: %llu chunks tagged central gap, the allocator records %s",
                      (unsigned long long)t.gaps, s->gap != BFC_NONE ? "one" : "none");

    /* every free chunk of every region is found in the bin its size maps to */
    const bfc_chunk *ck = bfc_chunk_table(s);
    for (uint32_t i = 0; i < s->n_regions; i++) {
        if (!s->regions[i].live)
            continue;
        uint64_t steps = 0;
        for (uint32_t h = s->regions[i].first; h != BFC_NONE && h < s->chunks.n_used_hw &&
                                               steps <= s->chunks.n_used_hw;
             h = ck[h].next, steps++)
            if (ck[h].state == CHUNK_FREE && h != s->gap)
                sim_report_insist(r, bfc_bins_holds(&s->bins, ck, s->chunks.n_used_hw, h),
                                  "bfc: free chunk %u at %llu of size %llu is not in its bin %u", h,
                                  (unsigned long long)ck[h].addr, (unsigned long long)ck[h].size,
                                  bfc_bin_for(ck[h].size));
    }

    uint64_t zero = 0;
    for (uint32_t h = 0; h < s->chunks.n_used_hw; h++)
        if (slots_valid(&s->chunks, h) && ck[h].state == CHUNK_ZERO)
            zero++;
    sim_report_insist(r, zero == s->zero_live, "bfc: %llu zero-byte handles live, %llu counted",
                      (unsigned long long)zero, (unsigned long long)s->zero_live);
    /* the spares: a list of live records through their parent fields, n_spares long */
    uint32_t spare = 0;
    for (uint32_t h = s->spare_head; h != BFC_NONE && spare <= s->chunks.n_used_hw; h = ck[h].parent) {
        spare++;
        if (!sim_report_insist(r, slots_valid(&s->chunks, h), "bfc: spare record %u is not live", h))
            break;
        sim_report_insist(r, ck[h].state == CHUNK_FREE, "bfc: spare record %u is in state %u, not free", h,
                          ck[h].state);
    }
    sim_report_insist(r, spare == s->n_spares, "bfc: %u spare records listed, %u counted", spare, s->n_spares);
    sim_report_insist(r, s->chunks.live == t.region_chunks + zero + spare,
                      "bfc: %u chunk records live, %llu in regions, %llu zero-byte and %u spare (leak)",
                      s->chunks.live, (unsigned long long)t.region_chunks, (unsigned long long)zero, spare);

    sim_report_insist(r, s->bytes_in_use == t.used_bytes, "bfc: bytes_in_use %llu != sum of used chunks %llu",
                      (unsigned long long)s->bytes_in_use, (unsigned long long)t.used_bytes);
    sim_report_insist(r, s->pool_bytes == t.pool, "bfc: pool_bytes %llu != sum of regions %llu",
                      (unsigned long long)s->pool_bytes, (unsigned long long)t.pool);
    sim_report_insist(r, !device_proc_alive(s->dev, s->proc) || device_proc_held(s->dev, s->proc) == s->pool_bytes,
                      "bfc: device holds %llu for the process, pool_bytes %llu",
                      (unsigned long long)device_proc_held(s->dev, s->proc), (unsigned long long)s->pool_bytes);
    sim_report_insist(r, s->pool_bytes <= s->limit, "bfc: pool_bytes %llu exceeds the limit %llu",
                      (unsigned long long)s->pool_bytes, (unsigned long long)s->limit);
    sim_report_insist(r, s->peak_bytes_in_use >= s->bytes_in_use, "bfc: peak_bytes_in_use %llu < bytes_in_use %llu",
                      (unsigned long long)s->peak_bytes_in_use, (unsigned long long)s->bytes_in_use);
    sim_report_insist(r, s->peak_pool_bytes >= s->pool_bytes, "bfc: peak_pool_bytes %llu < pool_bytes %llu",
                      (unsigned long long)s->peak_pool_bytes, (unsigned long long)s->pool_bytes);
    sim_report_insist(r, s->live_regions == t.regions, "bfc: %u regions recorded, %u live (region count)",
                      s->live_regions, t.regions);
    sim_report_insist(r, s->num_device_allocs == s->n_regions &&
                             s->num_device_frees == (uint64_t)(s->n_regions - t.regions),
                      "bfc: %llu device allocs and %llu frees for %u regions created, %u live",
                      (unsigned long long)s->num_device_allocs, (unsigned long long)s->num_device_frees,
                      s->n_regions, t.regions);
}
