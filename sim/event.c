#include "event.h"

const char *sim_op_name(sim_op op)
{
    switch (op) {
    case SIM_OP_ALLOC: return "alloc";
    case SIM_OP_FREE: return "free";
    case SIM_OP_EMPTY_CACHE: return "empty_cache";
    case SIM_OP_MARK: return "mark";
    }
    return "?";
}
