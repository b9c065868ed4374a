# runs.sh — the runs both differentials make (sourced by check.sh and check-wheel.sh;
# POSIX sh): every generated trace of TDIR (u*.json) under every configuration of
# CONFIGS, every pool trace (p*.json: captures, private pools) under every
# configuration of configs-pools.txt, then the directed traces of directed.txt beside
# this file, each through the replayer BIN with --torch-version=VERSION, one "agree",
# "DIFFER" or "skipped" line a run into LOG (skipped: the release cannot make the run,
# and why). upstream_runs BIN TDIR CONFIGS VERSION LOG sets $runs, $agree, $skipped,
# $pool_runs, $pool_agree and $expected (the number of lines there must be: a
# replayer that died leaves none).
# shellcheck shell=sh

upstream_runs() {
    _bin=$1 _tdir=$2 _configs=$3 _version=$4 _log=$5
    _here=$(cd "$(dirname "$0")" && pwd)
    : >"$_log"
    for _t in "$_tdir"/u*.json; do
        grep -v '^#' "$_configs" | while read -r label opts; do
            [ -n "$label" ] || continue
            # shellcheck disable=SC2086 # the options are words
            "$_bin" "$_t" --label="$label" --torch-version="$_version" $opts || true
        done
    done >>"$_log" 2>&1
    for _t in "$_tdir"/p*.json; do
        [ -f "$_t" ] || continue
        grep -v '^#' "$_here/configs-pools.txt" | while read -r label opts; do
            [ -n "$label" ] || continue
            # shellcheck disable=SC2086 # the options are words
            "$_bin" "$_t" --label="pools-$label" --torch-version="$_version" $opts || true
        done
    done >>"$_log" 2>&1
    grep -v '^#' "$_here/directed.txt" | while read -r name opts; do
        [ -n "$name" ] || continue
        # shellcheck disable=SC2086 # the options are words
        "$_bin" "$_here/directed/$name" --label=directed --torch-version="$_version" $opts || true
    done >>"$_log" 2>&1
    # shellcheck disable=SC2034 # runs, agree and expected are for the sourcing script
    runs=$(grep -c -E '^(agree|DIFFER) ' "$_log" || true)
    # shellcheck disable=SC2034
    agree=$(grep -c '^agree ' "$_log" || true)
    # shellcheck disable=SC2034
    skipped=$(grep -c '^skipped ' "$_log" || true)
    # shellcheck disable=SC2034
    pool_runs=$(grep -c -E '^(agree|DIFFER) [^ ]*/p[0-9]*\.json ' "$_log" || true)
    # shellcheck disable=SC2034
    pool_agree=$(grep -c -E '^agree [^ ]*/p[0-9]*\.json ' "$_log" || true)
    # shellcheck disable=SC2034
    expected=$(($(find "$_tdir" -name 'u*.json' | wc -l) * $(grep -v '^#' "$_configs" | grep -c .) +
        $(find "$_tdir" -name 'p*.json' | wc -l) * $(grep -v '^#' "$_here/configs-pools.txt" | grep -c .) +
        $(grep -v '^#' "$_here/directed.txt" | grep -c .)))
}
