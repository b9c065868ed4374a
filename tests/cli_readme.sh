#!/usr/bin/env bash
# The README's pasted output must be what today's code prints: the quick start,
# the compare table, the against-recorded examples (a profiler trace, a mid-run
# snapshot) and the what-if example are rerun and compared; each command must
# succeed and print something.
# Usage: cli_readme.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
cd "$src" || exit 2
readme=README.md
# check_in_readme "what" COMMAND...: the command must succeed and print something, and
# every non-blank line it prints must appear in the README
check_in_readme() {
  local what=$1
  shift
  local out rc
  out=$("$bin" "$@" 2>"$tmp/err")
  rc=$?
  if [ "$rc" -ne 0 ] || [ -z "${out//[[:space:]]/}" ]; then
    bad "$what: gpusim $* exited $rc with $(printf '%s' "$out" | wc -l) lines of output: $(head -c 300 "$tmp/err")"
    return
  fi
  local missing=0
  while IFS= read -r line; do
    [ -z "${line// /}" ] && continue
    grep -qF -- "$line" "$readme" || { missing=$((missing + 1)); echo "  not in README: $line"; }
  done <<<"$out"
  if [ "$missing" -eq 0 ]; then ok; else bad "$what ($missing lines differ)"; fi
}
check_in_readme "quick start" replay traces/examples/mlp_train.json --strategy=growth
check_in_readme "compare table" compare traces/examples/mlp_train.json
check_in_readme "against-recorded" replay tests/data/import/hta_excerpt.pt.trace.json.gz --against-recorded \
  --strategy=ideal
check_in_readme "mid-run snapshot" replay tests/data/import/torch_snapshot_cs336_midrun_inference.pickle \
  --against-recorded
check_in_readme "tune" tune traces/examples/pinning-l4.jsonl
check_in_readme "tune for tf" tune traces/examples/pinning-l4.jsonl --framework=tf
# the what-if example: the lines that name the OOM and the what-if answer. This replay
# ends in an OOM, so its exit status is 0 only without --fail-on-oom: it must be 0.
out=$("$bin" replay traces/examples/serving-16gb.jsonl --memory-fraction=0.8 2>"$tmp/err")
rc=$?
out=$(printf '%s\n' "$out" | grep -E "out of memory at|torch says|what if")
n=0
while IFS= read -r line; do
  grep -qF -- "$line" "$readme" || n=$((n + 1))
done <<<"$out"
if [ "$rc" -eq 0 ] && [ "$n" -eq 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -ge 3 ]; then
  ok
else
  bad "the what-if example differs (exit $rc, $n lines not in the README): $out"
fi
cli_finish
