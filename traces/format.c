#include "format.h"

#include <string.h>

static const char *const FORMAT_NAMES[] = {
    [INPUT_AUTO] = "auto",
    [INPUT_GPUSIM] = "gpusim",
    [INPUT_TORCH_SNAPSHOT] = "torch-snapshot",
    [INPUT_KINETO] = "kineto",
    [INPUT_TF_PROFILE] = "tf-profile",
};

const char *input_format_name(input_format f)
{
    return (unsigned)f < sizeof FORMAT_NAMES / sizeof FORMAT_NAMES[0] ? FORMAT_NAMES[f] : "?";
}

bool input_format_parse(const char *name, input_format *out)
{
    if (name == NULL) {
        *out = INPUT_AUTO;
        return true;
    }
    for (size_t i = 0; i < sizeof FORMAT_NAMES / sizeof FORMAT_NAMES[0]; i++)
        if (strcmp(name, FORMAT_NAMES[i]) == 0) {
            *out = (input_format)i;
            return true;
        }
    return false;
}
