#!/bin/sh
# check-releases.sh — the shipped-wheel check (check-wheel.sh) over a list of PyTorch
# releases (README.md, "Release by release"): for each, scripts/frameworks
# --torch-libs=VERSION unpacks that release's CUDA wheel's allocator (lib/libc10.so,
# lib/libc10_cuda.so, include/, version.py) once into the cache, downloading the
# wheel alone and deleting it after (one at a time: they are 0.5 to 2.5 GB), and
# check-wheel.sh compares it with gpusim --torch-version=X.Y. Prints a table
# `release | runs | agree`, and what could not run with why.
#
#   validate/upstream/torch/check-releases.sh [--releases="2.13.0 2.14.1"] [--traces=N]
#                                             [--seed=S] [--build=DIR] [--configs=FILE]
#
# --releases: full versions as the index spells them (default: the newest patch of
#   2.4 to 2.14 served for cp311 x86_64 when this was written).
# --build: the one build folder, reconfigured for each wheel (default build-releases/).
# --traces, --seed, --configs: passed to check-wheel.sh.
# Exit status: 0 every run of every release that ran agrees, 1 a run differs or a
# release could not be fetched or built.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
releases="2.4.1 2.5.1 2.6.0 2.7.1 2.8.0 2.9.1 2.10.0 2.11.0 2.12.1 2.13.0 2.14.1"
build=$root/build-releases
pass=
for a in "$@"; do
    case $a in
    --releases=*) releases=${a#*=} ;;
    --build=*) build=${a#*=} ;;
    --traces=* | --seed=* | --configs=*) pass="$pass $a" ;;
    -h | --help)
        sed -n '2,19p' "$0"
        exit 0
        ;;
    *)
        echo "check-releases.sh: unknown option $a" >&2
        exit 2
        ;;
    esac
done
mkdir -p "$build"
table=$build/releases.txt
: >"$table"
status=0
for full in $releases; do
    minor=$(echo "$full" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
    echo "== PyTorch $full (gpusim --torch-version=$minor); disk: $(df -h "$HOME" | awk 'NR == 2 { print $4 }') free"
    if ! dir=$("$root/scripts/frameworks" --torch-libs="$full" 2>"$build/fetch-$full.log"); then
        echo "$full | - | - | not fetched: $(tail -n 1 "$build/fetch-$full.log")" >>"$table"
        status=1
        continue
    fi
    cuda=$(objdump -p "$dir/lib/libc10_cuda.so" 2>/dev/null | sed -n 's/.*NEEDED *\(libcudart\.so\.[0-9]*\).*/\1/p')
    rc=0
    # shellcheck disable=SC2086 # the passed options are words
    "$here/check-wheel.sh" --torch-dir="$dir" --torch-version="$minor" --build="$build" $pass \
        >"$build/check-$full.log" 2>&1 || rc=$?
    line=$(grep '^upstream wheel: [0-9]* of [1-9][0-9]* runs agree' "$build/check-$full.log" | tail -n 1 || true)
    if [ -n "$line" ]; then
        agree=$(echo "$line" | sed 's/^upstream wheel: \([0-9]*\) of \([0-9]*\) .*/\1/')
        runs=$(echo "$line" | sed 's/^upstream wheel: \([0-9]*\) of \([0-9]*\) .*/\2/')
        note=$cuda
        # the runs with captures and private pools, and the runs the release cannot make
        pools=$(sed -n 's/^upstream wheel: pools: \([0-9]*\) of \([0-9]*\) runs .*; \([0-9]*\) skipped .*/pools \1 of \2, \3 skipped/p' \
            "$build/check-$full.log" | tail -n 1)
        [ -z "$pools" ] || note="$note; $pools"
        if [ "$rc" -ne 0 ]; then
            # runs that left no line: a configuration the release refuses, or a crash
            short=$(sed -n 's/^check-wheel.sh: \([0-9]*\) results for \([0-9]*\) runs$/, \1 results of \2 runs/p' \
                "$build/check-$full.log" | tail -n 1)
            note="$note; $(grep -c '^DIFFER' "$build/check-$full.log" || true) differ$short (log: $build/check-$full.log)"
            status=1
        fi
        echo "$full | $runs | $agree | $note" >>"$table"
    else
        # the first reason: a build error, or what the runs died of (2.6 dlopens libcuda.so.1)
        why=$(grep -m 1 -E "what\(\)|error" "$build/check-$full.log" | cut -c1-200 || true)
        [ -n "$why" ] || why=$(grep -m 1 -E "check-wheel.sh: |SKIPPED|Segmentation" "$build/check-$full.log" | cut -c1-200 || true)
        echo "$full | - | - | $cuda: did not run: ${why:-exit $rc} (log: $build/check-$full.log)" >>"$table"
        status=1
    fi
    tail -n 1 "$table"
done
echo
echo "release | runs | agree | notes"
echo "--- | --- | --- | ---"
cat "$table"
exit "$status"
