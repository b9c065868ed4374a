#!/usr/bin/env bash
# The README's and docs/ pages' pasted output must be what today's code prints: the quick start,
# the compare table, the against-recorded examples (a profiler trace, a mid-run
# snapshot, one with private pools), the 8-GPU and data-parallel lessons, plan --node, the --summary example, the what-if
# example and the lessons' OOM sentences are rerun and compared; each command must
# succeed and print something.
# Usage: cli_readme.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
cd "$src" || exit 2
# the README and the pages under docs/ it leads to (the lessons, planning, recordings, the
# command line, validation): their pasted output is checked as one text
readme=$tmp/docs.md
cat README.md docs/*.md >"$readme"
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
check_in_readme "snapshot with private pools" replay tests/data/import/snapshot_pools.json --against-recorded
check_in_readme "tune" tune traces/examples/pinning-l4.jsonl
check_in_readme "tune for tf" tune traces/examples/pinning-l4.jsonl --framework=tf
check_in_readme "8-GPU lesson, greedy" replay traces/examples/small-model-12gb.jsonl --node=8x12GiB --strategy=greedy
check_in_readme "8-GPU lesson, growth" replay traces/examples/small-model-12gb.jsonl --node=8x12GiB --strategy=growth
check_in_readme "8-GPU lesson, visible=0" replay traces/examples/small-model-12gb.jsonl --node=8x12GiB \
  --strategy=greedy --visible=0
check_in_readme "data-parallel example" replay traces/examples/small-model-12gb.jsonl --node=4x12GiB \
  --strategy=growth --replicas=4 --job=3:traces/examples/two-jobs-b.jsonl
check_in_readme "plan --node example" plan traces/examples/serving-16gb.jsonl --node=4xT4 --node=2xL4 \
  --strategies=greedy,torch
check_in_readme "XLA plan beside the eager allocators" compare tests/data/import/xla/transformer_block.hlo.pb \
  --strategies=planned,torch,growth --planner=xla --alignment=64 --gpu=A100-40GB
# the --summary example: its first lines
out=$("$bin" replay traces/examples/small-model-12gb.jsonl --strategy=torch --summary=peak 2>"$tmp/err" | head -12)
n=0
while IFS= read -r line; do
  grep -qF -- "$line" "$readme" || n=$((n + 1))
done <<<"$out"
if [ -n "$out" ] && [ "$n" -eq 0 ]; then ok; else bad "the --summary example differs ($n lines not in the README)"; fi
# the planned lesson: the pasted replay, and each planner's heap quoted in the text
check_in_readme "planned serving" replay traces/examples/serving-16gb.jsonl --strategy=planned
for p in tflite tflite-gpu; do
  heap=$("$bin" replay traces/examples/serving-16gb.jsonl --strategy=planned --planner=$p 2>"$tmp/err" |
    awk '$1 == "heap_size_bytes" { print $2 }')
  if [ -n "$heap" ] && grep -qF -- "--planner=$p\` $heap B" "$readme"; then ok; else bad "planned --planner=$p: heap '$heap' not quoted in the README"; fi
done
heap=$("$bin" replay traces/examples/bert-large-train.jsonl --strategy=planned 2>"$tmp/err" |
  awk '$1 == "heap_size_bytes" { print $2 } $1 == "no_fragmentation_peak_bytes" { print $2 }' | sort -u)
if [ "$heap" = 19082018816 ] && grep -qF "19082018816), and no planner" "$readme"; then ok; else bad "planned BERT: heap and peak '$heap'"; fi
# the same model with tf.function's lifetimes, as the README generates and replays it
if "$bin" synth transformer --preset=bert-large --steps=2 --gpu=A100-40GB --seed=1 --lifetimes=graph \
  -o "$tmp/bert-graph.jsonl" >/dev/null 2>"$tmp/err"; then
  heap=$("$bin" replay "$tmp/bert-graph.jsonl" --strategy=planned 2>"$tmp/err" | awk '$1 == "heap_size_bytes" { print $2 }')
  if [ -n "$heap" ] && grep -qF "\`heap_size_bytes\` $heap" "$readme"; then ok; else bad "graph-lifetime BERT: heap '$heap' not in the README"; fi
else
  bad "synth --lifetimes=graph failed: $(head -c 300 "$tmp/err")"
fi
# check_oom_in_readme "what" COMMAND...: the lines that name an OOM, its largest live
# allocations, the allocator's words and the what-if answer must all be in the README
# (at least `want` of them: $OOM_LINES). These replays end in an OOM, so their exit status
# is 0 only without --fail-on-oom: it must be 0.
check_oom_in_readme() {
  local what=$1
  shift
  local out rc n=0
  out=$("$bin" "$@" 2>"$tmp/err")
  rc=$?
  out=$(printf '%s\n' "$out" | grep -E "out of memory at|largest live allocations|torch says|what if")
  while IFS= read -r line; do
    grep -qF -- "$line" "$readme" || { n=$((n + 1)); echo "  not in README: $line"; }
  done <<<"$out"
  if [ "$rc" -eq 0 ] && [ "$n" -eq 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -ge "$OOM_LINES" ]; then
    ok
  else
    bad "$what differs (exit $rc, $n lines not in the README): $(head -c 300 "$tmp/err")"
  fi
}
OOM_LINES=4 check_oom_in_readme "the what-if example" replay traces/examples/serving-16gb.jsonl --memory-fraction=0.8
OOM_LINES=2 check_oom_in_readme "lesson 2's fragmentation" replay traces/examples/serving-16gb.jsonl --strategy=growth
# two processes print the OOM twice (device and job B): both copies must be in the README
OOM_LINES=2 check_oom_in_readme "lesson 4's other processes" replay traces/examples/two-jobs-a.jsonl \
  traces/examples/two-jobs-b.jsonl --strategy=greedy
# lesson 5: the trace is generated as the README says, in a scratch directory so that the
# sentence names it as the README does
(cd "$tmp" && "$bin" synth transformer --preset=gpt2-medium --batch=8 -o gpt2-medium-b8.jsonl --quiet) ||
  bad "lesson 5: synth failed"
back=$PWD
cd "$tmp" || exit 2
OOM_LINES=3 check_oom_in_readme "lesson 5's capacity (torch)" replay gpt2-medium-b8.jsonl --gpu=RTX4090
OOM_LINES=1 check_oom_in_readme "lesson 5's capacity (growth)" replay gpt2-medium-b8.jsonl --gpu=RTX4090 \
  --strategy=growth
cd "$back" || exit 2
# lesson 8: the CUDA graphs' pool on the hand trace, then a vLLM start-up generated as the
# lesson says (in the scratch directory, so that the output names it as the lesson does)
check_in_readme "lesson 8's pool" compare tests/data/graphs/three_captures.jsonl --context=0 --strategies=torch
cd "$tmp" || exit 2
check_in_readme "lesson 8's start-up" synth serving --model=llama3-8b --gpu=H100-80GB --max-batch=256 --requests=20 \
  --cuda-graphs=1,2,4,...,512 -o vllm-llama3-8b.jsonl
check_in_readme "lesson 8's plan" plan vllm-llama3-8b.jsonl --gpu-memory-utilization --gpu=H100-80GB \
  --gpus=H100-80GB,A100-40GB --strategies=torch
cd "$back" || exit 2
cli_finish
