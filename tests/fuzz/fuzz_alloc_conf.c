/* Fuzz target: --alloc-conf parsing (PYTORCH_CUDA_ALLOC_CONF syntax) on any text. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "strategies/torch_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    torch_conf c;
    sim_error err;
    torch_conf_defaults(&c);
    (void)torch_conf_parse(s, &c, &err);
    free(s);
    return 0;
}
