#!/usr/bin/env bash
# CLI tests of `gpusim replay --node` (answers/node.h): ranks on visible GPUs, what a
# framework takes at start on visible GPUs it never uses, data-parallel replicas,
# several jobs, and the usage errors.
# Usage: cli_node.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
g="$src/tests/golden"
t="$g/torch_rules.jsonl"

has() { # NAME TEXT: the last stdout contains TEXT
  if grep -qF -- "$2" "$tmp/out"; then ok; else bad "$1: no '$2' in: $(head -c 600 "$tmp/out")"; fi
}

# ideal holds exactly the live requested bytes: torch_rules.jsonl peaks at
# 11534337 + 1000 + 2000 + 5242880 = 16780217 and frees everything. Two traces on
# --visible=0,2: rank 0 on GPU 0, rank 1 on GPU 2; GPU 1 is not visible: untouched.
expect 0 "" replay "$t" "$t" --node=3x1GiB --visible=0,2 --strategy=ideal --format=json
has "rank 0 on GPU 0" '{"gpu": 0, "name": "custom", "capacity_bytes": 1073741824, "peak_used_bytes": 16780217, "final_used_bytes": 0'
has "GPU 1 untouched" '{"gpu": 1, "name": "custom", "capacity_bytes": 1073741824, "peak_used_bytes": 0, "final_used_bytes": 0, "free_for_others_bytes": 1073741824, "shares": []}'
has "rank 1 on GPU 2" '"shares": [{"job": "job 1", "rank": 1, "peak_device_bytes": 16780217'

# greedy takes its whole limit on every visible GPU at start: on GPU 1, where the job
# has no trace, it holds what one replay of the trace holds on one such GPU (its region
# is the limit, whatever the trace asks for).
expect 0 "" replay "$t" --capacity=1GiB --strategy=greedy --format=json
limit=$(grep -o '"peak_reserved_bytes": [0-9]*' "$tmp/out" | head -1 | grep -o '[0-9]*$')
expect 0 "" replay "$t" --node=2x1GiB --strategy=greedy --format=json
has "greedy's start on GPU 1" "{\"job\": \"job 1\", \"rank\": -1, \"peak_device_bytes\": $limit, \"final_device_bytes\": $limit"
left=$((1073741824 - limit))
has "left for others on GPU 1" "\"gpu\": 1, \"name\": \"custom\", \"capacity_bytes\": 1073741824, \"peak_used_bytes\": $limit, \"final_used_bytes\": $limit, \"free_for_others_bytes\": $left"
# ...growth takes nothing where it is not used, and --visible=0 hides GPU 1 from greedy
expect 0 "" replay "$t" --node=2x1GiB --strategy=growth --format=json
has "growth leaves GPU 1 alone" '"gpu": 1, "name": "custom", "capacity_bytes": 1073741824, "peak_used_bytes": 0'
expect 0 "" replay "$t" --node=2x1GiB --strategy=greedy --visible=0 --format=json
has "visible=0 leaves GPU 1 alone" '"gpu": 1, "name": "custom", "capacity_bytes": 1073741824, "peak_used_bytes": 0'

# --replicas=3: the trace on each of the first 3 visible GPUs (here 1, 2, 3), each its
# own allocator, the same numbers on each.
expect 0 "" replay "$t" --node=4x1GiB --visible=1,2,3 --replicas=3 --strategy=ideal --format=json
n=$(grep -c '"peak_device_bytes": 16780217' "$tmp/out")
if [ "$n" = 3 ]; then ok; else bad "replicas: $n devices with the trace's peak, want 3"; fi
has "GPU 0 not visible" '"gpu": 0, "name": "custom", "capacity_bytes": 1073741824, "peak_used_bytes": 0'

# A second job on GPU 1 after greedy took it: job 2 finds only what greedy left.
expect 0 "" replay "$t" --node=2x1GiB --strategy=greedy --job=1:"$t" --format=json
has "two jobs on GPU 1" '{"job": "job 2", "rank": 0'
# the text table names both
expect 0 "" replay "$t" --node=2x1GiB --strategy=greedy --job=1:"$t"
has "text: start row" "job 1   start"
has "text: job 2 row" "job 2   0"

# catalog names and counts
expect 0 "" replay "$t" --node=2xA100-40GB,T4 --strategy=ideal --format=json
has "catalog node" '"gpu": 2, "name": "T4"'

expect 2 "neither a GPU of the catalog" replay "$t" --node=8xNOPE
expect 2 "distinct device indices below 2" replay "$t" --node=2x1GiB --visible=0,0
expect 2 "distinct device indices below 2" replay "$t" --node=2x1GiB --visible=2
expect 2 "2 traces (ranks) but 1 visible GPUs" replay "$t" "$t" --node=2x1GiB --visible=1
expect 2 "need --node" replay "$t" --visible=0
expect 2 "expected 1 to 2" replay "$t" --node=2x1GiB --replicas=3
expect 2 "expected VISIBLE:TRACE" replay "$t" --node=2x1GiB --job=1
cli_finish
