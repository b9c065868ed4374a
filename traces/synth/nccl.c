#include "nccl.h"

#define MIB_ ((uint64_t)1 << 20)

/* NCCL's default FIFO per connection and protocol (src/include/device.h of
 * NVIDIA/nccl, DEFAULT_*_BUFFSIZE; the Simple size is the documented default of
 * NCCL_BUFFSIZE in NCCL's environment-variable reference, and NCCL_LL_BUFFSIZE /
 * NCCL_LL128_BUFFSIZE override the others). Each is lines x threads x NCCL_STEPS (8). */
static const nccl_proto PROTOS[] = {
    /* 8 lines per thread x 512 threads x 8 steps x 16-byte lines */
    {"LL", 8ull * 512 * 8 * 16, "NVIDIA/nccl src/include/device.h DEFAULT_LL_BUFFSIZE; env NCCL_LL_BUFFSIZE"},
    /* 120 elements per thread x 640 threads x 8 steps x 8 bytes */
    {"LL128", 120ull * 640 * 8 * 8, "NVIDIA/nccl src/include/device.h DEFAULT_LL128_BUFFSIZE; env NCCL_LL128_BUFFSIZE"},
    {"Simple", 4 * MIB_, "NCCL environment variables, NCCL_BUFFSIZE (default 4 MiB)"},
};

/* Device allocations are made in 2 MiB granules; NVIDIA/nccl issue 1685 shows the
 * resulting 10,485,760 B per ring connection and 2,097,152 B per point-to-point
 * connection in NCCL_DEBUG_SUBSYS=ALLOC output on H100s. */
#define GRANULE_ (2 * MIB_)

size_t nccl_proto_count(void)
{
    return sizeof PROTOS / sizeof PROTOS[0];
}

const nccl_proto *nccl_proto_get(size_t i)
{
    return i < nccl_proto_count() ? &PROTOS[i] : NULL;
}

uint64_t nccl_connection_bytes(void)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < nccl_proto_count(); i++)
        sum += PROTOS[i].bytes;
    return (sum + GRANULE_ - 1) / GRANULE_ * GRANULE_;
}

uint64_t nccl_p2p_connection_bytes(void)
{
    return GRANULE_;
}

uint64_t nccl_rank_bytes(uint64_t dp, uint64_t tp, uint64_t pp, uint64_t stage, unsigned channels)
{
    uint64_t bytes = 0;
    /* a ring: each channel receives from one neighbour, so one connection per channel */
    if (dp > 1)
        bytes += channels * nccl_connection_bytes();
    if (tp > 1)
        bytes += channels * nccl_connection_bytes();
    /* pipeline send/recv: the previous stage and the next one, where they exist */
    if (pp > 1) {
        uint64_t peers = (uint64_t)(stage > 0) + (uint64_t)(stage + 1 < pp);
        bytes += peers * channels * nccl_p2p_connection_bytes();
    }
    return bytes;
}
