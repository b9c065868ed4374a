#!/usr/bin/env bash
# CLI tests of the strategy options, which each strategy describes once in its ops
# table (sim/strategy.h, strategy_option). Driven by `gpusim strategies
# --format=json`, so an option added to a table is covered without editing this file:
# - every strategy's every option (each choice of an enum, the table's example value
#   otherwise) goes command line -> result.strategy.options -> baseline -> check ->
#   the same result: the check passes with no metric "better", and the baseline
#   written by the check's own replay is byte-identical to the first;
# - every option is in --help of the commands that take strategy options and in
#   `gpusim strategies`;
# - the serving-16gb baseline that did not reproduce under its own check (issue 13:
#   --bfc-fragmentation-fraction was written under one name and read under another);
# - an option that belongs to none of the chosen strategies is a usage error naming
#   its strategies, and --gpu with --capacity or --compute-capability is refused.
# Usage: cli_options.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

command -v python3 >/dev/null 2>&1 || cli_skip "python3 missing (it reads gpusim strategies --format=json)"

trace=$src/traces/examples/mlp_train.json
serving=$src/traces/examples/serving-16gb.jsonl

# --- the tables, as `gpusim strategies --format=json` prints them ----------------
"$bin" strategies --format=json >"$tmp/strategies.json" || bad "strategies --format=json failed"
# one line per (strategy, option, value): STRATEGY KEY CLI VALUE, tab-separated;
# a strategy without options gets one line with empty KEY, CLI and VALUE
python3 - "$tmp/strategies.json" >"$tmp/cases.tsv" <<'PY' || bad "cannot read gpusim strategies --format=json"
import json, sys
key_of, cli_of = {}, {}
for s in json.load(open(sys.argv[1])):
    opts = s["options"]
    keys = [o["key"] for o in opts]
    if len(set(keys)) != len(keys):
        sys.exit("strategy %s: two options share a key" % s["name"])
    for o in opts:
        # strategies that share an option share its key and spelling
        if key_of.setdefault(o["cli"], o["key"]) != o["key"] or cli_of.setdefault(o["key"], o["cli"]) != o["cli"]:
            sys.exit("option --%s / %s is spelt differently by two strategies" % (o["cli"], o["key"]))
    if not opts:
        print("\t".join([s["name"], "", "", ""]))
    for o in opts:
        for f in ("key", "cli", "kind", "help"):
            if not o.get(f):
                sys.exit("strategy %s: an option without %s" % (s["name"], f))
        if o["kind"] == "enum" and not o.get("choices"):
            sys.exit("strategy %s: enum %s without choices" % (s["name"], o["key"]))
        values = o["choices"].split("|") if o["kind"] == "enum" else [o["example"]]
        for v in values:
            if not v:
                sys.exit("strategy %s: option %s has no example value" % (s["name"], o["key"]))
            print("\t".join([s["name"], o["key"], o["cli"], v]))
PY
# the required options of a strategy, as --cli=example arguments
required() {
  python3 - "$tmp/strategies.json" "$1" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1])):
    if s["name"] == sys.argv[2]:
        print(" ".join("--%s=%s" % (o["cli"], o["example"]) for o in s["options"] if o["required"]))
PY
}
# has_options FILE STRATEGY KEY: result.strategy.options holds every key of the
# strategy's table, and KEY (when given) with a value that is not ""
has_options() {
  python3 - "$tmp/strategies.json" "$1" "$2" "$3" <<'PY'
import json, sys
tables, result, name, key = sys.argv[1:5]
table = next(s for s in json.load(open(tables)) if s["name"] == name)
got = json.load(open(result))["strategy"].get("options", {})
missing = [o["key"] for o in table["options"] if o["key"] not in got]
if missing:
    sys.exit("options() does not write %s" % ", ".join(missing))
if key and not got.get(key):
    sys.exit("options() writes %s as %r after --%s was given" % (key, got.get(key), key))
PY
}

n_cases=0
while IFS=$'\t' read -r strategy key cli value; do
  n_cases=$((n_cases + 1))
  # shellcheck disable=SC2207
  req=($(required "$strategy"))
  args=(--strategy="$strategy")
  for r in "${req[@]}"; do
    case $r in --"$cli"=*) ;; *) args+=("$r") ;; esac
  done
  what="$strategy"
  if [ -n "$cli" ]; then
    args+=("--$cli=$value")
    what="$strategy --$cli=$value"
  fi
  rm -f "$tmp/b1.json" "$tmp/b2.json"
  if ! "$bin" check "$trace" --write-baseline="$tmp/b1.json" "${args[@]}" >"$tmp/out" 2>&1; then
    bad "$what: writing the baseline failed: $(head -c 300 "$tmp/out")"
    continue
  fi
  if msg=$(has_options "$tmp/b1.json" "$strategy" "$key" 2>&1); then ok; else bad "$what: $msg"; fi
  # the check replays under the baseline's strategy and options only
  "$bin" check "$trace" --baseline="$tmp/b1.json" --write-baseline="$tmp/b2.json" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] && grep -q "check: PASS" "$tmp/out" && ! grep -q "better" "$tmp/out"; then ok; else
    bad "$what: the baseline does not reproduce under its own check (exit $rc): $(cat "$tmp/out")"
  fi
  if cmp -s "$tmp/b1.json" "$tmp/b2.json"; then ok; else
    bad "$what: the check's replay differs from the baseline: $(diff "$tmp/b1.json" "$tmp/b2.json" | head -8)"
  fi
done <"$tmp/cases.tsv"
# today 22 cases (14 table entries of four strategies, each enum choice apart, plus raw and ideal)
if [ "$n_cases" -ge 10 ]; then ok; else bad "only $n_cases option cases from gpusim strategies --format=json"; fi

# --- every option in --help and in `gpusim strategies` ---------------------------
cut -f3 "$tmp/cases.tsv" | sort -u | grep -v '^$' >"$tmp/clis"
for cmd in replay compare plan check; do
  "$bin" "$cmd" --help >"$tmp/help" 2>&1
  while read -r cli; do
    if grep -qF -- "--$cli=" "$tmp/help"; then ok; else bad "gpusim $cmd --help does not list --$cli"; fi
  done <"$tmp/clis"
done
"$bin" strategies >"$tmp/list"
while IFS=$'\t' read -r strategy key cli value; do
  [ -z "$cli" ] && continue
  # the option is listed under its strategy, before the next strategy's line
  if awk -v s="$strategy" -v c="--$cli=" '$1 == s {on = 1; next} /^[a-z]/ {on = 0} on && index($1, c) == 1 {f = 1} END {exit !f}' "$tmp/list"; then
    ok
  else
    bad "gpusim strategies does not list --$cli under $strategy"
  fi
done <"$tmp/cases.tsv"

# --- issue 13: a baseline that fails its own check -------------------------------
expect_any 0 "wrote baseline" check "$serving" --write-baseline="$tmp/s1.json" --strategy=limit --limit=14848MiB \
  --bfc-fragmentation-fraction=0.2
if grep -q '"bfc_fragmentation_fraction": "0.2"' "$tmp/s1.json"; then ok; else
  bad "serving-16gb: the baseline does not hold bfc_fragmentation_fraction: $(grep -A8 '"options"' "$tmp/s1.json")"
fi
# the fraction is what makes it OOM: set back to 0 on the command line (which
# overrides the baseline's), the same limit does not, as the broken check said
expect_any 0 "out of memory                no  baseline 1, event 18069 (fragmentation)             ok (better)" \
  check "$serving" --baseline="$tmp/s1.json" --bfc-fragmentation-fraction=0
"$bin" check "$serving" --baseline="$tmp/s1.json" --write-baseline="$tmp/s2.json" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "check: PASS" "$tmp/out" && ! grep -q "better" "$tmp/out" &&
  grep -q "peak allocated .*+0.00%  ok$" "$tmp/out"; then ok; else
  bad "serving-16gb: the limit baseline does not reproduce (exit $rc): $(cat "$tmp/out")"
fi
if cmp -s "$tmp/s1.json" "$tmp/s2.json"; then ok; else bad "serving-16gb: the check's replay differs from the baseline"; fi

# --- an option of another strategy is a usage error ------------------------------
expect_any 2 "--memory-fraction is an option of torch, async, not of strategy greedy" \
  replay "$trace" --strategy=greedy --memory-fraction=0.3
expect_any 2 "--mem-fraction is an option of greedy, growth, not of strategy torch" \
  replay "$trace" --strategy=torch --mem-fraction=0.3
expect_any 2 "--limit is an option of limit, not of strategy growth" replay "$trace" --strategy=growth --limit=1GiB
expect_any 2 "--bfc-gc is an option of greedy, growth, limit, not of strategy ideal" \
  check "$trace" --write-baseline="$tmp/x.json" --strategy=ideal --bfc-gc=off
expect_any 2 "--alloc-conf is an option of torch, async, not of the strategies raw, ideal" \
  compare "$trace" --strategies=raw,ideal --alloc-conf=expandable_segments:True
expect_any 2 "--bfc-preset is an option of greedy, growth, limit, not of the strategies torch, raw" \
  plan "$trace" --strategies=torch,raw --bfc-preset=jax
# with several strategies, an option applies when one of them takes it
expect_any 0 "" compare "$trace" --strategies=greedy,torch --memory-fraction=0.5 --mem-fraction=0.5
expect_any 0 "" compare "$trace" --memory-fraction=0.5
# a fraction is written as people write it, wherever the options appear (the shortest text
# that reads back to the same double: 0.8, never 0.80000000000000004)
expect_any 0 '"memory_fraction": "0.8"' replay "$trace" --memory-fraction=0.8 --format=json
if grep -q '0000000000000' "$tmp/out"; then bad "a fraction with 17 digits: $(grep -o '"memory_fraction": "[^"]*"' "$tmp/out")"; else ok; fi
expect_any 0 '"memory_fraction": "0.1"' replay "$trace" --memory-fraction=0.1 --format=json
# the default strategy of replay is torch
expect_any 2 "not of strategy torch" replay "$trace" --bfc-gc=off
# --torch-fixes names open pull requests gpusim models, and only those
expect_any 2 "torch_fixes: '191303' is not a modelled fix (pytorch/pytorch pull requests 191302: " \
  replay "$trace" --torch-fixes=191302,191303
expect_any 0 '"torch_fixes": "191302,193400"' replay "$trace" --torch-fixes=193400,191302 --format=json
expect_any 0 "" replay "$trace" --memory-fraction=0.9

# --- conflicting device options ----------------------------------------------------
expect_any 2 "--gpu=T4 and --capacity conflict" replay "$trace" --gpu=T4 --capacity=24GiB
expect_any 2 "--gpu=T4 and --compute-capability conflict" compare "$trace" --gpu=T4 --compute-capability=8.0
expect_any 2 "--gpu=A100-40GB and --capacity conflict" check "$trace" --write-baseline="$tmp/x.json" --gpu=A100-40GB \
  --capacity=1GiB
expect_any 0 "" replay "$trace" --gpu=T4 --context=512MiB
expect_any 0 "" replay "$trace" --capacity=24GiB --compute-capability=7.5

cli_finish
