#!/usr/bin/env bash
# check-tf.sh — checks gpusim's BFC model against TensorFlow's shipped BFC allocator.
#
#   validate/upstream/bfc/check-tf.sh [--runs=N] [--seed=S] [--gpusim-build=DIR]
#                                     [--python=PY] [--draw-alignment]
#
# No source is compiled: replay.cc (the drop-in of run.sh's source-built replayer,
# built with -DGPUSIM_TF_WHEEL) is compiled against the wheel's own headers
# (tensorflow/include) with tf.sysconfig's compile flags and linked with the wheel's
# libtensorflow_framework.so.2, whose exported tsl::BFCAllocator it drives with a fake
# sub-allocator (address arithmetic only, nothing is touched). check.py --tf-wheel
# then replays the same RUNS generated traces (greedy, growth and limit; tf and jax
# presets; garbage collection on, off and left to the framework: TF's GPUBFCAllocator
# decides it under the tf preset; ...) through it and through gpusim under
# --bfc-version=tsl2024 and under --bfc-version=xla2026, comparing every result key
# and, after every event, the block handed out and the AllocatorStats.
# The replayer is built in build-tfwheel/ of this clone (ignored by git); gpusim must
# be built first (--gpusim-build, default build/).
# PY is the Python with tensorflow: --python, else $GPUSIM_FRAMEWORKS_PYTHON (set by
# `eval "$(scripts/frameworks --env | sed 's/^/export /')"`), else python3.
# --draw-alignment also draws request alignments (1 B to 2 MiB; TF passes 64): an
# experiment on XLA 2026's alignment rule, not part of the verdict.
# Exit 0 when every run agrees with both versions; 1 when one differs; 2 on a usage or
# build error. Without TensorFlow it prints SKIPPED and the reason, appends
# "TF 2.21 BFC differential: REASON" to $GPUSIM_SKIP_LOG when that is set, and exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
runs=1000 seed=1 build="$root/build" py=${GPUSIM_FRAMEWORKS_PYTHON:-python3} align=()
for a in "$@"; do
    case "$a" in
        --runs=*) runs=${a#*=} ;;
        --seed=*) seed=${a#*=} ;;
        --gpusim-build=*) build=${a#*=} ;;
        --python=*) py=${a#*=} ;;
        --draw-alignment) align=(--draw-alignment) ;;
        *) echo "check-tf.sh: unknown argument '$a' (see the comment at the top)" >&2; exit 2 ;;
    esac
done

skip() {
    echo "check-tf.sh: SKIPPED: $1"
    if [ -n "${GPUSIM_SKIP_LOG:-}" ]; then echo "TF 2.21 BFC differential: $1" >>"$GPUSIM_SKIP_LOG"; fi
    exit 0
}

command -v "$py" >/dev/null 2>&1 || skip "no Python '$py' (set GPUSIM_FRAMEWORKS_PYTHON or --python)"
# tf.sysconfig: the wheel's version, directory, and the flags its C++ was built with
info=$(TF_CPP_MIN_LOG_LEVEL=3 "$py" -c '
import tensorflow as tf
print(tf.__version__)
print(tf.sysconfig.get_lib())
print(" ".join(tf.sysconfig.get_compile_flags()))
print(" ".join(tf.sysconfig.get_link_flags()))' 2>/dev/null | tail -n 4) ||
    skip "tensorflow is not installed for $py"
[ "$(printf '%s\n' "$info" | wc -l)" -eq 4 ] || skip "tensorflow in $py did not answer tf.sysconfig"
version=$(sed -n 1p <<<"$info") lib=$(sed -n 2p <<<"$info")
read -r -a cflags <<<"$(sed -n 3p <<<"$info")"
read -r -a lflags <<<"$(sed -n 4p <<<"$info")"
so=$lib/libtensorflow_framework.so.2
[ -f "$so" ] || skip "tensorflow $version has no $so"
[ -f "$lib/include/xla/tsl/framework/bfc_allocator.h" ] ||
    skip "tensorflow $version ships no include/xla/tsl/framework/bfc_allocator.h"
command -v "${CXX:-g++}" >/dev/null 2>&1 || skip "no C++ compiler (${CXX:-g++})"

for l in libgpusim_strategies.a libgpusim_sim.a; do
    [ -f "$build/$l" ] || { echo "check-tf.sh: $build/$l missing: build gpusim first" >&2; exit 2; }
done
out=$root/build-tfwheel
mkdir -p "$out"
CXX=${CXX:-g++} CC=${CC:-cc}
san=() # a sanitizer build's libraries need the sanitizer runtimes at link time
if grep -qs '^GPUSIM_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then san=("-fsanitize=address,undefined"); fi
"$CC" -std=c11 -O2 -Wall -Wextra "${san[@]}" -I"$root" "$here/gpusim_side.c" "$build/libgpusim_strategies.a" \
    "$build/libgpusim_sim.a" -lm -o "$out/gpusim_side" || { echo "check-tf.sh: gpusim_side does not build" >&2; exit 2; }

# the wheel's headers as system headers (their own warnings are not ours), its flags
# (C++ standard, _GLIBCXX_USE_CXX11_ABI, Eigen alignment) and its library, found at run
# time through the rpath
inc=() other=()
for f in "${cflags[@]}"; do
    case "$f" in -I*) inc+=("-isystem" "${f#-I}") ;; *) other+=("$f") ;; esac
done
if ! "$CXX" -O2 -Wall -Wextra "${other[@]}" "${inc[@]}" -DGPUSIM_TF_WHEEL "$here/replay.cc" "${lflags[@]}" \
    -Wl,-rpath,"$lib" -o "$out/replay_tf" 2>"$out/build.log"; then
    tail -n 20 "$out/build.log" >&2
    echo "check-tf.sh: the replayer does not build against tensorflow $version (log: $out/build.log)" >&2
    exit 2
fi
bfc=$(nm -D --defined-only "$so" 2>/dev/null | grep -c 'BFCAllocator' || true)
echo "TensorFlow $version: $so ($bfc exported BFCAllocator symbols), headers $lib/include"

status=0
export TF_CPP_MIN_LOG_LEVEL=3 # the allocator's out-of-memory dumps go to stderr, unread
# a default left to TensorFlow is its built-in one (GPUBFCAllocator reads these)
unset TF_ENABLE_GPU_GARBAGE_COLLECTION TF_FORCE_GPU_ALLOW_GROWTH
for v in tsl2024 xla2026; do
    python3 "$here/check.py" "$out/gpusim_side" "$out/replay_tf" "$v" "$runs" "$seed" --tf-wheel "${align[@]}" ||
        status=1
done
exit $status
