/* gpu_context.h — the memory a PyTorch process takes on a GPU outside its caching
 * allocator (the CUDA context with lazy module loading, the cuBLAS/cuDNN handles'
 * own state), per GPU generation and CUDA major version, from published
 * measurements; the default of --context. Thread-safe: the table is constant. */
#ifndef GPUSIM_GPU_CONTEXT_H
#define GPUSIM_GPU_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpu_context {
    unsigned cuda_major;   /* CUDA major version of the framework's build */
    unsigned cc_major_min; /* the GPU generations (compute capability majors) it covers */
    unsigned cc_major_max;
    uint64_t bytes;          /* per process, before the first allocation */
    const char *measured_on; /* the card and software of the measurement */
    const char *source;      /* where the figure is published, and how it was read */
} gpu_context;

/* The CUDA major version assumed when nothing says otherwise (PyTorch's default
 * wheels since 2.1 are built with CUDA 12). */
#define GPU_CONTEXT_CUDA_DEFAULT 12u

size_t gpu_context_count(void);
const gpu_context *gpu_context_get(size_t i);
/* The figure for a GPU of compute capability major cc_major under CUDA cuda_major:
 * the row covering both, else the first row of that CUDA major (a generation nobody
 * measured, or cc_major 0: unknown); NULL for a CUDA major without a row. */
const gpu_context *gpu_context_find(unsigned cc_major, unsigned cuda_major);
/* Whether row c was measured on a GPU of generation cc_major (false: borrowed
 * from the nearest generation measured, an estimate). */
int gpu_context_measured_for(const gpu_context *c, unsigned cc_major);
/* The spread of the published figures: the largest row minus the smallest. A fit
 * with less headroom than this depends on which figure is right. */
uint64_t gpu_context_spread(void);
/* "CUDA 12 default: measured on <card> [estimate for cc 9]" into buf (cap bytes);
 * returns buf. */
const char *gpu_context_describe(const gpu_context *c, unsigned cc_major, char *buf, size_t cap);

#endif
