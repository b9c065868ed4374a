#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sim_report_init(sim_report *r)
{
    r->violations = 0;
    r->len = 0;
    r->text[0] = '\0';
}

bool sim_report_insist(sim_report *r, bool cond, const char *fmt, ...)
{
    if (cond)
        return true;
    r->violations++;
    if (r->len + 2 >= SIM_REPORT_TEXT)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->text + r->len, (size_t)(SIM_REPORT_TEXT - r->len - 1), fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    r->len += (uint64_t)n;
    if (r->len > SIM_REPORT_TEXT - 2)
        r->len = SIM_REPORT_TEXT - 2;
    r->text[r->len++] = '\n';
    r->text[r->len] = '\0';
    return false;
}

bool sim_report_mentions(const sim_report *r, const char *needle)
{
    return strstr(r->text, needle) != NULL;
}
