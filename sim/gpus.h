/* gpus.h — the built-in catalog of GPUs: total memory as cudaMemGetInfo reports it
 * (torch's total_memory), compute capability (TensorFlow's reserve depends on it),
 * and where each number comes from. Values from docs/allocators.md §5.
 * Thread-safe: the catalog is constant. */
#ifndef GPUSIM_GPUS_H
#define GPUSIM_GPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

typedef struct gpu_model {
    const char *name;          /* catalog name, e.g. "A100-40GB" */
    const char *aliases;       /* comma-separated other names accepted by --gpu */
    uint64_t capacity_bytes;   /* totalGlobalMem */
    unsigned cc_major, cc_minor;
    const char *source;        /* where the capacity comes from, and how sure it is */
} gpu_model;

#define GPUS_DEFAULT "H100-80GB" /* used when neither --gpu, --capacity nor the trace names one */

size_t gpus_count(void);
const gpu_model *gpus_get(size_t i);
/* By name or alias, case-insensitive; NULL if unknown. */
const gpu_model *gpus_find(const char *name);

/* The device g describes: its name (static), capacity and compute capability;
 * context_bytes 0 (the caller adds the per-process context it wants). */
device_info gpus_device_info(const gpu_model *g);
/* A compute capability written "X.Y" (e.g. "8.0"; X at most 20, Y one digit 0-9):
 * true with *major and *minor set, false (both untouched) for anything else. */
bool gpus_parse_cc(const char *text, unsigned *major, unsigned *minor);

#endif
