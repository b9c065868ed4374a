#!/usr/bin/env bash
# run.sh — checks gpusim's BFC model against the real bfc_allocator.cc.
#
#   validate/upstream/bfc/run.sh [--tsl2024=DIR] [--xla2026=DIR] [--runs=N] [--seed=S]
#                                [--gpusim-build=DIR]
#
# DIR is a source tree: a google/tsl checkout (tsl/framework/bfc_allocator.cc, the
# 2024 copy) or an openxla/xla checkout (xla/tsl/framework/bfc_allocator.cc, 2026).
# Each given tree's bfc_allocator.cc is compiled unmodified against stubs/ (no
# absl, no protobuf, no GPU), linked with replay.cc and its fake sub-allocator, and
# RUNS generated traces (check.py) are replayed through it and through gpusim's
# model (gpusim_side.c, linked with gpusim's libraries from --gpusim-build, default
# build/), comparing every key. With no tree given it says so and checks nothing.
# Exit 0 when every run agrees; 1 on a disagreement; 2 on a usage or build error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tsl2024='' xla2026='' runs=1000 seed=1 build="$root/build"
for a in "$@"; do
    case "$a" in
        --tsl2024=*) tsl2024=${a#*=} ;;
        --xla2026=*) xla2026=${a#*=} ;;
        --runs=*) runs=${a#*=} ;;
        --seed=*) seed=${a#*=} ;;
        --gpusim-build=*) build=${a#*=} ;;
        *) echo "run.sh: unknown argument '$a' (see the comment at the top)" >&2; exit 2 ;;
    esac
done
if [ -z "$tsl2024" ] && [ -z "$xla2026" ]; then
    echo "run.sh: no source tree given (--tsl2024=DIR for google/tsl, --xla2026=DIR for openxla/xla):" \
         "nothing was checked against the real allocator"
    exit 0
fi
for lib in libgpusim_strategies.a libgpusim_sim.a; do
    [ -f "$build/$lib" ] || { echo "run.sh: $build/$lib missing: build gpusim first" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CXX=${CXX:-g++} CC=${CC:-cc}
"$CC" -std=c11 -O2 -I"$root" "$here/gpusim_side.c" "$build/libgpusim_strategies.a" "$build/libgpusim_sim.a" \
    -lm -o "$work/gpusim_side" || exit 2

status=0
check() { # VERSION TREE RELPATH EXTRA_DEFINES
    local version=$1 tree=$2 rel=$3 defs=$4
    [ -f "$tree/$rel/bfc_allocator.cc" ] || { echo "run.sh: $tree has no $rel/bfc_allocator.cc" >&2; exit 2; }
    local commit
    commit=$(git -C "$tree" rev-parse HEAD 2>/dev/null || echo "unknown commit")
    echo "$version: $tree/$rel/bfc_allocator.cc at $commit"
    "$CXX" -std=c++17 -O2 -w -I"$here/stubs" -I"$tree" -c "$tree/$rel/bfc_allocator.cc" -o "$work/$version.o" \
        || exit 2
    # shellcheck disable=SC2086
    "$CXX" -std=c++17 -O2 -w -I"$here/stubs" -I"$tree" $defs -DBFC_HEADER="\"$rel/bfc_allocator.h\"" \
        "$here/replay.cc" "$work/$version.o" -o "$work/replay_$version" || exit 2
    python3 "$here/check.py" "$work/gpusim_side" "$work/replay_$version" "$version" "$runs" "$seed" || status=1
}
[ -n "$tsl2024" ] && check tsl2024 "$tsl2024" tsl/framework ''
[ -n "$xla2026" ] && check xla2026 "$xla2026" xla/tsl/framework '-DBFC_HAS_SPATIAL'
exit $status
