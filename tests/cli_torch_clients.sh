#!/usr/bin/env bash
# gpusim's outputs read by PyTorch's own tools, as users open them: the memory_summary()
# and torch.cuda._memory_viz of the release scripts/frameworks unpacked
# ($GPUSIM_TORCH_CUDA_DIR, default 2.14.1; python/torch/cuda/{memory.py,_memory_viz.py}
# from its wheel), through tests/support/torch_clients.py:
#  - `--summary` is byte for byte what that release's memory_summary() prints from the
#    statistics `--summary --format=json` gives (its formatter, memory_stats standing in
#    for the GPU), at the end, the peak and the OOM, under torch and async;
#  - _memory_viz's stats, trace, segments, memory and compare, on an export of every
#    strategy that exports (every one but ideal), with an OOM, expandable segments and
#    async's pool: every figure they print agrees with the replay's result; its
#    trace_plot and segment_plot commands write their pages from the export.
# Without the unpacked release the test says SKIPPED (scripts/test lists it).
# Usage: cli_torch_clients.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
g="$src/tests/golden"
ex="$src/traces/examples"
drv="$src/tests/support/torch_clients.py"
rel=${GPUSIM_TORCH_CUDA_DIR:-}
mem="$rel/python/torch/cuda/memory.py"
viz="$rel/python/torch/cuda/_memory_viz.py"
[ -n "$rel" ] && [ -f "$mem" ] && [ -f "$viz" ] ||
  cli_skip "no unpacked PyTorch release with memory.py and _memory_viz.py (GPUSIM_TORCH_CUDA_DIR; scripts/frameworks makes it)"
version=$(sed -n "s/^__version__ = '\(.*\)'$/\1/p" "$rel/version.py")
echo "PyTorch $version's memory_summary and _memory_viz ($rel)"

# summary NAME MOMENT GPUSIM-OPTIONS...: --summary=MOMENT against the release's
# memory_summary() of the same moment's statistics
summary() {
  local name=$1 at=$2
  shift 2
  expect 0 "" replay "$@" --summary="$at" --format=json
  cp "$tmp/out" "$tmp/stats.json"
  expect 0 "" replay "$@" --summary="$at"
  if ! python3 "$drv" summary "$mem" "$tmp/stats.json" >"$tmp/torch.txt" 2>"$tmp/torch.err"; then
    bad "$name: memory_summary failed: $(tail -n 3 "$tmp/torch.err")"
  elif cmp -s "$tmp/torch.txt" "$tmp/out"; then
    ok
  else
    bad "$name: --summary is not PyTorch $version's memory_summary():"
    diff "$tmp/torch.txt" "$tmp/out" | head -20
  fi
}

summary "torch at the end" end "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB
summary "torch at the peak" peak "$ex/mlp_train.json" --strategy=torch --capacity=24GiB
summary "torch at the OOM" oom "$ex/bert-large-train.jsonl" --strategy=torch --capacity=12GiB
summary "torch, expandable segments" peak "$ex/serving-16gb.jsonl" --strategy=torch --capacity=24GiB \
  --alloc-conf=expandable_segments:True
summary "torch 2.6 rules" peak "$ex/small-model-12gb.jsonl" --strategy=torch --capacity=24GiB --torch-version=2.6
summary "async at the peak" peak "$g/async_streams.jsonl" --strategy=async --capacity=1GiB
summary "async at the OOM" oom "$g/async_streams.jsonl" --strategy=async --capacity=5MiB
# the comparison sees a difference: one counter 1 KiB off changes PyTorch's table
sed -E 's/"allocated_bytes.all.peak": [0-9]+/"allocated_bytes.all.peak": 1024/' "$tmp/stats.json" >"$tmp/off.json"
if python3 "$drv" summary "$mem" "$tmp/off.json" | cmp -s - "$tmp/out"; then
  bad "memory_summary of altered statistics still matches --summary: the comparison checks nothing"
else ok; fi

# An export that holds no segment at its end (torch_rules.jsonl ends with empty_cache):
# compare's "before"
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB --export-snapshot="$tmp/empty.pickle"

# views NAME GPUSIM-OPTIONS...: export, then every _memory_viz view of it
views() {
  local name=$1 got
  shift
  expect 0 "" replay "$@" --format=json --export-snapshot="$tmp/v.pickle"
  cp "$tmp/out" "$tmp/v.json"
  if got=$(python3 "$drv" viz "$viz" "$tmp/v.pickle" "$tmp/v.json" "$tmp/empty.pickle" 2>&1); then ok
  else bad "$name: $got"; fi
  # the commands as users type them; the pages carry the export (base64, padded with NULs)
  for cmd in stats trace; do
    if python3 "$viz" "$cmd" "$tmp/v.pickle" >"$tmp/cmd.out" 2>&1 && [ -s "$tmp/cmd.out" ]; then ok
    else bad "$name: _memory_viz $cmd: $(tail -n 3 "$tmp/cmd.out")"; fi
  done
  for cmd in trace_plot segment_plot; do
    rm -f "$tmp/plot.html"
    if python3 "$viz" "$cmd" "$tmp/v.pickle" -o "$tmp/plot.html" >"$tmp/cmd.out" 2>&1 &&
       python3 -c '
import base64, json, pickle, re, sys
page = open(sys.argv[1]).read()
files = json.loads(re.search(r"const local_files = (.*)", page).group(1))
sys.exit(pickle.loads(base64.b64decode(files[0]["base64"])) != pickle.load(open(sys.argv[2], "rb")))
' "$tmp/plot.html" "$tmp/v.pickle"; then ok
    else bad "$name: _memory_viz $cmd: $(tail -n 3 "$tmp/cmd.out")"; fi
  done
}

for s in $(cli_strategies); do
  [ "$s" = ideal ] && continue # a lower bound, not an allocator: no snapshot
  opts=(--strategy="$s" --capacity=24GiB)
  [ "$s" = limit ] && opts+=(--limit=8GiB)
  views "$s" "$ex/mlp_train.json" "${opts[@]}"
done
views "torch, OOM" "$ex/bert-large-train.jsonl" --strategy=torch --capacity=12GiB
views "torch, expandable segments" "$ex/serving-16gb.jsonl" --strategy=torch --capacity=24GiB \
  --alloc-conf=expandable_segments:True
views "torch, expandable segments, OOM" "$ex/bert-large-train.jsonl" --strategy=torch --capacity=12GiB \
  --alloc-conf=expandable_segments:True
views "async, OOM" "$ex/bert-large-train.jsonl" --strategy=async --capacity=12GiB
views "growth, OOM" "$ex/bert-large-train.jsonl" --strategy=growth --capacity=12GiB
# the views see a difference: a result whose final reserved bytes are not the export's
sed -E 's/"final_reserved_bytes": ([0-9]+)/"final_reserved_bytes": \12097152/' "$tmp/v.json" >"$tmp/off.json"
if python3 "$drv" viz "$viz" "$tmp/v.pickle" "$tmp/off.json" >"$tmp/off.out" 2>&1; then
  bad "_memory_viz agrees with an altered result: the views check nothing"
elif grep -q "^stats: total_reserved: " "$tmp/off.out"; then ok
else bad "altered result: $(cat "$tmp/off.out")"; fi

cli_finish
