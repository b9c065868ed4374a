#!/usr/bin/env bash
# The job array examples of docs/sweep.md ("Job arrays"), run as written: the Slurm
# batch script and its merge job's command, the HyperQueue submit and merge lines, the
# Kubernetes indexed Job's container command and the AWS Batch array job's, each task
# with the index variable its scheduler would set, set here by hand; then the merge.
# Each gives the results and summary of one run of the spec, byte for byte.
# Usage: cli_sweep_shard_examples.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
data=$src/tests/data/sweep
doc=$src/docs/sweep.md
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN HQ_TASK_ID JOB_COMPLETION_INDEX \
  AWS_BATCH_JOB_ARRAY_INDEX
command -v python3 >/dev/null 2>&1 || cli_skip "no python3: the Kubernetes and AWS Batch commands are JSON lists"
# the examples call `gpusim` from PATH
mkdir -p "$tmp/bin"
ln -s "$bin" "$tmp/bin/gpusim"
export PATH="$tmp/bin:$PATH"

# example NAME: the fenced block after "<!-- example: NAME -->" in docs/sweep.md
example() {
  awk -v want="<!-- example: $1 -->" '
    $0 == want { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$doc"
}
# fleet DIR: the spec (as fleet.json, results fleet.jsonl) and its traces in DIR
fleet() {
  mkdir -p "$1"
  cp -r "$data/jobs" "$1/jobs"
  sed 's/"output": "results.jsonl"/"output": "fleet.jsonl"/' "$data/spec.json" >"$1/fleet.json"
}
# json_args JSON_LIST: the list's strings, one a line
json_args() { python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' "$1"; }

fleet "$tmp/ref"
(cd "$tmp/ref" && gpusim sweep fleet.json --summary=ref-summary.json >ref.txt 2>/dev/null) || bad "one-process run"
check() { # check NAME DIR: DIR's merged results are the one run's
  cmp -s "$tmp/ref/fleet.jsonl" "$2/fleet.jsonl" && ok || bad "$1: the merged results differ from one run"
  [ "$(ls "$2"/fleet.shard-*-of-16.jsonl | wc -l)" -eq 16 ] && ok || bad "$1: want 16 shard files"
}

# ---- Slurm: the batch script once per array task, then the merge job's command
example slurm >"$tmp/fleet-shards.sbatch"
example slurm-merge >"$tmp/slurm-merge.sh"
range=$(sed -n 's/^#SBATCH --array=\([0-9]*-[0-9]*\)$/\1/p' "$tmp/fleet-shards.sbatch")
[ "$range" = "0-15" ] && ok || bad "the Slurm example's array: '$range', want 0-15"
w=$tmp/slurm
fleet "$w"
for ((i = ${range%-*}; i <= ${range#*-}; i++)); do
  (cd "$w" && SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=${range%-*} SLURM_ARRAY_TASK_COUNT=16 \
    SLURM_CPUS_PER_TASK=2 bash "$tmp/fleet-shards.sbatch") >/dev/null 2>"$tmp/err" || bad "Slurm task $i: $(cat "$tmp/err")"
done
wrap=$(sed -n 's/.*--wrap="\(.*\)"$/\1/p' "$tmp/slurm-merge.sh")
[ -n "$wrap" ] && ok || bad "no --wrap command in the Slurm merge example: $(cat "$tmp/slurm-merge.sh")"
(cd "$w" && bash -c "$wrap") >/dev/null 2>"$tmp/err" || bad "Slurm merge job ($wrap): $(cat "$tmp/err")"
check Slurm "$w"
cmp -s "$tmp/ref/ref-summary.json" "$w/fleet-summary.json" && ok || bad "Slurm: the merge job's summary differs"

# ---- HyperQueue: the command after "--" once per task of --array, then the merge line
example hq >"$tmp/hq.sh"
submit=$(grep '^hq submit' "$tmp/hq.sh")
range=$(sed -n 's/.*--array=\([0-9]*-[0-9]*\).*/\1/p' <<<"$submit")
task=${submit#* -- }
merge=$(sed -n 's/^hq job wait last && //p' "$tmp/hq.sh")
[ "$range" = "0-15" ] && [ -n "$merge" ] && ok || bad "the HyperQueue example: array '$range', merge '$merge'"
w=$tmp/hq
fleet "$w"
for ((i = ${range%-*}; i <= ${range#*-}; i++)); do
  (cd "$w" && HQ_TASK_ID=$i bash -c "$task") >/dev/null 2>"$tmp/err" || bad "HyperQueue task $i: $(cat "$tmp/err")"
done
(cd "$w" && bash -c "$merge") >/dev/null 2>"$tmp/err" || bad "HyperQueue merge: $(cat "$tmp/err")"
check HyperQueue "$w"

# ---- Kubernetes: the container's command in its workingDir (the volume), once per index
example k8s >"$tmp/job.yaml"
n=$(sed -n 's/^  completions: \([0-9]*\)$/\1/p' "$tmp/job.yaml")
grep -qF "completionMode: Indexed" "$tmp/job.yaml" && [ "$n" = 16 ] && ok || bad "the Job is not Indexed with 16 completions"
mapfile -t cmd < <(json_args "$(sed -n 's/^ *command: \(\[.*\]\)$/\1/p' "$tmp/job.yaml")")
[ "${cmd[0]:-}" = gpusim ] && ok || bad "the container's command: ${cmd[*]}"
w=$tmp/k8s
fleet "$w"
for ((i = 0; i < n; i++)); do
  (cd "$w" && JOB_COMPLETION_INDEX=$i "${cmd[@]}") >/dev/null 2>"$tmp/err" || bad "pod $i: $(cat "$tmp/err")"
done
merge=$(grep -o "gpusim sweep merge /fleet/fleet.jsonl '/fleet/fleet.shard-\*-of-16.jsonl'" "$doc" | head -1)
[ -n "$merge" ] && ok || bad "no merge command for the Kubernetes volume in docs/sweep.md"
bash -c "${merge//\/fleet\//$w/}" >/dev/null 2>"$tmp/err" || bad "Kubernetes merge: $(cat "$tmp/err")"
check Kubernetes "$w"

# ---- AWS Batch: the container override's command, once per array index, /fleet as here
example aws >"$tmp/aws.sh"
n=$(sed -n 's/.*--array-properties size=\([0-9]*\).*/\1/p' "$tmp/aws.sh")
overrides=$(sed -n "s/.*--container-overrides '\(.*\)'$/\1/p" "$tmp/aws.sh")
w=$tmp/aws
fleet "$w"
mapfile -t cmd < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])["command"]))' "$overrides" |
  sed "s#/fleet/#$w/#")
[ "$n" = 16 ] && [ "${cmd[0]:-}" = gpusim ] && ok || bad "the AWS Batch example: size '$n', command ${cmd[*]}"
for ((i = 0; i < n; i++)); do
  AWS_BATCH_JOB_ARRAY_INDEX=$i "${cmd[@]}" >/dev/null 2>"$tmp/err" || bad "AWS Batch child $i: $(cat "$tmp/err")"
done
bash -c "${merge//\/fleet\//$w/}" >/dev/null 2>"$tmp/err" || bad "AWS Batch merge: $(cat "$tmp/err")"
check "AWS Batch" "$w"

cli_finish
