/* JUnit XML for CI. */
#include "junit.h"

void report_junit(const junit_suite *s, const junit_case *c, int n, sim_buf *b)
{
    int failures = 0;
    for (int i = 0; i < n; i++)
        failures += c[i].failed;
    sim_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"");
    sim_buf_xml_escape(b, s->name);
    sim_buf_printf(b, "\" tests=\"%d\" failures=\"%d\">\n  <testsuite name=\"", n, failures);
    sim_buf_xml_escape(b, s->name);
    sim_buf_puts(b, " ");
    sim_buf_xml_escape(b, s->subject);
    sim_buf_printf(b, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n", n, failures);
    for (int i = 0; i < n; i++) {
        sim_buf_puts(b, "    <testcase classname=\"");
        sim_buf_xml_escape(b, s->classname);
        sim_buf_puts(b, "\" name=\"");
        sim_buf_xml_escape(b, c[i].name);
        sim_buf_puts(b, "\">");
        if (c[i].failed) {
            sim_buf_puts(b, "\n      <failure type=\"");
            sim_buf_xml_escape(b, s->failure_type);
            sim_buf_puts(b, "\" message=\"");
            sim_buf_xml_escape(b, c[i].text);
            sim_buf_puts(b, "\">");
            sim_buf_xml_escape(b, c[i].text);
            sim_buf_puts(b, "</failure>\n    ");
        } else {
            sim_buf_puts(b, "<system-out>");
            sim_buf_xml_escape(b, c[i].text);
            sim_buf_puts(b, "</system-out>");
        }
        sim_buf_puts(b, "</testcase>\n");
    }
    sim_buf_puts(b, "  </testsuite>\n</testsuites>\n");
}
