# Shared set-up for scripts/gpusim, scripts/test and scripts/bench (sourced, not run).
# Installs the Debian packages gpusim needs when they are missing (the list is in
# gpusim_missing_packages), then configures and builds into a build directory; make
# rebuilds only what changed.
# shellcheck shell=bash

GPUSIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

gpusim_log() { printf 'gpusim set-up: %s\n' "$*" >&2; }

# gpusim_cache_dir: where fetched and built things that outlive a clone live (the
# frameworks' virtual environment, unpacked wheels): $GPUSIM_CACHE, else
# $XDG_CACHE_HOME/gpusim, else ~/.cache/gpusim. Outside the clone, so that CI's fresh
# clones on the same machine reuse them.
gpusim_cache_dir() {
  printf '%s\n' "${GPUSIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpusim}"
}

# gpusim_skip WHAT REASON: say that a stage or test did not run, and why. The line is
# printed and, when scripts/test collects them ($GPUSIM_SKIP_LOG), appended there; the
# run ends with the list (and fails under GPUSIM_NO_SKIPS=1, as CI sets it).
gpusim_skip() {
  printf 'SKIPPED: %s: %s\n' "$1" "$2"
  if [ -n "${GPUSIM_SKIP_LOG:-}" ]; then
    printf '%s: %s\n' "$1" "$2" >>"$GPUSIM_SKIP_LOG"
  fi
}

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
      gpusim_log "missing packages: $*; install them (apt-get install $*) or run as root"
      return 1
    fi
  fi
  gpusim_log "installing $*"
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

# gpusim_skips_report LOG: the list of skips a run collected (scripts/test prints it
# at its end); false when the list is not empty and GPUSIM_NO_SKIPS=1 (as CI sets it)
gpusim_skips_report() {
  local log=$1 n
  echo "== skipped here =="
  if [ ! -s "$log" ]; then
    echo "  nothing: every stage and test ran"
    return 0
  fi
  sort -u "$log" | sed 's/^/  /'
  n=$(sort -u "$log" | wc -l)
  if [ "${GPUSIM_NO_SKIPS:-0}" = 1 ]; then
    echo "scripts/test: GPUSIM_NO_SKIPS=1 and $n skipped: every stage must run on this machine" >&2
    return 1
  fi
}

# gpusim_ensure_test_tools: what scripts/test runs besides the build, in one apt-get
# call (then one package at a time, so that one that cannot be had holds back no other):
# Open MPI (the sweep over ranks), python3 with venv (the module, the oracles), xmllint
# (JUnit), Chromium (the report in a browser), shellcheck, valgrind, man, clang with
# libFuzzer's runtime (scripts/fuzz). Never fatal: a test whose tool is still missing
# says SKIPPED, and scripts/test lists it.
gpusim_ensure_test_tools() {
  local want="" p
  { command -v mpicc && command -v mpirun; } >/dev/null 2>&1 || want="$want openmpi-bin libopenmpi-dev"
  command -v python3 >/dev/null 2>&1 || want="$want python3"
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || want="$want python3-venv"
  command -v xmllint >/dev/null 2>&1 || want="$want libxml2-utils"
  command -v chromium >/dev/null 2>&1 || want="$want chromium"
  command -v shellcheck >/dev/null 2>&1 || want="$want shellcheck"
  command -v valgrind >/dev/null 2>&1 || want="$want valgrind"
  command -v man >/dev/null 2>&1 || want="$want man-db"
  command -v script >/dev/null 2>&1 || want="$want bsdutils"
  command -v clang >/dev/null 2>&1 || want="$want clang"
  [ -n "$want" ] || return 0
  # shellcheck disable=SC2086 # a list of package names
  gpusim_apt_install $want 2>/dev/null && return 0
  for p in $want; do
    gpusim_apt_install "$p" || gpusim_log "$p could not be installed"
  done
}

# gpusim_ensure_frameworks: the real frameworks' environment (scripts/frameworks, once
# per machine in the cache) exported for the tests that run them: GPUSIM_FRAMEWORKS_PYTHON,
# GPUSIM_TORCH_CUDA_DIR, GPUSIM_FRAMEWORKS_MISSING (what could not be installed, and why).
gpusim_ensure_frameworks() {
  local out line
  out=$("$GPUSIM_ROOT/scripts/frameworks" --env) || return 1
  while IFS= read -r line; do
    case $line in
      GPUSIM_FRAMEWORKS_PYTHON=* | GPUSIM_TORCH_CUDA_DIR=* | GPUSIM_FRAMEWORKS_MISSING=*)
        # scripts/frameworks quotes each value with printf %q
        eval "export $line"
        ;;
    esac
  done <<<"$out"
  if [ -n "${GPUSIM_FRAMEWORKS_MISSING:-}" ]; then
    gpusim_log "frameworks that could not be installed: $GPUSIM_FRAMEWORKS_MISSING"
  fi
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
