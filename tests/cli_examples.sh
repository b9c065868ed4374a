#!/usr/bin/env bash
# Every bundled example replays under every strategy with the full invariant
# checker after every event (--paranoid), and gives byte-identical JSON twice.
# Usage: cli_examples.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
cli_examples
for trace in "${examples[@]}"; do
  for s in $strategies; do
    extra=""
    [ "$s" = "limit" ] && extra="--limit=4096MiB"
    # shellcheck disable=SC2086
    if ! "$bin" replay "$trace" --strategy="$s" $extra --paranoid --format=json >"$tmp/a.json" 2>"$tmp/err"; then
      bad "$trace under $s: $(head -c 600 "$tmp/err")"
      continue
    fi
    # shellcheck disable=SC2086
    "$bin" replay "$trace" --strategy="$s" $extra --format=json >"$tmp/b.json" 2>/dev/null
    if ! cmp -s "$tmp/a.json" "$tmp/b.json"; then
      bad "$trace under $s: output differs between runs"
      continue
    fi
    ok
  done
done
cli_finish
