/* A PyTorch MempoolId_t as one number, and back. */
#include "pool_id.h"

bool pool_id_from_tuple(uint64_t a, uint64_t b, uint64_t *id)
{
    if ((a != 0 && b != 0) || a >= POOL_ID_GRAPH_BIT || b >= POOL_ID_GRAPH_BIT)
        return false;
    *id = a != 0 ? POOL_ID_GRAPH_BIT | a : b;
    return true;
}

void pool_id_to_tuple(uint64_t id, uint64_t *a, uint64_t *b)
{
    bool graph = id > POOL_ID_GRAPH_BIT && id < 2 * POOL_ID_GRAPH_BIT;
    *a = graph ? id - POOL_ID_GRAPH_BIT : 0;
    *b = graph ? 0 : id;
}
