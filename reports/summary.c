/* The framework views of one moment's statistics (summary.h). The layout of
 * memory_summary, restated from torch/cuda/memory.py (commit 00b65a04a2d3):
 *  - every line is 75 characters between a leading and a trailing '|';
 *  - a header (device ID left-justified in 17), the CUDA OOMs and cudaMalloc retries
 *    line, then one block per metric: "all" and, unless abbreviated, "from large pool"
 *    and "from small pool", each with Cur Usage, Peak Usage, Tot Alloc, Tot Freed;
 *  - sizes: divide by 1024 while the "all" row's value in that column is at least
 *    768 KiB, through B, KiB, MiB, GiB, TiB, PiB; printed as %6d and the unit padded
 *    to 3; counts: divide by 1000 while the "all" value is at least 750 000, through
 *    ' ', K, M; printed as %7d, the unit, a space. The sub-rows are scaled by the
 *    "all" row of their column, so they share its unit;
 *  - the two oversize rows, each scaled by its own value. */
#include "summary.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/jsonw.h"

/* ---------------------------------------------------------------- torch's view */

typedef enum stat_source { FROM_TORCH = 0, FROM_ASYNC = 1 } stat_source;

/* A memory_stats() key as PyTorch would report it from this moment. */
static uint64_t torch_stat(const moment *m, stat_source src, const char *key)
{
    uint64_t v = 0;
    if (src == FROM_TORCH)
        return moment_u64(m, key, &v) ? v : 0;
    /* getDeviceStats under backend:cudaMallocAsync */
    static const char *const MAP[][2] = {
        {"allocated_bytes.all.current", "UsedMemCurrent"}, {"allocated_bytes.all.peak", "UsedMemHigh"},
        {"active_bytes.all.current", "UsedMemCurrent"},    {"active_bytes.all.peak", "UsedMemHigh"},
        {"reserved_bytes.all.current", "ReservedMemCurrent"}, {"reserved_bytes.all.peak", "ReservedMemHigh"},
    };
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (strcmp(key, MAP[i][0]) == 0)
            return moment_u64(m, MAP[i][1], &v) ? v : 0;
    return 0;
}

/* How many of n prefixes v steps down: by `step` while the reference (divided as a
 * real, as Python does; v as an integer) is not below `limit`. */
static size_t scale_down(uint64_t *v, uint64_t pref, uint64_t step, double limit, size_t n)
{
    double p = (double)pref;
    size_t k = 0;
    while (k + 1 < n && !(p < limit)) {
        k++;
        *v /= step;
        p /= (double)step;
    }
    return k;
}

static void format_size(uint64_t sz, uint64_t pref, char *buf, size_t cap)
{
    static const char *const PREFIXES[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t k = scale_down(&sz, pref, 1024, 768.0 * 1024.0, sizeof PREFIXES / sizeof PREFIXES[0]);
    snprintf(buf, cap, "%6" PRIu64 " %s", sz, PREFIXES[k]);
}

static void format_count(uint64_t cnt, uint64_t pref, char *buf, size_t cap)
{
    static const char *const PREFIXES[] = {" ", "K", "M"};
    size_t k = scale_down(&cnt, pref, 1000, 750.0 * 1000.0, sizeof PREFIXES / sizeof PREFIXES[0]);
    snprintf(buf, cap, "%7" PRIu64 " %s ", cnt, PREFIXES[k]);
}

typedef void (*formatter)(uint64_t v, uint64_t pref, char *buf, size_t cap);

static const char *const COLUMNS[] = {"current", "peak", "allocated", "freed"};

static void line(sim_buf *out, const char *text)
{
    sim_buf_printf(out, "|%s|\n", text);
}

static void rule(sim_buf *out, char c)
{
    char text[76];
    memset(text, c, 75);
    text[75] = '\0';
    line(out, text);
}

static void row(sim_buf *out, const char *name, const uint64_t v[4], const uint64_t pref[4], formatter f)
{
    char cells[4][32];
    for (int c = 0; c < 4; c++)
        f(v[c], pref[c], cells[c], sizeof cells[c]);
    char text[256];
    snprintf(text, sizeof text, " %-21s | %s | %s | %s | %s ", name, cells[0], cells[1], cells[2], cells[3]);
    line(out, text);
}

static void torch_summary(const moment *m, stat_source src, uint32_t device_id, sim_buf *out)
{
    static const struct {
        const char *key, *name;
        bool bytes;
    } METRICS[] = {
        {"allocated_bytes", "Allocated memory", true},     {"active_bytes", "Active memory", true},
        {"requested_bytes", "Requested memory", true},     {"reserved_bytes", "GPU reserved memory", true},
        {"inactive_split_bytes", "Non-releasable memory", true}, {"allocation", "Allocations", false},
        {"active", "Active allocs", false},                {"segment", "GPU reserved segments", false},
        {"inactive_split", "Non-releasable allocs", false},
    };
    static const char *const POOLS[][2] = {
        {"all", NULL}, {"large_pool", "      from large pool"}, {"small_pool", "      from small pool"}};
    char text[128], key[128];
    rule(out, '=');
    snprintf(text, sizeof text, " %-16s PyTorch CUDA memory summary, device ID %-17" PRIu32 " ", "", device_id);
    line(out, text);
    rule(out, '-');
    snprintf(text, sizeof text, "  %-9s CUDA OOMs: %-12" PRIu64 " | %-6s cudaMalloc retries: %-8" PRIu64 "  ", "",
             torch_stat(m, src, "num_ooms"), "", torch_stat(m, src, "num_alloc_retries"));
    line(out, text);
    rule(out, '=');
    line(out, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
    for (size_t i = 0; i < sizeof METRICS / sizeof METRICS[0]; i++) {
        rule(out, '-');
        uint64_t pref[4] = {0};
        for (size_t p = 0; p < 3; p++) {
            uint64_t v[4];
            for (int c = 0; c < 4; c++) {
                snprintf(key, sizeof key, "%s.%s.%s", METRICS[i].key, POOLS[p][0], COLUMNS[c]);
                v[c] = torch_stat(m, src, key);
                if (p == 0)
                    pref[c] = v[c];
            }
            row(out, POOLS[p][1] ? POOLS[p][1] : METRICS[i].name, v, pref,
                METRICS[i].bytes ? format_size : format_count);
        }
    }
    static const char *const OVERSIZE[][2] = {{"oversize_allocations", "Oversize allocations"},
                                              {"oversize_segments", "Oversize GPU segments"}};
    for (size_t i = 0; i < 2; i++) {
        rule(out, '-');
        uint64_t v[4];
        for (int c = 0; c < 4; c++) {
            snprintf(key, sizeof key, "%s.%s", OVERSIZE[i][0], COLUMNS[c]);
            v[c] = torch_stat(m, src, key);
        }
        row(out, OVERSIZE[i][1], v, v, format_count);
    }
    rule(out, '=');
}

/* Every key memory_stats() returns for the native backend's DeviceStats, sorted as
 * memory_stats() sorts them. */
static size_t torch_keys(char keys[][64], size_t cap)
{
    static const char *const POOLED[] = {"active", "active_bytes", "allocated_bytes", "allocation",
                                         "inactive_split", "inactive_split_bytes", "requested_bytes",
                                         "reserved_bytes", "segment"};
    static const char *const POOLS[] = {"all", "large_pool", "small_pool"};
    static const char *const SORTED_COLUMNS[] = {"allocated", "current", "freed", "peak"};
    static const char *const SCALARS[] = {"max_split_size", "num_alloc_retries", "num_device_alloc",
                                          "num_device_free", "num_ooms", "num_sync_all_streams"};
    size_t n = 0;
    for (size_t i = 0; i < sizeof POOLED / sizeof POOLED[0]; i++)
        for (size_t p = 0; p < 3; p++)
            for (size_t c = 0; c < 4 && n < cap; c++)
                snprintf(keys[n++], 64, "%s.%s.%s", POOLED[i], POOLS[p], SORTED_COLUMNS[c]);
    for (size_t i = 0; i < sizeof SCALARS / sizeof SCALARS[0] && n < cap; i++)
        snprintf(keys[n++], 64, "%s", SCALARS[i]);
    static const char *const OVERSIZE[] = {"oversize_allocations", "oversize_segments"};
    for (size_t i = 0; i < 2; i++)
        for (size_t c = 0; c < 4 && n < cap; c++)
            snprintf(keys[n++], 64, "%s.%s", OVERSIZE[i], SORTED_COLUMNS[c]);
    return n;
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static void torch_json(const moment *m, stat_source src, sim_buf *out)
{
    char keys[160][64];
    size_t n = torch_keys(keys, 160);
    qsort(keys, n, sizeof keys[0], key_cmp);
    jsonw w;
    jsonw_init_buf(&w, out, JSONW_PRETTY, 0);
    jsonw_object_step(&w, 1); /* PyTorch's keys: never none */
    for (size_t i = 0; i < n; i++)
        jsonw_key_u64(&w, keys[i], torch_stat(m, src, keys[i]));
    jsonw_end(&w);
    sim_buf_puts(out, "\n");
}

/* ---------------------------------------------------------------- TF and XLA's view */

/* XLA's AllocatorStats as jax's memory_stats() names them (xla/stream_executor:
 * AllocatorStats), the ones the BFC model keeps. */
static const char *const XLA_KEYS[] = {"num_allocs", "bytes_in_use", "peak_bytes_in_use", "largest_alloc_size",
                                       "bytes_limit", "pool_bytes", "peak_pool_bytes", "largest_free_block_bytes"};

/* tsl HumanReadableNumBytes: bytes below 1 KiB as "NB"; else divided by 1024 while at
 * least 1 MiB, then printed /1024 as "%.1fKiB" or "%.2f?iB". */
static void tf_bytes(uint64_t n, char *buf, size_t cap)
{
    static const char UNITS[] = "KMGTPE";
    if (n < 1024) {
        snprintf(buf, cap, "%" PRIu64 "B", n);
        return;
    }
    size_t u = 0;
    while (n >= (uint64_t)1024 * 1024 && u + 1 < sizeof UNITS - 1) {
        n /= 1024;
        u++;
    }
    snprintf(buf, cap, UNITS[u] == 'K' ? "%.1f%ciB" : "%.2f%ciB", (double)n / 1024.0, UNITS[u]);
}

static uint64_t stat_or_zero(const moment *m, const char *key)
{
    uint64_t v = 0;
    return moment_u64(m, key, &v) ? v : 0;
}

/* TF's get_memory_info and XLA's memory_stats() as one JSON object. */
static void bfc_json(const moment *m, sim_buf *out)
{
    uint64_t v = 0;
    jsonw w;
    jsonw_init_buf(&w, out, JSONW_PRETTY, 0);
    jsonw_object_step(&w, 1);
    jsonw_key(&w, "get_memory_info");
    jsonw_object_inline(&w);
    jsonw_key_u64(&w, "current", stat_or_zero(m, "bytes_in_use"));
    jsonw_key_u64(&w, "peak", stat_or_zero(m, "peak_bytes_in_use"));
    jsonw_end(&w);
    jsonw_key(&w, "memory_stats");
    jsonw_object_inline(&w);
    for (size_t i = 0; i < sizeof XLA_KEYS / sizeof XLA_KEYS[0]; i++)
        if (moment_u64(m, XLA_KEYS[i], &v))
            jsonw_key_u64(&w, XLA_KEYS[i], v);
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(out, "\n");
}

static void bfc_view(const moment *m, sim_buf *out)
{
    uint64_t cur = stat_or_zero(m, "bytes_in_use"), peak = stat_or_zero(m, "peak_bytes_in_use"), v = 0;
    sim_buf_printf(out,
                   "tf.config.experimental.get_memory_info('GPU:0'): {'current': %" PRIu64 ", 'peak': %" PRIu64
                   "}\njax.devices()[0].memory_stats(): {",
                   cur, peak);
    bool first = true;
    for (size_t i = 0; i < sizeof XLA_KEYS / sizeof XLA_KEYS[0]; i++) {
        if (!moment_u64(m, XLA_KEYS[i], &v))
            continue;
        sim_buf_printf(out, "%s'%s': %" PRIu64, first ? "" : ", ", XLA_KEYS[i], v);
        first = false;
    }
    sim_buf_puts(out, "}\n");
    if (m->kind == MOMENT_OOM && m->found) {
        /* BFCAllocator's warning at a failed allocation (the op's name is not in a trace) */
        char h[32];
        tf_bytes(m->oom.size, h, sizeof h);
        sim_buf_printf(out,
                       "Allocator (GPU_0_bfc) ran out of memory trying to allocate %s (rounded to %" PRIu64 ")\n"
                       "If the cause is memory fragmentation maybe the environment variable "
                       "'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. \n",
                       h, m->oom.info.size_bytes);
    }
    /* AllocatorStats::DebugString, which TensorFlow logs after "Stats: " */
    static const char *const DEBUG_ROWS[][2] = {
        {"Limit", "bytes_limit"},           {"InUse", "bytes_in_use"},   {"MaxInUse", "peak_bytes_in_use"},
        {"NumAllocs", "num_allocs"},        {"MaxAllocSize", "largest_alloc_size"},
        {"Reserved", "pool_bytes"},         {"PeakReserved", "peak_pool_bytes"},
        {"LargestFreeBlock", "largest_free_block_bytes"},
    };
    sim_buf_puts(out, "Stats: \n");
    for (size_t i = 0; i < sizeof DEBUG_ROWS / sizeof DEBUG_ROWS[0]; i++) {
        char label[32];
        snprintf(label, sizeof label, "%s:", DEBUG_ROWS[i][0]);
        sim_buf_printf(out, "%-18s%20" PRIu64 "\n", label, stat_or_zero(m, DEBUG_ROWS[i][1]));
    }
}

/* ---------------------------------------------------------------- any other model */

static void plain_view(const moment *m, sim_buf *out)
{
    for (size_t i = 0; i < m->n; i++) {
        const moment_stat *s = &m->stats[i];
        sim_buf_printf(out, "%-32s ", s->key);
        if (s->kind == STRATEGY_STAT_U64)
            sim_buf_printf(out, "%" PRIu64, s->u64);
        else
            sim_buf_json_real(out, s->real);
        sim_buf_puts(out, "\n");
    }
}

static void plain_json(const moment *m, sim_buf *out)
{
    if (m->n == 0) {
        sim_buf_puts(out, "{\n}\n"); /* as it always was written without statistics */
        return;
    }
    jsonw w;
    jsonw_init_buf(&w, out, JSONW_PRETTY, 0);
    jsonw_object_step(&w, 1);
    for (size_t i = 0; i < m->n; i++) {
        const moment_stat *s = &m->stats[i];
        jsonw_key(&w, s->key);
        if (s->kind == STRATEGY_STAT_U64)
            jsonw_u64(&w, s->u64);
        else
            jsonw_ratio(&w, s->real);
    }
    jsonw_end(&w);
    sim_buf_puts(out, "\n");
}

typedef enum view { VIEW_TORCH, VIEW_ASYNC, VIEW_BFC, VIEW_PLAIN } view;

/* The view of the statistics' vocabulary, which the strategy's family names. */
static view view_of(const moment *m)
{
    if (m->ops == NULL || m->n == 0)
        return VIEW_PLAIN;
    switch (m->ops->family) {
    case STRATEGY_FAMILY_TORCH: return VIEW_TORCH;
    case STRATEGY_FAMILY_ASYNC: return VIEW_ASYNC;
    case STRATEGY_FAMILY_BFC: return VIEW_BFC;
    case STRATEGY_FAMILY_BOUND:
    case STRATEGY_FAMILY_PLANNED:
    default: return VIEW_PLAIN;
    }
}

void report_summary_text(const moment *m, uint32_t device_id, sim_buf *out)
{
    switch (view_of(m)) {
    case VIEW_TORCH: torch_summary(m, FROM_TORCH, device_id, out); break;
    case VIEW_ASYNC: torch_summary(m, FROM_ASYNC, device_id, out); break;
    case VIEW_BFC: bfc_view(m, out); break;
    case VIEW_PLAIN: plain_view(m, out); break;
    }
}

void report_summary_json(const moment *m, sim_buf *out)
{
    switch (view_of(m)) {
    case VIEW_TORCH: torch_json(m, FROM_TORCH, out); break;
    case VIEW_ASYNC: torch_json(m, FROM_ASYNC, out); break;
    case VIEW_BFC: bfc_json(m, out); break;
    case VIEW_PLAIN: plain_json(m, out); break;
    }
}
