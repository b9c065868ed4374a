#!/usr/bin/env bash
# CLI tests of PyTorch snapshots with private memory pools (CUDA graphs, MemPool;
# traces/IMPORT.md "Private pools"): the replay against the recording with 0 B
# difference, convert's pool events, --export-snapshot's segment_pool_id and pool_id
# and its round trip, a pool born in a native trace exported as (0, id), and tuples
# PyTorch never makes refused with exit 3 and no output.
# tests/data/import/make_synthetic.py works out snapshot_pools.json.
# Usage: cli_snapshot_pools.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

snap="$src/tests/data/import/snapshot_pools.json"
check="$src/tests/support/snapshot_check.py"

# from the start state (P, H of the graph's pool (1, 0)), the three scopes route a,
# b and d to pool 1's new segment G and e to H: every allocation where recorded,
# reserved 42 MiB as recorded (a replay without the pools would keep 22 MiB)
expect 0 "4 allocations went to 2 private memory pools" replay "$snap" --against-recorded
for want in "5/5 allocations placed at the recorded offset and in the recorded pool (4 of them recorded in private pools)" \
  "peak       predicted 44040192 B (42.00 MiB)   recorded 44040192 B (42.00 MiB)   difference +0 B" \
  "max |difference| 0 B" "9/9 recorded blocks the same in state, size and offset"; do
  if grep -qF -- "$want" "$tmp/out"; then ok; else bad "against-recorded lacks '$want': $(cat "$tmp/out")"; fi
done
if grep -qF "of the state's segments, 1 (2.00 MiB) belong to private memory pools" "$tmp/err"; then ok; else
  bad "no warning about the start state's pool segment: $(cat "$tmp/err")"
fi

# a snapshot PyTorch 2.6's own allocator wrote (validate/upstream/torch/snapshot_tool.cpp),
# its last 60 entries: the shared pool's two segments are in the start state
expect 0 "of the state's segments, 2 (22.00 MiB) belong to private memory pools" \
  replay "$src/tests/data/import/snapshot_pools_upstream.json" --against-recorded --format=json
if python3 - "$tmp/out" >"$tmp/py.out" 2>&1 <<'PY'; then ok; else bad "upstream snapshot: $(cat "$tmp/py.out")"; fi
import json, sys
r = json.load(open(sys.argv[1]))
r = r.get("against_recorded", r)
p = r["placement"]
assert (p["compared"], p["matched"], p["in_private_pools"], p["first_mismatch"]) == (21, 21, 9, None), p
assert r["reserved"]["max_abs_difference_bytes"] == 0, r["reserved"]
assert r["end_state"]["first_difference"] is None, r["end_state"]
PY

# compare holds the trace in memory (sim/evbuf.h) with its pool events: torch's
# peak there is the replay's and the recording's, 106 MiB
expect 0 "" compare "$src/tests/data/import/snapshot_pools_upstream.json" --format=json
got=$(python3 -c 'import json, sys
print([r["result"]["peak_reserved_bytes"] for r in json.load(open(sys.argv[1]))["rows"] if r["strategy"] == "torch"])' "$tmp/out")
if [ "$got" = "[111149056]" ]; then ok; else bad "compare: torch's peak $got, want [111149056]"; fi

# convert: a pool_begin / pool_end around each run; (1, 0) is pool 2^52 + 1
expect 0 "" convert "$snap" -o "$tmp/pools.jsonl"
got=$(grep -o '"op":"pool_begin","pool":[0-9]*,"t":[0-9]*,"stream":[0-9]*' "$tmp/pools.jsonl" | sed 's/,"t":[0-9]*//' | tr '\n' ' ')
want='"op":"pool_begin","pool":1,"stream":0 "op":"pool_begin","pool":4503599627370497,"stream":1 "op":"pool_begin","pool":1,"stream":0 '
if [ "$got" = "$want" ]; then ok; else bad "convert's pool_begin events: $got, want $want"; fi
if [ "$(grep -c '"op":"pool_end"' "$tmp/pools.jsonl")" = 3 ]; then ok; else bad "convert: not 3 pool_end events"; fi
expect 0 "" replay "$tmp/pools.jsonl" --strategy=torch

# --export-snapshot: each segment's pool as the tuple the import read, each pool
# entry's pool_id; the export reads back to the same replay
expect 0 "" replay "$snap" --strategy=torch --export-snapshot="$tmp/x.pickle"
if python3 "$check" "$tmp/x.pickle" >"$tmp/check.out" 2>&1; then ok; else bad "snapshot_check: $(cat "$tmp/check.out")"; fi
if python3 - "$tmp/x.pickle" >"$tmp/py.out" 2>&1 <<'PY'; then ok; else bad "export: $(cat "$tmp/py.out")"; fi
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
pools = {g["address"]: tuple(g["segment_pool_id"]) for g in s["segments"]}
want = {0x7F7000000000: (0, 0), 0x7F7001400000: (0, 1), 0x7F7002800000: (1, 0)}
assert pools == want, pools
ids = [(e["action"], tuple(e["pool_id"]) if "pool_id" in e else None) for e in s["device_traces"][0]]
assert ids == [("segment_alloc", (0, 1)), ("alloc", (0, 1)), ("alloc", (0, 1)), ("free_requested", (0, 1)),
               ("free_completed", (0, 1)), ("alloc", (1, 0)), ("alloc", None), ("alloc", (0, 1))], ids
PY
expect 0 "as their entries' pool_id say" replay "$tmp/x.pickle" --against-recorded
for want in "5/5 allocations placed at the recorded offset" "difference +0 B"; do
  if grep -qF -- "$want" "$tmp/out"; then ok; else bad "the export's replay lacks '$want': $(cat "$tmp/out")"; fi
done

# a pool born in a native trace: written as (0, id), as graph_pool_handle makes it,
# and read back into the same pool
{
  echo '{"format": "gpusim-trace", "version": 1, "name": "born"}'
  echo '{"op": "alloc", "id": 1, "size": 1048576, "t": 0}'
  echo '{"op": "pool_begin", "pool": 3, "t": 1, "stream": 0}'
  echo '{"op": "alloc", "id": 2, "size": 4194304, "t": 2}'
  echo '{"op": "pool_end", "pool": 3, "t": 3}'
} >"$tmp/born.jsonl"
expect 0 "" replay "$tmp/born.jsonl" --strategy=torch --export-snapshot="$tmp/born.pickle"
if python3 - "$tmp/born.pickle" >"$tmp/py.out" 2>&1 <<'PY'; then ok; else bad "born export: $(cat "$tmp/py.out")"; fi
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
pools = sorted(tuple(g["segment_pool_id"]) for g in s["segments"])
assert pools == [(0, 0), (0, 3)], pools
PY
expect 0 "" convert "$tmp/born.pickle" -o "$tmp/born2.jsonl"
if grep -q '"op":"pool_begin","pool":3,' "$tmp/born2.jsonl"; then ok; else bad "the re-import has no pool 3: $(cat "$tmp/born2.jsonl")"; fi

# tuples PyTorch never makes: exit 3, the file and the record named, nothing written
bad_snap() { # NAME SEGMENT_POOL_ID
  printf '{"segments": [{"address": 0, "total_size": 2097152, "segment_pool_id": %s, "blocks": []}]}\n' "$2" \
    >"$tmp/$1.json"
}
bad_snap bad_both '[1, 2]'
expect 3 'bad_both.json:1: segments[0]: "segment_pool_id" (1, 2) names no pool PyTorch makes' \
  convert "$tmp/bad_both.json" -o "$tmp/both.jsonl"
if [ ! -e "$tmp/both.jsonl" ]; then ok; else bad "a refused snapshot left $tmp/both.jsonl"; fi
bad_snap text '"graph"'
expect 3 '"segment_pool_id" must be a pair of integers' replay "$tmp/text.json"
cli_finish
