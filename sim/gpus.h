/* gpus.h — the built-in catalog of GPUs: total memory as cudaMemGetInfo reports it
 * (torch's total_memory), compute capability (TensorFlow's reserve depends on it),
 * and where each number comes from. Values from shared/reference/allocators.md §5. */
#ifndef GPUSIM_GPUS_H
#define GPUSIM_GPUS_H

#include <stddef.h>
#include <stdint.h>

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

#endif
