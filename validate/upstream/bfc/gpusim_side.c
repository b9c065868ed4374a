/* gpusim_side.c — replays one trace (replay.cc's format) through gpusim's own BFC
 * model (strategies/bfc.h) on a device of DEVICE_BYTES, and prints the same keys as
 * replay.cc, plus the effective settings run.sh hands to the real allocator
 * (setting.* lines), and after every event the same event.N line as replay.cc.
 * Usage: gpusim_side STRATEGY DEVICE_BYTES STOP [KEY=VALUE ...] < trace, where the
 * KEY=VALUE pairs are strategy options (bfc_preset=jax ...). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/device.h"
#include "sim/strategy.h"
#include "strategies/bfc.h"

#define MAX_OPTS 16
#define MAX_IDS (1u << 20)

static uint64_t fnv(uint64_t h, uint64_t x)
{
    for (int b = 0; b < 8; b++)
        h = (h ^ ((x >> (8 * b)) & 0xff)) * 1099511628211ull;
    return h;
}

/* layout.fnv1a: FNV-1a over (address, size, in use) of every block in address
 * order, as replay.cc computes it from the real allocator's memory map */
static int side_walk(void *ctx, const strategy_block *b)
{
    uint64_t *h = ctx;
    *h = fnv(*h, b->addr);
    *h = fnv(*h, b->size_bytes);
    *h = fnv(*h, b->state != BLOCK_FREE);
    return 0;
}

static void print_u64(void *ctx, const char *key, uint64_t v)
{
    (void)ctx;
    printf("result.stats.%s=%" PRIu64 "\n", key, v);
}

static void print_real(void *ctx, const char *key, double v)
{
    (void)ctx;
    (void)key;
    (void)v; /* fragmentation_metric: derived from compared keys */
}

static void print_setting(void *ctx, const char *key, const char *v)
{
    (void)ctx;
    printf("setting.%s=%s\n", key, v);
}

static void ignore_text(void *ctx, const char *key, const char *v)
{
    (void)ctx;
    (void)key;
    (void)v;
}

/* The statistics an event.N line shows, by their result.stats names. */
static const char *const event_keys[] = {"bytes_in_use",    "peak_bytes_in_use", "num_allocs",
                                         "largest_alloc_size", "pool_bytes",     "peak_pool_bytes",
                                         "bytes_limit",     "regions",           "largest_free_block_bytes"};
#define N_EVENT_KEYS (sizeof event_keys / sizeof event_keys[0])

static void keep_u64(void *ctx, const char *key, uint64_t v)
{
    uint64_t *vals = ctx;
    for (size_t i = 0; i < N_EVENT_KEYS; i++)
        if (strcmp(key, event_keys[i]) == 0)
            vals[i] = v;
}

/* event.N: the block an allocation got (address and size; 0 and 0 for an OOM, a
 * free and a zero-byte request) and the statistics after the event, as replay.cc
 * prints them from the real allocator's GetStats */
static void print_event(const strategy_ops *ops, const strategy *s, uint64_t event, const strategy_handle *h)
{
    strategy_block b = {0};
    if (h == NULL || !ops->locate(s, *h, &b))
        b.addr = b.size_bytes = 0;
    uint64_t vals[N_EVENT_KEYS] = {0};
    strategy_stat_sink sink = {keep_u64, print_real, ignore_text, vals};
    ops->stats(s, &sink);
    strategy_sample smp;
    ops->sample(s, &smp);
    printf("event.%" PRIu64 "=addr:%" PRIu64 ",chunk:%" PRIu64, event, b.addr, b.size_bytes);
    for (size_t i = 0; i < N_EVENT_KEYS; i++)
        printf(",%s:%" PRIu64, event_keys[i], vals[i]);
    printf(",device_bytes:%" PRIu64 ",device_allocs:%" PRIu64 ",device_frees:%" PRIu64 "\n", smp.reserved_bytes,
           smp.num_device_allocs, smp.num_device_frees);
}

/* Print the first event at which XLA would abort on its one-gap CHECK. */
static void note_abort(const strategy_ops *ops, const strategy *s, uint64_t event, int *aborted)
{
    strategy_stat_value v;
    if (!*aborted && strategy_stat_find(ops, s, "xla_aborts", &v) && v.u64 > 0) {
        printf("upstream_abort.event=%" PRIu64 "\n", event);
        *aborted = 1;
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: gpusim_side greedy|growth|limit DEVICE_BYTES STOP [KEY=VALUE ...] < trace\n");
        return 2;
    }
    bfc_mode mode = strcmp(argv[1], "growth") == 0 ? BFC_GROWTH : strcmp(argv[1], "limit") == 0 ? BFC_LIMIT
                                                                                                 : BFC_GREEDY;
    device_info info = {.name = "upstream", .capacity_bytes = strtoull(argv[2], NULL, 10), .cc_major = 9};
    int stop = atoi(argv[3]);
    sim_kv kv[MAX_OPTS];
    uint32_t n = 0;
    for (int i = 4; i < argc && n < MAX_OPTS; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL)
            return 2;
        *eq = '\0';
        kv[n++] = (sim_kv){argv[i], eq + 1};
    }
    device *dev = device_new(&info);
    const strategy_ops *ops = bfc_strategy(mode);
    strategy_config cfg = {.dev = dev, .proc = device_proc_start(dev), .opts = kv, .n_opts = n};
    strategy *s = NULL;
    sim_error err;
    if (ops->create(&cfg, &s, &err) != SIM_OK) {
        fprintf(stderr, "gpusim_side: %s\n", err.msg);
        return 2;
    }
    strategy_handle *live = calloc(MAX_IDS, sizeof *live);
    uint64_t *size_of = calloc(MAX_IDS, sizeof *size_of);
    if (live == NULL || size_of == NULL)
        return 3;
    for (uint32_t i = 0; i < MAX_IDS; i++)
        live[i] = STRATEGY_HANDLE_NONE;
    uint64_t event = 0, ooms = 0, first_oom = 0, requested = 0, peak_requested = 0;
    int completed = 1, aborted = 0;
    char op;
    uint64_t id, size;
    while (scanf(" %c %" SCNu64, &op, &id) == 2) {
        event++;
        if (id >= MAX_IDS)
            return 2;
        if (op == 'a') {
            if (scanf(" %" SCNu64, &size) != 1)
                return 2;
            strategy_handle h;
            strategy_oom oom;
            sim_status st = ops->alloc(s, size, 0, &h, &oom);
            if (st == SIM_OOM) {
                print_event(ops, s, event, NULL);
                ooms++;
                if (first_oom == 0)
                    first_oom = event;
                note_abort(ops, s, event, &aborted);
                if (stop) {
                    completed = 0;
                    break;
                }
                continue;
            }
            if (st != SIM_OK)
                return 3;
            print_event(ops, s, event, &h);
            live[id] = h;
            size_of[id] = size;
            requested += size;
            if (requested > peak_requested)
                peak_requested = requested;
        } else if (live[id] != STRATEGY_HANDLE_NONE) {
            ops->free(s, live[id], false);
            live[id] = STRATEGY_HANDLE_NONE;
            requested -= size_of[id];
            print_event(ops, s, event, NULL);
        }
        note_abort(ops, s, event, &aborted);
    }
    strategy_sample smp;
    ops->sample(s, &smp);
    printf("result.completed=%s\n", completed ? "true" : "false");
    printf("result.ooms=%" PRIu64 "\n", ooms);
    if (first_oom)
        printf("result.first_oom.event=%" PRIu64 "\n", first_oom);
    strategy_stat_sink stats = {print_u64, print_real, ignore_text, NULL};
    ops->stats(s, &stats);
    printf("result.peak_requested_bytes=%" PRIu64 "\n", peak_requested);
    printf("result.num_device_allocs=%" PRIu64 "\n", smp.num_device_allocs);
    printf("result.num_device_frees=%" PRIu64 "\n", smp.num_device_frees);
    strategy_stat_sink settings = {NULL, NULL, print_setting, NULL};
    ops->options(s, &settings);
    uint64_t h = 1469598103934665603ull;
    ops->walk(s, side_walk, &h);
    printf("layout.fnv1a=%016" PRIx64 "\n", h);
    free(live);
    free(size_of);
    ops->destroy(s);
    device_free(dev);
    return 0;
}
