# cli_lib.sh — the helpers every tests/cli_*.sh shares. Source it, then set up:
#   . "$(dirname "$0")/cli_lib.sh"
#   cli_setup "$@"          # GPUSIM_BINARY SOURCE_DIR
# cli_setup sets $bin and $src (absolute paths), makes an empty $tmp that is removed
# at exit (a script with its own EXIT trap removes it there), and zeroes the counters.
#   ok                      count a pass
#   bad MESSAGE...          print "FAIL: MESSAGE" and count a failure
#   expect CODE TEXT ARGS...     run gpusim ARGS: pass when it exits CODE and TEXT (a fixed
#                                string; "" for any) is in its stderr
#   expect_any CODE TEXT ARGS... the same with TEXT in stdout or stderr
#   expect_re CODE REGEX ARGS... the same with an extended regex over stdout and stderr
#   cli_strategies          the strategy names `gpusim strategies` lists, one a line
#   cli_examples            the bundled example traces (traces/examples/*.json, *.jsonl)
#                           into the array $examples, and cli_strategies into $strategies
#   cli_finish              print "N passed, M failed"; true when nothing failed and
#                           something passed (a test that checked nothing fails)
#   cli_skip REASON         the whole test cannot run here: say why, log it for
#                           scripts/test ($GPUSIM_SKIP_LOG) and exit 77, which ctest
#                           counts as skipped (SKIP_RETURN_CODE), never as passed
#   cli_skip_part REASON    a part of the test cannot run: say why and log it; go on
#   cli_framework_make MODULE MAKE_PY   a test that records with a real framework: $py is
#                           the frameworks' interpreter ($GPUSIM_FRAMEWORKS_PYTHON) that
#                           imports MODULE (else cli_skip), then MAKE_PY writes into $tmp
#                           (its log in $tmp/make.log; a failure is a FAIL)
# The last command's output stays in $tmp/out and $tmp/err for further checks.
# shellcheck shell=bash

cli_setup() {
  if [ $# -lt 2 ]; then
    echo "usage: $0 GPUSIM_BINARY SOURCE_DIR" >&2
    exit 2
  fi
  # shellcheck disable=SC2034 # bin, src, tmp and the counters are for the sourcing script
  bin=$(realpath "$1")
  # shellcheck disable=SC2034
  src=$(realpath "$2")
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064 # expand $tmp now: the trap runs after it may change
  trap "rm -rf '$tmp'" EXIT
  passes=0
  fails=0
}

ok() { passes=$((passes + 1)); }

bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# cli_run_expect MODE CODE TEXT ARGS...: the three expect forms (MODE err, any or re)
cli_run_expect() {
  local mode=$1 code=$2 text=$3
  shift 3
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? found=true
  if [ -n "$text" ]; then
    case $mode in
      err) grep -qF -- "$text" "$tmp/err" || found=false ;;
      any) cat "$tmp/out" "$tmp/err" | grep -qF -- "$text" || found=false ;;
      re) cat "$tmp/out" "$tmp/err" | grep -qE -- "$text" || found=false ;;
    esac
  fi
  if [ "$rc" -ne "$code" ] || [ "$found" = false ]; then
    bad "gpusim $* -> exit $rc (want $code), out: $(head -c 300 "$tmp/out") err: $(head -c 400 "$tmp/err") (want '$text')"
  else
    ok
  fi
}

expect() { cli_run_expect err "$@"; }
expect_any() { cli_run_expect any "$@"; }
expect_re() { cli_run_expect re "$@"; }

cli_strategies() { "$bin" strategies | awk '$1 ~ /^[a-z]+$/ {print $1}'; }

cli_examples() {
  local f
  # shellcheck disable=SC2034 # read by the scripts that source this file
  strategies=$(cli_strategies)
  examples=()
  for f in "$src"/traces/examples/*.json "$src"/traces/examples/*.jsonl; do
    [ -e "$f" ] && examples+=("$f")
  done
}

cli_finish() {
  echo "$passes passed, $fails failed"
  [ "$passes" -gt 0 ] && [ "$fails" -eq 0 ]
}

# cli_skip_log REASON: one line "TEST: REASON" in scripts/test's list of skips
cli_skip_log() {
  if [ -n "${GPUSIM_SKIP_LOG:-}" ]; then
    printf '%s: %s\n' "$(basename "$0" .sh)" "$1" >>"$GPUSIM_SKIP_LOG"
  fi
}

cli_skip() {
  echo "SKIPPED: $1"
  cli_skip_log "$1"
  exit 77
}

cli_skip_part() {
  echo "SKIPPED (part): $1"
  cli_skip_log "$1"
}

cli_framework_make() {
  py=${GPUSIM_FRAMEWORKS_PYTHON:-}
  [ -n "$py" ] && [ -x "$py" ] || cli_skip "no frameworks' environment (GPUSIM_FRAMEWORKS_PYTHON; scripts/frameworks sets it up)"
  "$py" -c "import $1" 2>/dev/null || cli_skip "$1 cannot be imported by $py"
  if ! "$py" "$2" "$tmp" >"$tmp/make.log" 2>&1; then
    tail -20 "$tmp/make.log"
    bad "$2 failed"
  fi
}

# cli_chromium: set $browser to headless Chromium, or skip the test (exit 77) without one
cli_chromium() {
  browser=""
  local b
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
  done
  [ -n "$browser" ] || cli_skip "no headless Chromium (install Debian's 'chromium' package; ./scripts/test does)"
}

# chrome ARGS...: $browser headless, no sandbox (tests may run as root), its own
# profile under $tmp, at most 3 minutes; its messages go to $tmp/chrome.log
chrome() {
  timeout 180 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --no-first-run --no-default-browser-check --user-data-dir="$tmp/profile" "$@" 2>>"$tmp/chrome.log"
}
