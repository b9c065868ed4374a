# Shared set-up for scripts/gpusim, scripts/test and scripts/bench (sourced, not run).
# Installs the Debian packages gpusim needs when they are missing (the list is in
# gpusim_missing_packages), then configures and builds into a build directory; make
# rebuilds only what changed.
# shellcheck shell=bash

GPUSIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

gpusim_log() { printf 'gpusim set-up: %s\n' "$*" >&2; }

gpusim_missing_packages() {
  local missing=""
  command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
  command -v make >/dev/null 2>&1 || missing="$missing make"
  command -v cc >/dev/null 2>&1 || missing="$missing gcc"
  command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
  if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libcjson || missing="$missing libcjson-dev"
    pkg-config --exists gsl || missing="$missing libgsl-dev"
    pkg-config --exists check || missing="$missing check"
    pkg-config --exists zlib || missing="$missing zlib1g-dev"
    pkg-config --exists sqlite3 || missing="$missing libsqlite3-dev"
  else
    missing="$missing libcjson-dev libgsl-dev check zlib1g-dev libsqlite3-dev"
  fi
  echo "$missing"
}

# gpusim_apt_install PKG...: install with apt-get as root or through sudo.
gpusim_apt_install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      gpusim_log "missing packages:$*; install them (apt-get install$*) or run as root"
      return 1
    fi
  fi
  gpusim_log "installing$*"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y -q "$@" >/dev/null 2>&1; then
    $sudo apt-get update -q >/dev/null 2>&1 || true
    $sudo apt-get install -y -q "$@" >/dev/null || return 1
  fi
}

gpusim_ensure_packages() {
  local missing
  missing=$(gpusim_missing_packages)
  if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    gpusim_apt_install $missing || return 1
  fi
}

# gpusim_ensure_mpi: Open MPI for `gpusim sweep` over ranks and its test (scripts/test
# only; gpusim builds and runs without it). Never fatal: without it the MPI test skips.
gpusim_ensure_mpi() {
  if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
    gpusim_apt_install openmpi-bin libopenmpi-dev || gpusim_log "no MPI: the sweep's MPI test will be skipped"
  fi
}

# gpusim_ensure_python: python3 for the Python module's test (scripts/test only; Debian
# ships it). Never fatal: without it ctest does not register that test.
gpusim_ensure_python() {
  command -v python3 >/dev/null 2>&1 || gpusim_apt_install python3 ||
    gpusim_log "no python3: the Python module (python/gpusim) is not tested"
}

# gpusim_build DIR [cmake args...]: configure once, then build (incremental).
gpusim_build() {
  local dir=$1
  shift
  mkdir -p "$dir"
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    gpusim_log "configuring $dir"
    cmake -S "$GPUSIM_ROOT" -B "$dir" "$@" >"$dir/configure.log" 2>&1 || {
      cat "$dir/configure.log" >&2
      return 1
    }
  fi
  local jobs
  jobs=$(nproc 2>/dev/null || echo 2)
  if ! cmake --build "$dir" -j "$jobs" >"$dir/build.log" 2>&1; then
    cat "$dir/build.log" >&2
    gpusim_log "build failed (log: $dir/build.log)"
    return 1
  fi
}
