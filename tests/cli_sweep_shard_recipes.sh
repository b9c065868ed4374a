#!/usr/bin/env bash
# The Ray and Dask recipes of docs/sweep.md ("Ray and Dask, from Python"), run as
# written (the volume /fleet as a directory here) in a virtual environment with those
# packages (python/tests/recipes_env.sh installs them once from the package index): 16
# shards as tasks through gpusim.sweep(spec, shard=(i, n)), merged by gpusim.sweep_merge,
# give the results of one run byte for byte. A package that cannot be installed is a
# visible skip with pip's reason. Needs libgpusim.so beside the program (not a sanitizer build).
# Usage: cli_sweep_shard_recipes.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
data=$src/tests/data/sweep
lib=$(dirname "$bin")/libgpusim.so
[ -f "$lib" ] || cli_skip "no libgpusim.so beside $bin (the Python module needs it)"

example() { # the fenced block after "<!-- example: NAME -->" in docs/sweep.md
  awk -v want="<!-- example: $1 -->" '
    $0 == want { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$src/docs/sweep.md"
}
mkdir -p "$tmp/ref"
cp -r "$data/jobs" "$tmp/ref/jobs"
sed 's/"output": "results.jsonl"/"output": "fleet.jsonl"/' "$data/spec.json" >"$tmp/ref/fleet.json"
"$bin" sweep "$tmp/ref/fleet.json" >/dev/null 2>&1 || bad "one-process run"

ran=0
for pkg in ray dask; do
  if ! py=$(bash "$src/python/tests/recipes_env.sh" "$pkg" 2>"$tmp/env.err"); then
    cli_skip_part "the $pkg recipe: $pkg could not be installed ($(tail -1 "$tmp/env.err"))"
    continue
  fi
  w=$tmp/$pkg
  mkdir -p "$w"
  cp -r "$tmp/ref/jobs" "$tmp/ref/fleet.json" "$w/"
  example "$pkg" | sed "s#/fleet/#$w/#g" >"$w/recipe.py"
  grep -qF "shard=(i, SHARDS)" "$w/recipe.py" && ok || bad "the $pkg recipe is not in docs/sweep.md"
  # Ray's workers are new processes: the module and the library through the environment
  (cd "$w" && PYTHONPATH="$src/python" GPUSIM_LIBRARY="$lib" \
    timeout 600 "$py" recipe.py >"$w/out" 2>"$w/err")
  rc=$?
  [ "$rc" -eq 0 ] && ok || bad "the $pkg recipe: exit $rc: $(tail -5 "$w/err")"
  grep -qF "135 of 135 jobs merged" "$w/out" && ok || bad "the $pkg recipe printed: $(cat "$w/out")"
  cmp -s "$tmp/ref/fleet.jsonl" "$w/fleet.jsonl" && ok || bad "the $pkg recipe's merged results differ from one run"
  [ "$(ls "$w"/fleet.shard-*-of-16.jsonl | wc -l)" -eq 16 ] && ok || bad "the $pkg recipe: want 16 shard files"
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || cli_skip "neither Ray nor Dask could be installed into $(bash -c '. "$1"/scripts/lib.sh; gpusim_cache_dir' _ "$src")/sweep-recipes-venv"
cli_finish
