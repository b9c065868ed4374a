/* The `torch` strategy's statistics and effective options: DeviceStats as
 * torch.cuda.memory_stats() names them (docs/allocators.md §2.12), and the
 * settings in force (alloc_conf as given, each key's effective value, the
 * release modelled). */
#include <stdio.h>

#include "sim/jsonw.h"
#include "torch_types.h"

static void emit_stat(const strategy_stat_sink *sink, const char *name, const tstat *x)
{
    char key[96];
    static const char *const parts[4] = {"current", "peak", "allocated", "freed"};
    const int64_t v[4] = {x->current, x->peak, x->allocated, stat_freed(x)};
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s.%s", name, parts[i]);
        sink->u64(sink->ctx, key, v[i] < 0 ? 0 : (uint64_t)v[i]);
    }
}

static void emit_array(const strategy_stat_sink *sink, const char *name, const tstat *arr)
{
    static const char *const types[N_ST] = {"all", "small_pool", "large_pool"};
    char key[64];
    for (unsigned t = 0; t < N_ST; t++) {
        snprintf(key, sizeof key, "%s.%s", name, types[t]);
        tstat x = stat_of(arr, t);
        emit_stat(sink, key, &x);
    }
}

void torch_stats(const strategy *s, const strategy_stat_sink *sink)
{
    const tstats *st = &s->st;
    emit_array(sink, "allocation", st->allocation);
    emit_array(sink, "segment", st->segment);
    emit_array(sink, "active", st->active);
    emit_array(sink, "inactive_split", st->inactive_split);
    emit_array(sink, "allocated_bytes", st->allocated_bytes);
    emit_array(sink, "reserved_bytes", st->reserved_bytes);
    emit_array(sink, "active_bytes", st->active_bytes);
    emit_array(sink, "inactive_split_bytes", st->inactive_split_bytes);
    emit_array(sink, "requested_bytes", st->requested_bytes);
    emit_stat(sink, "oversize_allocations", &st->oversize_allocations);
    emit_stat(sink, "oversize_segments", &st->oversize_segments);
    sink->u64(sink->ctx, "num_alloc_retries", st->num_alloc_retries);
    sink->u64(sink->ctx, "num_ooms", st->num_ooms);
    sink->u64(sink->ctx, "num_sync_all_streams", st->num_sync_all_streams);
    sink->u64(sink->ctx, "num_device_alloc", st->num_device_alloc);
    sink->u64(sink->ctx, "num_device_free", st->num_device_free);
    /* memory_stats() shows SIZE_MAX cast to int64, i.e. -1, when unset */
    if (s->conf.max_split_size_bytes == TORCH_CONF_NO_MAX_SPLIT)
        sink->real(sink->ctx, "max_split_size", -1.0);
    else
        sink->u64(sink->ctx, "max_split_size", s->conf.max_split_size_bytes);
}

void torch_options(const strategy *s, const strategy_stat_sink *sink)
{
    char buf[256];
    const torch_conf *c = &s->conf;
    strategy_emit_text(sink, "alloc_conf", s->conf_text);
    strategy_emit_text(sink, "torch_version", torch_version_format(&s->rules, buf, sizeof buf));
    strategy_emit_text(sink, "platform", torch_platform_name(&s->rules));
    strategy_emit_text(sink, "torch_fixes", torch_fixes_format(&s->rules, buf, sizeof buf));
    strategy_emit_text(sink, "backend", "native");
    if (c->max_split_size_bytes == TORCH_CONF_NO_MAX_SPLIT)
        snprintf(buf, sizeof buf, "unlimited");
    else
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)(c->max_split_size_bytes >> 20));
    strategy_emit_text(sink, "max_split_size_mb", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(c->max_non_split_rounding_bytes >> 20));
    strategy_emit_text(sink, "max_non_split_rounding_mb", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(c->large_segment_size_bytes >> 20));
    strategy_emit_text(sink, "large_segment_size_mb", buf);
    snprintf(buf, sizeof buf, "%g", c->garbage_collection_threshold);
    strategy_emit_text(sink, "garbage_collection_threshold", buf);
    strategy_emit_text(sink, "roundup_power2_divisions", torch_conf_format_divisions(c, buf, sizeof buf));
    strategy_emit_text(sink, "expandable_segments", c->expandable_segments ? "True" : "False");
    /* memory_fraction: "" when unset (no cap), which create() reads back as unset; else
     * the shortest text that reads back to the same double (0.8, not 0.80000000000000004) */
    buf[0] = '\0';
    if (s->set_fraction)
        jsonw_format_real(s->fraction, buf, sizeof buf);
    strategy_emit_text(sink, "memory_fraction", buf);
    if (c->ignored[0] != '\0') {
        snprintf(buf, sizeof buf, "%s (accepted; they do not change device memory placement)", c->ignored);
        strategy_emit_text(sink, "ignored_keys", buf);
    }
}
