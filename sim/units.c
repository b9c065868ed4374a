#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *suffix;
    uint64_t mult;
} SUFFIXES[] = {
    {"", 1},          {"B", 1},
    {"KiB", KiB},     {"MiB", MiB},     {"GiB", GiB},     {"TiB", TiB},
    {"KB", 1000ull},  {"MB", 1000000ull}, {"GB", 1000000000ull}, {"TB", 1000000000000ull},
};

sim_status units_parse_size(const char *text, uint64_t *out, sim_error *err)
{
    if (text == NULL || *text == '\0')
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "empty size (expected e.g. 4096MiB, 16GB or bytes)");
    const char *p = text;
    uint64_t whole = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        uint64_t d = (uint64_t)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "size '%s' is too large", text);
        whole = whole * 10 + d;
        digits++;
        p++;
    }
    /* fraction as numerator/denominator so "1.5GiB" stays exact */
    uint64_t frac_num = 0, frac_den = 1;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            if (frac_den > UINT64_MAX / 100)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "size '%s' has too many decimals", text);
            frac_num = frac_num * 10 + (uint64_t)(*p - '0');
            frac_den *= 10;
            digits++;
            p++;
        }
    }
    if (digits == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "'%s' is not a size (expected e.g. 4096MiB, 16GB or a number of bytes)", text);
    while (*p == ' ')
        p++;
    for (size_t i = 0; i < sizeof SUFFIXES / sizeof SUFFIXES[0]; i++) {
        if (strcmp(p, SUFFIXES[i].suffix) != 0)
            continue;
        uint64_t m = SUFFIXES[i].mult;
        if (whole > UINT64_MAX / m)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "size '%s' is too large", text);
        uint64_t v = whole * m;
        if (frac_num) {
            /* frac_num * m / frac_den must be an exact integer: cancel the
             * common factor of m and frac_den, then frac_den must divide frac_num */
            uint64_t a = m, b = frac_den;
            while (b) {
                uint64_t t = a % b;
                a = b;
                b = t;
            }
            uint64_t mm = m / a, den = frac_den / a;
            if (frac_num % den != 0)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                     "size '%s' is not a whole number of bytes", text);
            uint64_t q = frac_num / den;
            if (q > UINT64_MAX / mm)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "size '%s' is too large", text);
            uint64_t fb = q * mm;
            if (v > UINT64_MAX - fb)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "size '%s' is too large", text);
            v += fb;
        }
        *out = v;
        return SIM_OK;
    }
    return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                         "unknown unit in size '%s' (expected B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", text);
}

sim_status units_parse_real(const char *text, double lo, double hi, double *out, sim_error *err)
{
    if (text == NULL || *text == '\0')
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "empty number");
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "'%s' is not a number", text);
    if (v < lo || v > hi)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "%s is out of range [%g, %g]", text, lo, hi);
    *out = v;
    return SIM_OK;
}

sim_status units_parse_u64(const char *text, uint64_t *out, sim_error *err)
{
    if (text == NULL || *text == '\0')
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "empty number");
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "'%s' is not a non-negative integer", text);
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "'%s' is too large", text);
        v = v * 10 + d;
    }
    *out = v;
    return SIM_OK;
}

char *units_format_size(uint64_t bytes, char *buf, uint64_t cap)
{
    size_t n = (size_t)cap;
    if (bytes >= GiB)
        snprintf(buf, n, "%.2f GiB", (double)bytes / (double)GiB);
    else if (bytes >= MiB)
        snprintf(buf, n, "%.2f MiB", (double)bytes / (double)MiB);
    else if (bytes >= KiB)
        snprintf(buf, n, "%.2f KiB", (double)bytes / (double)KiB);
    else
        snprintf(buf, n, "%llu B", (unsigned long long)bytes);
    return buf;
}

char *units_format_c10(uint64_t bytes, char *buf, uint64_t cap)
{
    size_t n = (size_t)cap;
    if (bytes <= 1024)
        snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
    else if (bytes <= MiB)
        snprintf(buf, n, "%.2f KiB", (double)bytes / 1024.0);
    else if (bytes <= GiB)
        snprintf(buf, n, "%.2f MiB", (double)bytes / 1048576.0);
    else
        snprintf(buf, n, "%.2f GiB", (double)bytes / 1073741824.0);
    return buf;
}
