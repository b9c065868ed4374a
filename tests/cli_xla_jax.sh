#!/usr/bin/env bash
# Regenerates the XLA dumps of tests/data/import/xla with JAX (its make.py, with the
# frameworks' python that scripts/frameworks sets up) and checks that the planner
# still reproduces XLA's heap for each, and that each gives the same placements as
# the committed dump, every buffer at XLA's own offset. Without
# $GPUSIM_FRAMEWORKS_PYTHON or JAX it is skipped (exit 77, logged for scripts/test). Usage: cli_xla_jax.sh GPUSIM_BINARY SOURCE_DIR
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
  compared=${new#*\"compared\": }
  compared=${compared%%,*}
  [ -n "$new" ] && [ "${new##*\"matched\": }" = "$compared" ] && ok ||
    bad "$name: not every buffer at XLA's offset ($new)"
done

# README ("Which release each version models") pins this jaxlib's XLA by the DebugOptions
# it ships: xla_cpu_ftz (2026-06-12) in, spatial partitioning's flag (2026-06-15) out, so
# its GPU BFC is xla2026 without spatial partitioning. Another jaxlib must re-pin it.
flags=$("$py" -c 'import jaxlib, os
d = open(os.path.join(os.path.dirname(jaxlib.__file__), "libjax_common.so"), "rb").read()
print(b"xla_cpu_ftz" in d, b"xla_gpu_enable_allocator_spatial_partitioning" in d)' 2>&1)
[ "$flags" = "True False" ] && ok ||
  bad "jaxlib's DebugOptions (xla_cpu_ftz, spatial partitioning) are '$flags', not 'True False': re-pin the BFC versions' table (docs/cli.md)"
cli_finish
