#include "support/skip.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void test_skip(const char *suite, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    printf("skipped: %s\n", what);
    const char *log = getenv("GPUSIM_SKIP_LOG");
    if (log == NULL || log[0] == '\0')
        return;
    FILE *f = fopen(log, "a");
    if (f == NULL)
        return;
    fprintf(f, "%s: %s\n", suite, what);
    fclose(f);
}
