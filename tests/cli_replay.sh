#!/usr/bin/env bash
# CLI tests: exit codes and messages of `gpusim replay`, `convert`, `gpus`,
# `strategies`, for good input and for each kind of bad trace (empty, truncated, no
# format or version, unknown op, missing or bad fields, ...), and that a failed run
# leaves no output file behind. Usage: cli_replay.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

# bad_trace NAME TRACE_CONTENT "message" : the trace is rejected with exit 3, the message
# names the file, and --output leaves no file behind.
bad_trace() {
  local name=$1 content=$2 text=$3
  printf '%s' "$content" >"$tmp/$name"
  rm -f "$tmp/result.json"
  expect 3 "$text" replay "$tmp/$name" --strategy=ideal --format=json --output="$tmp/result.json"
  if [ -e "$tmp/result.json" ] || ls "$tmp"/result.json.tmp.* >/dev/null 2>&1; then
    bad "$name left an output file"
  fi
  if ! grep -qF -- "$tmp/$name" "$tmp/err"; then
    bad "$name: the message does not name the file: $(cat "$tmp/err")"
  fi
}

H='{"format":"gpusim-trace","version":1}'
bad_trace empty.jsonl "" "empty file"
bad_trace truncated.json '{"format":"gpusim-trace","version":1,"events":[{"op":"alloc","id":1,"size":' "not valid JSON"
bad_trace notobject.jsonl "$H
[1,2,3]" "notobject.jsonl:2: an event must be a JSON object"
bad_trace noformat.jsonl '{"version":1}' 'missing "format"'
bad_trace noversion.jsonl '{"format":"gpusim-trace"}' 'missing "version"'
bad_trace version2.jsonl '{"format":"gpusim-trace","version":2}' 'unsupported "version"'
bad_trace unknownop.jsonl "$H
{\"op\":\"realloc\",\"id\":1}" 'unknownop.jsonl:2: unknown op "realloc"'
bad_trace noid.jsonl "$H
{\"op\":\"alloc\",\"size\":5}" 'noid.jsonl:2: missing "id"'
bad_trace nosize.jsonl "$H
{\"op\":\"alloc\",\"id\":5}" 'nosize.jsonl:2: missing "size"'
bad_trace negsize.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":-5}" '"size" -5 is negative'
bad_trace fracsize.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":1.5}" '"size" 1.5 is not an integer'
bad_trace hugesize.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":9007199254740993}" '"size" 9007199254740993 exceeds 2^53'
bad_trace backwards.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":5,\"t\":10}
{\"op\":\"free\",\"id\":1,\"t\":9}" 'backwards.jsonl:3: t goes backwards'
bad_trace readybefore.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":5,\"t\":10}
{\"op\":\"free\",\"id\":1,\"t\":12,\"ready_t\":11}" 'readybefore.jsonl:3: ready_t 11 ns is before t 12 ns'
bad_trace unknownid.jsonl "$H
{\"op\":\"free\",\"id\":77}" 'unknownid.jsonl:2: free of id 77 that is not allocated'
bad_trace doublefree.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":5}
{\"op\":\"free\",\"id\":1}
{\"op\":\"free\",\"id\":1}" 'doublefree.jsonl:4: free of id 1 that is not allocated'
bad_trace livealloc.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":5}
{\"op\":\"alloc\",\"id\":1,\"size\":5}" 'livealloc.jsonl:3: alloc of id 1 that is still allocated'
bad_trace stringsize.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":\"5\"}" '"size" must be an integer, not a string'
bad_trace badkey.jsonl "$H
{\"op\":\"free\",\"id\":1,\"size\":5}" 'unknown key "size" in a free event'
# a 10 MB single line: rejected cleanly (here: a huge string where a number belongs)
{ echo "$H"; printf '{"op":"alloc","id":1,"size":"'; head -c 10000000 /dev/zero | tr '\0' 'x'; printf '"}\n'; } >"$tmp/longline.jsonl"
expect 3 'longline.jsonl:2: "size" must be an integer' replay "$tmp/longline.jsonl" --strategy=ideal
# binary garbage
head -c 4096 /dev/urandom >"$tmp/garbage.bin"
printf '\x00\x01\x02' >>"$tmp/garbage.bin"
expect 3 "garbage.bin" replay "$tmp/garbage.bin" --strategy=ideal
# an empty container parsed first (regression: memcpy from a NULL stack under UBSan)
printf '{"format":"gpusim-trace","version":1,"meta":{},"events":[]}' >"$tmp/emptyevents.json"
expect 0 "" convert "$tmp/emptyevents.json" -o "$tmp/emptyevents.jsonl"
expect 0 "" replay "$tmp/emptyevents.jsonl" --strategy=torch
# a native trace without "format" gets the native reader's message
printf '{"version":1,"events":[]}' >"$tmp/noformat2.json"
expect 3 'missing "format"' replay "$tmp/noformat2.json"
# I/O errors are exit 2
expect 2 "cannot open" replay "$tmp/does-not-exist.json" --strategy=ideal
expect 2 "is a directory" replay "$tmp" --strategy=ideal

# usage errors are exit 2 and say what was expected
ok="$src/tests/golden/deferred_tie.json"
expect 2 "unknown option '--frobnicate'" replay "$ok" --frobnicate
expect 2 "unknown strategy 'nope'" replay "$ok" --strategy=nope
expect 2 "--capacity: unknown unit in size '12 parsecs'" replay "$ok" --capacity="12 parsecs"
expect 2 "--capacity: unknown unit in size '12XB'" replay "$ok" --capacity=12XB
expect 2 "--format: expected text or json" replay "$ok" --format=yaml
expect 2 "--on-oom: expected stop or skip" replay "$ok" --on-oom=retry
expect 2 "unknown GPU 'Z80'" replay "$ok" --gpu=Z80
expect 2 "--capacity: 'lots' is not a size" replay "$ok" --capacity=lots
expect 2 "no trace given" replay
expect 2 "needs a value" replay "$ok" --strategy
expect 2 "unknown command 'frob'" frob
expect 2 "usage: gpusim" 

# good runs
expect 0 "" --version
expect 0 "" --help
expect 0 "" replay --help
expect 0 "" gpus
expect 0 "" gpus --format=json
expect 0 "" strategies
if ! "$bin" gpus | grep -q "H200"; then echo "FAIL: gpus does not list the H200"; fails=$((fails + 1)); fi
if ! "$bin" strategies | grep -q "^ideal"; then echo "FAIL: strategies does not list ideal"; fails=$((fails + 1)); fi

# the same command twice gives byte-identical output
"$bin" replay "$ok" --strategy=raw --format=json >"$tmp/a.json"
"$bin" replay "$ok" --strategy=raw --format=json >"$tmp/b.json"
if ! cmp -s "$tmp/a.json" "$tmp/b.json"; then echo "FAIL: replay output differs between two runs"; fails=$((fails + 1)); fi
# --output writes the file atomically and prints nothing
expect 0 "" replay "$ok" --strategy=raw --format=json --output="$tmp/c.json"
if ! cmp -s "$tmp/a.json" "$tmp/c.json"; then echo "FAIL: --output differs from stdout"; fails=$((fails + 1)); fi
# the timeline CSV has a header and at most --timeline-rows rows
expect 0 "" replay "$ok" --strategy=ideal --timeline="$tmp/tl.csv" --timeline-rows=3
if [ "$(head -1 "$tmp/tl.csv")" != "t,event,requested,allocated,reserved,fragmentation" ] || [ "$(wc -l <"$tmp/tl.csv")" -gt 4 ]; then
  echo "FAIL: timeline CSV: $(cat "$tmp/tl.csv")"; fails=$((fails + 1))
fi
# the per-bucket maximum survives downsampling: the 600-byte peak must be there
if ! grep -q ",600,600,600," "$tmp/tl.csv"; then echo "FAIL: timeline lost the peak: $(cat "$tmp/tl.csv")"; fails=$((fails + 1)); fi

# convert: JSON -> JSONL -> JSON round trip gives identical results and files
expect 0 "" convert "$ok" -o "$tmp/x.jsonl"
expect 0 "" convert "$tmp/x.jsonl" -o "$tmp/y.json"
expect 0 "" convert "$tmp/y.json" -o "$tmp/z.jsonl"
if ! cmp -s "$tmp/x.jsonl" "$tmp/z.jsonl"; then echo "FAIL: convert round trip differs"; fails=$((fails + 1)); fi
"$bin" replay "$tmp/z.jsonl" --strategy=raw --format=json | sed 's|"path": "[^"]*"|"path": ""|' >"$tmp/d.json"
sed 's|"path": "[^"]*"|"path": ""|' "$tmp/a.json" >"$tmp/a2.json"
if ! cmp -s "$tmp/a2.json" "$tmp/d.json"; then echo "FAIL: replay of converted trace differs"; diff "$tmp/a2.json" "$tmp/d.json" | head; fails=$((fails + 1)); fi
# a convert of a bad trace leaves no output
printf '%s\n{"op":"free","id":1,"t":"x"}\n' "$H" >"$tmp/badconv.jsonl"
expect 3 "badconv.jsonl:2" convert "$tmp/badconv.jsonl" -o "$tmp/never.jsonl"
if ls "$tmp"/never.jsonl* >/dev/null 2>&1; then echo "FAIL: convert left a file"; fails=$((fails + 1)); fi
# an unwritable output path is an I/O error (exit 2), not a crash
expect 2 "cannot write" replay "$ok" --strategy=ideal --output=/nonexistent-dir/out.json

# --output to a pipe writes into the pipe and never renames a file over it
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fromfifo" &
reader=$!
expect 0 "" replay "$ok" --strategy=ideal --format=json --output="$tmp/fifo"
wait "$reader"
if [ ! -p "$tmp/fifo" ] || ! grep -q '"peak_requested_bytes": 600' "$tmp/fromfifo"; then
  echo "FAIL: --output to a FIFO"; fails=$((fails + 1))
fi

# The recorded device's compute capability decides TensorFlow's reserve: a V100 (7.0)
# leaves 1050 MiB to the system, an unknown one 1536 MiB (docs/allocators.md §1.9).
# HTA excerpt: totalGlobalMem 34089730048 B, computeMajor 7 -> limit
# 34089730048 - 1050 * 1048576 = 34089730048 - 1101004800 = 32988725248 B.
hta=$src/tests/data/import/hta_excerpt.pt.trace.json.gz
expect 0 "" replay "$hta" --strategy=greedy --format=json
if grep -q '"limit_bytes": 32988725248' "$tmp/out"; then ok; else bad "V100 limit from the Kineto trace's computeMajor: $(grep '"device"' "$tmp/out")"; fi
# ... and the capability survives convert, to JSONL and to .gtrace
expect 0 "" convert "$hta" -o "$tmp/hta.jsonl"
if head -1 "$tmp/hta.jsonl" | grep -qF '"compute_capability":"7.0"'; then ok; else bad "convert dropped the compute capability"; fi
expect 0 "" convert "$tmp/hta.jsonl" -o "$tmp/hta.gtrace"
expect 0 "" replay "$tmp/hta.gtrace" --strategy=greedy --format=json
if grep -q '"limit_bytes": 32988725248' "$tmp/out"; then ok; else bad "the .gtrace lost the compute capability"; fi
# without it (the same card by capacity alone) the unknown-capability reserve applies:
# 34089730048 - 1536 * 1048576 = 32479117312 B
printf '%s\n' '{"format":"gpusim-trace","version":1,"device":{"capacity_bytes":34089730048}}' \
  '{"op":"alloc","id":1,"size":1024}' >"$tmp/nocc.jsonl"
expect 0 "" replay "$tmp/nocc.jsonl" --strategy=greedy --format=json
if grep -q '"limit_bytes": 32479117312' "$tmp/out"; then ok; else bad "unknown capability reserve"; fi
bad_trace badcc.jsonl '{"format":"gpusim-trace","version":1,"device":{"capacity_bytes":1024,"compute_capability":"seven"}}' '"compute_capability" must be "X.Y"'

cli_finish
