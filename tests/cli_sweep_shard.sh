#!/usr/bin/env bash
# CLI tests of `gpusim sweep --shard` and `gpusim sweep merge`: the spec split into
# N = 1, 3 and 7 shards, with the index from --shard=I/N and from each job array's
# variable (Slurm, HyperQueue, Kubernetes, AWS Batch) set by hand, merged, equals a
# one-process run byte for byte (results, text and JSON summary); a shard resumes after
# a kill; a merge refuses shards of another spec, another count, a missing, duplicated
# or unfinished shard, and never leaves a half-written output; --partial merges as
# shards finish; an invalid trace gives exit 3 in its shard and in the merge as in one run.
# Usage: cli_sweep_shard.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
data=$src/tests/data/sweep
# a test run inside a job array must not take its index from there
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN HQ_TASK_ID JOB_COMPLETION_INDEX \
  AWS_BATCH_JOB_ARRAY_INDEX
same() { # same NAME FILE_A FILE_B
  if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; fi
}

# ---- the reference: one process
"$bin" sweep "$data/spec.json" --output="$tmp/ref.jsonl" --jobs=2 --summary="$tmp/ref.summary.json" \
  >"$tmp/ref.txt" 2>/dev/null || bad "one-process run"
[ "$(wc -l <"$tmp/ref.jsonl")" -eq 135 ] && ok || bad "the reference has $(wc -l <"$tmp/ref.jsonl") lines, want 135"

# run_shards KIND N DIR: every shard of N, its index given the KIND way
run_shards() {
  local kind=$1 n=$2 dir=$3 i
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do
    case $kind in
      flag) "$bin" sweep "$data/spec.json" --output="$dir/out.jsonl" --shard="$i/$n" --jobs=2 ;;
      # Slurm numbers this array from 1 (--array=1-N): the index is TASK_ID - TASK_MIN
      slurm) SLURM_ARRAY_TASK_ID=$((i + 1)) SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=$n \
        "$bin" sweep "$data/spec.json" --output="$dir/out.jsonl" --shard=auto --jobs=1 ;;
      hq) HQ_TASK_ID=$i "$bin" sweep "$data/spec.json" --output="$dir/out.jsonl" --shard="auto/$n" --jobs=1 ;;
      k8s) JOB_COMPLETION_INDEX=$i "$bin" sweep "$data/spec.json" --output="$dir/out.jsonl" --shard="auto/$n" ;;
      aws) AWS_BATCH_JOB_ARRAY_INDEX=$i "$bin" sweep "$data/spec.json" --output="$dir/out.jsonl" --shard="auto/$n" ;;
    esac >"$dir/shard-$i.txt" 2>"$dir/shard-$i.err" || bad "$kind shard $i/$n: $(cat "$dir/shard-$i.err")"
  done
}

for n in 1 3 7; do
  for kind in flag slurm hq k8s aws; do
    d=$tmp/$kind-$n
    run_shards "$kind" "$n" "$d"
    lines=0
    for ((i = 0; i < n; i++)); do
      f=$d/out.shard-$i-of-$n.jsonl
      head -1 "$f" | grep -qE "^\{\"gpusim_shard\":\{\"spec\":\"[^\"]*spec.json\",\"spec_hash\":\"[0-9a-f]{16}\",\"partition\":\"[0-9a-f]{16}\",\"shard\":$i,\"shards\":$n," &&
        ok || bad "$kind $i/$n: header $(head -c 300 "$f")"
      lines=$((lines + $(wc -l <"$f") - 1))
      # the index from the environment gives the shard --shard=I/N gives
      [ "$kind" = flag ] || same "$kind $i/$n against --shard=$i/$n" "$tmp/flag-$n/out.shard-$i-of-$n.jsonl" "$f"
    done
    [ "$lines" -eq 135 ] && ok || bad "$kind N=$n: the shards hold $lines jobs, want 135"
    "$bin" sweep merge "$d/merged.jsonl" "$d"/out.shard-*-of-"$n".jsonl --summary="$d/merged.summary.json" \
      >"$d/merged.txt" 2>"$d/merge.err" || bad "$kind N=$n merge: $(cat "$d/merge.err")"
    same "$kind N=$n merged results" "$tmp/ref.jsonl" "$d/merged.jsonl"
    same "$kind N=$n merged summary" "$tmp/ref.txt" "$d/merged.txt"
    same "$kind N=$n merged JSON summary" "$tmp/ref.summary.json" "$d/merged.summary.json"
  done
done
grep -qF "shard 2/3 (from HQ_TASK_ID): 42 of 135 jobs, from job 93" "$tmp/hq-3/shard-2.err" && ok || bad "shard line: $(cat "$tmp/hq-3/shard-2.err")"
grep -qF "shard 0/7 (from SLURM_ARRAY_TASK_ID)" "$tmp/slurm-7/shard-0.err" && ok || bad "slurm line: $(cat "$tmp/slurm-7/shard-0.err")"
grep -qF "3 of 3 shards (0 unfinished), 135 of 135 jobs" "$tmp/flag-3/merge.err" && ok || bad "merge line: $(cat "$tmp/flag-3/merge.err")"
# balanced: 7 shards of 5 traces (135 jobs) cut inside traces, none empty
for ((i = 0; i < 7; i++)); do
  [ "$(wc -l <"$tmp/flag-7/out.shard-$i-of-7.jsonl")" -gt 10 ] && ok || bad "shard $i/7 holds too few jobs"
done
# a quoted glob is expanded by the merge; a .sqlite-less run reads the JSONL
"$bin" sweep merge "$tmp/glob.jsonl" "$tmp/flag-7/out.shard-*-of-7.jsonl" >/dev/null 2>&1 || bad "merge of a quoted glob"
same "merge of a quoted glob" "$tmp/ref.jsonl" "$tmp/glob.jsonl"
expect 0 "" sweep merge "$tmp/json.jsonl" "$tmp/flag-3/out.shard-0-of-3.jsonl" "$tmp/flag-3/out.shard-1-of-3.jsonl" \
  "$tmp/flag-3/out.shard-2-of-3.jsonl" --format=json
same "merge --format=json" "$tmp/ref.summary.json" "$tmp/out"

# ---- usage errors of --shard, each before any work
F=$tmp/flag-3
expect 2 "--shard=3/3: the shard must be a number from 0 to 2" sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=3/3
expect 2 "--shard: expected I/N" sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=1
expect 2 "--shard: expected I/N" sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=0/0
expect 2 "no job array index in the environment (SLURM_ARRAY_TASK_ID, HQ_TASK_ID, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX)" \
  sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=auto/3
HQ_TASK_ID=1 expect 2 "the HyperQueue task array (HQ_TASK_ID) does not say how many tasks it has; give --shard=auto/N" \
  sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=auto
HQ_TASK_ID=1 JOB_COMPLETION_INDEX=1 expect 2 "both HQ_TASK_ID and JOB_COMPLETION_INDEX are set" \
  sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=auto/3
JOB_COMPLETION_INDEX=3 expect 2 "--shard=auto/3: JOB_COMPLETION_INDEX is 3, not an index from 0 to 2" \
  sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=auto/3
AWS_BATCH_JOB_ARRAY_INDEX=x expect 2 "AWS_BATCH_JOB_ARRAY_INDEX is 'x', not a task index" \
  sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=auto/3
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=4 expect 2 "--shard=auto/3: the Slurm job array has 4 tasks" \
  sweep "$data/spec.json" --output="$tmp/u.jsonl" --shard=auto/3
[ ! -e "$tmp/u.jsonl" ] && [ ! -e "$tmp/u.shard-0-of-3.jsonl" ] && ok || bad "a usage error wrote results"

# ---- a shard resumes after a kill (half a line, then SIGKILL), and only its own file
(GPUSIM_SWEEP_TEST_CRASH_AFTER=12 "$bin" sweep "$data/spec.json" --output="$tmp/r.jsonl" --shard=1/3 --jobs=2 \
  >/dev/null 2>&1) 2>/dev/null
rc=$?
[ "$rc" -eq 137 ] && ok || bad "crash hook in a shard: exit $rc, want 137"
[ "$(wc -l <"$tmp/r.shard-1-of-3.jsonl")" -eq 13 ] && ok || bad "want the header and 12 lines before the torn one"
expect 2 "already holds results; use --resume" sweep "$data/spec.json" --output="$tmp/r.jsonl" --shard=1/3
expect 0 "" sweep "$data/spec.json" --output="$tmp/r.jsonl" --shard=1/3 --resume
same "a resumed shard" "$F/out.shard-1-of-3.jsonl" "$tmp/r.shard-1-of-3.jsonl"
# another shard's file under this shard's name, and a shard's file resumed as a whole sweep
cp "$F/out.shard-0-of-3.jsonl" "$tmp/r.shard-2-of-3.jsonl"
expect 2 "holds another shard's results" sweep "$data/spec.json" --output="$tmp/r.jsonl" --shard=2/3 --resume
expect 2 "holds a shard's results (gpusim sweep --shard)" sweep "$data/spec.json" --output="$tmp/r.shard-1-of-3.jsonl" --resume
cp "$tmp/ref.jsonl" "$tmp/r.shard-0-of-1.jsonl"
expect 2 "is not a shard's results file" sweep "$data/spec.json" --output="$tmp/r.jsonl" --shard=0/1 --resume

# ---- merge: every shard, once, of one spec, finished; the output whole or not at all
m=$tmp/m.jsonl
expect 2 "shard(s) 1 of 3 missing (give every shard's results, or --partial" \
  sweep merge "$m" "$F/out.shard-0-of-3.jsonl" "$F/out.shard-2-of-3.jsonl"
expect 2 "shard 1/3 is given twice: " \
  sweep merge "$m" "$F"/out.shard-*-of-3.jsonl "$tmp/r.shard-1-of-3.jsonl"
expect 2 "they were cut into different numbers of shards" \
  sweep merge "$m" "$F/out.shard-0-of-3.jsonl" "$tmp/flag-7/out.shard-1-of-7.jsonl"
head -20 "$F/out.shard-1-of-3.jsonl" >"$tmp/cut.shard-1-of-3.jsonl"
expect 2 "shard 1/3 holds 19 of its" sweep merge "$m" "$F/out.shard-0-of-3.jsonl" "$tmp/cut.shard-1-of-3.jsonl" \
  "$F/out.shard-2-of-3.jsonl"
expect 2 "not a shard's results file" sweep merge "$m" "$tmp/ref.jsonl"
expect 2 "is a shard's results file (shard 0/3); merge into another file" sweep merge "$F/out.shard-0-of-3.jsonl" "$F"/out.shard-*-of-3.jsonl
cp "$tmp/ref.jsonl" "$tmp/plain.jsonl"
expect 2 "is one of the shards' results files" sweep merge "$tmp/plain.jsonl" "$F/out.shard-0-of-3.jsonl" "$tmp/plain.jsonl"
expect 2 "no shard results given" sweep merge "$m"
expect 2 "no shard results match" sweep merge "$m" "$tmp/none-*.jsonl"
[ ! -e "$m" ] && [ -z "$(find "$tmp" -maxdepth 1 -name 'm.jsonl.merge-*')" ] && ok || bad "a failed merge left a file"
# a shard of another spec (the same jobs, another name: another hash)
mkdir -p "$tmp/other"
cp -r "$data/jobs" "$tmp/other/jobs"
sed 's/"name": "sweep test/"name": "another sweep/' "$data/spec.json" >"$tmp/other/spec.json"
"$bin" sweep "$tmp/other/spec.json" --output="$tmp/other/o.jsonl" --shard=1/3 >/dev/null 2>&1 || bad "other spec's shard"
expect 2 "are not shards of one sweep: their specs differ" \
  sweep merge "$m" "$F/out.shard-0-of-3.jsonl" "$tmp/other/o.shard-1-of-3.jsonl" "$F/out.shard-2-of-3.jsonl"
# the spec changed after the shards ran; a trace file changed (its size: the cuts differ)
"$bin" sweep "$tmp/other/spec.json" --output="$tmp/other/o.jsonl" --shard=0/3 >/dev/null 2>&1
"$bin" sweep "$tmp/other/spec.json" --output="$tmp/other/o.jsonl" --shard=2/3 >/dev/null 2>&1
cp "$tmp/other/spec.json" "$tmp/other/spec.orig"
echo " " >>"$tmp/other/spec.json"
expect 2 "is not the spec the shards ran: it changed since" sweep merge "$m" "$tmp/other"/o.shard-*-of-3.jsonl
cp "$tmp/other/spec.orig" "$tmp/other/spec.json"
echo "" >>"$tmp/other/jobs/job_002.jsonl"
expect 2 "its trace files changed since the shards ran" sweep merge "$m" "$tmp/other"/o.shard-*-of-3.jsonl
# the spec moved: --spec says where it is now
mkdir -p "$tmp/w"
cp -r "$data/jobs" "$data/spec.json" "$tmp/w/"
(cd "$tmp/w" && for i in 0 1 2; do "$bin" sweep spec.json --output=w.jsonl --shard=$i/3 >/dev/null 2>&1; done)
# from another directory: the spec as the shards name it, found beside their results
expect 0 "" sweep merge "$m" "$tmp/w"/w.shard-*-of-3.jsonl
same "merge from another directory" "$tmp/ref.jsonl" "$m"
grep -qF '"spec": "spec.json"' <("$bin" sweep merge "$m" "$tmp/w"/w.shard-*-of-3.jsonl --format=json 2>/dev/null) &&
  ok || bad "the merged summary does not name the spec as the shards did"
mv "$tmp/w/spec.json" "$tmp/w/moved.json"
expect 2 "cannot read the spec the shards name (give --spec=FILE" sweep merge "$tmp/m2.jsonl" "$tmp/w"/w.shard-*-of-3.jsonl
expect 0 "" sweep merge "$tmp/m2.jsonl" "$tmp/w"/w.shard-*-of-3.jsonl --spec="$tmp/w/moved.json"
same "merge with --spec" "$tmp/ref.jsonl" "$tmp/m2.jsonl"

# ---- --partial: merge as shards finish, then the whole
p=$tmp/p.jsonl
expect 0 "" sweep merge "$p" "$F/out.shard-0-of-3.jsonl" "$tmp/cut.shard-1-of-3.jsonl" --partial
grep -qF "2 of 3 shards (1 unfinished)" "$tmp/err" && ok || bad "partial merge line: $(cat "$tmp/err")"
want=$(($(wc -l <"$F/out.shard-0-of-3.jsonl") - 1 + 19))
[ "$(wc -l <"$p")" -eq "$want" ] && ok || bad "partial merge: $(wc -l <"$p") lines, want $want"
grep -qF "not run]" "$tmp/out" && ok || bad "partial summary does not count the jobs not run: $(head -5 "$tmp/out")"
expect 0 "" sweep merge "$p" "$F"/out.shard-*-of-3.jsonl --partial
same "partial merge, then every shard" "$tmp/ref.jsonl" "$p"

# ---- an invalid trace: exit 3 in the shard that runs it and in the merge, as in one run
mkdir -p "$tmp/inv"
cp -r "$data/jobs" "$tmp/inv/jobs"
printf '%s\n%s\n%s\n' '{"format":"gpusim-trace","version":1}' '{"op":"alloc","id":1,"size":10}' \
  '{"op":"free","id":2}' >"$tmp/inv/jobs/zz_unknown_free.jsonl"
printf '{"traces": ["jobs"], "devices": ["1GiB"], "strategies": ["ideal", "growth"], "output": "r.jsonl"}' >"$tmp/inv/spec.json"
"$bin" sweep "$tmp/inv/spec.json" --jobs=1 >"$tmp/inv/one.txt" 2>/dev/null
[ $? -eq 3 ] && ok || bad "one run with an invalid trace: want exit 3"
codes=""
for i in 0 1; do
  "$bin" sweep "$tmp/inv/spec.json" --shard=$i/2 >/dev/null 2>&1
  codes="$codes$?"
done
[ "$codes" = "03" ] && ok || bad "shards' exit codes $codes, want 0 then 3 (the invalid trace sorts last)"
"$bin" sweep merge "$tmp/inv/m.jsonl" "$tmp/inv"/r.shard-*-of-2.jsonl >"$tmp/inv/m.txt" 2>/dev/null
[ $? -eq 3 ] && ok || bad "merge with an invalid trace: want exit 3"
same "merge with an invalid trace" "$tmp/inv/r.jsonl" "$tmp/inv/m.jsonl"
same "merge with an invalid trace (summary)" "$tmp/inv/one.txt" "$tmp/inv/m.txt"

# ---- more shards than jobs: 2 jobs in 5 shards, three of them empty (a header only)
mkdir -p "$tmp/few/jobs"
cp "$data/jobs/job_001.jsonl" "$tmp/few/jobs/"
printf '{"traces": ["jobs"], "devices": ["1GiB"], "strategies": ["ideal", "raw"], "output": "r.jsonl"}' >"$tmp/few/spec.json"
"$bin" sweep "$tmp/few/spec.json" >"$tmp/few/one.txt" 2>/dev/null || bad "one run of 2 jobs"
for i in 0 1 2 3 4; do "$bin" sweep "$tmp/few/spec.json" --shard=$i/5 >/dev/null 2>&1 || bad "shard $i/5 of 2 jobs"; done
[ "$(cat "$tmp/few"/r.shard-*-of-5.jsonl | wc -l)" -eq 7 ] && ok || bad "5 headers and 2 jobs expected"
# a trace whose name has braces and a quote (a resume and a merge read the job's name back)
mkdir -p "$tmp/odd/jobs"
cp "$data/jobs/job_001.jsonl" "$tmp/odd/jobs/a}{\"b.jsonl"
cp "$data/jobs/job_002.jsonl" "$tmp/odd/jobs/c.jsonl"
printf '{"traces": ["jobs"], "devices": ["1GiB", "2GiB"], "strategies": ["ideal", "raw"], "output": "r.jsonl"}' >"$tmp/odd/spec.json"
"$bin" sweep "$tmp/odd/spec.json" >/dev/null 2>&1 || bad "one run with an odd trace name"
for i in 0 1; do
  "$bin" sweep "$tmp/odd/spec.json" --shard=$i/2 >/dev/null 2>&1 &&
    "$bin" sweep "$tmp/odd/spec.json" --shard=$i/2 --resume >/dev/null 2>"$tmp/err" && ok ||
    bad "odd trace name, shard $i/2 and its resume: $(cat "$tmp/err")"
done
expect 0 "" sweep merge "$tmp/odd/m.jsonl" "$tmp/odd"/r.shard-*-of-2.jsonl
same "an odd trace name" "$tmp/odd/r.jsonl" "$tmp/odd/m.jsonl"
expect 0 "" sweep merge "$tmp/few/m.jsonl" "$tmp/few"/r.shard-*-of-5.jsonl
same "5 shards of 2 jobs" "$tmp/few/r.jsonl" "$tmp/few/m.jsonl"
same "5 shards of 2 jobs (summary)" "$tmp/few/one.txt" "$tmp/out"

# ---- a shard spread over MPI ranks (an array task of several nodes): the same shard file
if ! command -v mpirun >/dev/null 2>&1; then
  cli_skip_part "no mpirun: a shard under MPI not checked"
elif "$bin" sweep "$data/spec.json" --mpi=on --output="$tmp/probe.jsonl" 2>&1 >/dev/null | grep -qF "built without MPI"; then
  cli_skip_part "gpusim was built without MPI: a shard under MPI not checked"
else
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 OMPI_MCA_rmaps_base_oversubscribe=1 \
    timeout 120 mpirun --oversubscribe --allow-run-as-root -x ASAN_OPTIONS -n 2 "$bin" sweep "$data/spec.json" \
    --output="$tmp/mpi.jsonl" --shard=1/3 >/dev/null 2>"$tmp/mpi.err" || bad "a shard under mpirun: $(tail -3 "$tmp/mpi.err")"
  grep -qF "with MPI" "$tmp/mpi.err" && ok || bad "the shard did not run with MPI: $(cat "$tmp/mpi.err")"
  same "a shard under MPI" "$F/out.shard-1-of-3.jsonl" "$tmp/mpi.shard-1-of-3.jsonl"
fi

# ---- SQLite: each shard's database and journal; the merge writes one run's
if "$bin" sweep "$data/spec.json" --output="$tmp/probe.sqlite" --shard=0/3 2>&1 >/dev/null | grep -qF "built without SQLite"; then
  cli_skip_part "gpusim was built without SQLite: shards' databases not checked"
else
  mkdir -p "$tmp/db"
  for i in 0 1 2; do
    "$bin" sweep "$data/spec.json" --output="$tmp/db/s.sqlite" --shard=$i/3 >/dev/null 2>&1 || bad "sqlite shard $i"
    [ -s "$tmp/db/s.shard-$i-of-3.sqlite" ] && ok || bad "no database for shard $i"
    same "sqlite shard $i's journal" "$F/out.shard-$i-of-3.jsonl" "$tmp/db/s.shard-$i-of-3.jsonl"
  done
  "$bin" sweep "$data/spec.json" --output="$tmp/db/ref.sqlite" >/dev/null 2>&1 || bad "one run into SQLite"
  expect 0 "" sweep merge "$tmp/db/m.sqlite" "$tmp/db"/s.shard-*-of-3.sqlite
  same "merged journal" "$tmp/ref.jsonl" "$tmp/db/m.jsonl"
  if command -v python3 >/dev/null 2>&1; then
    dump() { python3 -c 'import sqlite3,sys; [print(r) for r in sqlite3.connect(sys.argv[1]).execute("SELECT * FROM jobs ORDER BY job")]' "$1"; }
    dump "$tmp/db/ref.sqlite" >"$tmp/db/ref.rows"
    dump "$tmp/db/m.sqlite" >"$tmp/db/m.rows"
    same "merged database rows" "$tmp/db/ref.rows" "$tmp/db/m.rows"
    [ "$(wc -l <"$tmp/db/m.rows")" -eq 135 ] && ok || bad "merged database: want 135 rows"
  else
    cli_skip_part "no python3: the databases' rows are not compared"
  fi
fi

cli_finish
