#!/usr/bin/env bash
# CLI tests of the trace v1 pool events (pool_begin, pool_end, pool_release,
# graph_replay; traces/FORMAT.md): the engine's protocol errors under every strategy
# and in every container (exit 3, the file, the line and the problem, no result file),
# a bad pool field, convert's byte-for-byte round trip through every container, and a
# strategy without private pools replaying a pool's allocations in its default pool and
# saying so in the text header and in the JSON result.
# Usage: cli_pool_events.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

HEAD='{"format":"gpusim-trace","version":1,"name":"pools","time_unit":"ns"}'
# opts STRATEGY: the options it needs here (limit: its --limit)
opts() { if [ "$1" = limit ]; then echo --limit=1GiB; fi; }
# trace FILE LINE...: a JSONL trace of the header and the event lines given
trace() {
  local f=$1
  shift
  printf '%s\n' "$HEAD" "$@" >"$f"
}

# protocol NAME MESSAGE LINE EVENT...: under every strategy, the JSONL trace of the
# events and its .gtrace (which keeps the lines) exit 3 naming FILE:LINE and MESSAGE,
# and --output leaves no file
protocol() {
  local name=$1 msg=$2 line=$3
  shift 3
  trace "$tmp/$name.jsonl" "$@"
  expect 0 "" convert "$tmp/$name.jsonl" -o "$tmp/$name.gtrace"
  local s f
  for s in $(cli_strategies); do
    for f in "$tmp/$name.jsonl" "$tmp/$name.gtrace"; do
      rm -f "$tmp/result.json"
      # shellcheck disable=SC2046 # opts gives zero or one word
      expect 3 "$f:$line: $msg" replay "$f" --strategy="$s" $(opts "$s") --format=json --output="$tmp/result.json"
      if [ -e "$tmp/result.json" ]; then bad "$name ($s): a result file after the error"; else ok; fi
    done
  done
}

A='{"op":"alloc","id":1,"size":1048576,"t":0,"stream":1}'
protocol begin_routed "pool_begin of pool 3, which is already being allocated to (pool_end it first)" 4 \
  "$A" '{"op":"pool_begin","pool":3,"t":1,"stream":1}' '{"op":"pool_begin","pool":3,"t":2,"stream":1}'
protocol begin_released "pool_begin of pool 3 after its last use was released" 6 \
  '{"op":"pool_begin","pool":3,"stream":1}' '{"op":"pool_end","pool":3}' "$A" \
  '{"op":"pool_release","pool":3}' '{"op":"pool_begin","pool":3,"stream":1}'
protocol options "pool_begin of pool 4 with options (use_on_oom, no_split) other than its first pool_begin gave" 4 \
  '{"op":"pool_begin","pool":4,"use_on_oom":true}' '{"op":"pool_end","pool":4}' \
  '{"op":"pool_begin","pool":4,"no_split":true}'
protocol end_unrouted "pool_end of pool 3, which is not being allocated to (no pool_begin before it)" 2 \
  '{"op":"pool_end","pool":3}'
protocol end_twice "pool_end of pool 3, which is not being allocated to" 4 \
  '{"op":"pool_begin","pool":3,"stream":1}' '{"op":"pool_end","pool":3}' '{"op":"pool_end","pool":3}'
protocol release_never "pool_release of pool 5, which has no use left to release (never begun)" 2 \
  '{"op":"pool_release","pool":5}'
protocol release_twice "pool_release of pool 5, which has no use left to release (every pool_begin already released)" 5 \
  '{"op":"pool_begin","pool":5}' '{"op":"pool_end","pool":5}' '{"op":"pool_release","pool":5}' \
  '{"op":"pool_release","pool":5}'
protocol release_routed "pool_release of pool 5 while it is still being allocated to (pool_end it first)" 3 \
  '{"op":"pool_begin","pool":5,"stream":2}' '{"op":"pool_release","pool":5}'
protocol replay_unknown "graph_replay of pool 9, which no pool_begin made" 3 \
  "$A" '{"op":"graph_replay","pool":9,"name":"bs=1"}'
# pools are per process: another process's pool 3 is not this one's
protocol per_process "pool_end of pool 3, which is not being allocated to" 3 \
  '{"op":"pool_begin","pool":3,"stream":1,"proc":"a"}' '{"op":"pool_end","pool":3,"proc":"b"}'

# what the protocol allows: a second use of a pool after pool_end (a graph captured
# into another's pool), its release while one use is left and routed, a replay after
# release, a later begin without options
trace "$tmp/allowed.jsonl" "$A" '{"op":"pool_begin","pool":3,"t":1,"stream":1,"no_split":true}' \
  '{"op":"pool_end","pool":3,"t":2}' '{"op":"pool_begin","pool":3,"t":3,"stream":1}' \
  '{"op":"pool_release","pool":3,"t":4}' '{"op":"graph_replay","pool":3,"t":5}' '{"op":"pool_end","pool":3,"t":6}' \
  '{"op":"pool_release","pool":3,"t":7}' '{"op":"graph_replay","pool":3,"t":8}' '{"op":"free","id":1,"t":9}'
for s in $(cli_strategies); do
  # shellcheck disable=SC2046
  expect 0 "" replay "$tmp/allowed.jsonl" --strategy="$s" $(opts "$s")
done

# a bad pool field is the reader's error, with the line
trace "$tmp/field.jsonl" "$A" '{"op":"pool_begin","pool":0,"stream":1}'
expect 3 "field.jsonl:3: \"pool\" must be at least 1 (0 is the default pool, never a private one)" replay "$tmp/field.jsonl"
trace "$tmp/field.jsonl" '{"op":"pool_begin","pool":2,"capture":"yes"}'
expect 3 "field.jsonl:2: \"capture\" must be true or false, not a string" replay "$tmp/field.jsonl"
trace "$tmp/field.jsonl" '{"op":"pool_end","pool":2,"stream":1}'
expect 3 "field.jsonl:2: unknown key \"stream\" in a pool_end event" convert "$tmp/field.jsonl" -o "$tmp/field.gtrace"
if [ -e "$tmp/field.gtrace" ]; then bad "convert left a half-written file"; else ok; fi

# convert: every pool op and option through JSONL -> .gtrace -> JSON -> JSONL, byte for byte
trace "$tmp/all.jsonl" "$A" \
  '{"op":"pool_begin","pool":3,"t":5,"stream":1}' \
  '{"op":"alloc","id":2,"size":2048,"t":6,"stream":1,"tag":"graph bs=8"}' \
  '{"op":"pool_end","pool":3,"t":7}' \
  '{"op":"graph_replay","pool":3,"t":8,"name":"bs=8"}' \
  '{"op":"graph_replay","pool":3,"t":9,"name":""}' \
  '{"op":"graph_replay","pool":3,"t":9}' \
  '{"op":"pool_begin","pool":200,"t":10,"use_on_oom":true,"no_split":true,"proc":"serve"}' \
  '{"op":"pool_end","pool":200,"t":11,"proc":"serve"}' \
  '{"op":"pool_begin","pool":9007199254740992,"t":12,"stream":4294967295,"capture":false}' \
  '{"op":"pool_end","pool":9007199254740992,"t":13}' \
  '{"op":"pool_begin","pool":4,"t":13,"capture":true}' \
  '{"op":"pool_end","pool":4,"t":13}' \
  '{"op":"pool_release","pool":4,"t":14}' \
  '{"op":"free","id":2,"t":20}' '{"op":"free","id":1,"t":21}'
expect 0 "" convert "$tmp/all.jsonl" -o "$tmp/all.gtrace"
expect 0 "" convert "$tmp/all.gtrace" -o "$tmp/all.json"
expect 0 "" convert "$tmp/all.json" -o "$tmp/again.jsonl"
if cmp -s "$tmp/all.jsonl" "$tmp/again.jsonl"; then ok; else bad "pool events through .gtrace and JSON: $(diff "$tmp/all.jsonl" "$tmp/again.jsonl")"; fi
expect 0 "" convert "$tmp/all.jsonl" --to=gtrace -o "$tmp/again.gtrace"
if cmp -s "$tmp/all.gtrace" "$tmp/again.gtrace"; then ok; else bad "converting to .gtrace twice gave other bytes"; fi

# a trace without pool events is the same bytes as before them: fuzz_gtrace's seeds were
# written from the example and golden traces by a gpusim without pool events
n_same=0
for f in "$src"/tests/fuzz/seeds/fuzz_gtrace/*.gtrace; do
  b=$(basename "$f" .gtrace)
  for t in "$src/traces/examples/$b" "$src/tests/golden/$b"; do
    [ -f "$t" ] || continue
    expect 0 "" convert "$t" -o "$tmp/old.gtrace"
    if cmp -s "$tmp/old.gtrace" "$f"; then n_same=$((n_same + 1)); else bad "$b: other bytes than before the pool events"; fi
  done
done
if [ "$n_same" -ge 8 ]; then ok; else bad "only $n_same seeds compared"; fi

# a strategy without private pools: the pool's allocations go where any other would
# (the same peaks as the trace without its pool events), and the header and the JSON
# result say the pool events were not modelled, and why
grep -v '"op":"pool_\|"op":"graph_replay"' "$tmp/all.jsonl" >"$tmp/nopools.jsonl"
n_pool=$(grep -c '"op":"pool_\|"op":"graph_replay"' "$tmp/all.jsonl")
for s in async greedy growth raw ideal planned; do
  expect 0 "" replay "$tmp/nopools.jsonl" --strategy="$s" --format=json
  want=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["result"]; print(r["peak_reserved_bytes"], r["final_reserved_bytes"], "pool_events_ignored" in r)' "$tmp/out")
  expect 0 "" replay "$tmp/all.gtrace" --strategy="$s" --format=json
  got=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["result"]; print(r["peak_reserved_bytes"], r["final_reserved_bytes"], r["pool_events_ignored"], r["pool_events_note"])' "$tmp/out")
  case "$got" in
    "${want% False} $n_pool $s: "*"pools' allocations were "*) ok ;;
    *) bad "$s: result $got, want the peaks ${want% False} and $n_pool pool events ignored" ;;
  esac
  expect_any 0 "  pools   $s: " replay "$tmp/all.gtrace" --strategy="$s"
done
expect_any 0 "  pools   async: private pools are not modelled (cudaMallocAsync captures allocations as CUDA graph memory nodes, which gpusim does not model); the pools' allocations were replayed in the default pool ($n_pool pool events)" \
  replay "$tmp/all.jsonl" --strategy=async
expect_any 0 "  pools   greedy: TensorFlow's BFC allocator has no private pools" replay "$tmp/all.json" --strategy=greedy
# compare: one line per reason, the strategies that share it together
expect_any 0 "  pools   greedy, growth: TensorFlow's BFC allocator has no private pools" compare "$tmp/all.jsonl" \
  --strategies=greedy,growth,async
expect 0 "" compare "$tmp/all.jsonl" --strategies=greedy,async --format=json
if python3 -c 'import json, sys; rows = json.load(open(sys.argv[1]))["rows"]; sys.exit(0 if all(r["result"]["pool_events_ignored"] == int(sys.argv[2]) for r in rows) else 1)' "$tmp/out" "$n_pool"; then ok; else bad "compare --format=json: pool_events_ignored"; fi
# plan and tune too, for the allocators they try that have no pools
expect_any 0 "  pools   async: private pools are not modelled" plan "$tmp/all.jsonl"
expect_any 0 "  pools   greedy, growth, limit: TensorFlow's BFC allocator has no private pools" tune "$tmp/all.jsonl" \
  --framework=tf
expect 0 "" tune "$tmp/all.jsonl" --framework=torch
if grep -q "  pools   torch" "$tmp/out"; then bad "tune: a pools line for torch, which models them"; else ok; fi
# the HTML report says it too
expect 0 "" replay "$tmp/all.jsonl" --strategy=async --report="$tmp/r.html"
if grep -qF '<p class="meta">pools: async: private pools are not modelled' "$tmp/r.html"; then ok; else bad "no pools line in the HTML report"; fi
# torch models the pools: no such line or key
expect 0 "" replay "$tmp/all.jsonl" --strategy=torch --format=json
if grep -q '"pool_events_ignored"' "$tmp/out"; then bad "torch: pool_events_ignored"; else ok; fi
# a trace without pool events has no such line or key
expect 0 "" replay "$tmp/nopools.jsonl" --strategy=async
if grep -q "  pools " "$tmp/out"; then bad "a pools line without pool events"; else ok; fi

cli_finish
