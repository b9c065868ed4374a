/* JUnit XML for CI (junit.h). */
#include "junit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An attribute value: XML-escaped, every control character (a line break) a space, so
 * that a message stays one line. */
static void attr_line(sim_buf *b, const char *s)
{
    size_t n = strlen(s);
    char *line = malloc(n + 1);
    if (line == NULL) { /* the buffer's own allocations fail alike: write it as it is */
        sim_buf_xml_escape(b, s);
        return;
    }
    for (size_t i = 0; i <= n; i++)
        line[i] = s[i] != '\0' && (unsigned char)s[i] < 0x20 ? ' ' : s[i];
    sim_buf_xml_escape(b, line);
    free(line);
}

/* A time in seconds as Jenkins' pattern and Ant's xs:decimal both read it: digits, a
 * point, milliseconds (never an exponent, never negative). */
static void time_attr(sim_buf *b, double s)
{
    sim_buf_printf(b, " time=\"%.3f\"", s > 0 ? s : 0.0);
}

void report_junit(const junit_suite *s, const junit_case *c, int n, sim_buf *b)
{
    int failures = 0;
    for (int i = 0; i < n; i++)
        failures += c[i].failed;
    /* Ant's schema allows no attribute on <testsuites>: the totals are the suite's */
    sim_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"");
    attr_line(b, s->name);
    sim_buf_puts(b, "\" package=\"");
    attr_line(b, s->package);
    sim_buf_printf(b, "\" id=\"0\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\"", n, failures);
    time_attr(b, s->time_s);
    sim_buf_puts(b, " timestamp=\"");
    attr_line(b, s->timestamp);
    sim_buf_puts(b, "\" hostname=\"");
    attr_line(b, s->hostname && s->hostname[0] ? s->hostname : "localhost");
    sim_buf_puts(b, "\">\n    <properties>\n");
    for (int i = 0; i < s->n_props; i++) {
        sim_buf_puts(b, "      <property name=\"");
        attr_line(b, s->props[i].name);
        sim_buf_puts(b, "\" value=\"");
        attr_line(b, s->props[i].value);
        sim_buf_puts(b, "\"/>\n");
    }
    sim_buf_puts(b, "    </properties>\n");
    for (int i = 0; i < n; i++) {
        sim_buf_puts(b, "    <testcase name=\"");
        attr_line(b, c[i].name);
        sim_buf_puts(b, "\" classname=\"");
        attr_line(b, s->package);
        sim_buf_puts(b, "\"");
        time_attr(b, c[i].time_s);
        if (!c[i].failed) {
            sim_buf_puts(b, "/>\n");
            continue;
        }
        sim_buf_puts(b, ">\n      <failure type=\"");
        attr_line(b, s->failure_type);
        sim_buf_puts(b, "\" message=\"");
        attr_line(b, c[i].message);
        sim_buf_puts(b, "\">");
        sim_buf_xml_escape(b, c[i].details ? c[i].details : c[i].message);
        sim_buf_puts(b, "</failure>\n    </testcase>\n");
    }
    sim_buf_puts(b, "    <system-out>");
    sim_buf_xml_escape(b, s->system_out ? s->system_out : "");
    sim_buf_puts(b, "</system-out>\n    <system-err></system-err>\n  </testsuite>\n</testsuites>\n");
}

char *junit_timestamp(long long unix_s, char *buf, size_t cap)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (cap == 0)
        return buf;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        snprintf(buf, cap, "1970-01-01T00:00:00");
    return buf;
}
