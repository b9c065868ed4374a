/* The BFC strategy's framework wiring (bfc_limits.h): options, and the limit that
 * TensorFlow or JAX gives the allocator. Sources: tensorflow
 * core/common_runtime/gpu/gpu_device.cc (MinSystemMemory,
 * SingleVirtualDeviceMemoryLimit), xla/pjrt/gpu/gpu_helpers.cc (CreateBFCAllocator)
 * and allocator_config.h; summarised in docs/allocators.md §1.9, §1.10. */
#include "bfc_limits.h"

#include <stdio.h>
#include <string.h>

#include "sim/units.h"

#define BFC_JAX_DEFAULT_FRACTION 0.75 /* FixedMemFraction{0.75}, allocator_config.h */
#define BFC_JAX_LIMIT_GRANULE (2 * MiB) /* kGpuMemoryLimitGranularity, gpu_helpers.cc */
#define BFC_DEFAULT_ALIGNMENT 64       /* Allocator::kAllocatorAlignment: what XLA asks for */

/* TF's MinSystemMemory (gpu_device.cc): the bytes left to the system when no fraction
 * is given. One newer copy seen through the index adds cc ≥ 9 → 1800 MiB; its upstream
 * provenance is unconfirmed (§1.9), so the three-tier version is modelled. */
static uint64_t tf_min_system_memory(uint64_t available, unsigned cc_major)
{
    if (available < 2 * GiB)
        return 225 * MiB;
    if (cc_major == 0)
        return 1536 * MiB; /* unknown compute capability: assume a current GPU (≥ 8) */
    if (cc_major <= 6)
        return 500 * MiB;
    if (cc_major == 7)
        return 1050 * MiB;
    return 1536 * MiB;
}

uint64_t bfc_limits_fraction(double f, uint64_t bytes)
{
    double v = f * (double)bytes;
    return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

uint64_t bfc_limits_bytes(bfc_mode mode, const bfc_settings *set, const device_info *info)
{
    if (mode == BFC_LIMIT)
        return set->limit_opt; /* virtual device memory_limit: no reserve (§1.9) */
    if (set->preset == BFC_PRESET_JAX) { /* CreateBFCAllocator: total · fraction (§1.10) */
        uint64_t bytes = bfc_limits_fraction(set->has_mem_fraction ? set->mem_fraction : BFC_JAX_DEFAULT_FRACTION,
                                             info->capacity_bytes);
        /* RoundUpGpuMemoryLimit: up to a multiple of 2 MiB (PR #43125, 1c7e91cb79,
         * 2026-06-03; §1.11); saturating where that would pass 2^64 */
        if (set->version == BFC_VERSION_XLA2026)
            bytes = bytes > UINT64_MAX - BFC_JAX_LIMIT_GRANULE ? bytes : units_round_up(bytes, BFC_JAX_LIMIT_GRANULE);
        return bytes;
    }
    if (set->has_mem_fraction) /* per_process_gpu_memory_fraction: of total, not free */
        return bfc_limits_fraction(set->mem_fraction, info->capacity_bytes);
    /* SingleVirtualDeviceMemoryLimit: free at start (cudaMemGetInfo after the context
     * exists; modelled as capacity − context) minus the reserve, only if smaller */
    uint64_t available = info->capacity_bytes > info->context_bytes
                             ? info->capacity_bytes - info->context_bytes : 0;
    uint64_t reserve = tf_min_system_memory(available, info->cc_major);
    return reserve < available ? available - reserve : available;
}

void bfc_limits_source(bfc_mode mode, const bfc_settings *set, const device_info *info, char *out, size_t n)
{
    char cap[32], ctx[32];
    units_format_size(info->capacity_bytes, cap, sizeof cap);
    if (mode == BFC_LIMIT) {
        snprintf(out, n, "--limit");
    } else if (set->preset == BFC_PRESET_JAX) {
        const char *round = set->version == BFC_VERSION_XLA2026 ? ", rounded up to 2 MiB" : "";
        if (set->has_mem_fraction)
            snprintf(out, n, "JAX preset: %g x %s, --mem-fraction%s", set->mem_fraction, cap, round);
        else
            snprintf(out, n, "JAX preset: %g x %s%s", BFC_JAX_DEFAULT_FRACTION, cap, round);
    } else if (set->has_mem_fraction) {
        snprintf(out, n, "%g x %s, --mem-fraction", set->mem_fraction, cap);
    } else {
        /* the same steps as bfc_limits_bytes: free at start, less the reserve when smaller */
        uint64_t available = info->capacity_bytes > info->context_bytes
                                 ? info->capacity_bytes - info->context_bytes : 0;
        uint64_t reserve = tf_min_system_memory(available, info->cc_major);
        units_format_size(info->context_bytes, ctx, sizeof ctx);
        char less_ctx[48] = "";
        if (info->context_bytes)
            snprintf(less_ctx, sizeof less_ctx, " - %s context", ctx);
        /* the reserves are whole MiB (tf_min_system_memory): said as TF writes them */
        unsigned long long res = (unsigned long long)(reserve / MiB);
        if (reserve < available)
            snprintf(out, n, "TF preset: capacity%s - %llu MiB reserve", less_ctx, res);
        else
            snprintf(out, n, "TF preset: capacity%s, less than the %llu MiB reserve", less_ctx, res);
    }
}

/* The keys are what bfc_limits_parse reads and bfc.c's options() writes back
 * (bfc_limits.h says which modes take which entries). */
const strategy_option bfc_limits_options[BFC_LIMITS_N_OPTIONS] = {
    STRATEGY_OPT_REAL("mem_fraction", "mem-fraction", "tf: total less a reserve by compute capability, jax: 0.75",
                      "0.5",
                      "the limit as a share of total memory (per_process_gpu_memory_fraction, "
                      "XLA_PYTHON_CLIENT_MEM_FRACTION)"),
    STRATEGY_OPT_ENUM("bfc_preset", "bfc-preset", "tf|jax", "tf", "jax",
                      "whose wiring sets the limit and garbage collection: TensorFlow's or JAX's"),
    STRATEGY_OPT_ENUM("bfc_gc", "bfc-gc", "on|off", "on for tf, off for jax", "off",
                      "on a failed allocation, free the wholly free regions and retry"),
    STRATEGY_OPT_REAL("bfc_fragmentation_fraction", "bfc-fragmentation-fraction", "0, meaning 128 MiB", "0.2",
                      "split a chunk when its slack is at least F x the limit (internal_fragmentation_fraction)"),
    STRATEGY_OPT_ENUM("bfc_version", "bfc-version", "tsl2024|xla2026", "xla2026", "tsl2024",
                      "which bfc_allocator.cc: google/tsl of 2024-06 or openxla/xla of 2026-08 (spatial "
                      "partitioning, alignment, JAX's 2 MiB limit rounding)"),
    STRATEGY_OPT_SIZE("bfc_alignment", "bfc-alignment", "64 (XLA's request); 256 B is the floor", "4096",
                      "the alignment every request asks for, a power of two (xla2026 honours max(A, 256); tsl2024 "
                      "ignores it)"),
    STRATEGY_OPT_ENUM("bfc_spatial", "bfc-spatial", "on|off",
                      "on for greedy --bfc-preset=jax under xla2026, off elsewhere", "on",
                      "XLA's spatially partitioned BFC: lower-partition holes first, then the central gap "
                      "(xla_gpu_enable_allocator_spatial_partitioning)"),
    STRATEGY_OPT_REQUIRED_SIZE("limit", "limit", "4096MiB", "memory_limit of the logical device"),
};

/* A two-way option's value v: *out true for `yes`, false for `no`, left as it is
 * when v is NULL; SIM_EUSAGE naming what was expected for another value. */
static sim_status either(sim_error *err, const char *flag, const char *v, const char *yes, const char *no,
                         const char *expected, bool *out)
{
    if (v == NULL)
        return SIM_OK;
    if (strcmp(v, yes) != 0 && strcmp(v, no) != 0)
        return strategy_option_error(err, flag, v, expected, NULL);
    *out = strcmp(v, yes) == 0;
    return SIM_OK;
}

sim_status bfc_limits_parse(bfc_mode mode, const strategy_config *cfg, bfc_settings *out, sim_error *err)
{
    *out = (bfc_settings){0};
    sim_error inner;
    sim_error_clear(&inner);
    bool jax = false;
    sim_status st = either(err, "--bfc-preset", strategy_config_get(cfg, "bfc_preset"), "jax", "tf", "tf or jax", &jax);
    if (st != SIM_OK)
        return st;
    out->preset = jax ? BFC_PRESET_JAX : BFC_PRESET_TF;

    /* TF: TF_ENABLE_GPU_GARBAGE_COLLECTION unset → on; XLA/JAX: left off (§1.6) */
    out->gc = out->preset == BFC_PRESET_TF;
    st = either(err, "--bfc-gc", strategy_config_get(cfg, "bfc_gc"), "on", "off", "on or off", &out->gc);
    if (st != SIM_OK)
        return st;

    const char *v = strategy_config_get(cfg, "mem_fraction");
    if (v != NULL) {
        if (units_parse_real(v, 0.0, 1.0, &out->mem_fraction, &inner) != SIM_OK || !(out->mem_fraction > 0.0))
            return strategy_option_error(err, "--mem-fraction", v,
                                         "a fraction of the GPU's total memory in (0, 1], e.g. 0.5",
                                         inner.msg[0] ? &inner : NULL);
        out->has_mem_fraction = true;
        snprintf(out->mem_fraction_text, sizeof out->mem_fraction_text, "%s", v);
    }

    v = strategy_config_get(cfg, "bfc_fragmentation_fraction");
    if (v != NULL) {
        if (units_parse_real(v, 0.0, 1e300, &out->frag_fraction, &inner) != SIM_OK)
            return strategy_option_error(err, "--bfc-fragmentation-fraction", v,
                                         "a real number >= 0 (0 keeps the 128 MiB split rule)", &inner);
        out->has_frag_fraction = true;
        snprintf(out->frag_fraction_text, sizeof out->frag_fraction_text, "%s", v);
    }

    /* `limit` belongs to the limit strategy; greedy and growth take their limit from
     * the preset (a shared command line may still carry it, so it is ignored there) */
    if (mode == BFC_LIMIT) {
        v = strategy_config_get(cfg, "limit");
        if (v == NULL)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "strategy limit needs --limit=SIZE, the logical device's "
                                 "memory_limit (e.g. --limit=4096MiB)");
        if (units_parse_size(v, &out->limit_opt, &inner) != SIM_OK)
            return strategy_option_error(err, "--limit", v, "a size such as 4096MiB", &inner);
        if (out->limit_opt == 0)
            return strategy_option_error(err, "--limit", v, "a size of more than 0 bytes", NULL);
    }

    bool tsl = false;
    st = either(err, "--bfc-version", strategy_config_get(cfg, "bfc_version"), "tsl2024", "xla2026",
                "tsl2024 or xla2026", &tsl);
    if (st != SIM_OK)
        return st;
    out->version = tsl ? BFC_VERSION_TSL2024 : BFC_VERSION_XLA2026;

    /* se_gpu_pjrt_client.cc: one spatially partitioned pool when JAX preallocates and
     * xla_gpu_enable_allocator_spatial_partitioning is set, its default since
     * 7f541bdac3 (2026-06-15); TensorFlow's and growth's allocators are classic */
    out->spatial = out->version == BFC_VERSION_XLA2026 && out->preset == BFC_PRESET_JAX && mode == BFC_GREEDY;
    /* growth does not take the option (XLA CHECKs that spatial partitioning has one
     * fixed range, allow_growth=false): its table lacks it, so the command line
     * refuses --bfc-spatial with growth alone, and growth ignores the key */
    st = either(err, "--bfc-spatial", mode == BFC_GROWTH ? NULL : strategy_config_get(cfg, "bfc_spatial"), "on",
                "off", "on or off", &out->spatial);
    if (st != SIM_OK)
        return st;
    if (out->spatial && out->version != BFC_VERSION_XLA2026)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--bfc-spatial=on needs --bfc-version=xla2026: tsl of 2024 has no spatial "
                             "partitioning");

    out->alignment = BFC_DEFAULT_ALIGNMENT;
    v = strategy_config_get(cfg, "bfc_alignment");
    if (v != NULL) {
        if (units_parse_size(v, &out->alignment, &inner) != SIM_OK)
            return strategy_option_error(err, "--bfc-alignment", v, "a power of two in bytes, e.g. 4096", &inner);
        if (out->alignment == 0 || (out->alignment & (out->alignment - 1)) != 0 || out->alignment > GiB)
            return strategy_option_error(err, "--bfc-alignment", v, "a power of two from 1 byte to 1 GiB", NULL);
    }
    return SIM_OK;
}
