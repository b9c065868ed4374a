#!/usr/bin/env bash
# CLI tests of `synth transformer --trainer=torchtitan|litgpt` (what each writes in the
# meta, the options only they take) and of replay adding a multi-rank trace header's
# meta.nccl_bytes to the context: printed with its source, --nccl to set or drop it, an
# explicit --context holding it already, a bad value naming the file.
# Usage: cli_trainers.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
small=(--preset=llama2-7b --layers=2 --hidden=512 --heads=8 --kv-heads=8 --ffn=1024 --vocab=1000 --seq=16 --batch=1)

# torchtitan on 2 ranks: FSDP2 in the meta, bf16 compute, the op policy, and each rank's
# NCCL buffers: one data-parallel ring of 24 channels x 10 MiB = 240 MiB = 251658240 B
expect_any 0 "NCCL buffers 240.00 MiB outside the allocator" synth transformer "${small[@]}" --trainer=torchtitan \
  --ranks=2 -o "$tmp/titan"
for key in '"fsdp2":true' '"reduce_dtype":"fp32"' '"recompute_policy":"op"' '"dtype":"bf16"' '"zero":3' \
  '"nccl_bytes":251658240' '"trainer":"torchtitan"' '"loss_bwd_input":true'; do
  if head -1 "$tmp/titan/rank-00001.jsonl" | grep -qF "$key"; then ok; else bad "torchtitan meta lacks $key"; fi
done
# both torchtitan rows put FSDP's buffers on its side streams (1: all-gather, 2: reduce outputs);
# only the December 2024 row has the root unit
if head -1 "$tmp/titan/rank-00001.jsonl" | grep -qF '"fsdp_streams":true'; then ok; else bad "torchtitan without streams"; fi
if head -1 "$tmp/titan/rank-00001.jsonl" | grep -qF '"fsdp_root"'; then bad "current torchtitan has a root unit"; else ok; fi
if grep -qF '"stream":1,"tag":"fsdp_ag:' "$tmp/titan/rank-00001.jsonl"; then ok; else bad "all-gather not on stream 1"; fi
if grep -qF '"stream":2,"tag":"fsdp_rs_out:' "$tmp/titan/rank-00001.jsonl"; then ok; else bad "reduce output not on stream 2"; fi
expect 0 "" synth transformer "${small[@]}" --trainer=torchtitan-2024.12 --ranks=2 --rank=0 -o "$tmp/t24.jsonl"
for key in '"trainer":"torchtitan-2024.12"' '"fsdp_root":true' '"fsdp_streams":true'; do
  if head -1 "$tmp/t24.jsonl" | grep -qF "$key"; then ok; else bad "torchtitan-2024.12 meta lacks $key"; fi
done
expect 0 "" synth transformer "${small[@]}" --trainer=torchtitan --reduce-dtype=bf16 -o "$tmp/t.jsonl"
head -1 "$tmp/t.jsonl" >"$tmp/out"
if grep -qF '"reduce_dtype":"bf16"' "$tmp/out"; then ok; else bad "--reduce-dtype=bf16 not in the meta"; fi
expect 0 "" synth transformer "${small[@]}" --trainer=torchtitan --recompute=layer --recompute-every=2 -o "$tmp/t.jsonl"
if head -1 "$tmp/t.jsonl" | grep -qF '"recompute_every":2'; then ok; else bad "--recompute-every=2 not in the meta"; fi
expect 2 "--recompute=op is torchtitan's op-level policy: it needs --trainer=torchtitan" synth transformer \
  "${small[@]}" --trainer=hf --recompute=op -o "$tmp/x.jsonl"
expect 2 "--reduce-dtype is FSDP2's: it needs --trainer=torchtitan" synth transformer "${small[@]}" --reduce-dtype=bf16 \
  -o "$tmp/x.jsonl"
expect 2 "--recompute-every needs --recompute=layer" synth transformer "${small[@]}" --trainer=torchtitan \
  --recompute-every=2 -o "$tmp/x.jsonl"
expect 2 "FSDP2 (--trainer=torchtitan) shards like --zero=3" synth transformer "${small[@]}" --trainer=torchtitan \
  --zero=1 -o "$tmp/x.jsonl"
expect 2 "--reduce-dtype: expected fp32 or bf16, not 'fp8'" synth transformer "${small[@]}" --trainer=torchtitan \
  --reduce-dtype=fp8 -o "$tmp/x.jsonl"

# LitGPT: bf16-true, the chunked loss; with --lora the head in chunks of 128
expect 0 "" synth transformer "${small[@]}" --trainer=litgpt -o "$tmp/l.jsonl"
for key in '"ce_chunked":true' '"dtype":"bf16"' '"trainer":"litgpt"'; do
  if head -1 "$tmp/l.jsonl" | grep -qF "$key"; then ok; else bad "litgpt meta lacks $key"; fi
done
if head -1 "$tmp/l.jsonl" | grep -qF '"lm_head_chunk"'; then bad "full fine-tuning chunked the head"; else ok; fi
expect 0 "" synth transformer "${small[@]}" --trainer=litgpt --lora=8 -o "$tmp/l.jsonl"
if head -1 "$tmp/l.jsonl" | grep -qF '"lm_head_chunk":128'; then ok; else bad "--lora did not chunk LitGPT's head"; fi
if head -1 "$tmp/l.jsonl" | grep -qF '"lora_dropout":true'; then ok; else bad "--lora without LitGPT's LoRA dropout"; fi

# replay: the header's NCCL buffers join the CUDA 12 default, 256 MiB + 240 MiB = 496 MiB = 520093696 B
r0="$tmp/titan/rank-00000.jsonl"
expect_any 0 "context 496.00 MiB per process" replay "$r0" --gpu=A100-40GB --strategy=torch
expect_any 0 "  context 256.00 MiB: CUDA 12 default, measured on RTX 3090" replay "$r0" --gpu=A100-40GB --strategy=torch
expect_any 0 "  nccl    240.00 MiB: NCCL buffers from the trace header (meta.nccl_bytes), added to the context (--nccl=0 leaves them out)" \
  replay "$r0" --gpu=A100-40GB --strategy=torch
expect_any 0 '"context_bytes": 520093696, "nccl_bytes": 251658240' replay "$r0" --gpu=A100-40GB --format=json
# --nccl=0 leaves them out, --nccl=SIZE replaces them: 256 + 64 = 320 MiB
expect_any 0 "context 256.00 MiB per process" replay "$r0" --gpu=A100-40GB --nccl=0
if grep -q "NCCL buffers" "$tmp/out"; then bad "--nccl=0 still prints NCCL"; else ok; fi
expect_any 0 "  nccl    64.00 MiB: NCCL buffers from --nccl" replay "$r0" --gpu=A100-40GB --nccl=64MiB
expect_any 0 "context 320.00 MiB per process" replay "$r0" --gpu=A100-40GB --nccl=64MiB
# an explicit --context is the whole footprint outside the allocator
expect_any 0 '"context_bytes": 1073741824, "limit_bytes"' replay "$r0" --gpu=A100-40GB --context=1GiB --format=json
expect 2 "--nccl and --context conflict" replay "$r0" --context=1GiB --nccl=1MiB
expect 2 "--nccl: " replay "$r0" --nccl=lots
# compare prints it too; a one-rank trace has none
expect_any 0 "  nccl    240.00 MiB: NCCL buffers from the trace header" compare "$r0" --gpu=A100-40GB --strategies=torch,ideal
expect 0 "" replay "$tmp/t.jsonl" --gpu=A100-40GB
if grep -q "NCCL buffers" "$tmp/out"; then bad "a one-rank trace printed NCCL buffers"; else ok; fi
# the HTML report says it too
expect 0 "" replay "$r0" --gpu=A100-40GB --report="$tmp/r0.html"
if grep -qF "NCCL buffers 240.00 MiB of the context, from the trace header (meta.nccl_bytes)" "$tmp/r0.html"; then ok; else
  bad "the HTML report lacks the NCCL buffers"; fi
# a header whose nccl_bytes is not a whole number of bytes: exit 3, naming the file
printf '%s\n{"op":"alloc","id":1,"size":1024}\n{"op":"free","id":1}\n' \
  '{"format":"gpusim-trace","version":1,"meta":{"nccl_bytes":-5}}' >"$tmp/badnccl.jsonl"
expect 3 "badnccl.jsonl:1: the header's meta.nccl_bytes is negative" replay "$tmp/badnccl.jsonl"

# docs/planning.md's torchtitan and LitGPT examples: each pasted line is what today's code prints
in_doc() { # FILE PATTERN: the lines of FILE matching PATTERN must be lines of docs/planning.md
  local line n=0
  while IFS= read -r line; do
    n=$((n + 1))
    grep -qxF -- "$line" "$src/docs/planning.md" || bad "docs/planning.md example differs: $line"
  done < <(grep -E -- "$2" "$1")
  if [ "$n" -gt 0 ]; then ok; else bad "no line of $1 matches $2"; fi
}
(cd "$tmp" && "$bin" synth transformer --preset=llama3-8b --trainer=torchtitan --seq=8192 --batch=2 --steps=2 \
  --ranks=8 --rank=0 -o titan8-r0.jsonl --quiet && mkdir -p titan8 && mv titan8-r0.jsonl titan8/rank-00000.jsonl &&
  "$bin" replay titan8/rank-00000.jsonl --gpu=H100-80GB >titan.txt 2>&1) || bad "the torchtitan example fails"
in_doc "$tmp/titan.txt" '^  (context|nccl|peak requested|peak allocated|peak reserved) '
(cd "$tmp" && "$bin" synth transformer --preset=llama2-7b --trainer=litgpt --lora=32 --seq=512 --batch=2 --steps=2 \
  -o lit7.jsonl >lit.txt 2>&1 && "$bin" replay lit7.jsonl --gpu=A10G >>lit.txt 2>&1) || bad "the LitGPT example fails"
in_doc "$tmp/lit.txt" '^(lit7.jsonl: |  peak allocated )'
cli_finish
