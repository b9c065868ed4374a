#!/bin/sh
# Fetch what PyTorch's memory viewer (the page pytorch.org/memory_viz serves) needs to
# run offline, into $1 (the cache directory fetch.sh uses): torch/utils/viz/MemoryViz.js
# from Debian's PyTorch source package (the tarball fetch.sh keeps, release 2.6.0), and
# the d3 it imports.  MemoryViz.js of 2.6 imports d3@5 and d3-axis, d3-scale,
# d3-zoom and d3-brush @1 from a CDN; d3 5's single-file bundle, which Debian's node-d3
# 5.16 ships as dist/d3.js, holds all of them.  Nothing is installed.  Prints the
# folder holding MemoryViz.js and d3.js; exits 3 when they cannot be fetched.
set -eu
cache=${1:?usage: fetch-viewer.sh CACHE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$cache"; cache=$(cd "$cache" && pwd)
out=$cache/viewer-2.6.0
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
sh "$here/fetch.sh" "$cache" >/dev/null || exit 3
# shellcheck source=private-apt.sh
. "$here/private-apt.sh"
tmp=$cache/src/viewer.$$
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
if ! tar -xJf "$cache/src/pytorch_2.6.0+dfsg.orig.tar.xz" -C "$tmp" --wildcards '*/torch/utils/viz/MemoryViz.js' \
        >"$cache/viewer.log" 2>&1; then
    echo "fetch-viewer.sh: Debian's PyTorch source has no torch/utils/viz/MemoryViz.js (see $cache/viewer.log)" >&2
    exit 3
fi
# the lists fetch.sh fetched may be gone or stale: fetch them again once if the
# download fails
if ! (cd "$tmp" && apt-get "$@" -qq download node-d3) >>"$cache/viewer.log" 2>&1; then
    if ! apt-get "$@" -qq update >>"$cache/viewer.log" 2>&1 ||
       ! (cd "$tmp" && apt-get "$@" -qq download node-d3) >>"$cache/viewer.log" 2>&1; then
        echo "fetch-viewer.sh: cannot fetch Debian's node-d3 (see $cache/viewer.log)" >&2
        exit 3
    fi
fi
mkdir -p "$tmp/out"
find "$tmp" -name MemoryViz.js -path '*/torch/utils/viz/*' -exec cp {} "$tmp/out/MemoryViz.js" \;
if ! dpkg-deb --fsys-tarfile "$tmp"/node-d3_*.deb | tar -xO ./usr/share/nodejs/d3/dist/d3.js >"$tmp/out/d3.js" ||
   [ ! -s "$tmp/out/d3.js" ] || [ ! -s "$tmp/out/MemoryViz.js" ]; then
    echo "fetch-viewer.sh: node-d3's package has no dist/d3.js" >&2
    exit 3
fi
: >"$tmp/out/.complete"
rm -rf "$out"
mv "$tmp/out" "$out"
echo "$out"
