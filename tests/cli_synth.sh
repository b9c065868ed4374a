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
expect_re 2 "--kv: expected prealloc, grow or paged" synth serving --kv=pages -o "$tmp/x.json"
expect_re 2 "--kv=paged sizes its pool from the device" synth serving --kv=paged -o "$tmp/x.json"
expect_re 2 "--prefix .* needs --kv=paged" synth serving --prefix=64 -o "$tmp/x.json"
expect_re 2 "fewer than one request" synth serving --model=llama3-8b --kv=paged --gpu=T4 -o "$tmp/x.json"
expect_re 2 "--kv-heads=5 must divide --heads=32" synth transformer --preset=llama2-7b --kv-heads=5 -o "$tmp/x.json"
expect_re 2 "--tp=3 must divide" synth transformer --preset=llama2-7b --tp=3 --ranks=3 -o "$tmp/x.json"
expect_re 2 "--ranks=6 is not a multiple" synth transformer --preset=llama2-7b --tp=4 --ranks=6 -o "$tmp/x.json"
expect_re 2 "--sp: --tp=8 must divide --seq=100" synth transformer --preset=llama2-7b --tp=8 --sp --seq=100 --ranks=8 -o "$tmp/x.json"
expect_re 2 "--qlora needs --lora" synth transformer --preset=llama2-7b --qlora -o "$tmp/x.json"
expect_re 2 "llama family" synth transformer --preset=bert-base --lora=8 -o "$tmp/x.json"
expect_re 2 "--recompute: expected none, layer, selective or op" synth transformer --recompute=some -o "$tmp/x.json"
expect_re 2 "--shard-group=3 must divide" synth transformer --preset=llama2-7b --fsdp=hybrid --shard-group=3 --ranks=8 -o "$tmp/x.json"
expect_re 2 "--rank=8: the job has 8 ranks" synth transformer --preset=llama2-7b --zero=2 --ranks=8 --rank=8 -o "$tmp/x.json"
expect_re 2 "--lora-targets: expected" synth transformer --preset=llama2-7b --lora=8 --lora-targets=q,ffn -o "$tmp/x.json"
expect_re 2 "adafactor is modelled for transformers only" synth cnn --optimizer=adafactor -o "$tmp/x.json"
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

# the closed forms beside the trace's peak, with the reason for each difference
expect_re 0 "foreach Adam's sqrt" synth transformer --preset=llama-7b --layers=2 --seq=128 -o "$tmp/l.jsonl"
grep -q "closed form of this rank's peak" "$tmp/out" || bad "no rank closed form for llama-7b"
grep -q "all freed by the end of backward" "$tmp/out" || bad "no reason for the activations' difference"
# per-rank traces in a directory, one job file, each replayable and deterministic
expect_re 0 "rank-00003.jsonl" synth transformer --preset=qwen2-0.5b --seq=64 --precision=mixed --fsdp=full \
    --ranks=4 --gpu=H100-80GB -o "$tmp/job"
[ -s "$tmp/job/job.json" ] || bad "no job.json"
grep -q '"ranks":4' "$tmp/job/job.json" || bad "job.json does not list 4 ranks"
grep -q '"zero":3' "$tmp/job/rank-00002.jsonl" || bad "the rank's meta lacks the ZeRO stage"
expect_re 0 "peak" replay "$tmp/job/rank-00003.jsonl"
expect_re 0 "" synth transformer --preset=qwen2-0.5b --seq=64 --tp=2 --pp=2 --ranks=8 --quiet -o "$tmp/job2"
[ ! -s "$tmp/out" ] || bad "--quiet printed something"
[ -s "$tmp/job2/rank-00007.jsonl" ] || bad "no trace of rank 7"
expect_re 0 "" synth transformer --preset=qwen2-0.5b --seq=64 --tp=2 --pp=2 --ranks=8 --quiet -o "$tmp/job3"
cmp -s "$tmp/job2/rank-00005.jsonl" "$tmp/job3/rank-00005.jsonl" || bad "per-rank traces are not deterministic"
expect_re 0 "" synth transformer --preset=qwen2-0.5b --seq=64 --tp=2 --pp=2 --ranks=8 --rank=5 --quiet -o "$tmp/r5.jsonl"
cmp -s "$tmp/job2/rank-00005.jsonl" "$tmp/r5.jsonl" || bad "--rank=5 differs from the directory's rank-00005.jsonl"
expect_re 0 "events" synth transformer --preset=mixtral-8x7b --layers=2 --seq=64 --lora=8 --qlora -o "$tmp/m.jsonl"
expect_re 0 "paged KV: pool" synth serving --model=qwen2-0.5b --kv=paged --prefix=64 --requests=50 --gpu=T4 \
    -o "$tmp/p.jsonl"
expect_re 0 "peak" replay "$tmp/p.jsonl"

# docs/planning.md's language-model examples: what they show is what today's code prints
# (the synth summaries, plan's peak table and smallest capacities; the headroom tables
# are elided there)
in_readme() { # TEXT: each non-blank line must be a line of README.md
    local line
    while IFS= read -r line; do
        [ -z "${line// /}" ] && continue
        grep -qxF -- "$line" "$src/docs/planning.md" || bad "docs/planning.md example differs: $line"
    done <<<"$1"
}
plan_lines() { # the peak table and the smallest-capacity lines of a plan report
    awk '/^Peak on the device/ {t = 1; next} t && /^$/ {t = 0} t && NF' "$1"
    grep -E '^  (torch|ideal) ' "$1"
}
(cd "$tmp" && "$bin" synth transformer --preset=llama2-70b --precision=mixed --fsdp=full --ranks=32 \
    --recompute=layer --gpu=H100-80GB -o llama70b-fsdp32 >"$tmp/l70.txt" 2>&1 &&
    "$bin" plan llama70b-fsdp32/rank-00000.jsonl --gpus=A100-40GB,A100-80GB,H100-80GB,H200 \
        --strategies=torch,ideal >"$tmp/p70.txt" 2>&1) || bad "docs/planning.md's 70B example fails"
in_readme "$(head -4 "$tmp/l70.txt")"
in_readme "$(plan_lines "$tmp/p70.txt")"
(cd "$tmp" && "$bin" synth serving --model=llama3-8b --dtype=bf16 --kv=paged --gpu=H100-80GB --rate=20 \
    --requests=2000 --max-batch=256 --prompt-median=1024 --output-median=256 --max-len=8192 \
    --prefix=512 --seed=1 -o serving-paged.jsonl >"$tmp/sp.txt" 2>&1 &&
    "$bin" plan serving-paged.jsonl --gpus=L4,A100-40GB,A100-80GB,H100-80GB,H200 \
        --strategies=torch,ideal >"$tmp/pp.txt" 2>&1) || bad "docs/planning.md's paged serving example fails"
in_readme "$(cat "$tmp/sp.txt")"
in_readme "$(awk '/^Peak on the device/ {t = 1; next} t && /^$/ {t = 0} t && NF' "$tmp/pp.txt")"
ok
# the same traffic with contiguous caches: docs/planning.md's 84.85 GiB ideal and 101.53 GiB on an H200
(cd "$tmp" && "$bin" synth serving --model=llama3-8b --dtype=bf16 --kv=prealloc --gpu=H100-80GB --rate=20 \
    --requests=2000 --max-batch=256 --prompt-median=1024 --output-median=256 --max-len=8192 --seed=1 \
    -o serving-contig.jsonl >/dev/null 2>&1 &&
    "$bin" plan serving-contig.jsonl --gpus=H200 --strategies=torch,ideal >"$tmp/pc.txt" 2>&1) ||
    bad "docs/planning.md's contiguous serving comparison fails"
grep -qE '^  H200 .* 101\.53 GiB +84\.85 GiB' "$tmp/pc.txt" || bad "the contiguous comparison's numbers changed"
(cd "$tmp" && "$bin" synth transformer --preset=llama-7b -o llama-7b.jsonl >"$tmp/l7.txt" 2>&1) ||
    bad "the llama-7b example fails"
while IFS= read -r line; do
    grep -qxF -- "$line" "$src/traces/synth/README.md" || bad "traces/synth/README.md's llama-7b example differs: $line"
done <"$tmp/l7.txt"

# the bundled examples regenerate byte for byte with the commands in traces/examples/README.md
ex="$src/traces/examples"
regen() { # FILE ARGS...: gpusim synth ARGS -o $tmp/FILE must equal the bundled FILE
    local f=$1
    shift
    "$bin" synth "$@" --quiet -o "$tmp/$f" >/dev/null 2>&1 || { bad "regenerating $f failed"; return; }
    cmp -s "$tmp/$f" "$ex/$f" && ok || bad "$f does not regenerate byte for byte"
}
regen small-model-12gb.jsonl cnn --preset=resnet50 --batch=16 --steps=2 --capacity=12GiB --device-name=12GB-card \
    --seed=1 --name="small model on a 12 GB card: ResNet-50 training, batch 16"
regen serving-16gb.jsonl serving --model=gpt2-medium --dtype=fp16 --rate=8 --requests=1000 --max-batch=44 \
    --prompt-median=1024 --max-len=8192 --gpu=V100-16GB --seed=1 \
    --name="inference service on a 16 GB card: GPT-2 medium, Poisson arrivals"
regen bert-large-train.jsonl transformer --preset=bert-large --steps=2 --gpu=A100-40GB --seed=1
regen two-jobs-a.jsonl cnn --preset=resnet50 --batch=32 --steps=3 --gpu=T4 --proc=jobA-resnet50 --seed=1 \
    --name="job A: ResNet-50 training"
regen two-jobs-b.jsonl transformer --preset=bert-base --batch=8 --steps=3 --gpu=T4 --proc=jobB-bert --start=2ms \
    --seed=1 --name="job B: BERT-base training"

# the bundled examples load and replay under ideal
for f in "$src"/traces/examples/*.json "$src"/traces/examples/*.jsonl; do
    [ -e "$f" ] || continue
    "$bin" replay "$f" > /dev/null 2>&1 || bad "example $f does not replay"
done

# --trainer (traces/synth/trainer.c): an unknown name is a usage error naming the table's
# choices; megatron records itself and its main gradients in the meta, and its fp32 buffer is
# 4 bytes per parameter: a small llama, 2 layers (below), one rank
expect 2 "--trainer: expected eager|megatron|hf|torchtitan|litgpt|torchtitan-2024.12, not 'deepspeed'" synth transformer --trainer=deepspeed -o "$tmp/x.jsonl"
expect 0 "" synth transformer --trainer=megatron --arch=llama --layers=2 --hidden=256 --heads=4 --vocab=1000 \
    --seq=64 --dtype=bf16 -o "$tmp/meg.jsonl"
if head -1 "$tmp/meg.jsonl" | grep -q '"trainer":"megatron"' && head -1 "$tmp/meg.jsonl" | grep -q '"main_grads":true' &&
    head -1 "$tmp/meg.jsonl" | grep -q '"precision":"mixed"' && head -1 "$tmp/meg.jsonl" | grep -q '"attention":"flash"'; then
    ok
else
    bad "megatron meta: $(head -c 600 "$tmp/meg.jsonl")"
fi
# the vocabulary padded to a multiple of 128: 1024; params = 2·1024·256 (embed, head)
# + 2·(4·256² + 3·256·768 + 2·256) + 256 = 524288 + 2·(262144 + 589824 + 512) + 256 = 2,229,504:
# the buffer holds 4 · 2,229,504 = 8,918,016 B
if grep -qE '"size":8918016,"t":[0-9]+,"tag":"grad:main_grad_buffer"' "$tmp/meg.jsonl"; then ok; else
    bad "main_grad_buffer: $(grep main_grad_buffer "$tmp/meg.jsonl")"
fi
# Megatron pads the vocabulary to a multiple of 128 · tp: 1000 at tp 4 becomes 1024 (2 · 512)
expect 0 "" synth transformer --trainer=megatron --arch=llama --layers=2 --hidden=256 --heads=4 --vocab=1000 \
    --seq=64 --dtype=bf16 --ranks=4 --tp=4 --rank=0 -o "$tmp/megtp.jsonl"
if head -1 "$tmp/megtp.jsonl" | grep -q '"vocab":1024,'; then ok; else bad "vocabulary padding: $(head -c 400 "$tmp/megtp.jsonl")"; fi
# an explicit option wins over the trainer's default: --precision=pure
expect 0 "" synth transformer --trainer=megatron --arch=llama --layers=2 --hidden=256 --heads=4 --vocab=1000 \
    --seq=64 --dtype=bf16 --precision=pure -o "$tmp/meg2.jsonl"
if head -1 "$tmp/meg2.jsonl" | grep -q '"precision":"pure"'; then ok; else bad "--precision=pure did not win"; fi
expect 2 "do not combine with --zero=2/3" synth transformer --trainer=megatron --arch=llama --layers=2 --hidden=256 \
    --heads=4 --vocab=1000 --seq=64 --ranks=2 --zero=2 -o "$tmp/meg3.jsonl"

# NCCL's buffers outside the allocator, per rank (traces/synth/nccl.c): one 10 MiB allocation
# per channel of each ring (LL 524,288 + LL128 4,915,200 + Simple 4,194,304 = 9,633,792 B in
# 2 MiB granules) and 2 MiB per channel per neighbouring pipeline stage. job2 is dp 2, tp 2,
# pp 2 with 24 channels: rank 0 (stage 0, one neighbour) 24·10 + 24·10 + 24·2 MiB = 528 MiB =
# 553,648,128 B; rank 5 the same (stage 1, the last: one neighbour)
if grep -q '"nccl_bytes":553648128}' "$tmp/job2/job.json" &&
    head -1 "$tmp/job2/rank-00000.jsonl" | grep -q '"nccl_channels":24,"nccl_bytes":553648128,'; then ok; else
    bad "NCCL buffers: $(head -c 600 "$tmp/job2/job.json")"
fi
# --nccl-channels=2, dp 4 only: 2 · 10 MiB = 20,971,520 B; a one-rank trace records nothing
expect 0 "" synth transformer --preset=qwen2-0.5b --seq=64 --ranks=4 --rank=1 --nccl-channels=2 -o "$tmp/n2.jsonl"
if head -1 "$tmp/n2.jsonl" | grep -q '"nccl_channels":2,"nccl_bytes":20971520,'; then ok; else
    bad "--nccl-channels=2: $(head -c 600 "$tmp/n2.jsonl")"
fi
expect 0 "" synth transformer --preset=qwen2-0.5b --seq=64 -o "$tmp/n1.jsonl"
if head -1 "$tmp/n1.jsonl" | grep -q nccl; then bad "a one-rank trace records NCCL buffers"; else ok; fi
expect_re 2 "--nccl-channels" synth transformer --preset=qwen2-0.5b --seq=64 --ranks=4 --nccl-channels=65 -o "$tmp/n3.jsonl"

# --trainer=hf (trainer.c): SDPA (flash), the fused AdamW, pure precision (the checkpoint's
# dtype), the loss upcast to fp32: batch 8 (the default) x seq 64 x vocab 1000 logits are
# 1,024,000 B in bf16, their fp32 copy 2,048,000 B, and the saved log-softmax fp32 too
expect 0 "" synth transformer --trainer=hf --arch=llama --layers=2 --hidden=256 --heads=4 --vocab=1000 \
    --seq=64 --dtype=bf16 -o "$tmp/hf.jsonl"
if head -1 "$tmp/hf.jsonl" | grep -q '"attention":"flash","precision":"pure",' &&
    head -1 "$tmp/hf.jsonl" | grep -q '"trainer":"hf",.*"loss_fp32":true' &&
    grep -q '"size":2048000,"t":[0-9]*,"tag":"tmp:head.logits_fp32"' "$tmp/hf.jsonl" &&
    grep -q '"size":2048000,"t":[0-9]*,"tag":"act:head.log_softmax"' "$tmp/hf.jsonl" &&
    grep -q '"size":1024000,"t":[0-9]*,"tag":"tmp:head.logits"' "$tmp/hf.jsonl"; then ok; else
    bad "hf trainer: $(head -c 700 "$tmp/hf.jsonl")"
fi
# with PEFT's LoRA (rank 8 on q and v, PEFT's llama default): the base weights are frozen, so
# the only gradients and Adam moments are the 2 layers x 2 targets x (A, B) = 8 adapters of
# 8 x 256 x 2 B = 4,096 B each
expect 0 "" synth transformer --trainer=hf --arch=llama --layers=2 --hidden=256 --heads=4 --vocab=1000 \
    --seq=64 --dtype=bf16 --lora=8 -o "$tmp/hfl.jsonl"
n_grad=$(grep -c '"tag":"grad:' "$tmp/hfl.jsonl")
n_lora=$(grep -cE '"size":4096,"t":[0-9]+,"tag":"(grad|adam_m|adam_v):model\.layers\.[01]\.self_attn\.[qv]_proj\.lora_[AB]\.weight"' "$tmp/hfl.jsonl")
if [ "$n_grad" -eq 8 ] && [ "$n_lora" -eq 24 ]; then ok; else bad "hf LoRA: $n_grad gradients, $n_lora adapter tensors"; fi
# BERT's and GPT-2's heads upcast too (ForMaskedLMLoss, ForCausalLMLoss): with eager attention
# given explicitly, b 8 x s 128 x V 8000 adds 2 bytes per logit to the saved log-softmax and
# to its gradient at the head's backward (the peak): 2 x 8 x 128 x 8000 x 2 = 32,768,000 B
for a in gpt2 bert; do
    "$bin" synth transformer --fused-optimizer --arch=$a --layers=2 --hidden=256 --heads=4 --vocab=8000 \
        --seq=128 --batch=8 --dtype=bf16 -o "$tmp/e_$a.jsonl" >"$tmp/e_$a.txt" 2>&1
    "$bin" synth transformer --trainer=hf --attention=eager --arch=$a --layers=2 --hidden=256 --heads=4 \
        --vocab=8000 --seq=128 --batch=8 --dtype=bf16 -o "$tmp/h_$a.jsonl" >"$tmp/h_$a.txt" 2>&1
    pe=$(sed -n 's/.*peak live .* (\([0-9]*\) B).*/\1/p' "$tmp/e_$a.txt")
    ph=$(sed -n 's/.*peak live .* (\([0-9]*\) B).*/\1/p' "$tmp/h_$a.txt")
    if [ -n "$pe" ] && [ -n "$ph" ] && [ $((ph - pe)) -eq 32768000 ]; then ok; else bad "hf $a: peaks '$pe' and '$ph'"; fi
done

# Written straight to .gtrace: every event carries its time as its ready_t (a mark after t = 0
# used to fail the writer's time check), and the file holds the same events as the JSONL one.
for k in churn serving; do
    if "$bin" synth $k --seed=3 -o "$tmp/direct_$k.gtrace" >/dev/null 2>"$tmp/direct_$k.err" &&
        "$bin" synth $k --seed=3 -o "$tmp/direct_$k.jsonl" >/dev/null 2>&1 &&
        "$bin" convert "$tmp/direct_$k.gtrace" -o "$tmp/back_$k.jsonl" >/dev/null 2>&1 &&
        cmp -s <(tail -n +2 "$tmp/direct_$k.jsonl") <(tail -n +2 "$tmp/back_$k.jsonl"); then
        ok
    else
        bad "synth $k -o .gtrace: $(cat "$tmp/direct_$k.err")"
    fi
done

cli_finish
