#!/usr/bin/env bash
# CLI tests for `gpusim synth`: usage errors exit 2 with a message naming the
# problem; good runs write traces that `gpusim replay` accepts; same seed, same
# bytes. Args: <gpusim binary> <source dir>.
set -u
G="$1"
SRC="$2"
T="$(mktemp -d /tmp/gpusim_cli_synth.XXXXXX)"
trap 'rm -rf "$T"' EXIT
fail=0

# expect STATUS PATTERN -- ARGS... : run gpusim ARGS, check exit status and that
# stderr+stdout matches PATTERN (grep -E).
expect() {
    local want="$1" pattern="$2"
    shift 3
    local out rc
    out="$("$G" "$@" 2>&1)"
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: gpusim $* -> exit $rc, expected $want"; echo "$out" | head -5; fail=1; return
    fi
    if [ -n "$pattern" ] && ! printf "%s" "$out" | grep -Eq -- "$pattern"; then
        echo "FAIL: gpusim $* -> output does not match /$pattern/"; echo "$out" | head -5; fail=1
    fi
}

expect 2 "kinds:" -- synth
expect 0 "transformer" -- synth --help
expect 0 "--checkpointing" -- synth transformer --help
expect 2 "unknown kind 'resnet'" -- synth resnet -o "$T/x.json"
expect 2 "no output file" -- synth churn
expect 2 "unknown option '--layer'" -- synth transformer --layer=3 -o "$T/x.json"
expect 2 "--layers: expected a whole number" -- synth transformer --layers=abc -o "$T/x.json"
expect 2 "--layers: expected a whole number" -- synth transformer --layers=0 -o "$T/x.json"
expect 2 "not a multiple of --heads" -- synth transformer --hidden=100 --heads=7 -o "$T/x.json"
expect 2 "unknown transformer 'bert-huge'" -- synth transformer --preset=bert-huge -o "$T/x.json"
expect 2 "--dtype: expected fp32, fp16 or bf16" -- synth transformer --dtype=fp8 -o "$T/x.json"
expect 2 "--optimizer: expected" -- synth transformer --optimizer=lion -o "$T/x.json"
expect 2 "--mode: expected train or inference" -- synth cnn --mode=eval -o "$T/x.json"
expect 2 "--seq=1024 exceeds the learned position table" -- synth transformer --preset=bert-base --seq=1024 -o "$T/x.json"
expect 2 "--seed: expected a whole number" -- synth churn --seed=-1 -o "$T/x.json"
expect 2 "--seed: expected a whole number" -- synth churn --seed=4294967295 -o "$T/x.json"
expect 2 "unknown CNN 'vgg16'" -- synth cnn --preset=vgg16 -o "$T/x.json"
expect 2 "--image: expected a whole number" -- synth cnn --image=8 -o "$T/x.json"
expect 2 "--rate: expected a number" -- synth serving --rate=0 -o "$T/x.json"
expect 2 "--kv: expected prealloc or grow" -- synth serving --kv=paged -o "$T/x.json"
expect 2 "--lengths: .*cannot open" -- synth serving --lengths="$T/none.txt" -o "$T/x.json"
printf '10 5\nten\n' > "$T/bad.txt"
expect 2 "bad.txt:2: expected a prompt length" -- synth serving --lengths="$T/bad.txt" -o "$T/x.json"
expect 2 "--dist: expected uniform" -- synth churn --dist=zipf -o "$T/x.json"
expect 2 "--min: " -- synth churn --min=lots -o "$T/x.json"
expect 2 "need 1 ≤ --min ≤ --max" -- synth churn --min=2MiB --max=1MiB -o "$T/x.json"
expect 2 "--gpu: unknown GPU 'A1000'" -- synth churn --gpu=A1000 -o "$T/x.json"
expect 2 "--start: expected a time" -- synth churn --start=soon -o "$T/x.json"
expect 2 "exclude each other" -- synth churn --gpu=T4 --capacity=16GiB -o "$T/x.json"
expect 2 "unexpected argument" -- synth churn extra -o "$T/x.json"
expect 2 "cannot|No such" -- synth churn --events=10 -o "$T/nodir/x.json"
[ -e "$T/x.json" ] && { echo "FAIL: a failed run left $T/x.json"; fail=1; }

# good runs: written, valid, replayable, deterministic
expect 0 "events" -- synth transformer --preset=bert-base --seq=32 --batch=2 --gpu=A100-40GB -o "$T/b.json"
expect 0 "peak" -- replay "$T/b.json"
expect 0 "A100-40GB" -- replay "$T/b.json"
expect 0 "events" -- synth cnn --batch=2 --image=64 --mode=inference -o "$T/c.jsonl"
expect 0 "peak" -- replay "$T/c.jsonl"
expect 0 "events" -- synth serving --requests=20 --capacity=16GiB --device-name=test16 -o "$T/s.jsonl"
expect 0 "test16" -- replay "$T/s.jsonl"
expect 0 "events" -- synth churn --events=2000 --live=8MiB --seed=7 --proc=jobA --start=1s -o "$T/k1.jsonl"
expect 0 "events" -- synth churn --events=2000 --live=8MiB --seed=7 --proc=jobA --start=1s -o "$T/k2.jsonl"
cmp -s "$T/k1.jsonl" "$T/k2.jsonl" || { echo "FAIL: same seed, different bytes"; fail=1; }
grep -q '"proc":"jobA"' "$T/k1.jsonl" || { echo "FAIL: --proc not written"; fail=1; }
grep -q '"t":1000' "$T/k1.jsonl" || { echo "FAIL: --start not applied"; fail=1; }
expect 0 "" -- synth churn --events=2000 --live=8MiB --seed=8 --quiet -o "$T/k3.jsonl"
cmp -s "$T/k1.jsonl" "$T/k3.jsonl" && { echo "FAIL: different seeds, same bytes"; fail=1; }

# the bundled examples load and replay under ideal
for f in "$SRC"/traces/examples/*.json "$SRC"/traces/examples/*.jsonl; do
    [ -e "$f" ] || continue
    "$G" replay "$f" > /dev/null 2>&1 || { echo "FAIL: example $f does not replay"; fail=1; }
done

exit $fail
