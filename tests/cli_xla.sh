#!/usr/bin/env bash
# CLI tests of --from=xla (traces/import_xla.h) and of the alloc's "share" it writes: the
# committed XLA:CPU dumps replay under the planner to XLA's own heap size, their
# shares survive conversion, a share of nothing is an error under planned, and a dump
# that is cut, empty of what gpusim needs, or not a dump at all exits 3 with a message
# naming the file and leaves no output. Usage: cli_xla.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
dumps=$src/tests/data/import/xla
plan=(--strategy=planned --planner=xla --alignment=64)

# detected by content, whatever the name; the heap is XLA's
for f in "$dumps"/*.hlo.pb; do
  cp "$f" "$tmp/dump"
  expect_any 0 '"peak_difference_bytes": 0}' replay "$tmp/dump" "${plan[@]}" --against-recorded --format=json
done
expect_any 0 "format    xla, 20 events" replay "$dumps/remat.hlo.pb" --against-recorded "${plan[@]}"
expect 0 "--alignment=64" convert "$dumps/remat.hlo.pb" -o "$tmp/remat.jsonl"
grep -qF '"tag":"wrapped_tanh (temp, buffer 68)"' "$tmp/remat.jsonl" && ok || bad "remat.jsonl has no tagged alloc"
expect 0 "" replay "$tmp/remat.jsonl" "${plan[@]}"

# every SHARE_WITH is an alloc whose "share" names the shared buffer; the converted
# trace keeps them through .gtrace and back byte for byte, and replays to XLA's heap
# (scan_loop: 4 shares, heap 32,836 B) from the text and the binary alike
expect 0 "" convert "$dumps/scan_loop.hlo.pb" -o "$tmp/scan.jsonl"
[ "$(grep -c '"share":' "$tmp/scan.jsonl")" = 4 ] && ok || bad "scan.jsonl does not have 4 shares"
grep -qF '{"op":"alloc","id":2,"size":4,"t":1,"share":1,"tag":"arg_tuple.3 (temp, buffer 48, shares 38)"}' \
  "$tmp/scan.jsonl" && ok || bad "scan.jsonl: arg_tuple.3 does not share id 1: $(sed -n 3p "$tmp/scan.jsonl")"
expect 0 "" convert "$tmp/scan.jsonl" -o "$tmp/scan.gtrace"
expect 0 "" convert "$tmp/scan.gtrace" -o "$tmp/scan2.jsonl"
cmp -s "$tmp/scan.jsonl" "$tmp/scan2.jsonl" && ok || bad "scan.jsonl -> .gtrace -> .jsonl changed the bytes"
for f in scan.jsonl scan.gtrace; do
  expect_any 0 '"heap_size_bytes": 32836' replay "$tmp/$f" "${plan[@]}" --paranoid --format=json
done
# the other strategies serve a sharing alloc like any other
expect 0 "" replay "$tmp/scan.jsonl" --strategy=growth --paranoid

# a share of no earlier allocation: planned (which reads the whole trace) names the
# line, exit 3, no output; others do not look it up; share belongs to alloc only
{
  echo '{"format":"gpusim-trace","version":1}'
  echo '{"op":"alloc","id":1,"size":64}'
  echo '{"op":"alloc","id":2,"size":64,"share":7}'
} >"$tmp/badshare.jsonl"
rm -f "$tmp/result.json"
expect 3 "badshare.jsonl:3: event 2: \"share\": 7 names no earlier allocation of this process" \
  replay "$tmp/badshare.jsonl" --strategy=planned --output="$tmp/result.json"
[ ! -e "$tmp/result.json" ] && ok || bad "a bad share left an output file"
expect 0 "" replay "$tmp/badshare.jsonl" --strategy=torch
printf '%s\n' '{"format":"gpusim-trace","version":1}' '{"op":"alloc","id":1,"size":64}' \
  '{"op":"free","id":1,"share":1}' >"$tmp/freeshare.jsonl"
expect 3 'freeshare.jsonl:3: unknown key "share" in a free event' replay "$tmp/freeshare.jsonl"

# bad_dump NAME FROM MESSAGE: $tmp/NAME exits 3 with MESSAGE and the file's name, no output left
bad_dump() {
  local name=$1 from=$2 text=$3
  rm -f "$tmp/result.json"
  expect 3 "$text" replay "$tmp/$name" --from="$from" "${plan[@]}" --format=json --output="$tmp/result.json"
  [ ! -e "$tmp/result.json" ] || bad "$name left an output file"
  grep -qF -- "$tmp/$name" "$tmp/err" || bad "$name: the message does not name the file: $(cat "$tmp/err")"
}
size=$(wc -c <"$dumps/mlp_train.hlo.pb")
head -c $((size - 7)) "$dumps/mlp_train.hlo.pb" >"$tmp/cut.hlo.pb"
bad_dump cut.hlo.pb auto "truncated or malformed protobuf"
bad_dump cut.hlo.pb xla "truncated or malformed protobuf"
printf '\x0a\x08\x0a\x03jit\x12\x01m' >"$tmp/module_only.hlo.pb"
bad_dump module_only.hlo.pb auto "no buffer_assignment in this HloProto"
cp "$src/tests/data/import/native_small.json" "$tmp/native.json"
bad_dump native.json xla "not an XLA dump: --from=xla reads the binary HloProto"
cp "$src/tests/data/import/snapshot_small.pickle" "$tmp/snapshot.pickle"
bad_dump snapshot.pickle xla "XLA dump byte 6: truncated or malformed protobuf in the HloProto"
expect 2 "--device=3: no such heap simulator trace (the dump has: 0 (10 events))" \
  replay "$dumps/mlp_train.hlo.pb" --device=3 "${plan[@]}"

cli_finish
