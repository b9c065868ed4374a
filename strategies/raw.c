/* The `raw` strategy: every allocation is its own device allocation.
 *
 * Rules:
 *  1. alloc(0) takes nothing (cudaMalloc(0) returns NULL and no memory).
 *  2. alloc(n), 0 < n < 2 MiB, is charged round_up(n, 512): the driver packs small
 *     allocations into shared 2 MiB pages, and 512 B is the alignment its
 *     allocation routines give in practice (allocators.md §4: ≥ 256 B documented,
 *     512 B observed). Charging whole pages for small requests would overstate a
 *     many-small-tensor trace by up to 4096×.
 *  3. alloc(n), n ≥ 2 MiB, is charged round_up(n, 2 MiB): large allocations are
 *     backed by whole 2 MiB GPU pages (allocators.md §4, "GPU pages which are 2MiB").
 *  4. free returns the charge to the device at once (cudaFree synchronizes), or at
 *     ready_t when deferred.
 *  5. Nothing is cached: free bytes are 0 (the engine names the cause, design.md §3).
 * Both charges are modelling assumptions that validate/ measures. O(1) per event and
 * per locate; the walker sorts live allocations by address (O(n log n), not on the
 * hot path). */
#include "raw.h"

#include <stdlib.h>

#include "sim/units.h"
#include "slots.h"

#define RAW_SMALL_UNIT 512u
#define RAW_PAGE (2u * 1024u * 1024u)

typedef struct raw_live {
    uint64_t addr;
    uint64_t charge;
    uint64_t requested;
    uint32_t stream;
    uint32_t seq;   /* creation order, the region number in the walker */
    bool pending;
} raw_live;

struct strategy {
    device *dev;
    uint32_t proc;
    slots allocs;
    uint64_t reserved;
    uint64_t peak_reserved;
    uint64_t num_device_allocs;
    uint64_t num_device_frees;
};

static uint64_t raw_charge_bytes(uint64_t n)
{
    if (n == 0)
        return 0;
    if (n < RAW_PAGE)
        return units_round_up(n, RAW_SMALL_UNIT);
    return units_round_up(n, RAW_PAGE);
}

static sim_status raw_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    strategy *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating raw");
    s->dev = cfg->dev;
    s->proc = cfg->proc;
    slots_init(&s->allocs, sizeof(raw_live));
    *out = s;
    return SIM_OK;
}

static void raw_destroy(strategy *s)
{
    if (s == NULL)
        return;
    slots_release(&s->allocs);
    free(s);
}

static sim_status raw_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h, strategy_oom *oom)
{
    uint64_t charge = raw_charge_bytes(size);
    uint64_t addr = 0;
    if (charge > 0 && device_alloc(s->dev, s->proc, charge, &addr) != SIM_OK) {
        *oom = (strategy_oom){
            .size_bytes = charge,
            .reserved_bytes = s->reserved,
            .device_free_bytes = device_free_bytes(s->dev),
        };
        return SIM_OOM;
    }
    uint32_t slot = slots_take(&s->allocs);
    if (slot == SLOTS_NONE) {
        if (charge > 0)
            device_release(s->dev, s->proc, charge);
        return SIM_ENOMEM;
    }
    raw_live *a = slots_get(&s->allocs, slot);
    *a = (raw_live){.addr = addr, .charge = charge, .requested = size, .stream = stream,
                     .seq = (uint32_t)s->num_device_allocs};
    if (charge > 0) {
        s->num_device_allocs++;
        s->reserved += charge;
        if (s->reserved > s->peak_reserved)
            s->peak_reserved = s->reserved;
    }
    *h = slot;
    return SIM_OK;
}

/* The memory of h goes back: at its free, or at its ready_t when the free was deferred. */
static void raw_free_ready(strategy *s, strategy_handle h)
{
    raw_live *a = slots_get(&s->allocs, h);
    if (a->charge > 0) {
        device_release(s->dev, s->proc, a->charge);
        s->reserved -= a->charge;
        s->num_device_frees++;
    }
    slots_put(&s->allocs, h);
}

static void raw_free(strategy *s, strategy_handle h, bool deferred)
{
    if (deferred)
        ((raw_live *)slots_get(&s->allocs, h))->pending = true;
    else
        raw_free_ready(s, h);
}

static void raw_empty_cache(strategy *s)
{
    (void)s;
}

static void raw_sample(const strategy *s, strategy_sample *out)
{
    *out = (strategy_sample){
        .allocated_bytes = s->reserved,
        .reserved_bytes = s->reserved,
        .num_device_allocs = s->num_device_allocs,
        .num_device_frees = s->num_device_frees,
    };
}

static void raw_stats(const strategy *s, const strategy_stat_sink *sink)
{
    strategy_emit_u64(sink, "reserved_bytes", s->reserved);
    strategy_emit_u64(sink, "peak_reserved_bytes", s->peak_reserved);
    strategy_emit_u64(sink, "live_allocations", s->allocs.live);
    strategy_emit_u64(sink, "num_device_alloc", s->num_device_allocs);
    strategy_emit_u64(sink, "num_device_free", s->num_device_frees);
}

static void raw_options(const strategy *s, const strategy_stat_sink *sink)
{
    (void)s;
    (void)sink;
}

static int raw_cmp_addr(const void *a, const void *b)
{
    const raw_live *x = *(const raw_live *const *)a, *y = *(const raw_live *const *)b;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

/* What the walker shows of a live allocation: its own region. */
static strategy_block raw_block(const raw_live *a)
{
    return (strategy_block){
        .addr = a->addr,
        .size_bytes = a->charge,
        .requested_bytes = a->requested,
        .region_addr = a->addr,
        .region = a->seq,
        .stream = a->stream,
        .state = a->pending ? BLOCK_PENDING : BLOCK_USED,
        .pool = NULL,
    };
}

static int raw_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    uint32_t n = s->allocs.live;
    if (n == 0)
        return 0;
    const raw_live **order = malloc((size_t)n * sizeof *order);
    if (order == NULL)
        return -1;
    uint32_t k = 0;
    for (uint32_t h = 0; h < s->allocs.n_used_hw; h++) {
        /* zero-byte allocations hold no memory and no address: not blocks */
        if (slots_valid(&s->allocs, h) && ((const raw_live *)slots_get(&s->allocs, h))->charge > 0)
            order[k++] = slots_get(&s->allocs, h);
    }
    qsort(order, k, sizeof *order, raw_cmp_addr);
    int r = 0;
    for (uint32_t i = 0; i < k && r == 0; i++) {
        strategy_block b = raw_block(order[i]);
        r = v(ctx, &b);
    }
    free(order);
    return r;
}

/* The handle is the allocation's slot: O(1). */
static bool raw_locate(const strategy *s, strategy_handle h, strategy_block *out)
{
    if (!slots_valid(&s->allocs, h))
        return false;
    const raw_live *a = slots_get(&s->allocs, h);
    if (a->charge == 0)
        return false; /* a zero-byte allocation: no memory, no address */
    *out = raw_block(a);
    return true;
}

typedef struct raw_check_ctx {
    const strategy *s;
    sim_report *r;
    uint64_t sum;
    uint64_t prev_end;
} raw_check_ctx;

static int raw_check_visit(void *ctx, const strategy_block *b)
{
    raw_check_ctx *c = ctx;
    c->sum += b->size_bytes;
    sim_report_insist(c->r, b->size_bytes == raw_charge_bytes(b->requested_bytes),
                      "raw: block at %llu charged %llu for a request of %llu",
                      (unsigned long long)b->addr, (unsigned long long)b->size_bytes,
                      (unsigned long long)b->requested_bytes);
    if (b->size_bytes > 0) {
        sim_report_insist(c->r, b->addr >= c->prev_end, "raw: block at %llu overlaps the previous one",
                          (unsigned long long)b->addr);
        c->prev_end = b->addr + b->size_bytes;
    }
    return 0;
}

static void raw_check(const strategy *s, sim_report *r)
{
    raw_check_ctx c = {s, r, 0, 0};
    raw_walk(s, raw_check_visit, &c);
    sim_report_insist(r, c.sum == s->reserved, "raw: reserved %llu != sum of charges %llu",
                      (unsigned long long)s->reserved, (unsigned long long)c.sum);
    sim_report_insist(r, s->peak_reserved >= s->reserved, "raw: peak %llu < current %llu",
                      (unsigned long long)s->peak_reserved, (unsigned long long)s->reserved);
    sim_report_insist(r, s->num_device_allocs >= s->num_device_frees, "raw: more device frees than allocs");
    sim_report_insist(r, !device_proc_alive(s->dev, s->proc) || device_proc_held(s->dev, s->proc) == s->reserved,
                      "raw: device holds %llu for the process, strategy %llu",
                      (unsigned long long)device_proc_held(s->dev, s->proc), (unsigned long long)s->reserved);
}

static const strategy_ops RAW_OPS = {
    .name = "raw",
    .summary = "one cudaMalloc/cudaFree per allocation, no caching",
    /* no options (opts NULL): the model has nothing to configure */
    .family = STRATEGY_FAMILY_BOUND,
    .fits_by_peak = true,
    .advice = "a caching allocator (--strategy=torch) that rounds less per allocation",
    .no_pools_note = "plain cudaMalloc has no private pools; the pools' allocations were each one cudaMalloc, "
                     "as every other allocation",
    .create = raw_create,
    .destroy = raw_destroy,
    .alloc = raw_alloc,
    .free = raw_free,
    .free_ready = raw_free_ready,
    .empty_cache = raw_empty_cache,
    .sample = raw_sample,
    .stats = raw_stats,
    .options = raw_options,
    .check = raw_check,
    .walk = raw_walk,
    .locate = raw_locate,
};

const strategy_ops *raw_strategy(void)
{
    return &RAW_OPS;
}
