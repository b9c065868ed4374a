#!/usr/bin/env bash
# MPI tests of `gpusim sweep`: `mpirun --oversubscribe -n 3` gives the
# same bytes as --jobs=1; a rank killed while it holds a job loses only that job
# (reported, the rest completes) and --resume then gives the same file. Skipped
# (exit 77, listed by scripts/test) when mpirun is missing or gpusim was built without MPI.
# Usage: cli_sweep_mpi.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
data=$src/tests/data/sweep

command -v mpirun >/dev/null 2>&1 || cli_skip "no mpirun (scripts/test installs openmpi-bin)"
if "$bin" sweep "$data/spec.json" --mpi=on --output="$tmp/probe.jsonl" 2>&1 >/dev/null | grep -qF "built without MPI"; then
  cli_skip "gpusim was built without MPI (GPUSIM_MPI=OFF; install libopenmpi-dev and reconfigure)"
fi
rm -f "$tmp/probe.jsonl"
# Open MPI's own allocations are not ours to leak-check; a root CI container is fine.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export OMPI_MCA_rmaps_base_oversubscribe=1
run_mpi() { # run_mpi N ARGS... (extra mpirun options in $MPI_EXTRA)
  local n=$1
  shift
  # shellcheck disable=SC2086
  timeout 120 mpirun --oversubscribe --allow-run-as-root $MPI_EXTRA -x ASAN_OPTIONS -n "$n" "$bin" "$@"
}
MPI_EXTRA=""

"$bin" sweep "$data/spec.json" --output="$tmp/j1.jsonl" --jobs=1 >"$tmp/j1.txt" 2>/dev/null || bad "--jobs=1 run"
run_mpi 3 sweep "$data/spec.json" --output="$tmp/m3.jsonl" >"$tmp/m3.txt" 2>"$tmp/m3.err"
rc=$?
[ "$rc" -eq 0 ] && ok || bad "mpirun -n 3: exit $rc: $(tail -5 "$tmp/m3.err")"
cmp -s "$tmp/j1.jsonl" "$tmp/m3.jsonl" && ok || bad "mpirun -n 3 and --jobs=1 results differ"
cmp -s "$tmp/j1.txt" "$tmp/m3.txt" && ok || bad "mpirun -n 3 and --jobs=1 summaries differ"
grep -qF "with MPI" "$tmp/m3.err" && ok || bad "the run did not use MPI: $(cat "$tmp/m3.err")"

# a bad spec ends every rank at once with the usage status
printf '{"traces": ["jobs"], "devices": ["A100-40GB"], "strategies": ["nope"]}' >"$tmp/bad.json"
cp -r "$data/jobs" "$tmp/jobs"
run_mpi 3 sweep "$tmp/bad.json" --output="$tmp/bad.jsonl" >/dev/null 2>"$tmp/bad.err"
rc=$?
[ "$rc" -eq 2 ] && grep -qF "unknown strategy 'nope'" "$tmp/bad.err" && [ ! -e "$tmp/bad.jsonl" ] && ok ||
  bad "bad spec under mpirun: exit $rc, $(head -3 "$tmp/bad.err")"

# rank 2 dies (SIGKILL) when it gets its first job; --enable-recovery keeps mpirun
# from ending the others, the 1 s heartbeat finds the dead rank
mkdir -p "$tmp/big"
bash "$data/gen_jobs.sh" 4 "$tmp/big/jobs" 3 1500
sed 's/"output": "results.jsonl"/"output": "out.jsonl"/' "$data/spec.json" >"$tmp/big/spec.json"
"$bin" sweep "$tmp/big/spec.json" --output="$tmp/big/ref.jsonl" --jobs=2 >/dev/null 2>&1 || bad "reference run"
MPI_EXTRA="--enable-recovery -x GPUSIM_SWEEP_TEST_KILL_RANK"
GPUSIM_SWEEP_TEST_KILL_RANK=2 run_mpi 3 sweep "$tmp/big/spec.json" --heartbeat=1 >"$tmp/kill.txt" 2>"$tmp/kill.err"
MPI_EXTRA=""
grep -qF "rank 2 has been silent" "$tmp/kill.err" && grep -qF "1 job(s) lost" "$tmp/kill.err" && ok ||
  bad "dead rank not reported: $(tail -8 "$tmp/kill.err")"
total=$(wc -l <"$tmp/big/ref.jsonl")
[ "$(wc -l <"$tmp/big/out.jsonl")" -eq $((total - 1)) ] && ok || bad "want $((total - 1)) lines after the rank died"
grep -qF "[1 not run]" "$tmp/kill.txt" && ok || bad "summary does not show the job not run: $(head -8 "$tmp/kill.txt")"
run_mpi 3 sweep "$tmp/big/spec.json" --resume >/dev/null 2>"$tmp/resume.err" && ok || bad "resume under mpirun: $(tail -3 "$tmp/resume.err")"
grep -qF "1 jobs run" "$tmp/resume.err" && ok || bad "resume ran: $(tail -2 "$tmp/resume.err")"
cmp -s "$tmp/big/ref.jsonl" "$tmp/big/out.jsonl" && ok || bad "after --resume the results differ from one run"

cli_finish
