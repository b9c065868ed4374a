#!/usr/bin/env bash
# Regenerates the XLA dumps of tests/data/import/xla with JAX (its make.py, with the
# frameworks' python that scripts/frameworks sets up) and checks that the planner
# still reproduces XLA's heap for each, and that each gives the same placements as
# the committed dump. Without $GPUSIM_FRAMEWORKS_PYTHON or JAX it is skipped (exit
# 77, logged for scripts/test). Usage: cli_xla_jax.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
dumps=$src/tests/data/import/xla
cli_framework_make jax "$dumps/make.py"
plan=(--strategy=planned --planner=xla --alignment=64 --against-recorded --format=json)
for f in "$dumps"/*.hlo.pb; do
  name=$(basename "$f")
  [ -e "$tmp/$name" ] || { bad "make.py did not write $name"; continue; }
  expect_any 0 '"peak_difference_bytes": 0}' replay "$tmp/$name" "${plan[@]}"
  new=$(grep -o '"placement": {"compared": [0-9]*, "matched": [0-9]*' "$tmp/out")
  "$bin" replay "$f" "${plan[@]}" >"$tmp/old.json" 2>/dev/null
  old=$(grep -o '"placement": {"compared": [0-9]*, "matched": [0-9]*' "$tmp/old.json")
  echo "$name: regenerated $new; committed $old"
  [ -n "$new" ] && [ "$new" = "$old" ] && ok || bad "$name: the regenerated dump places differently ($new vs $old)"
done
cli_finish
