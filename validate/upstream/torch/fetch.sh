#!/bin/sh
# Fetch Debian trixie's PyTorch source package (default 2.6.0+dfsg-7) with a
# private apt configuration under $1 (the cache directory); the machine's apt
# configuration, lists and archives are never touched.  Prints the path of the
# unpacked source tree on success; exits 3 when the source cannot be fetched.
set -eu
cache=${1:?usage: fetch.sh CACHE_DIR [VERSION]}
mkdir -p "$cache"; cache=$(cd "$cache" && pwd)
version=${2:-2.6.0+dfsg-7}
sha256=099a9601bc40d67656e75735c44abedb0fbe92d08817852ab7472eebb7e6ddff
upver=${version%-*}
orig=pytorch_${upver}.orig.tar.xz
src=$cache/src/pytorch-$upver
# shellcheck source=private-apt.sh
. "$(dirname "$0")/private-apt.sh"
need_fmt=false
if [ ! -f /usr/include/fmt/format.h ] && [ ! -f "$cache/fmt/usr/include/fmt/format.h" ]; then need_fmt=true; fi
if { [ ! -f "$cache/src/$orig" ] || $need_fmt; } &&
   ! apt-get "$@" -qq update >"$cache/fetch.log" 2>&1; then
    echo "fetch.sh: cannot reach the Debian archive (see $cache/fetch.log)" >&2
    exit 3
fi
if [ ! -f "$cache/src/$orig" ]; then
    if ! (cd "$cache/src" && apt-get "$@" -qq source --download-only "pytorch=$version") \
            >>"$cache/fetch.log" 2>&1; then
        echo "fetch.sh: cannot fetch pytorch=$version (see $cache/fetch.log)" >&2
        exit 3
    fi
fi
got=$(sha256sum "$cache/src/$orig" | cut -d' ' -f1)
if [ "$version" = 2.6.0+dfsg-7 ] && [ "$got" != "$sha256" ]; then
    echo "fetch.sh: $orig has sha256 $got, expected $sha256" >&2
    exit 3
fi
# fmt's headers (c10 formats its messages with fmt): the system's when
# libfmt-dev is installed, else trixie's libfmt-dev unpacked into the cache.
if $need_fmt; then
    if ! (cd "$cache/src" && apt-get "$@" -qq download libfmt-dev) >>"$cache/fetch.log" 2>&1; then
        echo "fetch.sh: cannot fetch libfmt-dev (see $cache/fetch.log)" >&2
        exit 3
    fi
    dpkg-deb -x "$(ls "$cache"/src/libfmt-dev_*.deb | head -n 1)" "$cache/fmt"
fi
if [ -f "$src/c10/cuda/CUDACachingAllocator.cpp" ]; then echo "$src"; exit 0; fi
# Only the c10 tree is needed.
tmp=$cache/src/unpack.$$
mkdir -p "$tmp"
tar -xJf "$cache/src/$orig" -C "$tmp" --wildcards '*/c10/*' '*/version.txt'
top=$(ls "$tmp")
rm -rf "$src"
mv "$tmp/$top" "$src"
rmdir "$tmp"
echo "$src"
