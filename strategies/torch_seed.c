/* The `torch` strategy from a recorded state (sim/seed.h) and where its
 * allocations sit: the bridge between a PyTorch snapshot and the model.
 *
 * torch_seed builds, before the first event, the segments a snapshot's rebuild
 * found at the first trace entry: each cudaMalloc segment at its recorded address
 * with its recorded stream and pool, tiled by its used and free blocks at their
 * recorded offsets; free blocks enter their pool's free set as free_block would
 * leave them (the rebuild has merged free neighbours already), used blocks get
 * allocation handles the engine maps to the trace ids that free them. The
 * DeviceStats counters are set as if those segments and blocks had been allocated
 * by the replay (current = peak = allocated); num_device_alloc stays 0 (it counts
 * the replay's cudaMalloc calls). The device's memory is taken without an address
 * (device_map) and its fresh bases start above the recorded segments
 * (device_claim_va), so new segments never overlap them; the segments the trace
 * creates get the addresses the recording's cudaMalloc returned, in order, while
 * the sizes agree (device_plan_va), so best fit among equal sizes picks as it did.
 * A segment of a private pool (CUDA graphs, MemPool: pool_id ≠ 0) goes to that pool,
 * made with one use (its recorded owner's, which the trace never releases).
 * Refused (SIM_EUSAGE): expandable segments, whose one-range-per-stream layout
 * the recorded mapped ranges do not give; and a seed given after other calls. */
#include <inttypes.h>
#include <stdlib.h>

#include "torch_freeset.h"
#include "torch_segments.h"
#include "torch_types.h"

static uint32_t seed_segment(strategy *s, const sim_seed_segment *sg)
{
    uint32_t pair = 0;
    if (sg->pool_id != 0) {
        bool made = false;
        if ((pair = torch_pool_pair_of(s, sg->pool_id, &made)) == T_NONE)
            return T_NONE;
    }
    unsigned pool = pool_index(pair, sg->small_pool ? POOL_SMALL : POOL_LARGE);
    uint32_t g = torch_seg_new(s, pool, sg->stream, sg->addr, sg->size_bytes, false);
    if (g == T_NONE)
        return T_NONE;
    stats_up(s->st.segment, pool, 1);
    stats_up(s->st.reserved_bytes, pool, sg->size_bytes);
    pair_reserved(s, pool, (int64_t)sg->size_bytes);
    if (sg->size_bytes >= s->conf.max_split_size_bytes)
        stat_up(&s->st.oversize_segments, 1);
    return g;
}

/* One block of segment g after the block prev (T_NONE: the first). */
static uint32_t seed_block(strategy *s, uint32_t g, uint32_t prev, const sim_seed_block *sb, strategy_handle *handle)
{
    uint32_t ah = T_NONE;
    if (sb->state == SIM_SEED_USED && (ah = alloc_take(s)) == T_NONE) {
        s->host_oom = true;
        return T_NONE;
    }
    uint32_t h = blk_take(s);
    if (h == T_NONE) {
        if (ah != T_NONE)
            slots_put(&s->allocs, ah);
        return T_NONE;
    }
    const tseg *seg = SEG(s, g);
    blk_init(s, h, seg->base + sb->offset, sb->size_bytes, g,
             sb->state == SIM_SEED_USED ? BLOCK_USED : BLOCK_FREE);
    blk_splice(s, h, prev, T_NONE);
    if (sb->state == SIM_SEED_USED) {
        tblock *b = B(s, h);
        unsigned pool = b->pool;
        b->requested = sb->requested_bytes;
        b->alloc = ah;
        *AL(s, ah) = (talloc){.block = h, .state = A_LIVE};
        stats_up(s->st.allocation, pool, 1);
        stats_up(s->st.allocated_bytes, pool, b->size);
        pair_allocated(s, pool, (int64_t)b->size);
        stats_up(s->st.active, pool, 1);
        stats_up(s->st.active_bytes, pool, b->size);
        stats_up(s->st.requested_bytes, pool, sb->requested_bytes);
        if (b->size >= s->conf.max_split_size_bytes)
            stat_up(&s->st.oversize_allocations, 1);
        *handle = ah;
    }
    return h;
}

sim_status torch_seed(strategy *s, const sim_seed *seed, strategy_handle *handles, sim_error *err)
{
    if (s->seg_first != T_NONE)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "torch: a start state must come before any allocation");
    sim_status st = sim_seed_check(seed, NULL, err);
    if (st != SIM_OK)
        return st;
    for (uint32_t i = 0; i < seed->n_segs; i++) {
        const sim_seed_segment *sg = &seed->segs[i];
        if (sg->expandable)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "torch: the start state has expandable segments "
                                 "(0x%" PRIx64 "), which the model cannot take from a recording yet", sg->addr);
    }
    /* segments the trace creates go where the recording's cudaMalloc put them */
    if (!device_plan_va(s->dev, s->proc, seed->planned, seed->n_planned))
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    uint64_t reserved = sim_seed_reserved(seed);
    if (device_map(s->dev, s->proc, reserved) != SIM_OK)
        return SIM_OOM;
    if (seed->n_segs > 0) {
        const sim_seed_segment *last = &seed->segs[seed->n_segs - 1];
        device_claim_va(s->dev, last->addr + last->size_bytes);
    }
    for (uint32_t i = 0; i < seed->n_segs && !s->host_oom; i++) {
        const sim_seed_segment *sg = &seed->segs[i];
        uint32_t g = seed_segment(s, sg);
        uint32_t prev = T_NONE;
        for (uint32_t k = 0; g != T_NONE && k < sg->n_blocks; k++) {
            uint32_t bi = sg->first_block + k;
            uint32_t h = seed_block(s, g, prev, &seed->blocks[bi], &handles[bi]);
            if (h == T_NONE)
                break;
            prev = h;
        }
        /* free blocks enter their pool's set; those with a neighbour are split */
        for (uint32_t h = g == T_NONE ? T_NONE : SEG(s, g)->head; h != T_NONE; h = B(s, h)->next) {
            if (B(s, h)->state != BLOCK_FREE)
                continue;
            torch_pool_insert(s, h);
            if (blk_is_split(s, h)) {
                stats_up(s->st.inactive_split, B(s, h)->pool, 1);
                stats_up(s->st.inactive_split_bytes, B(s, h)->pool, B(s, h)->size);
            }
        }
    }
    if (s->host_oom)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory building the start state");
    s->largest = torch_largest_free(s);
    return SIM_OK;
}

bool torch_locate(const strategy *s, strategy_handle h, strategy_block *out)
{
    const talloc *a = AL(s, h);
    if (a->block == T_NONE)
        return false;
    const tblock *b = B(s, a->block);
    const tseg *seg = SEG(s, b->seg);
    *out = (strategy_block){.addr = b->addr, .size_bytes = b->size, .requested_bytes = b->requested,
                            .region_addr = seg->base, .region = seg->seq, .stream = b->stream,
                            .state = (strategy_block_state)b->state,
                            .pool = pool_kind(b->pool) == POOL_SMALL ? "small" : "large",
                            .pool_id = s->pairs[pool_pair(b->pool)]->id};
    return true;
}
