/* Fuzz target: opening any input as `gpusim replay` does (traces/input.h): gzip,
 * content sniffing, and every importer (PyTorch snapshot JSON and pickle, Kineto,
 * TensorFlow profile) or the native readers, then reading every event, both from
 * the start and, where a snapshot's start state was rebuilt, from that state (the
 * seed must be well formed and its live blocks must be the skipped allocations). */
#include "fuzz.h"
#include "traces/input.h"

static void drain(sim_event_source src)
{
    sim_error err;
    sim_event ev;
    while (src.next(src.ctx, &ev, &err) == SIM_OK)
        if (ev.ready_t < ev.t)
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    input_options opt = {.device = -1};
    trace_input *in = NULL;
    sim_error err;
    if (input_open_mem("fuzz.input", data, size, "auto", &opt, &in, &err) != SIM_OK)
        return 0;
    drain(input_source(in));
    const sim_seed *seed = input_seed(in);
    if (seed != NULL) {
        if (sim_seed_check(seed, "fuzz.input", &err) != SIM_OK)
            __builtin_trap();
        if (sim_seed_used_count(seed) != input_seed_events(in))
            __builtin_trap();
        drain(input_source_seeded(in));
    }
    input_close(in);
    return 0;
}
