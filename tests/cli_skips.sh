#!/usr/bin/env bash
# cli_skips.sh — nothing is skipped quietly: cli_skip exits 77 (ctest's skip code) and
# logs "TEST: REASON" to $GPUSIM_SKIP_LOG; scripts/lib.sh's gpusim_skip logs a stage;
# gpusim_skips_report (the end of scripts/test) lists them once each, passes with an
# empty list, and fails on a non-empty one only under GPUSIM_NO_SKIPS=1 (as .ci/run sets).
# Usage: cli_skips.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
# shellcheck source=../scripts/lib.sh
. "$src/scripts/lib.sh"

log=$tmp/skips
: >"$log"
# a whole test that cannot run
out=$(GPUSIM_SKIP_LOG=$log bash -c '. "$1/tests/cli_lib.sh"; cli_setup "$2" "$1"; cli_skip "no widget here"; echo after' \
  cli_demo "$src" "$bin")
rc=$?
[ "$rc" -eq 77 ] && ok || bad "cli_skip exits $rc, want 77"
[[ $out == "SKIPPED: no widget here" ]] && ok || bad "cli_skip says: $out"
grep -qx "cli_demo: no widget here" "$log" && ok || bad "cli_skip logged: $(cat "$log")"
# a stage, twice (both builds): listed once
GPUSIM_SKIP_LOG=$log gpusim_skip "fuzz" "clang has no libFuzzer" >/dev/null
GPUSIM_SKIP_LOG=$log gpusim_skip "fuzz" "clang has no libFuzzer" >/dev/null
report=$(GPUSIM_NO_SKIPS=0 gpusim_skips_report "$log" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && ok || bad "the report fails without GPUSIM_NO_SKIPS: rc $rc"
[ "$(printf '%s\n' "$report" | grep -c '^  ')" -eq 2 ] && ok || bad "two distinct skips listed: $report"
[[ $report == *"  fuzz: clang has no libFuzzer"* ]] && ok || bad "the stage's reason: $report"
# CI: any skip fails the run
report=$(GPUSIM_NO_SKIPS=1 gpusim_skips_report "$log" 2>&1)
rc=$?
[ "$rc" -ne 0 ] && ok || bad "GPUSIM_NO_SKIPS=1 with two skips passed"
[[ $report == *"GPUSIM_NO_SKIPS=1 and 2 skipped"* ]] && ok || bad "the CI failure says why: $report"
# nothing skipped: passes, and says so
: >"$log"
report=$(GPUSIM_NO_SKIPS=1 gpusim_skips_report "$log" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && [[ $report == *"nothing: every stage and test ran"* ]] && ok || bad "an empty list: rc $rc: $report"
# .ci/run sets GPUSIM_NO_SKIPS=1 before scripts/test
grep -q '^export GPUSIM_NO_SKIPS=1$' "$src/.ci/run" && grep -q 'exec ./scripts/test' "$src/.ci/run" && ok ||
  bad ".ci/run does not set GPUSIM_NO_SKIPS=1 for scripts/test"
cli_finish
