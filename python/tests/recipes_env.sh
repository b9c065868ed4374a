#!/usr/bin/env bash
# A virtual environment with Ray and Dask (distributed) for the sweep recipes of
# docs/sweep.md (tests/cli_sweep_shard_recipes.sh), made once under the cache directory
# (scripts/lib.sh gpusim_cache_dir) from the package index and reused; apart from the
# frameworks' environment, which it does not touch. Prints the environment's python on
# stdout; exits 1 with the reason on stderr when it cannot be made.
# Usage: recipes_env.sh [ray|dask]...   (default: both)
set -u
# shellcheck source-path=SCRIPTDIR source=../../scripts/lib.sh
source "$(dirname "$0")/../../scripts/lib.sh"
venv=$(gpusim_cache_dir)/sweep-recipes-venv
py=$venv/bin/python
# tested with these releases
declare -A pins=([ray]="ray==2.60.0" [dask]="dask[distributed]==2026.8.0")
declare -A imports=([ray]="ray" [dask]="dask.distributed")
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(ray dask)
if [ ! -x "$py" ]; then
  command -v python3 >/dev/null 2>&1 || { echo "no python3" >&2; exit 1; }
  python3 -m venv "$venv" >"$venv.log" 2>&1 || { echo "python3 -m venv $venv failed: $(tail -2 "$venv.log")" >&2; exit 1; }
fi
for w in "${want[@]}"; do
  [ -n "${pins[$w]:-}" ] || { echo "unknown recipe package '$w' (ray or dask)" >&2; exit 1; }
  "$py" -c "import ${imports[$w]}" 2>/dev/null && continue
  if ! "$py" -m pip install --quiet --disable-pip-version-check "${pins[$w]}" >"$venv.$w.log" 2>&1; then
    echo "pip install ${pins[$w]} failed: $(grep -v '^WARNING: Location' "$venv.$w.log" | tail -2)" >&2
    exit 1
  fi
done
echo "$py"
