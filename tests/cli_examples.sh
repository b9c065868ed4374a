#!/usr/bin/env bash
# Every bundled example replays under every strategy with the full invariant
# checker after every event (--paranoid), and gives byte-identical JSON twice.
# Usage: cli_examples.sh GPUSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
strategies=$("$bin" strategies | awk '$1 ~ /^[a-z]+$/ {print $1}')
for trace in "$src"/traces/examples/*.json "$src"/traces/examples/*.jsonl; do
  [ -e "$trace" ] || continue
  for s in $strategies; do
    extra=""
    [ "$s" = "limit" ] && extra="--limit=4096MiB"
    # shellcheck disable=SC2086
    if ! "$bin" replay "$trace" --strategy="$s" $extra --paranoid --format=json >"$tmp/a.json" 2>"$tmp/err"; then
      echo "FAIL: $trace under $s: $(head -c 600 "$tmp/err")"
      fails=$((fails + 1))
      continue
    fi
    # shellcheck disable=SC2086
    "$bin" replay "$trace" --strategy="$s" $extra --format=json >"$tmp/b.json" 2>/dev/null
    if ! cmp -s "$tmp/a.json" "$tmp/b.json"; then
      echo "FAIL: $trace under $s: output differs between runs"
      fails=$((fails + 1))
      continue
    fi
    passes=$((passes + 1))
  done
done
echo "$passes passed, $fails failed"
[ "$passes" -gt 0 ] && [ "$fails" -eq 0 ]
