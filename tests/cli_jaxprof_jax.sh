#!/usr/bin/env bash
# Records the JAX device memory profiles of tests/data/import/jax again with JAX (its
# make.py, with the frameworks' python that scripts/frameworks sets up; make.py
# asserts that each profile's buffers are exactly the arrays its program keeps
# alive), and checks that gpusim imports each new profile, device by device, to the
# same buffers and bytes as the committed one. Without $GPUSIM_FRAMEWORKS_PYTHON or
# JAX it is skipped (exit 77, logged for scripts/test).
# Usage: cli_jaxprof_jax.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
profs=$src/tests/data/import/jax
cli_framework_make jax "$profs/make.py"
cat "$tmp/make.log"

# buffers_bytes FILE DEVICE: "N buffers, B bytes" as gpusim imports that device of FILE
buffers_bytes() {
  "$bin" convert "$1" --device="$2" -o "$tmp/conv.jsonl" 2>/dev/null &&
    grep -o '"buffers":[0-9]*,"bytes":[0-9]*' "$tmp/conv.jsonl"
}
for f in "$profs"/*.prof; do
  name=$(basename "$f")
  [ -e "$tmp/$name" ] || { bad "make.py did not write $name"; continue; }
  devices=0
  [ "$name" = sharded4.prof ] && devices="0 1 2 3"
  for d in $devices; do
    new=$(buffers_bytes "$tmp/$name" "$d")
    old=$(buffers_bytes "$f" "$d")
    echo "$name device $d: recorded again $new; committed $old"
    [ -n "$new" ] && [ "$new" = "$old" ] && ok || bad "$name device $d: $new vs $old"
  done
done
cli_finish
