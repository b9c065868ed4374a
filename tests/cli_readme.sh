#!/usr/bin/env bash
# The README's pasted output must be what today's code prints: the quick start,
# the compare table, the what-if example and the mid-run snapshot are rerun and compared.
# Usage: cli_readme.sh GPUSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
cd "$src" || exit 2
fails=0
passes=0
readme=README.md
# check_in_readme "what" COMMAND...: every non-blank output line must appear in the README
check_in_readme() {
  local what=$1
  shift
  local out
  out=$("$bin" "$@" 2>/dev/null)
  local missing=0
  while IFS= read -r line; do
    [ -z "${line// /}" ] && continue
    grep -qF -- "$line" "$readme" || { missing=$((missing + 1)); echo "  not in README: $line"; }
  done <<<"$out"
  if [ "$missing" -eq 0 ]; then passes=$((passes + 1)); else echo "FAIL: $what ($missing lines differ)"; fails=$((fails + 1)); fi
}
check_in_readme "quick start" replay traces/examples/mlp_train.json --strategy=growth
check_in_readme "compare table" compare traces/examples/mlp_train.json
out=$("$bin" replay traces/examples/serving-16gb.jsonl --memory-fraction=0.8 2>/dev/null | grep -E "out of memory at|torch says|what if")
n=0
while IFS= read -r line; do
  grep -qF -- "$line" "$readme" || n=$((n + 1))
done <<<"$out"
if [ "$n" -eq 0 ] && [ -n "$out" ]; then passes=$((passes + 1)); else echo "FAIL: the what-if example differs"; fails=$((fails + 1)); fi
# the mid-run snapshot, run where the README's command runs it (its path is printed)
out=$(cd tests/data/import && "$bin" replay torch_snapshot_cs336_midrun_inference.pickle --against-recorded 2>/dev/null)
n=0
while IFS= read -r line; do
  [ -z "${line// /}" ] && continue
  grep -qF -- "$line" "$readme" || { n=$((n + 1)); echo "  not in README: $line"; }
done <<<"$out"
if [ "$n" -eq 0 ] && [ -n "$out" ]; then passes=$((passes + 1)); else echo "FAIL: the mid-run snapshot example differs"; fails=$((fails + 1)); fi
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
