#!/usr/bin/env bash
# CLI tests for validate/ without a GPU: `gpusim validate-report` on the hand-written
# fixtures of tests/data/validate (labelled fixtures, not measurements), the Python
# replayers' argument parsing and trace reading (no torch or jax needed), the
# generated suite traces (valid for gpusim under every model), and run-on-gpu.sh's
# shell (shellcheck, when installed). Usage: cli_validate.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
fx=$src/tests/data/validate

# want CODE FILE-WITH-STDOUT-GREP... : run "$@" after --, check status and stdout lines
run() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
has() { if grep -qF -- "$1" "$tmp/out"; then ok; else bad "stdout lacks '$1': $(head -c 600 "$tmp/out")"; fi; }
haserr() { if grep -qF -- "$1" "$tmp/err"; then ok; else bad "stderr lacks '$1': $(head -c 400 "$tmp/err")"; fi; }
code() { if [ "$1" -eq "$2" ]; then ok; else bad "exit $1, want $2 ($3); stderr: $(head -c 400 "$tmp/err")"; fi; }

# exact agreement, a 2 MiB difference, statistics matched by name
rc=$(run "$bin" validate-report "$fx/jax_growth_fixture.json" --traces="$src/traces/examples")
code "$rc" 0 "growth fixture"
has "note: FIXTURE:"
has "peak_allocated_bytes                   1208025088       1208025088               +0    +0.00%"
has "peak_reserved_bytes                    2147483648       2149580800         -2097152    -0.10%"
has "(5 more allocator statistics agree exactly"
rc=$(run "$bin" validate-report "$fx/jax_growth_fixture.json" --traces="$src/traces/examples" --all-stats)
has "stats.largest_alloc_size"
if grep -q "not_a_gpusim_stat" "$tmp/out"; then bad "a statistic gpusim does not have was compared"; else ok; fi

# an OOM one event late
rc=$(run "$bin" validate-report "$fx/jax_oom_fixture.json" --traces="$src/traces/examples")
code "$rc" 0 "oom fixture"
has "first_oom_event                          event 39         event 40        -1 events"

# no model for the allocator: measured values only
rc=$(run "$bin" validate-report "$fx/async_nomodel_fixture.json" --traces="$src/traces/examples")
code "$rc" 0 "no-model fixture"
has "gpusim has no model 'no-such-model'"
has "n/a       1142947840"

# JSON form: one report per file, rows with predicted/measured/diff
rc=$(run "$bin" validate-report --format=json "$fx/jax_growth_fixture.json" "$fx/jax_oom_fixture.json" \
  --traces="$src/traces/examples")
code "$rc" 0 "json"
if command -v python3 >/dev/null; then
  if python3 - "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["reports"]
assert len(r) == 2 and r[0]["fixture"] is True
rows = {x["metric"]: x for x in r[0]["rows"]}
assert rows["peak_reserved_bytes"]["diff"] == -2097152, rows
assert rows["peak_allocated_bytes"]["diff"] == 0
assert rows["stats.num_allocs"]["measured"] == 64
oom = {x["metric"]: x for x in r[1]["rows"]}["first_oom_event"]
assert (oom["predicted"], oom["measured"], oom["diff"]) == (39, 40, -1), oom
PY
  then ok; else bad "validate-report JSON: $(head -c 600 "$tmp/out")"; fi
fi

# errors: usage, not a measurement, wrong trace, missing trace
rc=$(run "$bin" validate-report); code "$rc" 2 "no args"
rc=$(run "$bin" validate-report "$src/traces/examples/mlp_train.json"); code "$rc" 2 "a trace is not a measurement"
haserr "not a gpusim measurement"
rc=$(run "$bin" validate-report "$fx/wrong_trace_fixture.json" --traces="$src/traces/examples")
code "$rc" 2 "fingerprint mismatch"
haserr "is not the trace that was measured"
sed 's|traces/examples/mlp_train.json|nowhere/missing.json|' "$fx/jax_growth_fixture.json" >"$tmp/m.json"
rc=$(run "$bin" validate-report "$tmp/m.json"); code "$rc" 2 "missing trace"
haserr "not found"
rc=$(run "$bin" validate-report "$fx/jax_growth_fixture.json" --format=xml); code "$rc" 2 "bad format"

# the Python side, where python3 exists (no torch or jax needed)
if command -v python3 >/dev/null; then
  v=$src/validate
  rc=$(run python3 "$v/torch_replay.py" "$src/traces/examples/mlp_train.json" --check-only \
    --alloc-conf=expandable_segments:True --memory-fraction=0.25)
  code "$rc" 0 "torch_replay --check-only"
  has "131 events (64 allocs, 64 frees, 2 deferred)"
  has "'alloc_conf': 'expandable_segments:True', 'memory_fraction': '0.25'"
  rc=$(run python3 "$v/jax_replay.py" "$src/traces/examples/mlp_train.json" --check-only --preallocate=true \
    --mem-fraction=0.05)
  code "$rc" 0 "jax_replay --check-only"
  has "predicts with strategy greedy {'bfc_preset': 'jax', 'mem_fraction': '0.05'}"
  rc=$(run python3 "$v/torch_replay.py" "$src/traces/examples/mlp_train.json" --memory-fraction=2 --check-only)
  code "$rc" 2 "fraction out of range"
  rc=$(run python3 "$v/jax_replay.py" "$src/tests/golden/unknown_free.jsonl" --check-only)
  code "$rc" 3 "invalid trace"
  haserr "free of id"
  # replay order and event numbering agree with the engine on every golden trace
  for t in "$src"/tests/golden/*.json "$src"/tests/golden/*.jsonl "$src"/traces/examples/*.json*; do
    want=$("$bin" replay "$t" --strategy=ideal --on-oom=skip --format=json 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["trace"]["events"])' 2>/dev/null) || continue
    got=$(python3 -c "import sys; sys.path.insert(0, '$v'); import vtrace; h, e = vtrace.load('$t'); print(len(e))" \
      2>/dev/null) || continue
    if [ "$want" = "$got" ]; then ok; else bad "vtrace reads $got events of $t, gpusim $want"; fi
  done
  python3 - "$v" "$src/tests/golden/deferred_tie.json" >"$tmp/order" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import vtrace
h, e = vtrace.load(sys.argv[2])
print(" ".join("%d%s%d" % (n, "r" if k == "ready" else "e", x["index"]) for n, k, x in vtrace.schedule(e)))
PY
  if [ "$(cat "$tmp/order")" = "1e1 2e2 3e3 4e4 5r3 6e5 7e6 8e7 9e8" ]; then ok; else bad "order: $(cat "$tmp/order")"; fi
  # the generated suite: valid traces under every model gpusim has
  if python3 "$v/gen_traces.py" "$tmp/suite"; then
    for t in "$tmp"/suite/*.jsonl; do
      for s in $("$bin" strategies | awk '$1 ~ /^[a-z]+$/ {print $1}'); do
        lim=""
        [ "$s" = "limit" ] && lim="--limit=4GiB" # an option of the limit strategy only
        # shellcheck disable=SC2086
        "$bin" replay "$t" --strategy="$s" --capacity=143156MiB $lim --paranoid >/dev/null 2>"$tmp/err"
        r=$?
        if [ "$r" -eq 0 ]; then ok; else bad "suite trace $t under $s: exit $r $(head -c 300 "$tmp/err")"; fi
      done
    done
  else
    bad "gen_traces.py failed"
  fi
fi

if command -v shellcheck >/dev/null; then
  if shellcheck -x "$src/validate/run-on-gpu.sh" "$0"; then ok; else bad "shellcheck"; fi
fi

cli_finish
