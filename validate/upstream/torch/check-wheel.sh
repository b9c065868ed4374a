#!/bin/sh
# check-wheel.sh — the upstream differential check against a shipped PyTorch CUDA
# wheel (README.md, "The shipped wheel"): the wheel's compiled libc10_cuda.so runs
# over the mock CUDA runtime built as libcudart.so.13 (wheel/CMakeLists.txt), and the
# traces and configurations of check.sh (gen.py, configs.txt, directed.txt) are
# replayed through it and through gpusim's torch model; every result key and every
# memory_stats() counter is compared after every event.
#
#   validate/upstream/torch/check-wheel.sh [--torch-dir=DIR] [--torch-version=X]
#                                          [--traces=N] [--seed=S] [--build=DIR]
#                                          [--configs=FILE] [--pool-traces=N]
#
# --torch-dir: an unpacked wheel (lib/libc10.so, lib/libc10_cuda.so, include/);
#   default $GPUSIM_TORCH_CUDA_DIR, else what `scripts/frameworks --env` names.
# --torch-version: the release gpusim models for the comparison; default the
#   wheel's own X.Y when gpusim models it, else main (gpusim's newest rules).
# --configs: the configurations, in configs.txt's form (default configs.txt).
# When the wheel is missing it says SKIPPED and why, logs the skip for scripts/test
# ($GPUSIM_SKIP_LOG) and exits 0. The build goes to --build (default build-wheel/).
# Exit status: 0 every run agrees (or skipped), 1 a run differs, 2 build failure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tdir_wheel=
version=
traces=24
pool_traces=48
seed=16
build=$root/build-wheel
configs=$here/configs.txt
for a in "$@"; do
    case $a in
    --torch-dir=*) tdir_wheel=${a#*=} ;;
    --torch-version=*) version=${a#*=} ;;
    --traces=*) traces=${a#*=} ;;
    --pool-traces=*) pool_traces=${a#*=} ;;
    --seed=*) seed=${a#*=} ;;
    --build=*) build=${a#*=} ;;
    --configs=*) configs=${a#*=} ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "check-wheel.sh: unknown option $a" >&2; exit 2 ;;
    esac
done
# skip REASON: say so, and log it for scripts/test's list of skips
skip() {
    echo "upstream wheel: SKIPPED: $1"
    if [ -n "${GPUSIM_SKIP_LOG:-}" ]; then
        echo "upstream wheel differential: $1" >>"$GPUSIM_SKIP_LOG"
    fi
    exit 0
}
missing=${GPUSIM_FRAMEWORKS_MISSING:-}
if [ -z "$tdir_wheel" ] && [ -z "${GPUSIM_TORCH_CUDA_DIR+set}" ]; then
    # not run from scripts/test, which exports what scripts/frameworks --env prints
    if env=$("$root/scripts/frameworks" --env 2>/dev/null); then
        GPUSIM_TORCH_CUDA_DIR=$(printf '%s\n' "$env" | sed -n "s/^GPUSIM_TORCH_CUDA_DIR=//p" | tr -d "'\"")
        missing=$(printf '%s\n' "$env" | sed -n "s/^GPUSIM_FRAMEWORKS_MISSING=//p" | tr -d "'\"")
    fi
fi
if [ -z "$tdir_wheel" ]; then
    tdir_wheel=${GPUSIM_TORCH_CUDA_DIR:-}
fi
if [ -z "$tdir_wheel" ]; then
    skip "no PyTorch CUDA wheel unpacked (scripts/frameworks names no GPUSIM_TORCH_CUDA_DIR${missing:+: $missing})"
fi
for f in lib/libc10.so lib/libc10_cuda.so include/c10/cuda/CUDACachingAllocator.h; do
    if [ ! -f "$tdir_wheel/$f" ]; then
        skip "$tdir_wheel has no $f"
    fi
done
tdir_wheel=$(cd "$tdir_wheel" && pwd)
release=$(sed -n "s/^__version__ = '\([0-9]*\.[0-9]*\).*/\1/p" "$tdir_wheel/version.py" 2>/dev/null || true)
full=$(sed -n "s/^__version__ = '\(.*\)'$/\1/p" "$tdir_wheel/version.py" 2>/dev/null || true)
echo "upstream wheel: PyTorch ${full:-(no version.py)} in $tdir_wheel"

mkdir -p "$build"
if ! { nice cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUSIM_TESTS=OFF -DGPUSIM_CUDA=OFF \
           -DGPUSIM_TORCH_CUDA_DIR="$tdir_wheel" >"$build/configure.log" 2>&1 &&
       nice cmake --build "$build" --target torch_wheel -j2 >>"$build/configure.log" 2>&1; }; then
    tail -n 30 "$build/configure.log" >&2
    echo "check-wheel.sh: the build failed (log: $build/configure.log)" >&2
    exit 2
fi
bin=$build/validate/upstream/torch/wheel/torch_wheel
if [ -z "$version" ]; then
    # the wheel's release when gpusim models it (a version gpusim does not know is a
    # usage error, exit 2, of a probe run), else main
    version=main
    probe=$here/directed/$(grep -v '^#' "$here/directed.txt" | sed -n '1s/ .*//p')
    rc=0
    if [ -n "$release" ]; then
        "$bin" "$probe" --torch-version="$release" >/dev/null 2>&1 || rc=$?
        if [ "$rc" -ne 2 ]; then
            version=$release
        fi
    fi
fi
# the cached traces are gen.py's: a changed gen.py makes new ones (its checksum in the name)
tdir=$build/upstream-traces-$seed-$traces-$pool_traces-$(cksum <"$here/gen.py" | cut -d' ' -f1)
if [ ! -f "$tdir/done" ]; then
    rm -rf "$tdir"
    python3 "$here/gen.py" "$tdir" "$traces" "$seed" "$pool_traces"
    : >"$tdir/done"
fi
log=$build/wheel-check-$version.log
# shellcheck source=runs.sh
. "$here/runs.sh"
runs=0 agree=0 skipped=0 pool_runs=0 pool_agree=0 expected=0
upstream_runs "$bin" "$tdir" "$configs" "$version" "$log"
# the allocator's own warnings (expandable segments mapping past the card) are not results
grep -v -E '^(agree |skipped |\[W[0-9]+ )' "$log" | head -n 40 || true
echo "upstream wheel: $agree of $runs runs agree (gpusim --strategy=torch --torch-version=$version against PyTorch ${full:-?}'s libc10_cuda.so; log: $log)"
echo "upstream wheel: pools: $pool_agree of $pool_runs runs with captures and private pools agree; $skipped skipped (the release lacks what the trace needs)"
if [ "$((runs + skipped))" -ne "$expected" ]; then
    echo "check-wheel.sh: $((runs + skipped)) results for $expected runs" >&2
    exit 1
fi
[ "$agree" -eq "$runs" ]
