#!/usr/bin/env bash
# cli_bfc_upstream.sh — validate/upstream/bfc/run.sh: with no source tree it says that
# nothing was checked and succeeds; a tree without bfc_allocator.cc is a usage error; a
# corrupted gpusim side is caught by the comparison (check.py on a fake allocator that
# disagrees); check-tf.sh without TensorFlow says SKIPPED, logs why and succeeds, and
# refuses an unknown argument. Where GPUSIM_TSL_SRC or GPUSIM_XLA_SRC name real trees, 50 runs each are
# compared against them.
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
run=$src/validate/upstream/bfc/run.sh
build=$(dirname "$bin")

out=$(bash "$run" --gpusim-build="$build" 2>&1); rc=$?
if [ $rc -eq 0 ] && [[ $out == *"no source tree given"*"nothing was checked"* ]]; then ok; else
  bad "run.sh without a tree: rc $rc: $out"; fi

mkdir -p "$tmp/empty"
out=$(bash "$run" --gpusim-build="$build" --tsl2024="$tmp/empty" 2>&1); rc=$?
if [ $rc -eq 2 ] && [[ $out == *"has no tsl/framework/bfc_allocator.cc"* ]]; then ok; else
  bad "run.sh on a tree without the allocator: rc $rc: $out"; fi

out=$(bash "$run" --bogus 2>&1); rc=$?
if [ $rc -eq 2 ] && [[ $out == *"unknown argument"* ]]; then ok; else bad "run.sh --bogus: rc $rc: $out"; fi

# check.py itself: a "real allocator" that reports one byte more in use must differ
if command -v python3 >/dev/null && command -v cc >/dev/null && [ -f "$build/libgpusim_strategies.a" ]; then
  san=() # a sanitizer build's libraries link only with the sanitizer runtimes
  if grep -qs '^GPUSIM_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then san=("-fsanitize=address,undefined"); fi
  cc -std=c11 -O1 "${san[@]}" -I"$src" "$src/validate/upstream/bfc/gpusim_side.c" "$build/libgpusim_strategies.a" \
    "$build/libgpusim_sim.a" -lm -o "$tmp/side" || bad "gpusim_side does not build"
  printf '#!/usr/bin/env bash\ncat >/dev/null\necho result.stats.bytes_in_use=1\n' >"$tmp/liar"
  chmod +x "$tmp/liar"
  out=$(python3 "$src/validate/upstream/bfc/check.py" "$tmp/side" "$tmp/liar" xla2026 5 1 2>&1); rc=$?
  if [ $rc -eq 1 ] && [[ $out == *"5 differ"* ]]; then ok; else bad "check.py on a liar: rc $rc: $out"; fi
else
  cli_skip_part "no python3, cc or $build/libgpusim_strategies.a: check.py is not tried on a liar"
fi

tf=$src/validate/upstream/bfc/check-tf.sh
out=$(GPUSIM_SKIP_LOG=$tmp/skips bash "$tf" --python="$tmp/no-such-python" 2>&1); rc=$?
if [ $rc -eq 0 ] && [[ $out == *"SKIPPED: no Python"* ]] &&
  grep -q "^TF 2.21 BFC differential: no Python" "$tmp/skips" 2>/dev/null; then ok; else
  bad "check-tf.sh without TensorFlow: rc $rc: $out"; fi
out=$(bash "$tf" --bogus 2>&1); rc=$?
if [ $rc -eq 2 ] && [[ $out == *"unknown argument"* ]]; then ok; else bad "check-tf.sh --bogus: rc $rc: $out"; fi

for pair in "tsl2024:${GPUSIM_TSL_SRC:-}" "xla2026:${GPUSIM_XLA_SRC:-}"; do
  v=${pair%%:*} tree=${pair#*:}
  [ -n "$tree" ] || continue
  out=$(bash "$run" --gpusim-build="$build" --"$v"="$tree" --runs=50 2>&1); rc=$?
  if [ $rc -eq 0 ] && [[ $out == *"50 runs"*"0 differ"* ]]; then ok; else bad "$v against $tree: $out"; fi
done
cli_finish
