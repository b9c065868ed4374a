#include "gpus.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MIB_ ((uint64_t)1 << 20)

/* capacity_bytes: the MiB figure PyTorch prints as total_memory (bytes >> 20),
 * times 2^20, unless an exact byte count was recorded. Cards vary by a few MiB
 * with driver and ECC settings; use --capacity for an exact figure. */
static const gpu_model GPUS[] = {
    {"T4", "T4-16GB,TESLA-T4", 15109 * MIB_, 7, 5,
     "torch total_memory prints 15079-15109 MiB (public logs) [reported]; upper value used"},
    {"V100-16GB", "V100,V100-SXM2-16GB", 16160 * MIB_, 7, 0,
     "torch total_memory prints 16130-16160 MiB [reported]; upper value used"},
    {"V100-32GB", "V100-SXM2-32GB", 34089730048ull, 7, 0,
     "exact totalGlobalMem 34089730048 B recorded in a Kineto trace of a V100-SXM2-32GB "
     "(HolisticTraceAnalysis test data)"},
    {"A10", "A10-24GB", 22587 * MIB_, 8, 6,
     "not found; assumed equal to the A10G (same 24 GB GDDR6 board class) [uncertain]"},
    {"A10G", "A10G-24GB", 22587 * MIB_, 8, 6, "torch total_memory print 22587 MiB (AWS g5) [reported]"},
    {"L4", "L4-24GB", 22593 * MIB_, 8, 9,
     "totalGlobalMem not found; nvidia-smi 23034 MiB minus the 441 MiB gap seen on the A10G [estimate]"},
    {"A100-40GB", "A100,A100-SXM4-40GB", 40536 * MIB_, 8, 0,
     "40536 MiB (Paddle/Kubernetes labels, nvidia-smi on some drivers) [reported]"},
    {"A100-80GB", "A100-SXM4-80GB,A100-PCIE-80GB", 81920 * MIB_, 8, 0,
     "one source prints 81920 MiB; nvidia-smi 81920 MiB [uncertain]"},
    {"H100-80GB", "H100,H100-SXM,H100-80GB-HBM3", 81090 * MIB_, 9, 0,
     "torch total_memory prints 81082-81090 MiB [reported]; upper value used"},
    {"H200", "H200-141GB", 143156 * MIB_, 9, 0, "torch total_memory print 143156 MiB (139.8 GiB) [reported]"},
    {"B200", "B200-180GB", 182642 * MIB_, 10, 0,
     "torch total_memory prints 182631-182642 MiB [reported]; upper value used"},
    {"RTX3090", "RTX-3090,3090", 24268 * MIB_, 8, 6,
     "torch total_memory prints 24259-24268 MiB [reported]; upper value used"},
    {"RTX4090", "RTX-4090,4090", 24563 * MIB_, 8, 9, "torch total_memory print 24563 MiB [reported]"},
    {"RTX5090", "RTX-5090,5090", 32607 * MIB_, 12, 0,
     "totalGlobalMem not found; nvidia-smi 32607 MiB used (4090: nvidia-smi and torch differ by 1 MiB) [estimate]"},
    {"MI300X", "MI300X-192GB", 196592 * MIB_, 0, 0,
     "torch-ROCm total_memory print 196592 MiB (192 GiB - 16 MiB) [reported]; AMD, no CUDA compute capability"},
    {"MI325X", "MI325X-256GB", 262128 * MIB_, 0, 0,
     "256 GiB - 16 MiB: PyTorch ROCm OOM messages print a total capacity of 255.98 GiB (ROCm/TheRock#2118) "
     "[reported]; the 16 MiB as rocminfo shows on MI50, MI250X and MI300X [estimate]; AMD, no CUDA compute "
     "capability; torch: --platform=rocm"},
    {"MI355X", "MI355X-288GB", 294896 * MIB_, 0, 0,
     "288 GiB - 16 MiB: PyTorch ROCm OOM messages print a total capacity of 287.98 GiB (pytorch/pytorch#175431, "
     "ROCm/TheRock#2396, gfx950) [reported]; the 16 MiB as on MI300X [estimate]; AMD, no CUDA compute "
     "capability; torch: --platform=rocm"},
};

size_t gpus_count(void)
{
    return sizeof GPUS / sizeof GPUS[0];
}

const gpu_model *gpus_get(size_t i)
{
    return i < gpus_count() ? &GPUS[i] : NULL;
}

const gpu_model *gpus_find(const char *name)
{
    for (size_t i = 0; i < gpus_count(); i++) {
        if (strcasecmp(GPUS[i].name, name) == 0)
            return &GPUS[i];
        const char *a = GPUS[i].aliases;
        size_t n = strlen(name);
        while (a && *a) {
            const char *comma = strchr(a, ',');
            size_t len = comma ? (size_t)(comma - a) : strlen(a);
            if (len == n && strncasecmp(a, name, n) == 0)
                return &GPUS[i];
            a = comma ? comma + 1 : NULL;
        }
    }
    return NULL;
}

device_info gpus_device_info(const gpu_model *g)
{
    device_info d = {0};
    d.name = g->name;
    d.capacity_bytes = g->capacity_bytes;
    d.cc_major = g->cc_major;
    d.cc_minor = g->cc_minor;
    return d;
}

bool gpus_parse_cc(const char *text, unsigned *major, unsigned *minor)
{
    unsigned maj = 0, min = 0;
    char extra;
    if (sscanf(text, "%u.%u%c", &maj, &min, &extra) != 2 || maj > 20 || min > 9)
        return false;
    *major = maj;
    *minor = min;
    return true;
}
