#!/usr/bin/env bash
# CLI tests of the default --context (sim/gpu_context.h): the published figure of the
# card's CUDA major in every header with its source, --cuda, --context=0 as before, a
# custom device at 0 B, gpusim gpus listing the figures, and plan's note on a fit within
# the figures' spread. Usage: cli_context.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
MiB=1048576
H='{"format":"gpusim-trace","version":1}'
# one 1 GiB tensor, allocated and freed
printf '%s\n{"op":"alloc","id":1,"size":1073741824}\n{"op":"free","id":1}\n' "$H" >"$tmp/one.jsonl"

# an A100-40GB under CUDA 12 (the default): 256 MiB, measured on an RTX 3090 (cc 8.6), the same generation
expect_any 0 "  device  A100-40GB: capacity 39.59 GiB, context 256.00 MiB per process, allocator limit 39.34 GiB (capacity - 256.00 MiB context)" \
  replay "$tmp/one.jsonl" --gpu=A100-40GB --strategy=torch
expect_any 0 "  context 256.00 MiB: CUDA 12 default, measured on RTX 3090 (cc 8.6), PyTorch 2.7.1+cu128 (--context sets it)" \
  replay "$tmp/one.jsonl" --gpu=A100-40GB --strategy=torch
# the peak on the device adds it: 1 GiB reserved (a 1 GiB segment) + 256 MiB = 1342177280 B
expect_any 0 '"peak_device_bytes": 1342177280' replay "$tmp/one.jsonl" --gpu=A100-40GB --strategy=torch --format=json
expect_any 0 '"context_bytes": 268435456' replay "$tmp/one.jsonl" --gpu=A100-40GB --strategy=torch --format=json
# an H100 (cc 9.0) borrows the CUDA 12 figure, marked as an estimate
expect_any 0 "[estimate for cc 9.x]" replay "$tmp/one.jsonl" --gpu=H100-80GB --strategy=torch
# --cuda=13: 426 MiB = 446693376 B; --cuda=11: 266076160 B
expect_any 0 '"context_bytes": 446693376' replay "$tmp/one.jsonl" --gpu=H100-80GB --cuda=13 --format=json
expect_any 0 '"context_bytes": 266076160' replay "$tmp/one.jsonl" --gpu=H100-80GB --cuda=11 --format=json
expect 2 "--cuda: '10' is not a CUDA major version with a published context figure" replay "$tmp/one.jsonl" --cuda=10
expect 2 "--cuda: 'x12'" replay "$tmp/one.jsonl" --cuda=x12
# --context=0: today's behaviour, no source line
expect 0 "" replay "$tmp/one.jsonl" --gpu=A100-40GB --strategy=torch --context=0
if grep -qF "context 0 B per process" "$tmp/out" && ! grep -q "default, measured" "$tmp/out"; then ok; else
  bad "--context=0: $(head -5 "$tmp/out")"; fi
# a custom device keeps 0 B
expect_any 0 "  device  custom: capacity 2.00 GiB, context 0 B per process" replay "$tmp/one.jsonl" --capacity=2GiB
# a card without CUDA (the MI300X) has no figure
expect_any 0 "  device  MI300X: capacity 191.98 GiB, context 0 B per process" replay "$tmp/one.jsonl" --gpu=MI300X
# compare and tune print it too
expect_any 0 "  context 256.00 MiB: CUDA 12 default" compare "$tmp/one.jsonl" --gpu=A100-40GB --strategies=torch,ideal
# gpusim gpus lists each card's default and every figure with its source
expect_any 0 "context 256.00 MiB per process: CUDA 12 default, measured on RTX 3090 (cc 8.6)" gpus
expect_any 0 "  CUDA 13 426.00 MiB  RTX 6000 Ada (cc 8.9), PyTorch 2.10.0+cu130; unslothai/unsloth-zoo PR 1053" gpus
expect_any 0 "the figures spread 172.25 MiB" gpus
expect_any 0 '"context_bytes": 268435456, "context_source": "CUDA 12 default, measured on RTX 3090 (cc 8.6), PyTorch 2.7.1+cu128"' gpus --format=json

# plan: a fit with less headroom than the spread (172.25 MiB) is flagged. A T4 holds
# 15842934784 B; a tensor of 15842934784 - 268435456 (context) - 100 MiB = 15469641728 B
# leaves ideal a headroom of exactly 100 MiB: flagged. 300 MiB of headroom: not flagged.
printf '%s\n{"op":"alloc","id":1,"size":%d}\n{"op":"free","id":1}\n' "$H" $((15842934784 - 268435456 - 100 * MiB)) >"$tmp/edge.jsonl"
printf '%s\n{"op":"alloc","id":1,"size":%d}\n{"op":"free","id":1}\n' "$H" $((15842934784 - 268435456 - 300 * MiB)) >"$tmp/room.jsonl"
expect_any 0 "note: T4 under ideal fits by 100.00 MiB: within the uncertainty of the CUDA context (the published figures spread 172.25 MiB)" \
  plan "$tmp/edge.jsonl" --gpus=T4 --strategies=ideal
expect_any 0 '"within_context_uncertainty": true' plan "$tmp/edge.jsonl" --gpus=T4 --strategies=ideal --format=json
expect 0 "" plan "$tmp/room.jsonl" --gpus=T4 --strategies=ideal
if grep -q "within the uncertainty" "$tmp/out"; then bad "300 MiB of headroom flagged: $(cat "$tmp/out")"; else ok; fi
# a context given by hand is not the published default: no note
expect 0 "" plan "$tmp/edge.jsonl" --gpus=T4 --strategies=ideal --context=256MiB
if grep -q "within the uncertainty" "$tmp/out"; then bad "--context given, still flagged"; else ok; fi
cli_finish
