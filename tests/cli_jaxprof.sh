#!/usr/bin/env bash
# CLI tests of --from=jax-memory (traces/import_jaxprof.h): the committed JAX device
# memory profiles are detected by content (gzip, then a pprof inside), replay as a
# start state under JAX's BFC preset and others, --device picks one device of the
# sharded one; a profile that is cut, not a pprof, or a pprof without space/bytes
# exits 3 naming the file and the problem, and leaves no output.
# Usage: cli_jaxprof.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
profs=$src/tests/data/import/jax

# detected by content, whatever the name; every buffer live at the start
cp "$profs/mlp_adam.prof" "$tmp/memory"
expect_any 0 "peak requested                         1.16 MiB  (1216636 B)" replay "$tmp/memory" --strategy=ideal
expect 0 "its 19 live buffers (1216636 B) on device 0 are allocations at the start" \
  replay "$tmp/memory" --strategy=greedy --bfc-preset=jax --gpu=A100-40GB
grep -qF "allocator limit 29.69 GiB (JAX preset: 0.75 x 39.59 GiB" "$tmp/out" && ok || bad "no JAX preset line"
for s in torch raw planned; do
  expect_any 0 "peak requested                       608.00 KiB  (622592 B)" \
    replay "$profs/transformer_acts.prof" --strategy=$s
done
expect 0 "" convert "$profs/mlp_adam.prof" -o "$tmp/mlp.jsonl"
grep -qF '"jax_memory":{"device":0,"devices":1,"buffers":19,"bytes":1216636' "$tmp/mlp.jsonl" && ok ||
  bad "mlp.jsonl: no jax_memory meta"
grep -qF '"size":4,"t":0,"tag":"buffer cpu:0 mlp_adam:14 < <module>:' "$tmp/mlp.jsonl" && ok ||
  bad "mlp.jsonl: the step count's tag"

# the sharded profile: device 2 (most bytes) by default, another by --device
expect 0 "device 2 imported (--device=N picks another)" replay "$profs/sharded4.prof" --strategy=ideal
grep -qF "(135584 B)" "$tmp/out" && ok || bad "sharded4: device 2 is not 135584 B"
expect_any 0 "peak requested                       128.50 KiB  (131584 B)" \
  replay "$profs/sharded4.prof" --device=3 --strategy=ideal
expect 2 "--device=9: no live buffer on that device (the profile has: 0 (3 buffers, 131584 B), 1 (3 buffers" \
  replay "$profs/sharded4.prof" --device=9

# bad_prof NAME FROM MESSAGE: $tmp/NAME exits 3 with MESSAGE and the file's name, no output left
bad_prof() {
  local name=$1 from=$2 text=$3
  rm -f "$tmp/result.json"
  expect 3 "$text" replay "$tmp/$name" --from="$from" --strategy=greedy --bfc-preset=jax --format=json \
    --output="$tmp/result.json"
  [ ! -e "$tmp/result.json" ] || bad "$name left an output file"
  grep -qF -- "$tmp/$name" "$tmp/err" || bad "$name: the message does not name the file: $(cat "$tmp/err")"
}
head -c 700 "$profs/mlp_adam.prof" >"$tmp/cut.prof"
bad_prof cut.prof auto "truncated gzip file"
bad_prof cut.prof jax-memory "truncated gzip file"
gzip -dc "$profs/mlp_adam.prof" | head -c 2000 >"$tmp/cut.pprof"
bad_prof cut.pprof jax-memory "JAX memory profile (pprof) byte 1970: truncated or malformed protobuf in the Profile"
echo "hello, not a profile" | gzip -n >"$tmp/text.prof"
bad_prof text.prof auto "not a format gpusim reads"
bad_prof text.prof jax-memory "JAX memory profile (pprof) byte 2: truncated or malformed protobuf in the Profile"
# a pprof of allocations/count alone (a sample of 3), no space/bytes
printf '\x0a\x04\x08\x01\x10\x02\x12\x03\x12\x01\x03\x32\x00\x32\x0ballocations\x32\x05count' | gzip -n >"$tmp/count.prof"
bad_prof count.prof auto "no sample type space/bytes among its 1 sample types"
cp "$src/tests/data/import/native_small.json" "$tmp/native.json"
bad_prof native.json jax-memory "not a JAX memory profile: --from=jax-memory reads the gzipped pprof"

cli_finish
