/* nccl.h — the device memory NCCL takes outside the caching allocator on each rank
 * of a multi-rank job (its per-channel FIFO buffers for each protocol, by NCCL's
 * documented defaults), recorded by `synth transformer --ranks` as memory outside the
 * allocator. One table of protocols; the sizes and their sources are in nccl.c.
 * Thread-safe: the table is constant. */
#ifndef GPUSIM_SYNTH_NCCL_H
#define GPUSIM_SYNTH_NCCL_H

#include <stddef.h>
#include <stdint.h>

typedef struct nccl_proto {
    const char *name;   /* "LL", "LL128", "Simple" */
    uint64_t bytes;     /* one connection's FIFO for this protocol, NCCL's default */
    const char *source; /* where the default is defined or documented */
} nccl_proto;

/* Channels per communicator when --nccl-channels is not given: what NCCL reported
 * for a ring all-reduce over NVLink-connected A100s (NVIDIA/nccl issue 1785). */
#define NCCL_CHANNELS_DEFAULT 24u

size_t nccl_proto_count(void);
const nccl_proto *nccl_proto_get(size_t i);
/* One ring connection's buffers: every protocol's FIFO in one allocation, rounded up
 * to the 2 MiB granularity of device allocations (9,633,792 B -> 10,485,760 B). */
uint64_t nccl_connection_bytes(void);
/* One point-to-point connection (pipeline send/recv): 2 MiB. */
uint64_t nccl_p2p_connection_bytes(void);
/* What one rank holds for a job of dp x tp x pp ranks whose pipeline stage is stage:
 * a ring of `channels` connections for each collective group of more than one rank
 * (data parallel, tensor parallel), and `channels` point-to-point connections to
 * each neighbouring pipeline stage. 0 when the job has one rank or channels is 0. */
uint64_t nccl_rank_bytes(uint64_t dp, uint64_t tp, uint64_t pp, uint64_t stage, unsigned channels);

#endif
