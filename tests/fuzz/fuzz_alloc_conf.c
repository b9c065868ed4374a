/* Fuzz target: --alloc-conf parsing (PYTORCH_CUDA_ALLOC_CONF syntax) on any text. */
#include <stdlib.h>

#include "fuzz.h"
#include "strategies/torch_conf.h"

static void fuzz_alloc_conf(const char *s)
{
    torch_conf c;
    sim_error err;
    torch_conf_defaults(&c);
    (void)torch_conf_parse(s, &c, &err);
}

FUZZ_TEXT_TARGET(4096, fuzz_alloc_conf)
