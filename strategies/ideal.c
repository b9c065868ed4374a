/* The `ideal` strategy (design.md §4): what any allocator must hold at least.
 *
 * Rules:
 *  1. alloc(n) takes exactly n bytes of device memory (no rounding, no block);
 *     it fails iff n > device_free_bytes() (capacity or other processes, by the engine's rule).
 *  2. free gives the n bytes back at once (or at ready_t when deferred).
 *  3. Nothing is cached, so free bytes and fragmentation are always 0 and
 *     reserved == allocated == live requested bytes.
 * The memory it takes is not a device allocation: num_device_allocs stays 0.
 * Cost: O(1) per event. The walker packs live allocations in handle order, since
 * an ideal allocator has no addresses of its own. */
#include "ideal.h"

#include <stdlib.h>

#include "slots.h"

typedef struct ideal_live {
    uint64_t size;
    bool pending;
} ideal_live;

struct strategy {
    device *dev;
    uint32_t proc;
    slots allocs;
    uint64_t live_bytes;
    uint64_t peak_bytes;
};

static sim_status ideal_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    strategy *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating ideal");
    s->dev = cfg->dev;
    s->proc = cfg->proc;
    slots_init(&s->allocs, sizeof(ideal_live));
    *out = s;
    return SIM_OK;
}

static void ideal_destroy(strategy *s)
{
    if (s == NULL)
        return;
    slots_release(&s->allocs);
    free(s);
}

static sim_status ideal_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h, strategy_oom *oom)
{
    (void)stream;
    if (device_map(s->dev, s->proc, size) != SIM_OK) {
        *oom = (strategy_oom){
            .size_bytes = size,
            .free_bytes = 0,
            .largest_free_bytes = 0,
            .reserved_bytes = s->live_bytes,
            .device_free_bytes = device_free_bytes(s->dev),
        };
        oom->detail[0] = '\0';
        return SIM_OOM;
    }
    uint32_t slot = slots_take(&s->allocs);
    if (slot == SLOTS_NONE) {
        device_release(s->dev, s->proc, size);
        return SIM_ENOMEM;
    }
    ideal_live *a = slots_get(&s->allocs, slot);
    a->size = size;
    s->live_bytes += size;
    if (s->live_bytes > s->peak_bytes)
        s->peak_bytes = s->live_bytes;
    *h = slot;
    return SIM_OK;
}

/* The memory of h goes back: at its free, or at its ready_t when the free was deferred. */
static void ideal_free_ready(strategy *s, strategy_handle h)
{
    ideal_live *a = slots_get(&s->allocs, h);
    device_release(s->dev, s->proc, a->size);
    s->live_bytes -= a->size;
    slots_put(&s->allocs, h);
}

static void ideal_free(strategy *s, strategy_handle h, bool deferred)
{
    if (deferred)
        ((ideal_live *)slots_get(&s->allocs, h))->pending = true;
    else
        ideal_free_ready(s, h);
}

static void ideal_empty_cache(strategy *s)
{
    (void)s;
}

static void ideal_sample(const strategy *s, strategy_sample *out)
{
    *out = (strategy_sample){.allocated_bytes = s->live_bytes, .reserved_bytes = s->live_bytes};
}

static void ideal_stats(const strategy *s, const strategy_stat_sink *sink)
{
    strategy_emit_u64(sink, "bytes_in_use", s->live_bytes);
    strategy_emit_u64(sink, "peak_bytes_in_use", s->peak_bytes);
    strategy_emit_u64(sink, "live_allocations", s->allocs.live);
}

static void ideal_options(const strategy *s, const strategy_stat_sink *sink)
{
    (void)s;
    (void)sink;
}

static int ideal_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    uint64_t addr = 0;
    for (uint32_t h = 0; h < s->allocs.n_used_hw; h++) {
        if (!slots_valid(&s->allocs, h))
            continue;
        const ideal_live *a = slots_get(&s->allocs, h);
        strategy_block b = {
            .addr = addr,
            .size_bytes = a->size,
            .requested_bytes = a->size,
            .region_addr = 0,
            .region = 0,
            .stream = 0,
            .state = a->pending ? BLOCK_PENDING : BLOCK_USED,
            .pool = NULL,
        };
        int r = v(ctx, &b);
        if (r)
            return r;
        addr += a->size;
    }
    return 0;
}

typedef struct ideal_check_ctx {
    uint64_t sum;
    uint64_t count;
} ideal_check_ctx;

static int ideal_check_visit(void *ctx, const strategy_block *b)
{
    ideal_check_ctx *c = ctx;
    c->sum += b->size_bytes;
    c->count++;
    return 0;
}

static void ideal_check(const strategy *s, sim_report *r)
{
    ideal_check_ctx c = {0, 0};
    ideal_walk(s, ideal_check_visit, &c);
    sim_report_insist(r, c.sum == s->live_bytes, "ideal: live bytes %llu != sum of allocations %llu",
                      (unsigned long long)s->live_bytes, (unsigned long long)c.sum);
    sim_report_insist(r, c.count == s->allocs.live, "ideal: allocation count %llu != table count %u",
                      (unsigned long long)c.count, s->allocs.live);
    sim_report_insist(r, s->peak_bytes >= s->live_bytes, "ideal: peak %llu < current %llu",
                      (unsigned long long)s->peak_bytes, (unsigned long long)s->live_bytes);
    sim_report_insist(r, device_proc_held(s->dev, s->proc) == s->live_bytes || !device_proc_alive(s->dev, s->proc),
                      "ideal: device holds %llu for the process, strategy %llu",
                      (unsigned long long)device_proc_held(s->dev, s->proc),
                      (unsigned long long)s->live_bytes);
}

static const strategy_ops IDEAL_OPS = {
    .name = "ideal",
    .summary = "lower bound: exactly the live requested bytes, no rounding or fragmentation",
    /* no options (opts NULL): the model has nothing to configure */
    .family = STRATEGY_FAMILY_BOUND,
    .fits_by_peak = true,
    .no_pools_note = "a bound has no private pools; the pools' allocations were counted as live bytes like "
                     "every other allocation",
    .create = ideal_create,
    .destroy = ideal_destroy,
    .alloc = ideal_alloc,
    .free = ideal_free,
    .free_ready = ideal_free_ready,
    .empty_cache = ideal_empty_cache,
    .sample = ideal_sample,
    .stats = ideal_stats,
    .options = ideal_options,
    .check = ideal_check,
    .walk = ideal_walk,
};

const strategy_ops *ideal_strategy(void)
{
    return &IDEAL_OPS;
}
