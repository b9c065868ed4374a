#!/usr/bin/env bash
# Memcheck over a subset of the CLI runs the other tests make (every container,
# every strategy, errors, OOMs, timeline, convert both ways): valgrind must report
# no error and no definite leak. Skips (exit 77, listed by scripts/test) when valgrind
# is absent; registered for builds without sanitizers only.
# Usage: cli_valgrind.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
command -v valgrind >/dev/null 2>&1 || cli_skip "valgrind not found (scripts/test installs it)"
# a sanitizer build cannot run under valgrind (both want to own the allocator):
# tests/CMakeLists.txt registers this test in builds without sanitizers only
if ldd "$bin" 2>/dev/null | grep -q 'libasan'; then
  echo "FAIL: $bin is built with AddressSanitizer: run this test on a plain build"
  echo "0 passed, 1 failed"
  exit 1
fi
vg() {
  local want=$1
  shift
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$bin" "$@" \
    >/dev/null 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    bad "valgrind gpusim $* -> exit $rc (want $want): $(head -c 600 "$tmp/err")"
  else
    ok
  fi
}
ex=$src/traces/examples/mlp_train.json
vg 0 convert "$ex" -o "$tmp/m.jsonl"
vg 0 convert "$ex" -o "$tmp/m.gtrace"
vg 0 convert "$tmp/m.gtrace" -o "$tmp/m2.json"
for s in $("$bin" strategies | awk '$1 ~ /^[a-z]+$/ {print $1}'); do
  # --limit is an option of the limit strategy only (a usage error under the others)
  big=""
  small=""
  [ "$s" = "limit" ] && big="--limit=8GiB" && small="--limit=512MiB"
  # shellcheck disable=SC2086
  vg 0 replay "$tmp/m.gtrace" --strategy="$s" --format=json --timeline="$tmp/t.csv" --paranoid $big
  # shellcheck disable=SC2086
  vg 0 replay "$tmp/m.jsonl" "$src/tests/golden/job_a.json" --strategy="$s" --capacity=1GiB --on-oom=skip $small
done
vg 0 replay "$src/tests/golden/two_procs.jsonl" --strategy=growth --format=json
vg 3 replay "$src/tests/golden/double_free.json"
vg 3 replay "$src/tests/golden/unknown_free.jsonl"
vg 2 replay "$ex" --output="$tmp/no/such/dir.json"
head -c 100 "$tmp/m.gtrace" >"$tmp/bad.gtrace"
vg 3 replay "$tmp/bad.gtrace"
vg 2 replay --strategy=nope "$ex"
cli_finish
