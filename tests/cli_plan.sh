#!/usr/bin/env bash
# CLI tests of `gpusim plan`: text and JSON on bundled examples; every minimum
# capacity is confirmed by `replay` at that capacity (no OOM) and at 1 MiB less
# (OOM) when plan calls it monotonic; --jobs does not change the output; errors.
# Usage: cli_plan.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
MiB=1048576

for ex in mlp_train.json small-model-12gb.jsonl; do
  trace="$src/traces/examples/$ex"
  if ! "$bin" plan "$trace" --jobs=1 >"$tmp/t1" 2>"$tmp/err"; then
    bad "$ex: plan failed: $(head -c 300 "$tmp/err")"
    continue
  fi
  "$bin" plan "$trace" --jobs=4 >"$tmp/t4" 2>/dev/null
  if cmp -s "$tmp/t1" "$tmp/t4"; then ok; else bad "$ex: text differs between --jobs=1 and --jobs=4"; fi
  # one row per catalog GPU
  ngpus=$("$bin" gpus | grep -c '^  [A-Z0-9]' || true)
  rows=$(awk '/^  GPU /{on=1; next} on && /^$/{exit} on {n++} END {print n+0}' "$tmp/t1")
  if [ "$rows" -ge 10 ]; then ok; else bad "$ex: $rows GPU rows (catalog lists $ngpus)"; fi
  if grep -q "Smallest capacity each strategy runs on" "$tmp/t1"; then ok; else bad "$ex: no minimum capacity section"; fi

  "$bin" plan "$trace" --format=json --jobs=3 >"$tmp/j" 2>/dev/null
  cc=$(grep -o '"compute_capability": "[0-9.]*"' "$tmp/j" | grep -o '[0-9]*\.[0-9]*')
  # one line per minimum-capacity row: strategy capacity monotonic
  sed -n '/"minimum_capacity"/,$p' "$tmp/j" | grep '"strategy"' |
    sed -E 's/.*"strategy": "([a-z0-9_-]+)", "capacity_bytes": ([0-9]+|null).*"monotonic": (true|false).*/\1 \2 \3/; s/.*"strategy": "([a-z0-9_-]+)", "capacity_bytes": null.*/\1 null false/' >"$tmp/mins"
  n=$(wc -l <"$tmp/mins")
  if [ "$n" -ge 4 ]; then ok; else bad "$ex: $n minimum-capacity rows: $(cat "$tmp/mins")"; fi
  while read -r s cap mono; do
    [ "$cap" = null ] && { bad "$ex: $s has no minimum"; continue; }
    if [ $((cap % MiB)) -ne 0 ]; then bad "$ex: $s minimum $cap is not whole MiB"; fi
    if "$bin" replay "$trace" --strategy="$s" --capacity="$cap" --compute-capability="$cc" --fail-on-oom >/dev/null 2>"$tmp/err"; then
      ok
    else
      bad "$ex: $s does not run at its minimum $cap: $(head -c 200 "$tmp/err")"
    fi
    if [ "$mono" = true ]; then
      "$bin" replay "$trace" --strategy="$s" --capacity=$((cap - MiB)) --compute-capability="$cc" --fail-on-oom >/dev/null 2>&1
      if [ $? -eq 1 ]; then ok; else bad "$ex: $s runs at 1 MiB below its minimum $cap"; fi
    fi
  done <"$tmp/mins"
  # JSON grid: fits and headroom agree with the capacity
  if grep -q '"gpus": \[' "$tmp/j" && grep -q '"headroom_bytes": ' "$tmp/j"; then ok; else bad "$ex: JSON lacks gpus/headroom"; fi
done

ex="$src/traces/examples/mlp_train.json"
"$bin" plan "$ex" --gpus=T4,h100-80gb --strategies=growth,ideal --format=json >"$tmp/out" 2>&1
if [ "$(grep -c '{"name": ' "$tmp/out")" -eq 2 ]; then ok; else bad "--gpus=T4,h100-80gb: $(head -c 300 "$tmp/out")"; fi
# the T4 row: growth holds 2 GiB of 14.75 GiB
if grep -q '"strategy": "growth", "fits": true, "peak_device_bytes": 2147483648' "$tmp/out"; then ok; else bad "growth on T4: $(head -c 600 "$tmp/out")"; fi
# a card too small for the whole job: the serving example on a T4 under ideal fits, on nothing smaller
"$bin" plan "$src/traces/examples/serving-16gb.jsonl" --gpus=T4 --strategies=ideal,growth >"$tmp/out" 2>&1
if grep -q "OOM (" "$tmp/out" || grep -q "GiB" "$tmp/out"; then ok; else bad "serving plan: $(cat "$tmp/out")"; fi

expect 2 "unknown GPU 'Z80'" plan "$ex" --gpus=T4,Z80
expect 2 "unknown strategy" plan "$ex" --strategies=bogus
expect 2 "--format" plan "$ex" --format=csv
expect 2 "no trace given" plan
printf '{"format":"gpusim-trace","version":1}\n{"op":"free","id":7}\n' >"$tmp/badid.jsonl"
expect 3 "free of id 7" plan "$tmp/badid.jsonl" --gpus=T4

# --capacity=SIZE (repeatable): rows for hypothetical cards, after the catalog's
"$bin" plan "$ex" --gpus=T4 --capacity=24GB --capacity=1GiB --strategies=torch,growth >"$tmp/out" 2>&1
# 24 GB = 24e9 B = 22.35 GiB; growth holds 2 GiB: headroom 20.35 GiB; on 1 GiB growth cannot take its regions
if grep -q "^  24GB          22.35 GiB 1.11 GiB               2.00 GiB" "$tmp/out"; then ok; else bad "24GB row: $(cat "$tmp/out")"; fi
if grep -q "^  24GB .* 21.24 GiB *20.35 GiB" "$tmp/out"; then ok; else bad "24GB headroom: $(cat "$tmp/out")"; fi
if grep -q "^  1GiB *1.00 GiB .*OOM (capacity)" "$tmp/out"; then ok; else bad "1GiB row: $(cat "$tmp/out")"; fi
# the context assumed is printed, with a note when it is 0
if grep -q "context 0 B per process (assumed)" "$tmp/out" && grep -q "note: a real CUDA context takes about 0.3-1 GiB" "$tmp/out"; then ok; else bad "context note: $(cat "$tmp/out")"; fi
"$bin" plan "$ex" --gpus=T4 --strategies=torch --context=500MiB >"$tmp/out" 2>&1
if grep -q "context 500.00 MiB per process (assumed)" "$tmp/out" && ! grep -q "note: a real CUDA" "$tmp/out"; then ok; else bad "context 500MiB: $(cat "$tmp/out")"; fi
expect 2 "--capacity" plan "$ex" --gpus=T4 --capacity=lots

# on a terminal plan draws a progress line (replays done x events per replay); on a pipe nothing
if command -v script >/dev/null 2>&1; then
  GPUSIM_NO_PROGRESS='' script -qc "env -u GPUSIM_NO_PROGRESS '$bin' plan '$src/traces/examples/serving-16gb.jsonl' --gpus=T4 --strategies=growth,torch --jobs=1 --output=/dev/null" /dev/null >"$tmp/tty" 2>&1
  if tr '\r' '\n' <"$tmp/tty" | grep -aq "plan .* events .*ETA"; then ok; else bad "no progress line on a terminal: $(head -c 300 "$tmp/tty")"; fi
fi
"$bin" plan "$ex" --gpus=T4 --strategies=torch >/dev/null 2>"$tmp/err"
if [ ! -s "$tmp/err" ]; then ok; else bad "plan wrote to a pipe's stderr: $(cat "$tmp/err")"; fi

cli_finish
