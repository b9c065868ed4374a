#!/usr/bin/env bash
# gen_suite.sh SRC OUT: the Check suite of one test file, generated so that tests
# register themselves (the idea of Check's own checkmk, over plain C). OUT includes SRC
# and builds its Suite from every START_TEST(name) in file order, then main().
# Annotations in SRC (macros of support/check_main.h that compile to nothing):
#   GPUSIM_TCASE("name", timeout_s, setup, teardown);  the tests below it form a case
#       (timeout 0 keeps CK_DEFAULT_TIMEOUT; setup/teardown NULL or a checked fixture);
#       tests before the first marker form a case named after the suite;
#   GPUSIM_LOOP(test, start, end);  run that test as a loop test over [start, end).
# The suite is named after the file (test_bfc.c -> "bfc"). Exit 1 with a message
# naming SRC and the line when a file has no test, a loop names no test of the file,
# or a marker cannot be read.
set -euo pipefail
src=$1
out=$2
name=$(basename "$src" .c)
name=${name#test_}
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
awk -v src="$src" -v suite="$name" '
function die(msg) { printf "%s:%d: %s\n", src, NR, msg > "/dev/stderr"; failed = 1; exit 1 }
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
function new_case(cname, timeout, setup, teardown) {
    ncase++; cname_[ncase] = cname; ctime[ncase] = timeout; csetup[ncase] = setup; cdown[ncase] = teardown
}
BEGIN { ncase = 0; ntest = 0; nloop = 0 }
/^START_TEST\(/ {
    t = $0; sub(/^START_TEST\(/, "", t); sub(/\).*$/, "", t); t = trim(t)
    if (t !~ /^[A-Za-z_][A-Za-z0-9_]*$/) die("cannot read the test name in: " $0)
    if (ncase == 0) new_case("\"" suite "\"", "0", "NULL", "NULL")
    ntest++; tname[ntest] = t; tcase[ntest] = ncase; known[t] = ntest
    next
}
/^GPUSIM_TCASE\(/ {
    a = $0; sub(/^GPUSIM_TCASE\(/, "", a); sub(/\);[ \t]*(\/\*.*)?$/, "", a)
    n = split(a, p, ",")
    if (n != 4) die("GPUSIM_TCASE takes (\"name\", timeout_s, setup, teardown): " $0)
    new_case(trim(p[1]), trim(p[2]), trim(p[3]), trim(p[4]))
    next
}
/^GPUSIM_LOOP\(/ {
    a = $0; sub(/^GPUSIM_LOOP\(/, "", a); sub(/\);[ \t]*(\/\*.*)?$/, "", a)
    i = index(a, ","); if (i == 0) die("GPUSIM_LOOP takes (test, start, end): " $0)
    lt = trim(substr(a, 1, i - 1)); rest = substr(a, i + 1)
    j = index(rest, ","); if (j == 0) die("GPUSIM_LOOP takes (test, start, end): " $0)
    nloop++; lname[nloop] = lt; lstart[nloop] = trim(substr(rest, 1, j - 1)); lend[nloop] = trim(substr(rest, j + 1))
    lline[nloop] = NR
    next
}
END {
    if (failed) exit 1
    if (ntest == 0) { printf "%s: no START_TEST in this file: nothing to run\n", src > "/dev/stderr"; exit 1 }
    for (k = 1; k <= nloop; k++) {
        if (!(lname[k] in known)) { printf "%s:%d: GPUSIM_LOOP names %s, which is no test of this file\n", src, lline[k], lname[k] > "/dev/stderr"; exit 1 }
        loop_of[lname[k]] = k
    }
    printf "/* Generated from %s by tests/support/gen_suite.sh: do not edit. */\n", src
    printf "#include \"%s\"\n\n", src
    printf "static Suite *gpusim_generated_suite(void)\n{\n"
    printf "    Suite *s = suite_create(\"%s\");\n    TCase *tc;\n", suite
    for (c = 1; c <= ncase; c++) {
        any = 0
        for (k = 1; k <= ntest; k++) if (tcase[k] == c) any = 1
        if (!any) continue
        printf "    tc = tcase_create(%s);\n", cname_[c]
        if (ctime[c] != "0") printf "    tcase_set_timeout(tc, %s);\n", ctime[c]
        if (csetup[c] != "NULL" || cdown[c] != "NULL") printf "    tcase_add_checked_fixture(tc, %s, %s);\n", csetup[c], cdown[c]
        for (k = 1; k <= ntest; k++) {
            if (tcase[k] != c) continue
            if (tname[k] in loop_of) { l = loop_of[tname[k]]; printf "    tcase_add_loop_test(tc, %s, %s, %s);\n", tname[k], lstart[l], lend[l] }
            else printf "    tcase_add_test(tc, %s);\n", tname[k]
        }
        printf "    suite_add_tcase(s, tc);\n"
    }
    printf "    return s;\n}\n\nGPUSIM_CHECK_MAIN(gpusim_generated_suite)\n"
}' "$src" >"$tmp"
mv "$tmp" "$out"
trap - EXIT
