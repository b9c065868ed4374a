#!/usr/bin/env bash
# CLI tests of `gpusim sweep` on threads: --jobs=1 and --jobs=4 and a
# run from another directory give byte-identical sorted results; --resume after
# a run killed mid-way (a torn last line, and a real kill -9) gives the same file
# with no duplicated or missing job; bad specs are clear errors before any work
# starts; an invalid trace is reported per job with exit 3; byte counts in the results
# file are read back exactly.
# Usage: cli_sweep.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
data=$src/tests/data/sweep
pids=""
# shellcheck disable=SC2154 # p is the trap's own loop variable
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
same() { # same NAME FILE_A FILE_B
  if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; fi
}

# job lines: no duplicate, every job of the reference present
complete() { # complete NAME FILE REF
  local n ref
  n=$(sort "$2" | uniq -d | wc -l)
  [ "$n" -eq 0 ] && ok || bad "$1: $n duplicated lines"
  ref=$(wc -l <"$3")
  [ "$(wc -l <"$2")" -eq "$ref" ] && ok || bad "$1: $(wc -l <"$2") lines, want $ref"
}

# ---- the same bytes however it runs
expect 0 "" sweep "$data/spec.json" --output="$tmp/j1.jsonl" --jobs=1 --summary="$tmp/j1.summary.json"
cp "$tmp/out" "$tmp/j1.txt"
expect 0 "" sweep "$data/spec.json" --output="$tmp/j4.jsonl" --jobs=4 --summary="$tmp/j4.summary.json"
cp "$tmp/out" "$tmp/j4.txt"
same "--jobs=1 vs --jobs=4" "$tmp/j1.jsonl" "$tmp/j4.jsonl"
same "summary text" "$tmp/j1.txt" "$tmp/j4.txt"
same "summary json" "$tmp/j1.summary.json" "$tmp/j4.summary.json"
(cd "$data" && "$bin" sweep spec.json --output="$tmp/cwd.jsonl" --jobs=2 >/dev/null 2>&1) || bad "sweep from the spec's directory"
same "run from another directory" "$tmp/j1.jsonl" "$tmp/cwd.jsonl"
[ "$(wc -l <"$tmp/j1.jsonl")" -eq 135 ] && ok || bad "135 jobs expected, got $(wc -l <"$tmp/j1.jsonl")"
head -1 "$tmp/j1.jsonl" | grep -q '^{"job":{"trace":"jobs/job_001.jsonl","device":"A100-40GB","strategy":"ideal","options":"default"},"gpusim":' &&
  ok || bad "first line: $(head -c 300 "$tmp/j1.jsonl")"
grep -q '"fit_share"' "$tmp/j1.summary.json" && ok || bad "summary json lacks fit_share"
# a spec without "context" takes the command line's default per device: a catalog A100
# (cc 8.0) the CUDA 12 figure, 256 MiB = 268,435,456 B (sim/gpu_context.c); a custom
# capacity 0 B; a device's own "context" (300 MiB = 314,572,800 B) wins
grep -q '"device":{"name":"A100-40GB","capacity_bytes":42505076736,"context_bytes":268435456,' "$tmp/j1.jsonl" &&
  grep -q '"device":{"name":"1GiB","capacity_bytes":1073741824,"context_bytes":0,' "$tmp/j1.jsonl" &&
  grep -q '"device":{"name":"2G-ctx","capacity_bytes":2147483648,"context_bytes":314572800,' "$tmp/j1.jsonl" &&
  ok || bad "default contexts: $(grep -o '"device":{[^}]*}' "$tmp/j1.jsonl" | sort -u)"
grep -qE '^1GiB +greedy +default +3/5 +60%' "$tmp/j1.txt" && ok || bad "summary text: $(head -5 "$tmp/j1.txt")"
grep -qF 'jobs/job_004.jsonl (capacity)' "$tmp/j1.txt" && ok || bad "summary names the OOM trace and cause"
if ! command -v python3 >/dev/null 2>&1; then
  cli_skip_part "no python3: the results are not parsed as JSON"
else
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]; json.load(open(sys.argv[2]))' \
    "$tmp/j1.jsonl" "$tmp/j1.summary.json" && ok || bad "results are not valid JSON lines"
fi

# ---- an existing output is kept unless --resume or --force
expect 2 "already holds results; use --resume" sweep "$data/spec.json" --output="$tmp/j1.jsonl"
expect 0 "" sweep "$data/spec.json" --output="$tmp/j1.jsonl" --resume
grep -qF "0 jobs run" "$tmp/err" && ok || bad "--resume of a finished sweep ran jobs: $(cat "$tmp/err")"
same "resume of a finished sweep" "$tmp/j1.jsonl" "$tmp/j4.jsonl"

# ---- killed while writing a line (test hook: half a line, then SIGKILL)
(GPUSIM_SWEEP_TEST_CRASH_AFTER=40 "$bin" sweep "$data/spec.json" --output="$tmp/crash.jsonl" --jobs=2 >/dev/null 2>&1) 2>/dev/null
rc=$?
[ "$rc" -eq 137 ] && ok || bad "crash hook: exit $rc, want 137"
[ "$(wc -l <"$tmp/crash.jsonl")" -eq 40 ] && [ -n "$(tail -c 1 "$tmp/crash.jsonl")" ] && ok ||
  bad "crash hook: want 40 lines and a torn one"
expect 0 "" sweep "$data/spec.json" --output="$tmp/crash.jsonl" --resume --jobs=3
grep -qF "95 jobs run" "$tmp/err" && ok || bad "resume ran $(cat "$tmp/err"), want 95 jobs"
same "resume after a torn line" "$tmp/j1.jsonl" "$tmp/crash.jsonl"
complete "resume after a torn line" "$tmp/crash.jsonl" "$tmp/j1.jsonl"

# ---- a real kill -9 in the middle of a longer sweep
mkdir -p "$tmp/big"
bash "$data/gen_jobs.sh" 4 "$tmp/big/jobs" 7 1500
sed 's/"output": "results.jsonl"/"output": "out.jsonl"/' "$data/spec.json" >"$tmp/big/spec.json"
"$bin" sweep "$tmp/big/spec.json" --output="$tmp/big/ref.jsonl" --jobs=2 >/dev/null 2>&1 || bad "big reference run"
"$bin" sweep "$tmp/big/spec.json" --jobs=1 >/dev/null 2>&1 &
pid=$!
pids="$pids $pid"
for _ in $(seq 1 400); do
  [ -f "$tmp/big/out.jsonl" ] && [ "$(wc -l <"$tmp/big/out.jsonl")" -ge 5 ] && break
  sleep 0.01
done
if kill -9 "$pid" 2>/dev/null; then
  wait "$pid" 2>/dev/null
  n=$(wc -l <"$tmp/big/out.jsonl")
  [ "$n" -lt "$(wc -l <"$tmp/big/ref.jsonl")" ] && ok || bad "kill -9 came after the end ($n lines)"
  expect 0 "" sweep "$tmp/big/spec.json" --resume --jobs=2
  same "resume after kill -9" "$tmp/big/ref.jsonl" "$tmp/big/out.jsonl"
  complete "resume after kill -9" "$tmp/big/out.jsonl" "$tmp/big/ref.jsonl"
else
  wait "$pid" 2>/dev/null
  echo "note: the sweep ended before it could be killed; kill -9 case not exercised"
fi

# ---- bad specs: clear errors, nothing run, no output file
bad_spec() { # bad_spec CODE "message" SPEC_TEXT
  local code=$1 text=$2
  printf '%s' "$3" >"$tmp/bad.json"
  rm -f "$tmp/bad.jsonl"
  expect "$code" "$text" sweep "$tmp/bad.json" --output="$tmp/bad.jsonl"
  if [ -e "$tmp/bad.jsonl" ]; then echo "FAIL: bad spec ($text) created the output"; fails=$((fails + 1)); else ok; fi
}
cp -r "$data/jobs" "$tmp/jobs"
S='"traces": ["jobs"], "devices": ["A100-40GB"]'
bad_spec 2 "bad.json:2: the sweep spec is not valid JSON (column 26: invalid JSON value)" "{$S,
  \"strategies\": [\"ideal\",]}"
bad_spec 2 "unknown strategy 'nope' (expected one of: " "{$S, \"strategies\": [\"ideal\", \"nope\"]}"
bad_spec 2 "traces: cannot open '$tmp/missing.jsonl'" '{"traces": ["jobs", "missing.jsonl"], "devices": ["A100-40GB"], "strategies": ["ideal"]}'
bad_spec 2 "traces: 'nothing/*.jsonl' matches no file" '{"traces": ["nothing/*.jsonl"], "devices": ["A100-40GB"], "strategies": ["ideal"]}'
bad_spec 2 "unknown GPU 'Z80'" '{"traces": ["jobs"], "devices": ["Z80"], "strategies": ["ideal"]}'
bad_spec 2 "unknown key 'device'" '{"traces": ["jobs"], "device": ["A100-40GB"], "strategies": ["ideal"]}'
bad_spec 2 "missing \"strategies\"" "{$S}"
bad_spec 2 "unknown option 'limits'" "{$S, \"strategies\": [\"limit\"], \"options\": [{\"limits\": \"4GiB\"}]}"
bad_spec 2 "option set 'limit=lots' under strategy 'limit' on device 'A100-40GB'" \
  "{$S, \"strategies\": [\"limit\"], \"options\": [{\"limit\": \"lots\"}]}"
bad_spec 2 "two option sets are called 'a'" "{$S, \"strategies\": [\"ideal\"], \"options\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}"
printf '{"format":"gpusim-trace","version":7}\n' >"$tmp/jobs/zz_bad_header.jsonl"
bad_spec 3 "zz_bad_header.jsonl" "{$S, \"strategies\": [\"ideal\"]}"
rm -f "$tmp/jobs/zz_bad_header.jsonl"
expect 2 "no spec given" sweep
expect 2 "--jobs: expected a number of workers" sweep "$data/spec.json" --jobs=0
expect 2 "--resume and --force" sweep "$data/spec.json" --resume --force
expect 2 "cannot read the sweep spec" sweep "$tmp/nope.json" --output="$tmp/x.jsonl"

# ---- a trace that fails mid-way: an error line per job, exit 3, the rest runs
printf '%s\n%s\n%s\n' '{"format":"gpusim-trace","version":1}' '{"op":"alloc","id":1,"size":10}' \
  '{"op":"free","id":2}' >"$tmp/jobs/zz_unknown_free.jsonl"
printf '{%s, "strategies": ["ideal", "growth"]}' "$S" >"$tmp/inv.json"
expect 3 "" sweep "$tmp/inv.json" --output="$tmp/inv.jsonl" --jobs=2
[ "$(grep -c '"error":{"exit":3' "$tmp/inv.jsonl")" -eq 2 ] && ok || bad "want 2 error lines: $(grep error "$tmp/inv.jsonl")"
[ "$(wc -l <"$tmp/inv.jsonl")" -eq 12 ] && ok || bad "want 12 lines"
grep -qF "invalid traces:" "$tmp/out" && grep -qF "free of id 2" "$tmp/out" && ok || bad "summary lacks the invalid trace: $(cat "$tmp/out")"

fail_msg() { echo "FAIL: $*"; fails=$((fails + 1)); }
# ---- a spec inside its own traces directory: neither it nor its results are traces; the
# output defaults to SPEC.results.jsonl beside the spec
mkdir -p "$tmp/own"
cp "$data"/jobs/*.jsonl "$tmp/own/"
printf '{"traces": ["."], "devices": ["A100-40GB"], "strategies": ["ideal"]}' >"$tmp/own/fleet.json"
expect_any 0 "5 of 5 jobs" sweep "$tmp/own/fleet.json"
[ -s "$tmp/own/fleet.results.jsonl" ] && ok || fail_msg "no default output fleet.results.jsonl"
expect_any 0 "5 of 5 jobs" sweep "$tmp/own/fleet.json" --force
[ "$(wc -l <"$tmp/own/fleet.results.jsonl")" -eq 5 ] && ok || fail_msg "the results file was read as a trace"
# the same through a glob that matches the spec and, on the second run, its results
mkdir -p "$tmp/own2"
cp "$data"/jobs/*.jsonl "$tmp/own2/"
printf '{"traces": ["*.json*"], "devices": ["A100-40GB"], "strategies": ["ideal"]}' >"$tmp/own2/glob.json"
expect_any 0 "5 of 5 jobs" sweep "$tmp/own2/glob.json"
expect_any 0 "5 of 5 jobs" sweep "$tmp/own2/glob.json" --force
# ---- columns stay aligned with a long trace path
mkdir -p "$tmp/own/a-rather-long-directory-name/with-another-level-below-it"
mv "$tmp/own/job_004.jsonl" "$tmp/own/a-rather-long-directory-name/with-another-level-below-it/job_004_with_a_long_name.jsonl"
printf '{"traces": [".", "a-rather-long-directory-name/with-another-level-below-it"], "devices": ["A100-40GB", "1GiB"], "strategies": ["ideal"]}' >"$tmp/own/fleet.json"
expect 0 "" sweep "$tmp/own/fleet.json" --force
# the "frag max" column (right-aligned) ends at the same offset in the header and in every row
awk '/^device / { h = index($0, "frag max") + 8 }
  /^(A100-40GB|1GiB) / { n++; if (index($0, "0.0000  ") + 6 != h) bad = 1 }
  END { exit bad || n != 2 || !h }' "$tmp/out" && ok || fail_msg "columns not aligned: $(cat "$tmp/out")"

# ---- the effective limit of each group: greedy on 1 GiB takes 1024 - 225 MiB (TF's reserve
# below 2 GiB available) = 799 MiB; ideal may use the whole card
grep -qE '^1GiB +greedy +default +3/5 +60% +799.00 MiB ' "$tmp/j1.txt" && ok || fail_msg "limit column: $(head -6 "$tmp/j1.txt")"
grep -qE '^1GiB +ideal +default +4/5 +80% +1.00 GiB ' "$tmp/j1.txt" && ok || fail_msg "ideal's limit: $(head -6 "$tmp/j1.txt")"
grep -qF '"device": "1GiB", "capacity_bytes": 1073741824, "limit_bytes": 837812224, "strategy": "greedy"' "$tmp/j1.summary.json" && ok ||
  fail_msg "limit_bytes in the summary JSON"

# ---- nodes: "node" joins the device dimension; the trace is rank 0 of a job that sees every GPU
mkdir -p "$tmp/nodes"
cp -r "$data/jobs" "$tmp/nodes/jobs"
printf '{"traces": ["jobs"], "devices": ["1GiB"], "node": ["1GiB", "2x1GiB", "A100-40GB,T4"], "strategies": ["ideal", "greedy"], "output": "n.jsonl"}' >"$tmp/nodes/n.json"
expect 0 "" sweep "$tmp/nodes/n.json" --jobs=1
cp "$tmp/out" "$tmp/nodes/j1.txt"
cp "$tmp/nodes/n.jsonl" "$tmp/nodes/j1.jsonl"
# 5 traces x (1 device + 3 nodes) x 2 strategies
[ "$(wc -l <"$tmp/nodes/n.jsonl")" -eq 40 ] && ok || fail_msg "node sweep: $(wc -l <"$tmp/nodes/n.jsonl") lines, want 40"
# ideal, job_001 (peak 105014216 B) on 2x1GiB: GPU 0 only, headroom 1073741824 - 105014216 = 968727608
grep -qF '{"job":{"trace":"jobs/job_001.jsonl","node":"2x1GiB","strategy":"ideal","options":"default"},"gpusim":"0.1.0","trace":{"path":"jobs/job_001.jsonl"' "$tmp/nodes/n.jsonl" && ok || fail_msg "node coordinates"
grep -qF '"node":{"name":"2x1GiB","gpus":2,"capacity_bytes":2147483648,"context_bytes":0},"result":{"completed":true,"ooms":0,"gpus_used":1,"peak_device_bytes":105014216,"peak_gpu":0,"headroom_bytes":968727608,"headroom_gpu":0,' "$tmp/nodes/n.jsonl" && ok || fail_msg "ideal on 2x1GiB: $(grep '2x1GiB","strategy":"ideal' "$tmp/nodes/n.jsonl" | head -1)"
# greedy on 2x1GiB: 799 MiB = 837812224 B on each GPU (GPU 1 at start), headroom 235929600 B on each
grep -F '"node":"2x1GiB","strategy":"greedy"' "$tmp/nodes/n.jsonl" | head -1 |
  grep -qF '{"gpu":1,"name":"custom","capacity_bytes":1073741824,"limit_bytes":837812224,"peak_used_bytes":837812224,"final_used_bytes":837812224,"headroom_bytes":235929600,"oom":false,"use":"start"}' && ok ||
  fail_msg "greedy's start on GPU 1"
# job_003 (966582864 B live) does not fit greedy's 837812224 B on GPU 0
grep -F '"trace":"jobs/job_003.jsonl","node":"2x1GiB","strategy":"greedy"' "$tmp/nodes/n.jsonl" |
  grep -qF '"first_oom":{"gpu":0,"rank":0,"cause":"capacity"}' && ok || fail_msg "job_003's OOM on GPU 0"
grep -qE '^2x1GiB +greedy +default +3/5 +60% +799.00 MiB +225.00 MiB \(jobs/job_001.jsonl\)' "$tmp/nodes/j1.txt" && ok ||
  fail_msg "node row: $(cat "$tmp/nodes/j1.txt")"
grep -qF "5 traces x 4 devices and nodes x 2 strategies" "$tmp/nodes/j1.txt" && ok || fail_msg "node header: $(head -2 "$tmp/nodes/j1.txt")"
# a node and a device of the same name are two jobs, told apart on --resume
expect 0 "0 jobs run" sweep "$tmp/nodes/n.json" --resume
same "node sweep resumed when finished" "$tmp/nodes/j1.jsonl" "$tmp/nodes/n.jsonl"
expect 0 "" sweep "$tmp/nodes/n.json" --output="$tmp/nodes/j3.jsonl" --jobs=3
same "node sweep: --jobs=1 vs --jobs=3" "$tmp/nodes/j1.jsonl" "$tmp/nodes/j3.jsonl"
(GPUSIM_SWEEP_TEST_CRASH_AFTER=11 "$bin" sweep "$tmp/nodes/n.json" --output="$tmp/nodes/c.jsonl" --jobs=2 >/dev/null 2>&1) 2>/dev/null
expect 0 "29 jobs run" sweep "$tmp/nodes/n.json" --output="$tmp/nodes/c.jsonl" --resume --jobs=2
same "node sweep resumed after a kill" "$tmp/nodes/j1.jsonl" "$tmp/nodes/c.jsonl"
cp -r "$data/jobs" "$tmp/jobs2"
N='"traces": ["jobs2"], "strategies": ["ideal"]'
bad_spec 2 "\"node\": 'NOPE' is neither a GPU of the catalog" "{$N, \"node\": \"8xNOPE\"}"
bad_spec 2 "\"node\" must be a string of GPUs" "{$N, \"node\": 8}"
bad_spec 2 "\"node\": '2xT4' is listed twice" "{$N, \"node\": [\"2xT4\", \"2xT4\"]}"
bad_spec 2 "option set 'limit=lots' under strategy 'limit' on node '1GiB,T4'" \
  '{"traces": ["jobs2"], "node": "1GiB,T4", "strategies": ["limit"], "options": [{"limit": "lots"}]}'

# ---- the results file is read back exactly: a byte count above 2^53 survives --resume
mkdir -p "$tmp/exact"
cp "$src/tests/golden/job_a.json" "$tmp/exact/"
echo '{"traces": ["job_a.json"], "devices": ["T4"], "strategies": ["raw"]}' >"$tmp/exact/s.json"
expect 0 "" sweep "$tmp/exact/s.json" --output="$tmp/exact/o.jsonl"
# 2^53 + 1 is no double: read through one, it would come back as 9007199254740992
sed -i 's/"limit_bytes":[0-9]*/"limit_bytes":9007199254740993/' "$tmp/exact/o.jsonl"
"$bin" sweep "$tmp/exact/s.json" --output="$tmp/exact/o.jsonl" --resume --format=json >"$tmp/exact/sum.json" 2>/dev/null
grep -qF '"limit_bytes": 9007199254740993,' "$tmp/exact/sum.json" && ok || bad "a limit above 2^53 was rounded: $(grep -o '"limit_bytes": [0-9]*' "$tmp/exact/sum.json")"

cli_finish
