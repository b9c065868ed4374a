/* bfc_limits.h — the framework wiring around the BFC allocator, not the allocator:
 * the strategy options (their table and their parsing), and the memory limit that
 * TensorFlow (gpu_device.cc: a reserve by compute capability, or
 * per_process_gpu_memory_fraction) or JAX (gpu_helpers.cc: 0.75 of total, or a
 * fraction) hands to BFCAllocator's constructor. */

/* Sources and citations in docs/allocators.md §1.9 and §1.10. */
#ifndef GPUSIM_BFC_LIMITS_H
#define GPUSIM_BFC_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bfc.h"
#include "sim/device.h"
#include "sim/status.h"
#include "sim/strategy.h"

typedef enum bfc_preset { BFC_PRESET_TF = 0, BFC_PRESET_JAX = 1 } bfc_preset;

/* Which copy of bfc_allocator.cc and its wiring is modelled (docs/allocators.md §1.11):
 * google/tsl of mid-2024, or openxla/xla of 2026-08 (spatial partitioning, requested
 * alignment, JAX's 2 MiB limit rounding). */
typedef enum bfc_version { BFC_VERSION_TSL2024 = 0, BFC_VERSION_XLA2026 = 1 } bfc_version;

/* The options of one instance, as bfc_limits_options describes them. */
typedef struct bfc_settings {
    bfc_preset preset;
    bfc_version version;
    bool gc;                     /* garbage collection of wholly free regions */
    bool spatial;                /* spatial partitioning (xla2026 only) */
    uint64_t alignment;          /* the alignment every request asks for (default 64) */
    bool has_mem_fraction;
    bool has_frag_fraction;
    double mem_fraction;         /* valid iff has_mem_fraction */
    double frag_fraction;        /* 0 unless has_frag_fraction */
    uint64_t limit_opt;          /* --limit, the `limit` mode only; else 0 */
    char mem_fraction_text[32];  /* as given, for options() */
    char frag_fraction_text[32];
} bfc_settings;

/* The BFC strategies' options, described once (strategy_option, sim/strategy.h), in
 * the order mem_fraction, bfc_preset, bfc_gc, bfc_fragmentation_fraction,
 * bfc_version, bfc_alignment, bfc_spatial, limit. Each mode takes one contiguous
 * slice: growth the first six (no bfc_spatial: XLA CHECKs that spatial partitioning
 * has no growth), greedy the first seven, limit the last seven (--limit is its
 * memory_limit, so no fraction applies to it). The array's declared size makes a
 * count that does not follow the table a compile error. */
#define BFC_LIMITS_N_OPTIONS 8
extern const strategy_option bfc_limits_options[BFC_LIMITS_N_OPTIONS];
#define BFC_LIMITS_GREEDY_OPTIONS (bfc_limits_options)
#define BFC_LIMITS_GREEDY_N (BFC_LIMITS_N_OPTIONS - 1)
#define BFC_LIMITS_GROWTH_OPTIONS (bfc_limits_options)
#define BFC_LIMITS_GROWTH_N (BFC_LIMITS_N_OPTIONS - 2)
#define BFC_LIMITS_LIMIT_OPTIONS (bfc_limits_options + 1)
#define BFC_LIMITS_LIMIT_N (BFC_LIMITS_N_OPTIONS - 1)

/* Parse cfg for an instance in mode into *out. SIM_EUSAGE with a message naming
 * the flag on a bad value, or when the `limit` mode has no --limit. Checks the
 * options in the order bfc_preset, bfc_gc, mem_fraction,
 * bfc_fragmentation_fraction, limit, bfc_version, bfc_spatial (not read by growth),
 * bfc_alignment, and reports the first error. */
sim_status bfc_limits_parse(bfc_mode mode, const strategy_config *cfg, bfc_settings *out, sim_error *err);

/* The memory_limit BFCAllocator is built with on a device like info. */
uint64_t bfc_limits_bytes(bfc_mode mode, const bfc_settings *set, const device_info *info);

/* Where bfc_limits_bytes's answer comes from, in the user's words, into out (at most
 * n bytes): "--limit", "0.5 x 16.00 GiB, --mem-fraction", "TF preset: capacity - 1536
 * MiB reserve", "JAX: 0.75 x capacity, rounded up to 2 MiB". */
void bfc_limits_source(bfc_mode mode, const bfc_settings *set, const device_info *info, char *out, size_t n);

/* f · bytes in double, truncated to bytes (saturating), as both frameworks compute
 * a fraction of memory. */
uint64_t bfc_limits_fraction(double f, uint64_t bytes);

#endif
