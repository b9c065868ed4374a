#include "support/torch_harness.h"

#include <check.h>
#include <stdio.h>

#include "strategies/torch.h"

harness *torch_harness_new(uint64_t capacity, uint64_t context, const char *alloc_conf, const char *fraction,
                           const char *version)
{
    /* the harness splits options only where the next key starts, so the conf may
     * hold commas */
    char opts[1024];
    int n = snprintf(opts, sizeof opts, "%s%s%s%s%s%s", version ? ",torch_version=" : "", version ? version : "",
                     alloc_conf ? ",alloc_conf=" : "", alloc_conf ? alloc_conf : "",
                     fraction ? ",memory_fraction=" : "", fraction ? fraction : "");
    ck_assert_msg(n >= 0 && (size_t)n < sizeof opts, "torch options too long");
    return harness_new(torch_strategy(), capacity, context, opts[0] ? opts + 1 : NULL);
}
