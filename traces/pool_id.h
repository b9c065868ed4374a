/* pool_id.h — a PyTorch memory pool's id (MempoolId_t, the 2-tuple a snapshot writes
 * as `segment_pool_id` and, from 2.8, as a trace entry's `pool_id`) as the one nonzero
 * number gpusim's pool events name, and back (traces/IMPORT.md "Private pools"). */

/* PyTorch makes one half of the tuple zero (c10/cuda/CUDACachingAllocator.cpp of 2.6,
 * MemPool::MemPool and MemPool::graph_pool_handle): a pool made by the user
 * (graph_pool_handle(), torch.cuda.MemPool()) is (0, n), one a CUDA graph makes for
 * itself when its capture names no pool is (n, 0), n counting from 1 in each; (0, 0)
 * is the default pool. So (0, n) is pool n, (n, 0) is pool 2^52 + n (ids stay below
 * 2^53, the most a trace's JSON numbers carry exactly), and a pool born in a native
 * trace (an id below 2^52) is written back as (0, id), as graph_pool_handle would
 * make it. A tuple with both halves nonzero, or a half of 2^52 or more, has no id. */
#ifndef GPUSIM_POOL_ID_H
#define GPUSIM_POOL_ID_H

#include <stdbool.h>
#include <stdint.h>

#define POOL_ID_GRAPH_BIT ((uint64_t)1 << 52) /* set: a CUDA graph's own pool, (n, 0) */

/* The id of tuple (a, b): 0 for (0, 0); false when it has none (above). */
bool pool_id_from_tuple(uint64_t a, uint64_t b, uint64_t *id);
/* The tuple of id (0 gives (0, 0); an id of 2^52 or more, which no import makes,
 * gives (0, id)). */
void pool_id_to_tuple(uint64_t id, uint64_t *a, uint64_t *b);

#endif
