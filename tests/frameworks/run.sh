#!/usr/bin/env bash
# run.sh — runs one framework smoke test (tests/frameworks/smoke_NAME.py) with the
# frameworks' interpreter that scripts/frameworks set up ($GPUSIM_FRAMEWORKS_PYTHON;
# scripts/test exports it). Without it, or without the framework, the test says
# SKIPPED with the reason, logs it for scripts/test and exits 77 (ctest: skipped).
# Usage: run.sh SOURCE_DIR smoke_NAME.py
set -u
src=$1
test=$2
name=$(basename "$test" .py)
skip() {
  echo "SKIPPED: $1"
  [ -z "${GPUSIM_SKIP_LOG:-}" ] || printf 'frameworks_%s: %s\n' "${name#smoke_}" "$1" >>"$GPUSIM_SKIP_LOG"
  exit 77
}
py=${GPUSIM_FRAMEWORKS_PYTHON:-}
if [ -z "$py" ] || [ ! -x "$py" ]; then
  skip "no frameworks' environment (run scripts/frameworks, or scripts/test, which exports GPUSIM_FRAMEWORKS_PYTHON)${GPUSIM_FRAMEWORKS_MISSING:+: $GPUSIM_FRAMEWORKS_MISSING}"
fi
# the test itself says SKIPPED (and exits 77) when its framework cannot be imported
exec "$py" "$src/tests/frameworks/$test"
