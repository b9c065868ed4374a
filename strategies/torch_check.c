/* The `torch` strategy's walker and invariant checker: read-only views of the state
 * that torch.c builds (tests/support/corrupt_torch.c breaks it on purpose). */
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "torch_freeset.h"
#include "torch_types.h"

/* ==== Walker ==== */

/* Segments in creation (= address) order, blocks by address. An expandable
 * segment shows its mapped blocks and the unmapped holes between them, not the
 * unmapped tail of its 1⅛-capacity address range. */
int torch_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    for (uint32_t g = s->seg_first; g != T_NONE; g = SEG(s, g)->list_next) {
        const tseg *seg = SEG(s, g);
        for (uint32_t h = seg->head; h != T_NONE; h = B(s, h)->next) {
            const tblock *b = B(s, h);
            if (b->state == BLOCK_UNMAPPED && b->next == T_NONE)
                break;
            strategy_block out = {
                .addr = b->addr,
                .size_bytes = b->size,
                .requested_bytes = (b->state == BLOCK_USED || b->state == BLOCK_PENDING) ? b->requested : 0,
                .region_addr = seg->base,
                .region = seg->seq,
                .stream = b->stream,
                .state = (strategy_block_state)b->state,
                .pool = pool_kind(b->pool) == POOL_SMALL ? "small" : "large",
                .pool_id = s->pairs[pool_pair(b->pool)]->id,
            };
            int r = v(ctx, &out);
            if (r != 0)
                return r;
        }
    }
    return 0;
}

/* ==== Checker ==== */

typedef struct check_sums {
    int64_t allocated[N_ST], active[N_ST], requested[N_ST], reserved[N_ST];
    int64_t allocation[N_ST], active_n[N_ST], segment[N_ST], isplit[N_ST], isplit_bytes[N_ST];
    uint64_t free_bytes;
    uint64_t largest_free;
    uint64_t *largest_pool, *n_free, *n_unmapped; /* per pool index */
    uint64_t *pair_reserved, *pair_allocated, *pair_segments; /* per pair */
    uint64_t blocks_seen;
    uint64_t pending;
} check_sums;

static void sums_add(int64_t *arr, unsigned pool, int64_t v)
{
    arr[ST_ALL] += v;
    arr[1 + pool_kind(pool)] += v;
}

static bool large_segment_size_ok(const strategy *s, uint64_t size)
{
    /* get_allocation_size for a large request: large_segment_size, or a multiple
     * of 2 MiB of at least 10 MiB */
    return size == s->conf.large_segment_size_bytes || (size % T_ROUND_LARGE == 0 && size >= T_MIN_LARGE_ALLOC);
}

static void check_segment(const strategy *s, uint32_t g, check_sums *c, sim_report *r)
{
    const tseg *seg = SEG(s, g);
    unsigned pool = seg->pool;
    if (pool_pair(pool) >= s->n_pairs || !s->pairs[pool_pair(pool)]->live) {
        sim_report_insist(r, false, "torch: segment %u has pool %u, which is not a live pool", seg->seq, pool);
        return;
    }
    c->pair_segments[pool_pair(pool)]++;
    c->pair_reserved[pool_pair(pool)] += seg->mapped;
    if (!seg->expandable) {
        sim_report_insist(r, pool_kind(pool) == POOL_SMALL ? seg->size == T_SMALL_BUFFER : large_segment_size_ok(s, seg->size),
                          "torch: pool %s holds segment %u of %llu bytes, not one of its sizes",
                          pool_kind(pool) == POOL_SMALL ? "small" : "large", seg->seq, (unsigned long long)seg->size);
        sums_add(c->segment, pool, 1);
    }
    sums_add(c->reserved, pool, (int64_t)seg->mapped);
    sim_report_insist(r, seg->head != T_NONE && slots_valid(&s->blocks, seg->head),
                      "torch: segment %u has no first block", seg->seq);
    if (seg->head == T_NONE || !slots_valid(&s->blocks, seg->head))
        return;
    sim_report_insist(r, B(s, seg->head)->prev == T_NONE, "torch: segment %u's first block has a prev", seg->seq);
    uint64_t at = seg->base, mapped = 0;
    uint32_t prev = T_NONE;
    uint64_t limit = s->blocks.n_used_hw + 1;
    for (uint32_t h = seg->head; h != T_NONE && limit-- > 0; prev = h, h = B(s, h)->next) {
        if (!sim_report_insist(r, slots_valid(&s->blocks, h), "torch: segment %u links a dead block", seg->seq))
            return;
        const tblock *b = B(s, h);
        c->blocks_seen++;
        sim_report_insist(r, b->addr == at,
                          "torch: blocks do not tile segment %u: block at %llu, expected %llu (gap or overlap)",
                          seg->seq, (unsigned long long)b->addr, (unsigned long long)at);
        /* 2.1-2.3 hand one-division requests their exact size (torch_version.h) */
        sim_report_insist(r, b->size > 0 && (b->size % T_MIN_BLOCK == 0 || !s->rules.single_division_rounds_512),
                          "torch: block at %llu has size %llu, not a positive multiple of 512",
                          (unsigned long long)b->addr, (unsigned long long)b->size);
        sim_report_insist(r, b->prev == prev, "torch: block at %llu has a wrong prev link", (unsigned long long)b->addr);
        sim_report_insist(r, b->seg == g && b->pool == pool && b->expandable == seg->expandable &&
                                 (!seg->expandable || b->stream == seg->stream),
                          "torch: block at %llu disagrees with segment %u on segment, pool, kind or stream",
                          (unsigned long long)b->addr, seg->seq);
        at = b->addr + b->size;
        if (prev != T_NONE) {
            const tblock *p = B(s, prev);
            bool both_free = p->state == BLOCK_FREE && b->state == BLOCK_FREE;
            bool both_unmapped = p->state == BLOCK_UNMAPPED && b->state == BLOCK_UNMAPPED;
            sim_report_insist(r, !both_free && !both_unmapped,
                              "torch: adjacent %s blocks at %llu and %llu should have merged",
                              both_free ? "free" : "unmapped", (unsigned long long)p->addr,
                              (unsigned long long)b->addr);
        }
        bool split = b->prev != T_NONE || b->next != T_NONE;
        switch ((strategy_block_state)b->state) {
        case BLOCK_USED:
        case BLOCK_PENDING: {
            bool used = b->state == BLOCK_USED;
            mapped += b->size;
            sums_add(c->active, pool, (int64_t)b->size);
            sums_add(c->active_n, pool, 1);
            sums_add(c->requested, pool, (int64_t)b->requested);
            if (used) {
                sums_add(c->allocated, pool, (int64_t)b->size);
                sums_add(c->allocation, pool, 1);
                c->pair_allocated[pool_pair(pool)] += b->size;
            } else {
                c->pending++;
            }
            bool link = b->alloc != T_NONE && slots_valid(&s->allocs, b->alloc) && AL(s, b->alloc)->block == h &&
                        (used ? AL(s, b->alloc)->state == A_LIVE
                               : AL(s, b->alloc)->state == A_PENDING || AL(s, b->alloc)->state == A_READY ||
                                     AL(s, b->alloc)->state == A_PARKED);
            sim_report_insist(r, link, "torch: %s block at %llu is not owned by its allocation handle",
                              used ? "used" : "pending", (unsigned long long)b->addr);
            break;
        }
        case BLOCK_FREE:
            mapped += b->size;
            c->free_bytes += b->size;
            c->largest_free = u64_max(c->largest_free, b->size);
            c->largest_pool[pool] = u64_max(c->largest_pool[pool], b->size);
            c->n_free[pool]++;
            if (split && !seg->expandable) {
                sums_add(c->isplit, pool, 1);
                sums_add(c->isplit_bytes, pool, (int64_t)b->size);
            }
            break;
        case BLOCK_UNMAPPED: {
            c->n_unmapped[pool]++;
            uint64_t page = seg_page(s, pool);
            sim_report_insist(r, seg->expandable && (b->addr - seg->base) % page == 0 &&
                                     ((b->addr + b->size - seg->base) % page == 0 ||
                                      b->addr + b->size == seg->base + seg->size),
                              "torch: unmapped block at %llu is not page-aligned in an expandable segment",
                              (unsigned long long)b->addr);
            break;
        }
        default:
            sim_report_insist(r, false, "torch: block at %llu has state %u", (unsigned long long)b->addr, b->state);
        }
    }
    sim_report_insist(r, at == seg->base + seg->size,
                      "torch: blocks do not tile segment %u: they end at %llu, the segment at %llu", seg->seq,
                      (unsigned long long)at, (unsigned long long)(seg->base + seg->size));
    sim_report_insist(r, mapped == seg->mapped, "torch: segment %u maps %llu bytes, its blocks %llu", seg->seq,
                      (unsigned long long)seg->mapped, (unsigned long long)mapped);
}

typedef struct tree_check {
    unsigned char *seen;
    uint64_t nodes;
    uint64_t budget;
    const tblock *last;
    bool order_ok;
    /* free bins only: the bin walked, the pool's set, and per index entry the
     * blocks found and the bins holding them */
    uint32_t bin;
    const tfree *f;
    uint64_t *counts;
    uint64_t *bits;
} tree_check;

/* In-order walk of one treap: a bin of a free set (tc->f set) or an unmapped set. */
static void check_tree_at(const strategy *s, uint32_t t, unsigned pool, tree_check *tc, sim_report *r)
{
    bool free_set = tc->f != NULL;
    if (t == T_NONE)
        return;
    if (tc->budget == 0 || !slots_valid(&s->blocks, t)) {
        sim_report_insist(r, false, "torch: %s set of pool %u links a dead block or loops", free_set ? "free" : "unmapped",
                          pool);
        tc->budget = 0;
        return;
    }
    tc->budget--;
    const tblock *n = B(s, t);
    check_tree_at(s, n->left, pool, tc, r);
    if (tc->seen[t]) {
        sim_report_insist(r, false, "torch: block at %llu is in a set twice", (unsigned long long)n->addr);
    }
    tc->seen[t] = 1;
    tc->nodes++;
    sim_report_insist(r, n->state == (free_set ? BLOCK_FREE : BLOCK_UNMAPPED) && n->pool == pool,
                      "torch: the %s set of the %s pool holds a block at %llu that is not one of its %s blocks",
                      free_set ? "free" : "unmapped", pool_kind(pool) == POOL_SMALL ? "small" : "large",
                      (unsigned long long)n->addr, free_set ? "free" : "unmapped");
    /* the free sets tie by creation number under 2.12's rule, else by address */
    const uint64_t *born = free_set ? s->born : NULL;
    if (tc->last != NULL &&
        !torch_fs_before_tie(tc->last, born ? born[tc->last - B(s, 0)] : tc->last->addr, n, born ? born[t] : n->addr,
                             !free_set))
        tc->order_ok = false;
    /* the kept priority is the handle's, and a child's is no higher (a treap);
     * a child's validity is checked when the walk reaches it */
    bool heap = n->pri == torch_fs_pri(t);
    for (int i = 0; i < 2; i++) {
        uint32_t c = i ? n->right : n->left;
        if (c != T_NONE && slots_valid(&s->blocks, c) && B(s, c)->pri > n->pri)
            heap = false;
    }
    sim_report_insist(r, heap, "torch: the %s set of the %s pool breaks its treap's priorities at the block at %llu",
                      free_set ? "free" : "unmapped", pool_kind(pool) == POOL_SMALL ? "small" : "large",
                      (unsigned long long)n->addr);
    tc->last = n;
    if (free_set) {
        sim_report_insist(r, torch_fs_bin(n->size) == tc->bin,
                          "torch: free block at %llu of %llu bytes sits in size bin %u, its size belongs in bin %u",
                          (unsigned long long)n->addr, (unsigned long long)n->size, tc->bin, torch_fs_bin(n->size));
        uint32_t i = torch_fs_stream_slot(tc->f, n->stream);
        if (i < tc->f->n_ent && tc->f->ent[i].stream == n->stream) {
            tc->counts[i]++;
            tc->bits[(size_t)i * FB_WORDS + tc->bin / 64] |= (uint64_t)1 << (tc->bin % 64);
        } else {
            sim_report_insist(r, false, "torch: free block at %llu is on stream %u, which the stream index of the %s pool lacks",
                              (unsigned long long)n->addr, n->stream, pool_kind(pool) == POOL_SMALL ? "small" : "large");
        }
    }
    check_tree_at(s, n->right, pool, tc, r);
}

/* A pool's free set: every bin's treap, and the stream index against them. */
static void check_free_set(const strategy *s, unsigned pool, tree_check *tc, sim_report *r)
{
    const tfree *f = FS(s, pool);
    const char *pname = pool_kind(pool) == POOL_SMALL ? "small" : "large";
    for (uint32_t i = 1; i < f->n_ent; i++)
        sim_report_insist(r, f->ent[i - 1].stream < f->ent[i].stream,
                          "torch: the stream index of the %s pool is out of order at stream %u", pname,
                          f->ent[i].stream);
    tc->f = f;
    tc->counts = calloc((size_t)f->n_ent + 1, sizeof *tc->counts);
    tc->bits = calloc(((size_t)f->n_ent + 1) * FB_WORDS, sizeof *tc->bits);
    if (tc->counts == NULL || tc->bits == NULL) {
        free(tc->counts);
        free(tc->bits);
        tc->f = NULL;
        return;
    }
    bool order_ok = true;
    for (uint32_t bin = 0; bin < FB_BINS; bin++) {
        tc->bin = bin;
        tc->last = NULL;
        tc->order_ok = true;
        check_tree_at(s, f->root[bin], pool, tc, r);
        order_ok = order_ok && tc->order_ok;
    }
    sim_report_insist(r, order_ok, "torch: the free set of pool %u is out of (stream, size, address) order", pool);
    for (uint32_t i = 0; i < f->n_ent; i++) {
        const tstream *e = &f->ent[i];
        sim_report_insist(r, e->n == tc->counts[i],
                          "torch: the stream index of the %s pool counts %u free blocks of stream %u, its bins hold %llu",
                          pname, e->n, e->stream, (unsigned long long)tc->counts[i]);
        uint64_t summary = 0;
        bool same = true;
        for (uint32_t w = 0; w < FB_WORDS; w++) {
            uint64_t want = tc->bits[(size_t)i * FB_WORDS + w];
            same = same && e->bits[w] == want;
            if (want != 0)
                summary |= (uint64_t)1 << w;
        }
        sim_report_insist(r, same && e->summary == summary,
                          "torch: the bin bitmap of stream %u in the %s pool disagrees with the bins holding its blocks",
                          e->stream, pname);
    }
    free(tc->counts);
    free(tc->bits);
    tc->f = NULL;
}

static void check_counter(sim_report *r, const char *name, const tstat *arr, const int64_t *sum)
{
    static const char *const types[N_ST] = {"all", "small_pool", "large_pool"};
    for (unsigned t = 0; t < N_ST; t++) {
        tstat x = stat_of(arr, t);
        sim_report_insist(r, x.current == sum[t], "torch: %s.%s.current is %lld, the blocks sum to %lld", name,
                          types[t], (long long)x.current, (long long)sum[t]);
        sim_report_insist(r, x.peak >= x.current, "torch: %s.%s peak %lld < current %lld", name, types[t],
                          (long long)x.peak, (long long)x.current);
    }
}

void torch_check(const strategy *s, sim_report *r)
{
    check_sums c;
    memset(&c, 0, sizeof c);
    unsigned n_pools = 2u * s->n_pairs;
    uint64_t *arrays = calloc((size_t)n_pools * 3 + (size_t)s->n_pairs * 3, sizeof *arrays);
    if (arrays == NULL)
        return; /* nothing checked without memory */
    c.largest_pool = arrays;
    c.n_free = arrays + n_pools;
    c.n_unmapped = arrays + 2 * (size_t)n_pools;
    c.pair_reserved = arrays + 3 * (size_t)n_pools;
    c.pair_allocated = c.pair_reserved + s->n_pairs;
    c.pair_segments = c.pair_allocated + s->n_pairs;
    uint64_t nseg = 0;
    for (uint32_t g = s->seg_first; g != T_NONE && nseg <= s->segs.n_used_hw; g = SEG(s, g)->list_next, nseg++) {
        if (!sim_report_insist(r, slots_valid(&s->segs, g), "torch: the segment list links a dead segment"))
            break;
        check_segment(s, g, &c, r);
    }
    sim_report_insist(r, nseg == s->segs.live, "torch: %llu segments listed, %u live", (unsigned long long)nseg,
                      s->segs.live);
    sim_report_insist(r, c.blocks_seen == s->blocks.live, "torch: %llu blocks in segments, %u block records live",
                      (unsigned long long)c.blocks_seen, s->blocks.live);

    /* every free block in its pool's set exactly once, and nothing else there */
    tree_check tc = {.seen = calloc((size_t)s->blocks.n_used_hw + 1, 1)};
    if (tc.seen != NULL) {
        for (unsigned p = 0; p < n_pools; p++) {
            for (int kind = 0; kind < 2; kind++) {
                tc.nodes = 0;
                tc.budget = (uint64_t)s->blocks.n_used_hw + 1;
                tc.last = NULL;
                tc.order_ok = true;
                if (kind == 0) {
                    check_free_set(s, p, &tc, r);
                } else {
                    check_tree_at(s, *UNMAPPED(s, p), p, &tc, r);
                    sim_report_insist(r, tc.order_ok, "torch: the unmapped set of pool %u is out of (stream, address) order",
                                      p);
                }
                uint64_t expect = kind == 0 ? c.n_free[p] : c.n_unmapped[p];
                sim_report_insist(r, tc.nodes == expect,
                                  "torch: the %s set of the %s pool holds %llu blocks, its segments %llu %s blocks",
                                  kind == 0 ? "free" : "unmapped", pool_kind(p) == POOL_SMALL ? "small" : "large",
                                  (unsigned long long)tc.nodes, (unsigned long long)expect,
                                  kind == 0 ? "free" : "unmapped");
            }
        }
        for (uint32_t h = 0; h < s->blocks.n_used_hw; h++) {
            if (!slots_valid(&s->blocks, h))
                continue;
            const tblock *b = B(s, h);
            if ((b->state == BLOCK_FREE || b->state == BLOCK_UNMAPPED) && !tc.seen[h])
                sim_report_insist(r, false, "torch: %s block at %llu is missing from its pool's set",
                                  b->state == BLOCK_FREE ? "free" : "unmapped", (unsigned long long)b->addr);
        }
        free(tc.seen);
    }

    /* counters equal the sums */
    const tstats *st = &s->st;
    check_counter(r, "allocated_bytes", st->allocated_bytes, c.allocated);
    check_counter(r, "reserved_bytes", st->reserved_bytes, c.reserved);
    check_counter(r, "active_bytes", st->active_bytes, c.active);
    check_counter(r, "requested_bytes", st->requested_bytes, c.requested);
    check_counter(r, "allocation", st->allocation, c.allocation);
    check_counter(r, "active", st->active, c.active_n);
    check_counter(r, "segment", st->segment, c.segment);
    check_counter(r, "inactive_split", st->inactive_split, c.isplit);
    check_counter(r, "inactive_split_bytes", st->inactive_split_bytes, c.isplit_bytes);
    sim_report_insist(r, st->oversize_allocations.peak >= st->oversize_allocations.current &&
                             st->oversize_segments.peak >= st->oversize_segments.current &&
                             st->oversize_allocations.current >= 0 && st->oversize_segments.current >= 0,
                      "torch: oversize counters are negative or above their peaks");
    uint64_t free_bytes = 0;
    for (unsigned p = 0; p < n_pools; p++)
        free_bytes += torch_fs_bytes(FS(s, p));
    sim_report_insist(r, free_bytes == c.free_bytes, "torch: free bytes counter %llu, free blocks sum to %llu",
                      (unsigned long long)free_bytes, (unsigned long long)c.free_bytes);
    bool dirty = false;
    for (unsigned p = 0; p < n_pools; p++) {
        const tfree *f = FS(s, p);
        dirty = dirty || f->largest_dirty;
        sim_report_insist(r, f->largest_dirty || f->largest == c.largest_pool[p],
                          "torch: largest free block counter %llu of the %s pool, its largest free block is %llu",
                          (unsigned long long)f->largest, pool_kind(p) == POOL_SMALL ? "small" : "large",
                          (unsigned long long)c.largest_pool[p]);
    }
    sim_report_insist(r, dirty || s->largest == c.largest_free,
                      "torch: largest free block counter %llu, the largest free block is %llu",
                      (unsigned long long)s->largest, (unsigned long long)c.largest_free);
    sim_report_insist(r, s->n_pending + s->n_parked == c.pending,
                      "torch: %u pending frees counted and %u parked, %llu pending blocks", s->n_pending, s->n_parked,
                      (unsigned long long)c.pending);
    /* the pools: each pair's own figures equal its segments' and blocks' sums; a pool
     * routed now is live and not freeable; a freeable pool has no use left; an erased
     * one holds nothing; the parked frees are parked */
    for (uint32_t i = 0; i < s->n_pairs; i++) {
        const tpair *pp = s->pairs[i];
        sim_report_insist(r, pp->reserved == c.pair_reserved[i] && pp->allocated == c.pair_allocated[i] &&
                                 pp->segments == c.pair_segments[i],
                          "torch: pool %llu counts %llu reserved, %llu allocated and %u segments; its segments hold "
                          "%llu, %llu and %llu",
                          (unsigned long long)pp->id, (unsigned long long)pp->reserved,
                          (unsigned long long)pp->allocated, pp->segments, (unsigned long long)c.pair_reserved[i],
                          (unsigned long long)c.pair_allocated[i], (unsigned long long)c.pair_segments[i]);
        sim_report_insist(r, pp->peak_reserved >= pp->reserved && pp->peak_allocated >= pp->allocated,
                          "torch: pool %llu's peaks are below its current figures", (unsigned long long)pp->id);
        sim_report_insist(r, i == 0 ? pp->live && pp->id == 0 && !pp->freeable : pp->id != 0,
                          "torch: pool pair %u has id %llu", i, (unsigned long long)pp->id);
        sim_report_insist(r, !pp->freeable || pp->uses == 0, "torch: pool %llu is freeable with %u uses",
                          (unsigned long long)pp->id, pp->uses);
        sim_report_insist(r, pp->live || pp->segments == 0, "torch: erased pool %llu still holds %u segments",
                          (unsigned long long)pp->id, pp->segments);
    }
    for (uint32_t i = 0; i < s->n_routes; i++)
        sim_report_insist(r, s->routes[i].pair > 0 && s->routes[i].pair < s->n_pairs &&
                                 s->pairs[s->routes[i].pair]->live && !s->pairs[s->routes[i].pair]->freeable,
                          "torch: a routed pool is not a live pool with a use");
    for (uint32_t i = 0; i < s->n_parked; i++) {
        uint32_t a = s->parked[i];
        sim_report_insist(r, slots_valid(&s->allocs, a) && AL(s, a)->state == A_PARKED && AL(s, a)->block != T_NONE,
                          "torch: a parked free is not parked or owns no block");
    }
    free(arrays);
    /* the event queue holds exactly the pending frees that own a block */
    uint64_t queued = 0, ready = 0;
    uint32_t last = T_NONE;
    for (uint32_t a = s->q_head; a != T_NONE && queued <= s->n_pending; a = DF(s, a)->q_next) {
        const talloc *al = AL(s, a);
        const tdefer *d = DF(s, a);
        sim_report_insist(r, al->block != T_NONE && (al->state == A_PENDING || al->state == A_READY),
                          "torch: a queued deferred free owns no pending block");
        sim_report_insist(r, d->q_prev == last, "torch: the deferred frees' list is broken backwards");
        sim_report_insist(r, d->wait == T_NONE || d->wait < s->n_waits,
                          "torch: a deferred free waits on stream queue %u of %u", d->wait, s->n_waits);
        ready += al->state == A_READY;
        queued++;
        last = a;
    }
    sim_report_insist(r, queued == s->n_pending && ready == s->n_ready && last == s->q_tail,
                      "torch: %llu queued deferred frees (%llu ready), %u pending counted (%u ready)",
                      (unsigned long long)queued, (unsigned long long)ready, s->n_pending, s->n_ready);
    /* each stream's queue holds its frees in record order, all still pending */
    uint64_t waiting = 0;
    for (uint32_t w = 0; w < s->n_waits; w++) {
        uint32_t prev = T_NONE;
        for (uint32_t a = s->waits[w].head; a != T_NONE && waiting <= s->n_pending; a = DF(s, a)->w_next) {
            const talloc *al = AL(s, a);
            sim_report_insist(r, DF(s, a)->wait == w && al->block != T_NONE,
                              "torch: the queue of stream %u holds a free not recorded on it", s->waits[w].stream);
            waiting++;
            prev = a;
        }
        sim_report_insist(r, prev == s->waits[w].tail, "torch: the queue of stream %u ends elsewhere than its tail",
                          s->waits[w].stream);
    }
    /* the next process_events completes ready frees that wait on nothing or head their queue */
    uint64_t stacked = 0;
    for (uint32_t a = s->c_head; a != T_NONE && stacked <= s->n_pending; a = DF(s, a)->c_next) {
        const talloc *al = AL(s, a);
        const tdefer *d = DF(s, a);
        sim_report_insist(
            r, al->state == A_READY && al->block != T_NONE && (d->wait == T_NONE || s->waits[d->wait].head == a),
            "torch: a free to complete next is not ready or waits behind another");
        stacked++;
    }
    sim_report_insist(r, waiting <= s->n_pending && stacked <= s->n_ready,
                      "torch: %llu frees queued on streams and %llu to complete next, %u pending (%u ready)",
                      (unsigned long long)waiting, (unsigned long long)stacked, s->n_pending, s->n_ready);
    /* one map call can be undone by several unmap calls (expandable segments) */
    sim_report_insist(r, s->conf.expandable_segments || st->num_device_alloc >= st->num_device_free,
                      "torch: more device frees than allocs");
    /* the fraction check compares the segment size, not the pages an expandable
     * segment maps (alloc_block), so only cudaMalloc segments respect the cap */
    sim_report_insist(r, !s->set_fraction || s->conf.expandable_segments || reserved_now(s) <= s->allowed_bytes,
                      "torch: reserved %llu exceeds the memory fraction cap %llu",
                      (unsigned long long)reserved_now(s), (unsigned long long)s->allowed_bytes);
    sim_report_insist(r, !device_proc_alive(s->dev, s->proc) || device_proc_held(s->dev, s->proc) == reserved_now(s),
                      "torch: device holds %llu for the process, reserved_bytes is %llu",
                      (unsigned long long)device_proc_held(s->dev, s->proc), (unsigned long long)reserved_now(s));

    /* every allocation handle that owns a block points at a block that points back */
    for (uint32_t a = 0; a < s->allocs.n_used_hw; a++) {
        if (!slots_valid(&s->allocs, a))
            continue;
        const talloc *al = AL(s, a);
        if (al->block == T_NONE)
            continue;
        bool ok = slots_valid(&s->blocks, al->block) && B(s, al->block)->alloc == a &&
                  B(s, al->block)->state == (al->state == A_LIVE ? BLOCK_USED : BLOCK_PENDING);
        sim_report_insist(r, ok, "torch: allocation handle %u does not own the block it names", a);
    }
}
