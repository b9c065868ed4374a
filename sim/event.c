#include "event.h"

const char *sim_op_name(sim_op op)
{
    switch (op) {
    case SIM_OP_ALLOC: return "alloc";
    case SIM_OP_FREE: return "free";
    case SIM_OP_EMPTY_CACHE: return "empty_cache";
    case SIM_OP_MARK: return "mark";
    case SIM_OP_POOL_BEGIN: return "pool_begin";
    case SIM_OP_POOL_END: return "pool_end";
    case SIM_OP_POOL_RELEASE: return "pool_release";
    case SIM_OP_GRAPH_REPLAY: return "graph_replay";
    }
    return "?";
}
