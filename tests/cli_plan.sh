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
  # the minimum is searched on a card like the model: its compute capability and its
  # context: the default card's (H100) published figure, 256 MiB under CUDA 12, for
  # mlp_train.json; 0 B for small-model-12gb.jsonl, whose own card the catalog does not know
  want=268435456
  [ "$ex" = small-model-12gb.jsonl ] && want=0
  ctx=$(grep -o '"context_bytes": [0-9]*' "$tmp/j" | head -1 | grep -o '[0-9]*$')
  if [ "$ctx" = "$want" ]; then ok; else bad "$ex: context $ctx, want $want"; fi
  # one line per minimum-capacity row: strategy capacity monotonic
  sed -n '/"minimum_capacity"/,$p' "$tmp/j" | grep '"strategy"' |
    sed -E 's/.*"strategy": "([a-z0-9_-]+)", "capacity_bytes": ([0-9]+|null).*"monotonic": (true|false).*/\1 \2 \3/; s/.*"strategy": "([a-z0-9_-]+)", "capacity_bytes": null.*/\1 null false/' >"$tmp/mins"
  n=$(wc -l <"$tmp/mins")
  if [ "$n" -ge 4 ]; then ok; else bad "$ex: $n minimum-capacity rows: $(cat "$tmp/mins")"; fi
  while read -r s cap mono; do
    [ "$cap" = null ] && { bad "$ex: $s has no minimum"; continue; }
    if [ $((cap % MiB)) -ne 0 ]; then bad "$ex: $s minimum $cap is not whole MiB"; fi
    if "$bin" replay "$trace" --strategy="$s" --capacity="$cap" --compute-capability="$cc" --context="$ctx" --fail-on-oom >/dev/null 2>"$tmp/err"; then
      ok
    else
      bad "$ex: $s does not run at its minimum $cap: $(head -c 200 "$tmp/err")"
    fi
    if [ "$mono" = true ]; then
      "$bin" replay "$trace" --strategy="$s" --capacity=$((cap - MiB)) --compute-capability="$cc" --context="$ctx" --fail-on-oom >/dev/null 2>&1
      if [ $? -eq 1 ]; then ok; else bad "$ex: $s runs at 1 MiB below its minimum $cap"; fi
    fi
  done <"$tmp/mins"
  # JSON grid: fits and headroom agree with the capacity
  if grep -q '"gpus": \[' "$tmp/j" && grep -q '"headroom_bytes": ' "$tmp/j"; then ok; else bad "$ex: JSON lacks gpus/headroom"; fi
done

ex="$src/traces/examples/mlp_train.json"
"$bin" plan "$ex" --gpus=T4,h100-80gb --strategies=growth,ideal --format=json >"$tmp/out" 2>&1
if [ "$(grep -c '{"name": ' "$tmp/out")" -eq 2 ]; then ok; else bad "--gpus=T4,h100-80gb: $(head -c 300 "$tmp/out")"; fi
# the T4 row: growth holds 2 GiB of 14.75 GiB, plus the default context 256 MiB:
# 2147483648 + 268435456 = 2415919104
if grep -q '"strategy": "growth", "fits": true, "peak_device_bytes": 2415919104' "$tmp/out"; then ok; else bad "growth on T4: $(head -c 600 "$tmp/out")"; fi
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
else
  cli_skip_part "no script (bsdutils): the progress line on a terminal is not checked"
fi
"$bin" plan "$ex" --gpus=T4 --strategies=torch >/dev/null 2>"$tmp/err"
if [ ! -s "$tmp/err" ]; then ok; else bad "plan wrote to a pipe's stderr: $(cat "$tmp/err")"; fi

# ---- --node: which node fits the job (the traces are its ranks, rank r on its r-th visible GPU)
g="$src/tests/golden/torch_rules.jsonl"
# ideal holds exactly the live requested bytes: torch_rules.jsonl peaks at
# 11534337 + 1000 + 2000 + 5242880 = 16780217 B. Two ranks on 3x1GiB: GPUs 0 and 1 hold
# 16780217 each, GPU 2 nothing; headroom 1073741824 - 16780217 = 1056961607 on each GPU used.
expect 0 "" plan "$g" "$g" --node=3x1GiB --strategies=ideal --format=json
tr -d '\n' <"$tmp/out" >"$tmp/flat"
if grep -qF '{"strategy": "ideal", "fits": true, "gpus_used": 2, "peak_used_bytes": 16780217, "peak_gpu": 0, "least_headroom_bytes": 1056961607, "least_headroom_gpu": 0, "failing": null' "$tmp/flat"; then ok; else bad "ideal on 3x1GiB: $(head -c 600 "$tmp/out")"; fi
if grep -qF '{"gpu": 2, "name": "custom", "capacity_bytes": 1073741824, "limit_bytes": null, "peak_used_bytes": 0, "final_used_bytes": 0, "headroom_bytes": 1073741824, "oom": false, "use": null}' "$tmp/out"; then ok; else bad "GPU 2 untouched: $(head -c 900 "$tmp/out")"; fi
# The 8-GPU greedy case: TensorFlow's default takes its limit on every visible GPU. On a
# 12 GiB card the limit is capacity - 1536 MiB (the reserve above 2 GiB available, cc >= 8):
# 12884901888 - 1610612736 = 11274289152 B (10.50 GiB) held on each of the 8 GPUs, the job's
# rank on GPU 0 and the framework's start on GPUs 1-7; headroom 1610612736 B (1.50 GiB) on each.
# Under growth only GPU 0 holds anything.
ex12="$src/traces/examples/small-model-12gb.jsonl"
expect 0 "" plan "$ex12" --node=8x12GiB --strategies=greedy,growth --format=json
n=$(grep -c '"limit_bytes": 11274289152, "peak_used_bytes": 11274289152, "final_used_bytes": 11274289152, "headroom_bytes": 1610612736' "$tmp/out")
if [ "$n" -eq 8 ]; then ok; else bad "greedy on 8x12GiB: $n GPUs hold 11274289152 B, want 8"; fi
if [ "$(grep -c '"use": "start"' "$tmp/out")" -eq 7 ]; then ok; else bad "greedy takes GPUs 1-7 at start: $(grep -c start "$tmp/out")"; fi
if grep -qF '"strategy": "growth", "fits": true, "gpus_used": 1,' "$tmp/out"; then ok; else bad "growth uses one GPU"; fi
# the same per-GPU numbers as replay --node
"$bin" replay "$ex12" --node=8x12GiB --strategy=greedy --format=json >"$tmp/r.json" 2>/dev/null
if [ "$(grep -c '"peak_used_bytes": 11274289152, "final_used_bytes": 11274289152' "$tmp/r.json")" -eq 8 ]; then ok; else bad "replay --node disagrees: $(head -c 400 "$tmp/r.json")"; fi
# text: a row per node x strategy, and the GPU that fails: with CUDA_VISIBLE_DEVICES=1 on
# T4,1GiB the rank runs on the 1 GiB card (limit 1024 - 225 = 799 MiB) and runs out of memory
# there; on 1GiB,T4 the same --visible=1 is the T4, where it fits.
expect 0 "" plan "$ex12" --node=T4,1GiB --node=1GiB,T4 --visible=1 --strategies=growth,greedy
if grep -qE '^  T4,1GiB +2  growth +no +1/2  799.00 MiB \(1\) +- +GPU 1 \(custom, rank 0\): OOM \(capacity\)$' "$tmp/out"; then ok; else bad "failing GPU row: $(cat "$tmp/out")"; fi
if grep -qE '^  1GiB,T4 +2  greedy +yes +1/2  13.73 GiB \(1\) +1.03 GiB \(1\) +-$' "$tmp/out"; then ok; else bad "fitting row: $(cat "$tmp/out")"; fi
if grep -qF "GPU 0: 0 B (untouched)" "$tmp/out" && ! grep -q ' $' "$tmp/out"; then ok; else bad "per-GPU lines: $(cat "$tmp/out")"; fi
# --replicas: the one trace on the first N visible GPUs
expect 0 "" plan "$g" --node=4x1GiB --replicas=3 --strategies=ideal --format=json
if [ "$(grep -c '"peak_used_bytes": 16780217, "final_used_bytes": 0' "$tmp/out")" -eq 3 ]; then ok; else bad "3 replicas: $(head -c 600 "$tmp/out")"; fi
# jobs do not change the answer
"$bin" plan "$ex12" --node=8x12GiB --node=2xT4 --jobs=1 >"$tmp/n1" 2>/dev/null
"$bin" plan "$ex12" --node=8x12GiB --node=2xT4 --jobs=4 >"$tmp/n4" 2>/dev/null
if cmp -s "$tmp/n1" "$tmp/n4"; then ok; else bad "--node: text differs between --jobs=1 and --jobs=4"; fi
# a node where the job cannot run: more ranks than visible GPUs is a row, not an error
expect 0 "" plan "$g" "$g" --node=2x1GiB --visible=1 --strategies=ideal
if grep -qF "does not run: job 1: 2 ranks but 1 visible GPUs" "$tmp/out"; then ok; else bad "does not run: $(cat "$tmp/out")"; fi
# --job: a second job on GPU 1. Greedy's start there already holds 11274289152 of 12884901888 B,
# leaving 1610612736 B (1.50 GiB); job 2 (BERT-base, 2.29 GiB at its peak, README lesson 4) runs out
# of memory because of the other process. Under growth it fits beside it, holding 4.00 GiB.
jb="$src/traces/examples/two-jobs-b.jsonl"
expect 0 "" plan "$ex12" --node=2x12GiB --strategies=greedy,growth --job=1:"$jb" --format=json
if grep -qF '"failing": {"gpu": 1, "job": "job 2", "rank": 0, "cause": "other_processes"}' "$tmp/out"; then ok; else bad "job 2 on GPU 1: $(head -c 900 "$tmp/out")"; fi
if grep -qF '"use": "start + job 2 rank 0"' "$tmp/out" && grep -qF '"use": "job 2 rank 0"' "$tmp/out"; then ok; else bad "GPU 1's use: $(grep '"gpu": 1' "$tmp/out")"; fi
expect 0 "" plan "$ex12" --node=2x12GiB --strategies=greedy --job=1:"$jb"
if grep -qE '^  job 2   .*two-jobs-b.jsonl; CUDA_VISIBLE_DEVICES=1$' "$tmp/out" && grep -qF "GPU 1 (custom, job 2 rank 0): OOM (other_processes)" "$tmp/out"; then ok; else bad "--job text: $(cat "$tmp/out")"; fi
expect 2 "expected VISIBLE:TRACE" plan "$g" --node=2x1GiB --job=1
expect 2 "--visible, --replicas and --job need --node" plan "$g" --job=1:"$g"
expect 2 "neither a GPU of the catalog" plan "$g" --node=8xNOPE
expect 2 "--gpus and --capacity are for single cards" plan "$g" --node=2x1GiB --gpus=T4
expect 2 "--visible, --replicas and --job need --node" plan "$g" --visible=0
expect 2 "--replicas=2: expected 1 to 16 copies of one trace" plan "$g" "$g" --node=2x1GiB --replicas=2
expect 3 "free of id 7" plan "$tmp/badid.jsonl" --node=2x1GiB

# ---- the header names each strategy's effective limit on the model card and where it comes from (replay's,
# answers/limit.h):
# torch with --memory-fraction=0.5 on a T4 (15842934784 B): (uint64)(0.5 x 15842934784) = 7921467392 B = 7.38 GiB;
# greedy: the T4 is cc 7.5, reserve 1050 MiB = 1101004800 B, after the default context 256 MiB = 268435456 B:
# 15842934784 - 268435456 - 1101004800 = 14473494528 B = 13.48 GiB
"$bin" plan "$ex" --gpus=T4 --gpu=T4 --strategies=torch,greedy --memory-fraction=0.5 >"$tmp/out" 2>&1
if grep -qF "  limits  on T4 (14.75 GiB), the allocator's effective limit: torch 7.38 GiB (0.5 x 14.75 GiB, --memory-fraction); greedy 13.48 GiB (TF preset: capacity - 256.00 MiB context - 1050 MiB reserve)" "$tmp/out"; then ok; else bad "limits header: $(head -8 "$tmp/out")"; fi
"$bin" plan "$ex" --gpus=T4 --strategies=limit --limit=2GiB --format=json >"$tmp/out" 2>&1
if grep -qF '"limit_bytes": 2147483648, "headroom_bytes"' "$tmp/out"; then ok; else bad "limit_bytes in JSON: $(head -c 600 "$tmp/out")"; fi

cli_finish
