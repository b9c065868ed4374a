/* Fuzz target: the native trace reader as `gpusim replay` opens a file — JSON
 * document, JSON Lines or gtrace, detected by content — reading every event.
 * Any input must give events or a clean error, never a crash or a hang. */
#include <stdio.h>

#include "fuzz.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trace_reader *r = NULL;
    sim_error err;
    sim_error_clear(&err);
    if (trace_open_mem("fuzz.trace", (const char *)data, size, &r, &err) != SIM_OK)
        return 0;
    sim_event_source src = trace_source(r);
    sim_event ev;
    uint64_t prev_t = 0;
    while (src.next(src.ctx, &ev, &err) == SIM_OK) {
        /* what the reader promises the engine */
        bool pool_op = ev.op >= SIM_OP_POOL_BEGIN;
        if (ev.t < prev_t || ev.ready_t < ev.t || (ev.op == SIM_OP_MARK && ev.name == NULL) || ev.size > SIM_MAX_SIZE ||
            (unsigned)ev.op >= SIM_N_OPS || pool_op != (ev.pool != 0) || ev.pool > SIM_MAX_SIZE ||
            (ev.op != SIM_OP_POOL_BEGIN && ev.pool_flags != 0) || ev.pool_flags > 15u) {
            fprintf(stderr, "reader broke its promise at event %llu\n", (unsigned long long)ev.index);
            __builtin_trap();
        }
        prev_t = ev.t;
    }
    trace_close(r);
    return 0;
}
