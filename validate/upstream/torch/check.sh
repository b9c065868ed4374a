#!/bin/sh
# check.sh — the upstream differential check (README.md): builds PyTorch's own
# CUDA caching allocator from a PyTorch source tree against the mock CUDA runtime,
# replays generated traces through it and through gpusim's torch model under every
# configuration of configs.txt, and prints every disagreement with its first
# diverging event.
#
#   validate/upstream/check.sh [--torch-src=DIR|TARBALL] [--traces=N] [--seed=S]
#                              [--pool-traces=N] [--build=DIR] [--torch-version=X.Y]
#                              [--debian-version=V]
# (--pool-traces: gen.py's traces with captures and private pools, run under
# configs-pools.txt; default 48)
#
# Without --torch-src it fetches Debian trixie's pytorch source, version
# 2.6.0+dfsg-7 or --debian-version (fetch.sh, a private apt configuration); when
# that cannot be fetched it says so, logs the skip for scripts/test ($GPUSIM_SKIP_LOG)
# and exits 0. The build is cached in
# --build (default build-upstream/ beside the sources; c10 takes about 5 minutes on
# 2 cores the first time).
# Exit status: 0 every run agrees (or skipped), 1 a run differs, 2 build failure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src=
traces=24
pool_traces=48
seed=16
build=$root/build-upstream
version=2.6
debian=2.6.0+dfsg-7
# fetched sources live outside the clone (scripts/lib.sh gpusim_cache_dir), so that
# CI's fresh clones on the same machine fetch them once
cache=${GPUSIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpusim}/upstream-torch
for a in "$@"; do
    case $a in
    --torch-src=*) src=${a#*=} ;;
    --traces=*) traces=${a#*=} ;;
    --pool-traces=*) pool_traces=${a#*=} ;;
    --seed=*) seed=${a#*=} ;;
    --build=*) build=${a#*=} ;;
    --torch-version=*) version=${a#*=} ;;
    --debian-version=*) debian=${a#*=} ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "check.sh: unknown option $a" >&2; exit 2 ;;
    esac
done
# skip REASON: say so, and log it for scripts/test's list of skips
skip() {
    echo "upstream: skipped: $1"
    if [ -n "${GPUSIM_SKIP_LOG:-}" ]; then
        echo "upstream differential (validate/upstream/torch): $1" >>"$GPUSIM_SKIP_LOG"
    fi
    exit 0
}
fmt=
if [ -z "$src" ]; then
    if ! src=$(nice sh "$here/fetch.sh" "$cache" "$debian"); then
        skip "the PyTorch source could not be fetched (validate/upstream/torch/fetch.sh)"
    fi
elif [ -f "$src" ]; then
    # a tarball: unpack its c10 tree once into the cache
    name=$(basename "$src" | sed 's/\.tar.*$//; s/\.tgz$//')
    dest=$cache/src/$name
    if [ ! -f "$dest/c10/cuda/CUDACachingAllocator.cpp" ]; then
        rm -rf "$dest.tmp"
        mkdir -p "$dest.tmp"
        tar -xf "$src" -C "$dest.tmp" --wildcards '*c10/*'
        found=$(find "$dest.tmp" -path '*/c10/cuda/CUDACachingAllocator.cpp' | head -n 1)
        if [ -z "$found" ]; then
            echo "check.sh: $src holds no c10/cuda/CUDACachingAllocator.cpp" >&2
            exit 2
        fi
        rm -rf "$dest"
        mv "${found%/c10/cuda/CUDACachingAllocator.cpp}" "$dest"
        rm -rf "$dest.tmp"
    fi
    src=$dest
fi
src=$(cd "$src" && pwd)
if [ ! -f "$src/c10/cuda/CUDACachingAllocator.cpp" ]; then
    echo "check.sh: $src has no c10/cuda/CUDACachingAllocator.cpp" >&2
    exit 2
fi
if [ ! -f /usr/include/fmt/format.h ]; then
    fmt=$cache/fmt/usr/include
    if [ ! -f "$fmt/fmt/format.h" ]; then
        # fetch.sh unpacks libfmt-dev's headers even for a local source tree
        if ! nice sh "$here/fetch.sh" "$cache" "$debian" >/dev/null; then
            skip "fmt's headers (libfmt-dev) could not be fetched"
        fi
    fi
fi
echo "upstream: PyTorch source $src"
mkdir -p "$build"
if ! { nice cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUSIM_TORCH_SRC="$src" \
           -DGPUSIM_FMT_INCLUDE="$fmt" >"$build/configure.log" 2>&1 &&
       nice cmake --build "$build" --target torch_upstream -j2 >>"$build/configure.log" 2>&1; }; then
    tail -n 30 "$build/configure.log" >&2
    echo "check.sh: the build failed (log: $build/configure.log)" >&2
    exit 2
fi
bin=$build/validate/upstream/torch/torch_upstream
# the cached traces are gen.py's: a changed gen.py makes new ones (its checksum in the name)
tdir=$build/upstream-traces-$seed-$traces-$pool_traces-$(cksum <"$here/gen.py" | cut -d' ' -f1)
if [ ! -f "$tdir/done" ]; then
    rm -rf "$tdir"
    python3 "$here/gen.py" "$tdir" "$traces" "$seed" "$pool_traces"
    : >"$tdir/done"
fi
log=$build/upstream-check.log
# shellcheck source=runs.sh
. "$here/runs.sh"
runs=0 agree=0 skipped=0 pool_runs=0 pool_agree=0 expected=0
upstream_runs "$bin" "$tdir" "$here/configs.txt" "$version" "$log"
grep -v -E '^(agree|skipped) ' "$log" | head -n 40 || true
echo "upstream: $agree of $runs runs agree (gpusim --strategy=torch --torch-version=$version against $(basename "$src"); log: $log)"
echo "upstream: pools: $pool_agree of $pool_runs runs with captures and private pools agree; $skipped skipped (the release lacks what the trace needs)"
if [ "$((runs + skipped))" -ne "$expected" ]; then
    echo "check.sh: $((runs + skipped)) results for $expected runs" >&2
    exit 1
fi
[ "$agree" -eq "$runs" ]
