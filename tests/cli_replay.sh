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

# design.md §3 "OOM cause": the three causes of the issue's four cases, each with its numbers
ex=$src/traces/examples
"$bin" synth transformer --preset=gpt2-medium --batch=8 -o "$tmp/g2m.jsonl" --quiet || bad "synth gpt2-medium"
# 44.03 GiB at its peak against 23.74 GiB (torch: capacity − the RTX 4090's default context,
# 23.99 GiB − 256 MiB) and 22.24 GiB (TF's limit: capacity − 256 MiB context − 1536 MiB reserve)
expect_any 0 "Cause: capacity - the program needs 23.82 GiB live (23.32 GiB held + this request), 44.03 GiB at its peak had every allocation been served, and may use 23.74 GiB: a larger card" \
  replay "$tmp/g2m.jsonl" --gpu=RTX4090 --strategy=torch
expect_any 0 "Cause: capacity - the program needs 22.17 GiB live (21.67 GiB held + this request), 44.03 GiB at its peak had every allocation been served, and may use 22.24 GiB" \
  replay "$tmp/g2m.jsonl" --gpu=RTX4090 --strategy=growth
# job B may use 13.73 GiB and needs 2.29 GiB; job A holds 13.73 GiB of the 14.75 GiB T4
expect_any 0 "Cause: other_processes - the program needs 1.01 GiB live (1023.81 MiB held + this request), 2.29 GiB at its peak had every allocation been served, and may use 13.73 GiB, but another process holds 13.73 GiB of the 14.75 GiB device" \
  replay "$ex/two-jobs-a.jsonl" "$ex/two-jobs-b.jsonl" --strategy=greedy
# 11.46 GiB needed of 14.76 GiB: 4.05 GiB free in 9 pieces, none of 2.11 GiB
expect_any 0 "Cause: fragmentation - the program needs 11.46 GiB live (9.36 GiB held + this request) and may use 14.76 GiB; it would fit, but of the 14.76 GiB the allocator holds 4.05 GiB is free in 9 pieces, the largest 2.03 GiB, for a 2.11 GiB block. Allocator settings can fix this" \
  replay "$ex/serving-16gb.jsonl" --strategy=growth
expect_any 0 "largest live allocations then: id 9885 (768.00 MiB), id 8803 (683.91 MiB)" \
  replay "$ex/serving-16gb.jsonl" --strategy=growth
# the same in JSON: the keys the other commands read
expect_re 0 '"cause": "other_processes",.*' replay "$ex/two-jobs-a.jsonl" "$ex/two-jobs-b.jsonl" --strategy=greedy --format=json
for key in '"live_requested_bytes": 10045872128' '"usable_bytes": 15843983360' '"other_processes_bytes": 0' \
  '"tag": "tmp:prefill"' '"cause": "fragmentation"'; do
  expect_any 0 "$key" replay "$ex/serving-16gb.jsonl" --strategy=growth --format=json
done

# input as users pipe it: "-", /dev/stdin, a FIFO, <(zcat f.gz), a .gz streamed, a UTF-8 BOM;
# each gives the same replay as the file itself
mlp=$src/traces/examples/mlp_train.json
"$bin" replay "$mlp" --strategy=growth --format=json | grep -v '"path"' >"$tmp/want.json"
same_as_file() { # WHAT: $tmp/got.json against the file's result
  if grep -v '"path"' "$tmp/got.json" | cmp -s - "$tmp/want.json"; then ok; else bad "$1 differs: $(diff <(grep -v '"path"' "$tmp/got.json") "$tmp/want.json" | head -5)"; fi
}
"$bin" replay - --strategy=growth --format=json <"$mlp" >"$tmp/got.json" && same_as_file "replay -"
"$bin" replay /dev/stdin --strategy=growth --format=json <"$mlp" >"$tmp/got.json" && same_as_file "replay /dev/stdin"
gzip -c "$mlp" >"$tmp/mlp.json.gz"
"$bin" replay "$tmp/mlp.json.gz" --strategy=growth --format=json >"$tmp/got.json" && same_as_file "a .gz"
"$bin" replay - --strategy=growth --format=json <"$tmp/mlp.json.gz" >"$tmp/got.json" && same_as_file "a .gz on stdin"
"$bin" replay <(zcat "$tmp/mlp.json.gz") --strategy=growth --format=json >"$tmp/got.json" && same_as_file "<(zcat f.gz)"
mkfifo "$tmp/in.fifo"
(cat "$mlp" >"$tmp/in.fifo" &)
"$bin" replay "$tmp/in.fifo" --strategy=growth --format=json >"$tmp/got.json" && same_as_file "a FIFO"
{ printf '\xef\xbb\xbf'; cat "$mlp"; } >"$tmp/bom.json"
"$bin" replay "$tmp/bom.json" --strategy=growth --format=json >"$tmp/got.json" && same_as_file "a UTF-8 BOM"
# two concatenated gzip members are one stream
{ head -c 2000 "$src/traces/examples/two-jobs-a.jsonl" | sed '$d' | gzip -c; tail -n +"$(($(head -c 2000 "$src/traces/examples/two-jobs-a.jsonl" | sed '$d' | wc -l) + 1))" "$src/traces/examples/two-jobs-a.jsonl" | gzip -c; } >"$tmp/two.jsonl.gz"
"$bin" replay "$src/traces/examples/two-jobs-a.jsonl" --strategy=torch --format=json | grep -v '"path"' >"$tmp/want.json"
"$bin" replay "$tmp/two.jsonl.gz" --strategy=torch --format=json >"$tmp/got.json" && same_as_file "two gzip members"
# a file that is not a trace is rejected on its first 64 KiB: a 2 GB sparse file at once
truncate -s 2G "$tmp/sparse.bin" 2>/dev/null && {
  start=$(date +%s)
  expect 3 "not a format gpusim reads" replay "$tmp/sparse.bin"
  [ $(($(date +%s) - start)) -le 2 ] && ok || bad "the sparse file took $(($(date +%s) - start)) s"
  rm -f "$tmp/sparse.bin"
}
expect 3 "truncated gzip file" replay <(head -c 300 "$tmp/mlp.json.gz")

# a key given twice in an event is an error naming its line
bad_trace dupkey.jsonl "$H
{\"op\":\"alloc\",\"id\":1,\"size\":100,\"size\":200}" 'dupkey.jsonl:2: duplicate key "size" in a alloc event'
# invalid UTF-8 in a tag: escaped as U+FFFD in JSON (which stays valid) and in the report
printf '%s\n{"op":"alloc","id":1,"size":100,"tag":"bad\xff\xfe tag \xc3\xa9"}\n' "$H" >"$tmp/utf8.jsonl"
expect_any 0 '"tag": "bad\ufffd\ufffd tag é"' replay "$tmp/utf8.jsonl" --strategy=ideal --capacity=50 --format=json
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" 2>/dev/null; then ok; else bad "invalid UTF-8: the JSON does not parse"; fi
"$bin" replay "$tmp/utf8.jsonl" --strategy=ideal --capacity=50 --report="$tmp/utf8.html" >/dev/null
if iconv -f UTF-8 -t UTF-8 "$tmp/utf8.html" >/dev/null 2>&1; then ok; else bad "invalid UTF-8: the report is not UTF-8"; fi
# The recorded device's compute capability decides TensorFlow's reserve: a V100 (7.0)
# leaves 1050 MiB to the system, an unknown one 1536 MiB (docs/allocators.md §1.9).
# HTA excerpt: totalGlobalMem 34089730048 B, computeMajor 7 -> limit
# 34089730048 - 1050 * 1048576 = 34089730048 - 1101004800 = 32988725248 B.
hta=$src/tests/data/import/hta_excerpt.pt.trace.json.gz
expect 0 "" replay "$hta" --strategy=greedy --format=json
if grep -q '"limit_bytes": 32988725248' "$tmp/out"; then ok; else bad "V100 limit from the Kineto trace's computeMajor: $(grep '"device"' "$tmp/out")"; fi
# Kineto's Bytes are the real allocator's block sizes: under torch (whose own allocated
# would round them again and add unsplit remainders) the allocated curve is matched by
# the replay's live requested bytes, to 0 B at every event
expect 0 "" replay "$hta" --against-recorded --strategy=torch
if grep -q "max |difference| 0 B" "$tmp/out" && grep -q "live requested bytes" "$tmp/out"; then ok; else
  bad "against-recorded under torch on the HTA excerpt: $(grep -A3 '^allocated' "$tmp/out")"; fi
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

# a pipe read more than once (the what-if after a torch OOM, --report) is spooled to a
# temporary file that is removed at the end; messages keep the name "-"
ser=$src/traces/examples/serving-16gb.jsonl
spool_dir=$tmp/spool
mkdir -p "$spool_dir"
TMPDIR=$spool_dir "$bin" replay - --memory-fraction=0.8 <"$ser" >"$tmp/out" 2>"$tmp/err"
if grep -q "what if --alloc-conf=expandable_segments:True: the trace completes" "$tmp/out" &&
  grep -q "of -: 2.11 GiB requested" "$tmp/out"; then ok; else bad "the what-if from a pipe: $(cat "$tmp/out" "$tmp/err" | head -c 600)"; fi
TMPDIR=$spool_dir "$bin" replay - --strategy=growth --report="$tmp/pipe.html" <"$ser" >/dev/null 2>"$tmp/err"
if grep -q "Memory map at the OOM (event 19446)" "$tmp/pipe.html"; then ok; else bad "--report from a pipe: $(cat "$tmp/err")"; fi
if [ -z "$(ls -A "$spool_dir")" ]; then ok; else bad "the spool was left behind: $(ls "$spool_dir")"; fi

expect 2 "--x: expected event or time, not 'foo'" replay "$src/traces/examples/mlp_train.json" --x=foo

cli_finish
