/* Fuzz target: --alloc-conf parsing (PYTORCH_CUDA_ALLOC_CONF syntax) on any text. */
#include <stdlib.h>

#include "fuzz.h"
#include "strategies/torch_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_text(data, size, 4096);
    if (s == NULL)
        return 0;
    torch_conf c;
    sim_error err;
    torch_conf_defaults(&c);
    (void)torch_conf_parse(s, &c, &err);
    free(s);
    return 0;
}
