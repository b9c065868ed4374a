#!/usr/bin/env bash
# CLI tests of `gpusim check`: a pass against a baseline from `replay --format=json`
# and from --write-baseline, a planted regression (exit 1) per metric, --tolerance,
# --max-reserved, the JUnit file (valid against Jenkins' and Apache Ant's schemas, as
# tests/data/junit restates them; names that carry trace, strategy and baseline; times;
# a one-line failure message), and exit 2 for a missing or bad
# baseline, 3 for an invalid trace. Usage: cli_check.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

# xml_valid FILE: valid against both JUnit schemas (tests/data/junit: Jenkins' and
# Apache Ant's), with gpusim's shape; scripts/lib.sh installs xmllint (libxml2-utils)
xml_valid() {
  local f=$1 x
  if command -v xmllint >/dev/null 2>&1; then
    for x in jenkins ant; do
      xmllint --noout --schema "$src/tests/data/junit/$x.xsd" "$f" 2>"$tmp/xmlerr" ||
        { echo "xmllint ($x.xsd): $(cat "$tmp/xmlerr")"; return 1; }
    done
  else
    cli_skip_part "no xmllint (libxml2-utils): the JUnit file is not validated against its schemas"
    python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$f" || return 1
  fi
  grep -q '^<?xml version="1.0" encoding="UTF-8"?>' "$f" && grep -q '<testsuites>' "$f" &&
    grep -q '<testcase name="peak_reserved: [^"]* under [a-z]* vs [^"]*" classname="gpusim.check" time="[0-9]*\.[0-9]\{3\}"' "$f" &&
    grep -q '</testsuites>' "$f"
}

ex="$src/traces/examples/mlp_train.json"
"$bin" replay "$ex" --strategy=growth --format=json >"$tmp/base.json"

# pass: the same trace against its own result
expect_any 0 "check: PASS (3 metrics)" check "$ex" --baseline="$tmp/base.json" --junit="$tmp/pass.xml"
for m in "peak reserved" "peak allocated" "out of memory"; do
  if grep -q "^  $m .* ok$" "$tmp/out"; then ok; else bad "no verdict line for '$m': $(cat "$tmp/out")"; fi
done
# fragmentation is shown, and gates only when asked
if grep -q "^  fragmentation .* ok *(not gated; --metrics)$" "$tmp/out"; then ok; else bad "fragmentation line: $(cat "$tmp/out")"; fi
if xml_valid "$tmp/pass.xml" && ! grep -q '<failure' "$tmp/pass.xml"; then ok; else bad "pass.xml: $(cat "$tmp/pass.xml")"; fi

# planted regressions: a baseline claiming less memory, less fragmentation, no OOM
sed -E 's/"peak_reserved_bytes": [0-9]+/"peak_reserved_bytes": 1073741824/' "$tmp/base.json" >"$tmp/res.json"
expect_any 1 "check: FAIL (1 of 3 metrics regressed)" check "$ex" --baseline="$tmp/res.json" --junit="$tmp/fail.xml"
if grep -q "^  peak reserved .*+100.00%  REGRESSION$" "$tmp/out"; then ok; else bad "reserved verdict: $(cat "$tmp/out")"; fi
if xml_valid "$tmp/fail.xml" && [ "$(grep -c '<failure' "$tmp/fail.xml")" -eq 1 ] &&
  grep -q 'tests="3" failures="1"' "$tmp/fail.xml"; then ok; else bad "fail.xml: $(cat "$tmp/fail.xml")"; fi
# the failure: its message the verdict on one line (padding squeezed), its body the
# check's whole output (the header naming device and limit, every verdict line); the
# suite and its cases name the trace, the strategy and the baseline; times in seconds
got=$(python3 - "$tmp/fail.xml" "$ex" "$tmp/res.json" <<'PY'
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
suite = root.find("testsuite")
subject = "%s under growth vs %s" % (sys.argv[2], sys.argv[3])
f = suite.find("testcase/failure")
checks = [
    suite.get("name") == "gpusim check " + subject,
    [c.get("name") for c in suite.findall("testcase")] ==
        [m + ": " + subject for m in ("peak_reserved", "peak_allocated", "out_of_memory")],
    f.get("message").startswith("peak reserved 2.00 GiB baseline ") and f.get("message").endswith("+100.00% REGRESSION"),
    "\n" not in f.get("message"),
    f.text.startswith("gpusim check: ") and "  peak allocated " in f.text and f.text.endswith("check: FAIL (1 of 3 metrics regressed)\n"),
    float(suite.get("time")) >= 0 and all(float(c.get("time")) >= 0 for c in suite.findall("testcase")),
    {p.get("name"): p.get("value") for p in suite.find("properties")} ==
        {"trace": sys.argv[2], "strategy": "growth", "baseline": sys.argv[3], "tolerance_pct": "0"},
    suite.find("system-out").text == f.text,
]
print(" ".join("ok" if c else "NO%d" % i for i, c in enumerate(checks)))
PY
)
if [ "$got" = "ok ok ok ok ok ok ok ok" ]; then ok; else bad "JUnit failure: $got: $(cat "$tmp/fail.xml")"; fi
# two checks of one trace against two baselines are two suites, with distinct cases
expect_any 0 "PASS" check "$ex" --baseline="$tmp/base.json" --junit="$tmp/pass2.xml"
cp "$tmp/base.json" "$tmp/other.json"
expect_any 0 "PASS" check "$ex" --baseline="$tmp/other.json" --junit="$tmp/pass3.xml"
a=$(grep -o '<testcase name="[^"]*"' "$tmp/pass2.xml")
b=$(grep -o '<testcase name="[^"]*"' "$tmp/pass3.xml")
if [ -n "$a" ] && [ -z "$(comm -12 <(echo "$a" | sort) <(echo "$b" | sort))" ]; then ok
else bad "two baselines, the same case names: $a"; fi
# within tolerance it passes; the tolerance is a percentage
expect_any 0 "check: PASS" check "$ex" --baseline="$tmp/res.json" --tolerance=100
expect_any 0 "check: PASS" check "$ex" --baseline="$tmp/res.json" --tolerance=100%
expect_any 1 "REGRESSION" check "$ex" --baseline="$tmp/res.json" --tolerance=99.9

sed -E 's/"peak_allocated_bytes": [0-9]+/"peak_allocated_bytes": 1000/' "$tmp/base.json" >"$tmp/alloc.json"
expect_any 1 "peak allocated" check "$ex" --baseline="$tmp/alloc.json"
grep -q "^  peak allocated .*REGRESSION$" "$tmp/out" && ok || bad "allocated verdict: $(cat "$tmp/out")"
sed -E 's/"at_peak": [0-9.]+/"at_peak": 0.000000/' "$tmp/base.json" >"$tmp/frag.json"
# more fragmentation alone does not fail a check, unless --metrics asks for it
expect_any 0 "check: PASS (3 metrics)" check "$ex" --baseline="$tmp/frag.json"
grep -q "^  fragmentation .*worse (not gated; --metrics)$" "$tmp/out" && ok || bad "fragmentation shown: $(cat "$tmp/out")"
expect_any 1 "check: FAIL" check "$ex" --baseline="$tmp/frag.json" --metrics=reserved,allocated,oom,fragmentation
grep -q "^  fragmentation .*REGRESSION$" "$tmp/out" && ok || bad "fragmentation verdict: $(cat "$tmp/out")"
expect_any 0 "check: PASS (4 metrics)" check "$ex" --baseline="$tmp/frag.json" --metrics=reserved,allocated,oom,fragmentation \
  --fragmentation-tolerance=5
expect_any 0 "check: PASS (1 metrics)" check "$ex" --baseline="$tmp/frag.json" --metrics=fragmentation --fragmentation-tolerance=5
expect 2 "--metrics: unknown metric 'frag'" check "$ex" --baseline="$tmp/frag.json" --metrics=reserved,frag
# a change that lowers memory passes (and says so) even though fragmentation rose
sed -E 's/"peak_reserved_bytes": [0-9]+/"peak_reserved_bytes": 9000000000/; s/"peak_allocated_bytes": [0-9]+/"peak_allocated_bytes": 9000000000/' \
  "$tmp/frag.json" >"$tmp/lower.json"
expect_any 0 "check: PASS (3 metrics)" check "$ex" --baseline="$tmp/lower.json"
[ "$(grep -c "ok (better)$" "$tmp/out")" -eq 2 ] && ok || bad "decreases not improvements: $(cat "$tmp/out")"

# the first OOM moving (event 19446, fragmentation -> event 1309, capacity) is a regression,
# though the count stays 1 and memory drops, unless --allow-oom-move
ser="$src/traces/examples/serving-16gb.jsonl"
expect_any 0 "wrote baseline" check "$ser" --write-baseline="$tmp/oom.json" --strategy=growth
expect_any 0 "check: PASS" check "$ser" --baseline="$tmp/oom.json"
grep -q "^  out of memory *1, event 19446 (fragmentation)  baseline 1, event 19446 (fragmentation) *ok$" "$tmp/out" && ok ||
  bad "oom line: $(cat "$tmp/out")"
expect_any 1 "REGRESSION (the first OOM moved; --allow-oom-move accepts it)" check "$ser" --baseline="$tmp/oom.json" --capacity=12GiB
grep -q "1, event 1309 (capacity)  baseline 1, event 19446 (fragmentation)" "$tmp/out" && ok || bad "moved oom: $(cat "$tmp/out")"
expect_any 0 "ok (moved, allowed)" check "$ser" --baseline="$tmp/oom.json" --capacity=12GiB --allow-oom-move

# an OOM where the baseline had none: the same trace on a card too small
"$bin" replay "$ex" --strategy=growth --capacity=16GiB --format=json >"$tmp/big.json"
expect_any 0 "check: PASS" check "$ex" --baseline="$tmp/big.json"
expect_any 1 "out of memory" check "$ex" --baseline="$tmp/big.json" --capacity=1GiB --tolerance=1000
grep -q "^  out of memory .*REGRESSION$" "$tmp/out" && ok || bad "oom verdict: $(cat "$tmp/out")"

# --max-reserved: a fifth metric
expect_any 0 "check: PASS (4 metrics)" check "$ex" --baseline="$tmp/base.json" --max-reserved=2GiB
expect_any 1 "max reserved" check "$ex" --baseline="$tmp/base.json" --max-reserved=2047MiB --junit="$tmp/max.xml"
xml_valid "$tmp/max.xml" && grep -q 'name="max_reserved: ' "$tmp/max.xml" && ok || bad "max.xml: $(cat "$tmp/max.xml")"

# --write-baseline, then check against it; the strategy and its options come back
expect_any 0 "wrote baseline" check "$ex" --write-baseline="$tmp/w.json" --strategy=limit --limit=3GiB
if grep -q '"name": "limit"' "$tmp/w.json" && grep -q '"limit_bytes": "3221225472"' "$tmp/w.json"; then ok; else bad "written baseline: $(head -c 400 "$tmp/w.json")"; fi
expect_any 0 "under 'limit'" check "$ex" --baseline="$tmp/w.json"
# the header names the effective limit the baseline's options give (--limit=3GiB)
if grep -q ", allocator limit 3.00 GiB (--limit), against" "$tmp/out"; then ok; else bad "no effective limit in the header: $(head -1 "$tmp/out")"; fi
if grep -q "^  peak reserved *3.00 GiB" "$tmp/out"; then ok; else bad "limit not given back: $(cat "$tmp/out")"; fi
expect_any 1 "REGRESSION" check "$ex" --baseline="$tmp/w.json" --limit=4GiB
# a baseline of another example (JSONL, the device of its header)
ser="$src/traces/examples/serving-16gb.jsonl"
expect_any 0 "wrote baseline" check "$ser" --write-baseline="$tmp/s.json" --strategy=torch
expect_any 0 "check: PASS" check "$ser" --baseline="$tmp/s.json"
# without --strategy, check writes its baseline under replay's default strategy
expect_any 0 "wrote baseline" check "$ex" --write-baseline="$tmp/d.json"
"$bin" replay "$ex" --format=json >"$tmp/d-replay.json"
want=$(grep -o '"strategy": {"name": "[a-z]*"' "$tmp/d-replay.json")
if [ -n "$want" ] && grep -qF "$want" "$tmp/d.json"; then ok; else bad "check's default strategy is not replay's ($want)"; fi

# exit 2: missing, not JSON, not a result, unknown strategy; usage
expect_any 2 "cannot be read" check "$ex" --baseline="$tmp/missing.json"
printf '{"gpusim": ' >"$tmp/trunc.json"
expect_any 2 "not valid JSON" check "$ex" --baseline="$tmp/trunc.json"
printf '[1, 2]' >"$tmp/arr.json"
expect_any 2 "not a gpusim result" check "$ex" --baseline="$tmp/arr.json"
sed -E 's/"peak_reserved_bytes": [0-9]+/"peak_reserved_bytes": "big"/' "$tmp/base.json" >"$tmp/str.json"
expect_any 2 "result.peak_reserved_bytes" check "$ex" --baseline="$tmp/str.json"
sed -E 's/"name": "growth"/"name": "quantum"/' "$tmp/base.json" >"$tmp/q.json"
expect_any 2 "not one this build knows" check "$ex" --baseline="$tmp/q.json"
expect_any 2 "no --baseline" check "$ex"
expect_any 2 "--tolerance" check "$ex" --baseline="$tmp/base.json" --tolerance=-1
expect_any 2 "--max-reserved" check "$ex" --baseline="$tmp/base.json" --max-reserved=lots
expect_any 2 "exactly one trace" check --baseline="$tmp/base.json"
# exit 3: the trace is invalid
printf '{"format":"gpusim-trace","version":1}\n{"op":"free","id":7}\n' >"$tmp/badid.jsonl"
expect_any 3 "free of id 7" check "$tmp/badid.jsonl" --baseline="$tmp/base.json" --junit="$tmp/none.xml"
if [ -e "$tmp/none.xml" ]; then bad "an invalid trace left a JUnit file"; else ok; fi
expect_any 3 "README.md" check "$src/traces/examples/README.md" --baseline="$tmp/base.json"

cli_finish
