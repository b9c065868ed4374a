#!/usr/bin/env bash
# The suite generator (tests/support/gen_suite.sh): tests register themselves, in file
# order and by their markers, and a file it cannot turn into a suite fails loudly with
# the file and line instead of building a suite that runs nothing.
# Usage: cli_gen_suite.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
gen=$src/tests/support/gen_suite.sh

# gen_expect CODE TEXT FILE: run the generator on FILE, want exit CODE and TEXT in stderr
gen_expect() {
  local code=$1 text=$2 file=$3 rc
  bash "$gen" "$file" "$tmp/out.c" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne "$code" ] || { [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/err"; }; then
    bad "gen_suite $file -> exit $rc (want $code), err: $(cat "$tmp/err") (want '$text')"
  else
    ok
  fi
}

cat >"$tmp/test_two.c" <<'C'
START_TEST(first_should_run)
{
}
END_TEST
GPUSIM_TCASE("slow", 300, NULL, NULL);
START_TEST(second_should_run)
{
}
END_TEST
GPUSIM_LOOP(second_should_run, 0, 4);
C
gen_expect 0 "" "$tmp/test_two.c"
# the tests before the first marker are a case named after the suite; the marked one
# has its timeout and its loop
for want in 'suite_create("two")' 'tcase_create("two")' 'tcase_add_test(tc, first_should_run);' \
  'tcase_create("slow")' 'tcase_set_timeout(tc, 300);' 'tcase_add_loop_test(tc, second_should_run, 0, 4);' \
  'GPUSIM_CHECK_MAIN(gpusim_generated_suite)'; do
  if grep -qF -- "$want" "$tmp/out.c"; then ok; else bad "generated suite lacks: $want"; fi
done
if [ "$(grep -c 'tcase_add' "$tmp/out.c")" -eq 2 ]; then ok; else bad "expected exactly 2 registrations"; fi

printf '/* no tests here */\nint x;\n' >"$tmp/test_empty.c"
gen_expect 1 "no START_TEST in this file" "$tmp/test_empty.c"

printf 'START_TEST(a)\n{\n}\nEND_TEST\nGPUSIM_LOOP(b, 0, 2);\n' >"$tmp/test_loop.c"
gen_expect 1 "test_loop.c:5: GPUSIM_LOOP names b, which is no test of this file" "$tmp/test_loop.c"

printf 'GPUSIM_TCASE("x", 0);\nSTART_TEST(a)\n{\n}\nEND_TEST\n' >"$tmp/test_marker.c"
gen_expect 1 "test_marker.c:1: GPUSIM_TCASE takes" "$tmp/test_marker.c"
if [ ! -e "$tmp/out.c.tmp.$$" ]; then ok; else bad "a failed run left its temporary file"; fi

cli_finish
