/* Fuzz target: opening any input as `gpusim replay` does (traces/input.h): gzip,
 * content sniffing, and every importer (PyTorch snapshot JSON and pickle, Kineto,
 * TensorFlow profile) or the native readers, then reading every event. */
#include "fuzz.h"
#include "traces/input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    input_options opt = {.device = -1};
    trace_input *in = NULL;
    sim_error err;
    if (input_open_mem("fuzz.input", data, size, "auto", &opt, &in, &err) != SIM_OK)
        return 0;
    sim_event_source src = input_source(in);
    sim_event ev;
    while (src.next(src.ctx, &ev, &err) == SIM_OK)
        if (ev.ready_t < ev.t)
            __builtin_trap();
    input_close(in);
    return 0;
}
