#!/usr/bin/env bash
# pip_install.sh — the Python package as people install Python packages: a new virtual
# environment, `pip install ./python` with build isolation (scikit-build-core builds
# libgpusim.so from the CMake project; no --no-build-isolation, no system site packages),
# then, outside the source tree, `import gpusim` replays a bundled example with the
# library from the installed package. Usage: pip_install.sh SOURCE_DIR
set -u
src=$(realpath "${1:?usage: pip_install.sh SOURCE_DIR}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  echo "0 passed, 1 failed"
  exit 1
}
python3 -m venv "$tmp/venv" || fail "python3 -m venv"
# the source tree is copied, so that the build leaves nothing in the checkout
mkdir -p "$tmp/src"
tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tmp/src" -xf -
if ! (cd "$tmp" && "$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check "$tmp/src/python") \
  >"$tmp/pip.log" 2>&1; then
  tail -n 40 "$tmp/pip.log"
  fail "pip install ./python"
fi
rm -rf "$tmp/src"
out=$(cd "$tmp" && env -u GPUSIM_LIBRARY -u PYTHONPATH "$tmp/venv/bin/python" -c '
import sys, gpusim, gpusim._native as n
r = gpusim.replay(sys.argv[1], strategy="growth")
import os
assert os.path.isfile(os.path.join(os.path.dirname(gpusim.__file__), "py.typed")), "no py.typed in the wheel"
print(n.library()._name)
print(r["result"]["peak_reserved_bytes"])' "$src/traces/examples/mlp_train.json" 2>&1) || fail "import gpusim: $out"
lib=$(printf '%s\n' "$out" | sed -n 1p)
peak=$(printf '%s\n' "$out" | sed -n 2p)
case $lib in
  "$tmp"/venv/lib/python*/site-packages/gpusim/libgpusim.so) ;;
  *) fail "the library was not taken from the installed package: $lib" ;;
esac
# growth on mlp_train.json holds 2 GiB in six regions (the README's first example)
[ "$peak" = 2147483648 ] || fail "peak reserved $peak, want 2147483648"
echo "2 passed, 0 failed"
