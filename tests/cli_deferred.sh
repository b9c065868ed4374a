#!/usr/bin/env bash
# CLI tests of deferred frees and the stream their event is recorded on (a free's
# optional "ready_stream", design.md §3): which earlier free a completed one waits
# behind under `torch`, in every container (JSON, JSONL, .gtrace) and through convert.
# Usage: cli_deferred.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

MiB=1048576
# peak NAME WANT-BYTES ARGS...: replay --format=json and compare peak_reserved_bytes
peak() {
  local name=$1 want=$2
  shift 2
  expect 0 "" replay "$@" --format=json
  local got
  got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["result"]["peak_reserved_bytes"])' "$tmp/out")
  if [ "$got" = "$want" ]; then ok; else bad "$name: peak_reserved_bytes $got, want $want"; fi
}

# Two 15 MiB blocks, each in a 16 MiB segment (>= 10 MiB: rounded up to 2 MiB);
# both freed deferred: id 1 ready at 100 ns, id 2 at 10 ns. The allocation at 20 ns
# polls the events (process_events): when id 2's free waits for nothing but its own
# ready_t, or on another stream than id 1's, its block is free again and the third
# 15 MiB request takes it: 2 segments, 32 MiB. When both were recorded on one stream,
# id 2 waits behind id 1 (record order, still pending): a third segment, 48 MiB.
write() { # FILE READY_STREAM_OF_1 READY_STREAM_OF_2 ("" for none)
  local f=$1 r1=${2:+, \"ready_stream\": $2} r2=${3:+, \"ready_stream\": $3}
  {
    echo '{"format": "gpusim-trace", "version": 1, "name": "deferred"}'
    echo "{\"op\": \"alloc\", \"id\": 1, \"size\": $((15 * MiB)), \"t\": 0}"
    echo "{\"op\": \"alloc\", \"id\": 2, \"size\": $((15 * MiB)), \"t\": 1}"
    echo "{\"op\": \"free\", \"id\": 1, \"t\": 2, \"ready_t\": 100$r1}"
    echo "{\"op\": \"free\", \"id\": 2, \"t\": 3, \"ready_t\": 10$r2}"
    echo "{\"op\": \"alloc\", \"id\": 3, \"size\": $((15 * MiB)), \"t\": 20}"
    echo '{"op": "free", "id": 3, "t": 30}'
  } >"$f"
}
write "$tmp/none.jsonl" "" ""
write "$tmp/other.jsonl" 1 2
write "$tmp/same.jsonl" 1 1
write "$tmp/first_only.jsonl" 1 ""
peak "no ready_stream: each waits for its own ready_t" $((32 * MiB)) "$tmp/none.jsonl" --strategy=torch
peak "two streams: independent" $((32 * MiB)) "$tmp/other.jsonl" --strategy=torch
peak "one stream: record order" $((48 * MiB)) "$tmp/same.jsonl" --strategy=torch
peak "only the earlier free named a stream" $((32 * MiB)) "$tmp/first_only.jsonl" --strategy=torch
# the field does not matter where frees complete at ready_t (BFC) or in a plan
peak "growth ignores it" "$(
  "$bin" replay "$tmp/none.jsonl" --strategy=growth --format=json | python3 -c 'import json, sys; print(json.load(sys.stdin)["result"]["peak_reserved_bytes"])'
)" "$tmp/same.jsonl" --strategy=growth

# every container keeps it: JSONL -> .gtrace -> JSON -> JSONL gives the same bytes
# (gpusim's writer puts it after ready_t), and each replays to the same peak
expect 0 "" convert "$tmp/same.jsonl" -o "$tmp/same.gtrace"
expect 0 "" convert "$tmp/same.gtrace" -o "$tmp/same.json"
expect 0 "" convert "$tmp/same.json" -o "$tmp/again.jsonl"
expect 0 "" convert "$tmp/same.jsonl" -o "$tmp/once.jsonl"
if cmp -s "$tmp/once.jsonl" "$tmp/again.jsonl"; then ok; else bad "ready_stream through .gtrace and JSON"; fi
if grep -q '"ready_t":100,"ready_stream":1}' "$tmp/once.jsonl"; then ok; else
  bad "the writer's free: $(grep '"free"' "$tmp/once.jsonl" | head -1)"; fi
for f in same.gtrace same.json; do
  peak "$f" $((48 * MiB)) "$tmp/$f" --strategy=torch
done
# compare spools the trace in memory (sim/evbuf) and replays the copy: the field survives
expect 0 "" compare "$tmp/same.jsonl" --strategies=torch,growth --format=json
got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([r["result"]["peak_reserved_bytes"] for r in d["rows"] if r["strategy"] == "torch"])' "$tmp/out" 2>&1)
if [ "$got" = "[$((48 * MiB))]" ]; then ok; else bad "compare's torch run of same.jsonl: $got"; fi
expect 0 "" replay "$tmp/same.jsonl" --strategy=planned --format=json

# bad values: named, exit 3
printf '%s\n' '{"format": "gpusim-trace", "version": 1}' \
  '{"op": "alloc", "id": 1, "size": 10}' '{"op": "free", "id": 1, "ready_t": 5, "ready_stream": -1}' >"$tmp/neg.jsonl"
expect 3 'neg.jsonl:3' replay "$tmp/neg.jsonl" --strategy=torch
printf '%s\n' '{"format": "gpusim-trace", "version": 1}' \
  '{"op": "alloc", "id": 1, "size": 10}' '{"op": "free", "id": 1, "ready_t": 5, "ready_stream": 4294967296}' \
  >"$tmp/big.jsonl"
expect 3 '"ready_stream" must be below 2^32' replay "$tmp/big.jsonl" --strategy=torch
printf '%s\n' '{"format": "gpusim-trace", "version": 1}' \
  '{"op": "alloc", "id": 1, "size": 10, "ready_stream": 1}' >"$tmp/alloc.jsonl"
expect 3 'unknown key "ready_stream" in a alloc event' replay "$tmp/alloc.jsonl" --strategy=torch
cli_finish
