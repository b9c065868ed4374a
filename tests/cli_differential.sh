#!/usr/bin/env bash
# Differential tests across commands: a strategy's result must not depend on the
# order in which `compare` runs the strategies, on --jobs, or on whether it came
# from `compare` or from `replay`. Usage: cli_differential.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
# the "result" object of strategy S in a compare JSON, or of a replay JSON
extract() { # FILE STRATEGY
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if "rows" in d:
    r = [row["result"] for row in d["rows"] if row["strategy"] == sys.argv[2]][0]
else:
    r = d["result"]
print(json.dumps(r, sort_keys=True))
PY
}
if ! command -v python3 >/dev/null 2>&1; then
  cli_skip "python3 missing"
fi
for trace in "$src/traces/examples/mlp_train.json" "$src/traces/examples/small-model-12gb.jsonl" \
             "$src/tests/golden/oom_small.json"; do
  extra=""
  case "$trace" in *oom_small*) extra="--capacity=1000 --context=100 --on-oom=skip" ;; esac
  # shellcheck disable=SC2086
  "$bin" compare "$trace" $extra --strategies=greedy,growth,torch,raw,ideal --jobs=1 --format=json >"$tmp/fwd.json" 2>/dev/null
  # shellcheck disable=SC2086
  "$bin" compare "$trace" $extra --strategies=ideal,raw,torch,growth,greedy --jobs=4 --format=json >"$tmp/rev.json" 2>/dev/null
  for s in greedy growth torch raw ideal; do
    # shellcheck disable=SC2086
    "$bin" replay "$trace" $extra --strategy=$s --format=json >"$tmp/one.json" 2>/dev/null
    a=$(extract "$tmp/fwd.json" $s) b=$(extract "$tmp/rev.json" $s) c=$(extract "$tmp/one.json" $s)
    if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ]; then
      ok
    else
      bad "$(basename "$trace") $s: compare order/--jobs/replay disagree"
    fi
  done
done
cli_finish
