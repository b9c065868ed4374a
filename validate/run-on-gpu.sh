#!/usr/bin/env bash
# run-on-gpu.sh — the whole validation run in one command (validate/README.md).
#
#   validate/run-on-gpu.sh --prepare   here, on a machine with the CUDA toolkit:
#                                      builds gpusim and replay_cuda into build-gpu/ and
#                                      copies them, with the shared libraries they need
#                                      beyond the C library, into validate/.bin/
#   validate/run-on-gpu.sh             on the GPU machine: uses validate/.bin/ (or builds
#                                      there if it can), runs validate/suite.py, writes
#                                      at most six files under $OUT (default
#                                      validate/results/new/)
#   validate/run-on-gpu.sh --dry-run   the same plan without a GPU (mock backend)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=run
case "${1:-}" in
  --prepare) mode=prepare ;;
  --dry-run) mode=dry ;;
  "") ;;
  *) echo "usage: $0 [--prepare|--dry-run]" >&2; exit 2 ;;
esac
bin="$root/validate/.bin"

build() { # build DIR: configure and build gpusim and replay_cuda
  local dir=$1
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DGPUSIM_CUDA=ON >"$dir/build.log" 2>&1 ||
    { tail -20 "$dir/build.log" >&2; return 1; }
  cmake --build "$dir" --target gpusim replay_cuda -j "${JOBS:-2}" >>"$dir/build.log" 2>&1 ||
    { tail -20 "$dir/build.log" >&2; return 1; }
}

if [ "$mode" = prepare ]; then
  mkdir -p build-gpu
  build "$root/build-gpu"
  rm -rf "$bin"
  mkdir -p "$bin/lib"
  cp build-gpu/gpusim build-gpu/validate/replay_cuda "$bin/"
  # every shared library they load except the C library's own
  for f in "$bin/gpusim" "$bin/replay_cuda"; do
    ldd "$f" | awk '/=> \// {print $3}' | while read -r lib; do
      case "$(basename "$lib")" in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*) ;;
        *) cp -L "$lib" "$bin/lib/" ;;
      esac
    done
  done
  echo "prepared $bin:"; ls -la "$bin" "$bin/lib"
  exit 0
fi

if [ "$mode" = dry ]; then
  if [ ! -x "$bin/replay_cuda" ]; then
    mkdir -p build-gpu
    build "$root/build-gpu"
    bindir="$root/build-gpu"
  else
    bindir=$bin
  fi
  exec python3 validate/suite.py --dry-run --bin "$bindir" "${@:2}"
fi

# the GPU run
OUT=${OUT:-$root/validate/results/new}
mkdir -p "$OUT"
bindir=$bin
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! { [ -x "$bin/replay_cuda" ] && "$bin/replay_cuda" --help >/dev/null 2>&1 &&
       "$bin/gpusim" --version >/dev/null 2>&1; }; then
  echo "run-on-gpu: no usable validate/.bin (run --prepare here and carry it); building on this machine" >&2
  mkdir -p "$root/build-gpu"
  build "$root/build-gpu"
  bindir="$root/build-gpu"
fi
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv >"$OUT/nvidia-smi.txt" 2>&1 || true
python3 validate/suite.py --bin "$bindir" --out "$OUT"
