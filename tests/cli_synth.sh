#!/usr/bin/env bash
# CLI tests for `gpusim synth`: usage errors exit 2 with a message naming the
# problem; good runs write traces that `gpusim replay` accepts; same seed, same
# bytes. Args: <gpusim binary> <source dir>.
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

expect_re 2 "kinds:" synth
expect_re 0 "transformer" synth --help
expect_re 0 "--checkpointing" synth transformer --help
expect_re 2 "unknown kind 'resnet'" synth resnet -o "$tmp/x.json"
expect_re 2 "no output file" synth churn
expect_re 2 "unknown option '--layer'" synth transformer --layer=3 -o "$tmp/x.json"
expect_re 2 "--layers: expected a whole number" synth transformer --layers=abc -o "$tmp/x.json"
expect_re 2 "--layers: expected a whole number" synth transformer --layers=0 -o "$tmp/x.json"
expect_re 2 "not a multiple of --heads" synth transformer --hidden=100 --heads=7 -o "$tmp/x.json"
expect_re 2 "unknown transformer 'bert-huge'" synth transformer --preset=bert-huge -o "$tmp/x.json"
expect_re 2 "--dtype: expected fp32, fp16 or bf16" synth transformer --dtype=fp8 -o "$tmp/x.json"
expect_re 2 "--optimizer: expected" synth transformer --optimizer=lion -o "$tmp/x.json"
expect_re 2 "--mode: expected train or inference" synth cnn --mode=eval -o "$tmp/x.json"
expect_re 2 "--seq=1024 exceeds the learned position table" synth transformer --preset=bert-base --seq=1024 -o "$tmp/x.json"
expect_re 2 "--seed: expected a whole number" synth churn --seed=-1 -o "$tmp/x.json"
expect_re 2 "--seed: expected a whole number" synth churn --seed=4294967295 -o "$tmp/x.json"
expect_re 2 "unknown CNN 'vgg16'" synth cnn --preset=vgg16 -o "$tmp/x.json"
expect_re 2 "--image: expected a whole number" synth cnn --image=8 -o "$tmp/x.json"
expect_re 2 "--rate: expected a number" synth serving --rate=0 -o "$tmp/x.json"
expect_re 2 "--kv: expected prealloc or grow" synth serving --kv=paged -o "$tmp/x.json"
expect_re 2 "--lengths: .*cannot open" synth serving --lengths="$tmp/none.txt" -o "$tmp/x.json"
printf '10 5\nten\n' > "$tmp/bad.txt"
expect_re 2 "bad.txt:2: expected a prompt length" synth serving --lengths="$tmp/bad.txt" -o "$tmp/x.json"
expect_re 2 "--dist: expected uniform" synth churn --dist=zipf -o "$tmp/x.json"
expect_re 2 "--min: " synth churn --min=lots -o "$tmp/x.json"
expect_re 2 "need 1 ≤ --min ≤ --max" synth churn --min=2MiB --max=1MiB -o "$tmp/x.json"
expect_re 2 "--gpu: unknown GPU 'A1000'" synth churn --gpu=A1000 -o "$tmp/x.json"
expect_re 2 "--start: expected a time" synth churn --start=soon -o "$tmp/x.json"
expect_re 2 "exclude each other" synth churn --gpu=T4 --capacity=16GiB -o "$tmp/x.json"
expect_re 2 "unexpected argument" synth churn extra -o "$tmp/x.json"
expect_re 2 "cannot|No such" synth churn --events=10 -o "$tmp/nodir/x.json"
[ -e "$tmp/x.json" ] && bad "a failed run left $tmp/x.json"

# good runs: written, valid, replayable, deterministic
expect_re 0 "events" synth transformer --preset=bert-base --seq=32 --batch=2 --gpu=A100-40GB -o "$tmp/b.json"
expect_re 0 "peak" replay "$tmp/b.json"
expect_re 0 "A100-40GB" replay "$tmp/b.json"
expect_re 0 "events" synth cnn --batch=2 --image=64 --mode=inference -o "$tmp/c.jsonl"
expect_re 0 "peak" replay "$tmp/c.jsonl"
expect_re 0 "events" synth serving --requests=20 --capacity=16GiB --device-name=test16 -o "$tmp/s.jsonl"
expect_re 0 "test16" replay "$tmp/s.jsonl"
expect_re 0 "events" synth churn --events=2000 --live=8MiB --seed=7 --proc=jobA --start=1s -o "$tmp/k1.jsonl"
expect_re 0 "events" synth churn --events=2000 --live=8MiB --seed=7 --proc=jobA --start=1s -o "$tmp/k2.jsonl"
cmp -s "$tmp/k1.jsonl" "$tmp/k2.jsonl" || bad "same seed, different bytes"
grep -q '"proc":"jobA"' "$tmp/k1.jsonl" || bad "--proc not written"
grep -q '"t":1000' "$tmp/k1.jsonl" || bad "--start not applied"
expect_re 0 "" synth churn --events=2000 --live=8MiB --seed=8 --quiet -o "$tmp/k3.jsonl"
cmp -s "$tmp/k1.jsonl" "$tmp/k3.jsonl" && bad "different seeds, same bytes"

# the bundled examples load and replay under ideal
for f in "$src"/traces/examples/*.json "$src"/traces/examples/*.jsonl; do
    [ -e "$f" ] || continue
    "$bin" replay "$f" > /dev/null 2>&1 || bad "example $f does not replay"
done

cli_finish
