#!/usr/bin/env bash
# CLI tests of `gpusim compare`: text and JSON on every bundled example, output
# identical for --jobs=1 and --jobs=4 and with --report, the default strategy list,
# usage errors (exit 2) and an invalid trace (exit 3).
# Usage: cli_compare.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

cli_examples
for trace in "${examples[@]}"; do
  name=$(basename "$trace")
  if ! "$bin" compare "$trace" --jobs=1 >"$tmp/t1" 2>"$tmp/err"; then
    bad "$name: compare failed: $(head -c 300 "$tmp/err")"
    continue
  fi
  "$bin" compare "$trace" --jobs=4 >"$tmp/t4" 2>/dev/null
  if cmp -s "$tmp/t1" "$tmp/t4"; then ok; else bad "$name: text differs between --jobs=1 and --jobs=4"; fi
  # one table row per default strategy, in the fixed order
  rows=$(awk '/^  strategy /{on=1; next} on && /^  \(/{on=0} on {print $1}' "$tmp/t1" | tr '\n' ' ')
  want=""
  for s in greedy growth torch raw ideal; do echo "$strategies" | grep -qx "$s" && want="$want$s "; done
  known=" greedy growth limit torch raw ideal "
  for s in $strategies; do case $known in *" $s "*) ;; *) want="$want$s ";; esac; done
  if [ "$rows" = "$want" ]; then ok; else bad "$name: rows '$rows', want '$want'"; fi

  "$bin" compare "$trace" --format=json --jobs=1 >"$tmp/j1" 2>/dev/null
  "$bin" compare "$trace" --format=json --jobs=4 >"$tmp/j4" 2>/dev/null
  "$bin" compare "$trace" --format=json --jobs=3 --report="$tmp/r.html" >"$tmp/jr" 2>/dev/null
  if cmp -s "$tmp/j1" "$tmp/j4" && cmp -s "$tmp/j1" "$tmp/jr"; then ok; else bad "$name: JSON differs with --jobs or --report"; fi
  if [ -s "$tmp/r.html" ] && grep -q '<svg class="overlay"' "$tmp/r.html"; then ok; else bad "$name: no report"; fi
  # every row's result equals replay's result for that strategy
  for s in growth ideal; do
    "$bin" replay "$trace" --strategy=$s --format=json >"$tmp/rep.json" 2>/dev/null
    want_peak=$(grep -o '"peak_reserved_bytes": [0-9]*' "$tmp/rep.json" | head -1)
    got=$(awk -v s="\"strategy\": \"$s\"" 'index($0, s) {on=1} on && /peak_reserved_bytes/ {print; exit}' "$tmp/j1" | grep -o '"peak_reserved_bytes": [0-9]*')
    if [ -n "$want_peak" ] && [ "$want_peak" = "$got" ]; then ok; else bad "$name: $s peak '$got' vs replay '$want_peak'"; fi
  done
  if grep -q '"rows": \[' "$tmp/j1" && grep -q '"device": {"name": ' "$tmp/j1" && grep -q '"trace": {"path": ' "$tmp/j1"; then
    ok
  else
    bad "$name: JSON lacks trace/device/rows"
  fi
done

ex="$src/traces/examples/mlp_train.json"
# --limit adds limit after growth; --strategies picks and orders
"$bin" compare "$ex" --limit=4GiB >"$tmp/out" 2>&1
if awk '/^  strategy /{on=1; next} on {print $1}' "$tmp/out" | head -3 | tr '\n' ' ' | grep -qx "greedy growth limit "; then ok; else bad "--limit does not add limit: $(cat "$tmp/out")"; fi
"$bin" compare "$ex" --strategies=ideal,growth >"$tmp/out" 2>&1
if awk '/^  strategy /{on=1; next} on && /^  \(/{on=0} on {print $1}' "$tmp/out" | tr '\n' ' ' | grep -qx "ideal growth "; then ok; else bad "--strategies order: $(cat "$tmp/out")"; fi
# same device and strategy options as replay
"$bin" compare "$ex" --strategies=growth --gpu=A100-40GB --format=json >"$tmp/out" 2>&1
if grep -q '"name": "A100-40GB"' "$tmp/out"; then ok; else bad "--gpu ignored"; fi

expect 2 "unknown strategy 'nope'" compare "$ex" --strategies=growth,nope
expect 2 "listed twice" compare "$ex" --strategies=growth,growth
expect 2 "--jobs" compare "$ex" --jobs=0
expect 2 "--format" compare "$ex" --format=xml
expect 2 "no trace given" compare
expect 2 "needs --limit" compare "$ex" --strategies=limit
expect 2 "" compare "$tmp/missing.json"
printf '{"format":"gpusim-trace","version":1}\n{"op":"free","id":7}\n' >"$tmp/badid.jsonl"
expect 3 "badid.jsonl:2: free of id 7" compare "$tmp/badid.jsonl" --jobs=4
expect 3 "README.md" compare "$src/traces/examples/README.md"
# a failed run leaves no report behind
rm -f "$tmp/none.html"
expect 3 "" compare "$tmp/badid.jsonl" --report="$tmp/none.html"
if [ -e "$tmp/none.html" ]; then bad "a failed compare left a report"; else ok; fi

# the header names each strategy's effective limit: torch under --memory-fraction=0.5 of a T4
# (0.5 x 15842934784 B = 7921467392 B = 7.38 GiB), growth under TF's reserve (a T4 is
# compute capability 7: 1050 MiB) after the T4's default context (256 MiB under CUDA 12:
# 15842934784 - 268435456 - 1101004800 = 14473494528 B = 13.48 GiB), each with where it comes from
expect_any 0 "  limits  torch 7.38 GiB (0.5 x 14.75 GiB, --memory-fraction); growth 13.48 GiB (TF preset: capacity - 256.00 MiB context - 1050 MiB reserve)" compare "$src/traces/examples/mlp_train.json" --strategies=torch,growth --memory-fraction=0.5

cli_finish
