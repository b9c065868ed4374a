#!/usr/bin/env bash
# gpusim record --ranks and job directories: its usage errors; replay, plan and compare of
# a directory with job.json (as synth --ranks and record --ranks write it) as the ranks of
# one job, and a broken job.json's messages (exit 3); with the frameworks' PyTorch
# ($GPUSIM_FRAMEWORKS_PYTHON) an unmodified torchrun-style FSDP2 script recorded on 8 fake
# ranks, its directory replayed and planned, DDP and tensor-parallel scripts on 2 ranks
# replayed, and a script that fails on one rank leaving nothing. Without the frameworks'
# environment that part says SKIPPED.
# Usage: cli_record_ranks.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

expect 2 "--ranks: expected a number of ranks from 1 to 65536, not '0'" record -o "$tmp/d" --ranks=0 -- python x.py
expect 2 "--ranks: expected a number of ranks from 1 to 65536, not 'two'" record -o "$tmp/d" --ranks=two -- python x.py
expect 2 "--nccl-channels needs --ranks=N with N > 1" record -o "$tmp/d" --nccl-channels=8 -- python x.py
expect 2 "--nccl-channels: expected a number of channels" record -o "$tmp/d" --ranks=2 --nccl-channels=-1 -- python x.py
[ ! -e "$tmp/d" ] && ok || bad "a usage error wrote a directory"

# A job directory written by hand, two ranks: rank 0 allocates 3 MiB (PyTorch's caching
# allocator rounds a request between 1 and 10 MiB up to a 20 MiB segment), rank 1 512 B (a
# 2 MiB segment of the small pool). Replayed as a node of two GPUs, rank r on GPU r, each
# holding its own segments (--context=0: nothing else).
mkdir "$tmp/job"
printf '{"format":"gpusim-trace","version":1,"name":"r0"}\n{"op":"alloc","id":1,"size":3145728}\n{"op":"free","id":1}\n' \
  >"$tmp/job/a.jsonl"
printf '{"format":"gpusim-trace","version":1,"name":"r1"}\n{"op":"alloc","id":1,"size":512}\n' >"$tmp/job/b.jsonl"
printf '{"format":"gpusim-job","version":1,"name":"two","ranks":2,"traces":[{"rank":0,"file":"a.jsonl"},\n{"rank":1,"file":"b.jsonl"}]}\n' \
  >"$tmp/job/job.json"
expect 0 "2 traces of the job directory are the ranks of one job: replayed as one node of 2 x A100-40GB" \
  replay "$tmp/job" --gpu=A100-40GB --context=0
grep -Eq '^  0 +A100-40GB .* 0 +20\.00 MiB' "$tmp/out" && grep -Eq '^  1 +A100-40GB .* 1 +2\.00 MiB' "$tmp/out" &&
  ok || bad "the node's GPUs: $(cat "$tmp/out")"
expect 0 "2 traces of the job directory are the ranks of one job: planned on nodes of 2 GPUs" \
  plan "$tmp/job" --gpus=T4,A100-40GB --strategies=torch --context=0
grep -q "2xT4" "$tmp/out" && grep -q "2xA100-40GB" "$tmp/out" && ok || bad "plan: $(cat "$tmp/out")"
expect 2 "the 2 traces of the job directory are the ranks of one job, one GPU each" compare "$tmp/job"
expect 2 "several traces of the job directory: --summary, --report" replay "$tmp/job" --summary
# what is wrong with a job.json, by line
printf '{"format":"gpusim-job","version":1,"traces":[\n{"rank":1,"file":"a.jsonl"}]}\n' >"$tmp/job/job.json"
expect 3 "job.json:2: traces[0]: expected \"rank\": 0 (the traces in rank order from 0)" replay "$tmp/job"
printf '{"format":"gpusim-job","version":1,"traces":[\n{"rank":0,"file":"../a.jsonl"}]}\n' >"$tmp/job/job.json"
expect 3 "job.json:2: traces[0]: expected \"file\": the name of a trace in the directory" replay "$tmp/job"
printf '{"format":"gpusim-job","version":1,"traces":[{"rank":0,"file":"a.jsonl"},\n{"rank":1,"file":"c.jsonl"}]}\n' \
  >"$tmp/job/job.json"
expect 3 "job.json:2: traces[1]: rank 1's trace $tmp/job/c.jsonl is missing" replay "$tmp/job"
printf '{"format":"gpusim-job","version":2,"traces":[]}\n' >"$tmp/job/job.json"
expect 3 "expected \"version\": 1" plan "$tmp/job"
printf '{"format":"gpusim-sweep"}\n' >"$tmp/job/job.json"
expect 3 "expected \"format\": \"gpusim-job\"" replay "$tmp/job"
printf '{"format":' >"$tmp/job/job.json"
expect 3 "job.json: not JSON" replay "$tmp/job"
# synth --ranks writes one: replay reads it back as its ranks
expect 0 "" synth transformer --preset=llama2-7b --layers=1 --seq=512 --fsdp=full --ranks=2 -o "$tmp/synth" --quiet
expect 0 "2 traces of the job directory are the ranks of one job" replay "$tmp/synth" --gpu=H100-80GB

py=${GPUSIM_FRAMEWORKS_PYTHON:-}
if [ -z "$py" ] || [ ! -x "$py" ] || ! "$py" -c "import torch.distributed.fsdp" 2>/dev/null; then
  cli_skip_part "no frameworks' PyTorch (GPUSIM_FRAMEWORKS_PYTHON; scripts/frameworks sets it up): no program recorded"
  cli_finish
  exit
fi

# FSDP2 on 8 fake ranks, the script unmodified (it asks for the nccl backend; torchrun's
# variables are set per rank): 8 traces and job.json, each header with its rank and NCCL's
# ring of 24 channels x 10 MiB = 251658240 B for the one communicator of 8 ranks
out="$tmp/fsdp"
expect 0 "$out: 8 ranks, job.json" record --ranks=8 -o "$out" --gpu=A100-80GB -- "$py" "$src/tests/data/record/fsdp2_llama.py"
[ "$(cd "$out" && ls | tr '\n' ' ')" = "job.json $(printf 'rank-%05d.jsonl ' 0 1 2 3 4 5 6 7)" ] &&
  ok || bad "files: $(ls "$out")"
for r in 0 7; do
  head -n 1 "$out/rank-0000$r.jsonl" | grep -q "\"name\":\"fsdp rank $r/8\".*\"rank\":$r,\"ranks\":8,.*\"nccl_bytes\":251658240" &&
    ok || bad "rank $r header: $(head -n 1 "$out/rank-0000$r.jsonl")"
done
grep -q "rank-00007.jsonl: [0-9]* events, 2 optimizer steps, .*NCCL buffers 251658240 bytes" "$tmp/err" &&
  ok || bad "summary: $(cat "$tmp/err")"
grep -q '^{"format":"gpusim-job","version":1,"name":"fsdp","ranks":8,"traces":\[{"rank":0,"file":"rank-00000.jsonl"' \
  "$out/job.json" && ok || bad "job.json: $(cat "$out/job.json")"
expect 0 "8 traces of the job directory are the ranks of one job: replayed as one node of 8 x A100-80GB" \
  replay "$out" --gpu=A100-80GB
[ "$(grep -c '^  [0-7] .*job 1 .* no$' "$tmp/out")" = 8 ] && ok || bad "replay: $(cat "$tmp/out")"
expect 0 "" replay "$out/rank-00003.jsonl" --strategy=torch
expect 0 "planned on nodes of 8 GPUs" plan "$out" --gpus=A100-40GB,H100-80GB --strategies=torch

# DDP and tensor parallelism on 2 ranks, each rank on its LOCAL_RANK's device as torchrun
# scripts do: the directories replay under torch as a node of two GPUs
cat >"$tmp/ddp.py" <<'PY'
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("nccl")
device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).to(device),
            device_ids=[device.index])
opt = torch.optim.AdamW(model.parameters())
for _ in range(2):
    model(torch.randn(32, 256, device=device)).square().mean().backward()
    opt.step()
    opt.zero_grad()
PY
cat >"$tmp/tp.py" <<'PY'
import os
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
mesh = init_device_mesh("cuda", (int(os.environ["WORLD_SIZE"]),))
model = parallelize_module(torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                               torch.nn.Linear(1024, 256)).cuda(),
                           mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
opt = torch.optim.AdamW(model.parameters())
for _ in range(2):
    model(torch.randn(32, 256, device="cuda")).square().mean().backward()
    opt.step()
    opt.zero_grad()
PY
for prog in ddp tp; do
  expect 0 "$tmp/$prog: 2 ranks, job.json" record --ranks=2 -o "$tmp/$prog" -- "$py" "$tmp/$prog.py"
  head -n 1 "$tmp/$prog/rank-00001.jsonl" | grep -q '"rank":1,"ranks":2,.*"nccl_bytes":251658240' &&
    ok || bad "$prog rank 1 header: $(head -n 1 "$tmp/$prog/rank-00001.jsonl")"
  expect 0 "2 traces of the job directory are the ranks of one job" replay "$tmp/$prog" --gpu=A100-40GB
done
# tensor parallelism: Linear(256, 1024) by columns, 512 x 256 x 4 B = 524288 B a rank (its
# bias 512 x 4 = 2048 B), and Linear(1024, 256) by rows, 256 x 512 x 4 B, the same
grep -q '"size":524288' "$tmp/tp/rank-00001.jsonl" && grep -q '"size":2048' "$tmp/tp/rank-00001.jsonl" &&
  ok || bad "tp's rank 1 has no 524288 B or 2048 B shard"

# a script that fails on rank 1 of 2: exit 2, its traceback, no directory, no temporary one
printf 'import os\nimport torch\ntorch.ones(4, device="cuda")\nif os.environ["RANK"] == "1":\n    raise RuntimeError("rank one fails")\n' \
  >"$tmp/fails.py"
expect 2 "rank 1 of 2 failed: no traces written" record --ranks=2 -o "$tmp/failed" -- "$py" "$tmp/fails.py"
grep -q "RuntimeError: rank one fails" "$tmp/err" && ok || bad "no traceback: $(cat "$tmp/err")"
[ ! -e "$tmp/failed" ] && [ -z "$(find "$tmp" -maxdepth 1 -name '.gpusim-record-*')" ] &&
  ok || bad "a failed rank left $(ls -a "$tmp")"
cli_finish
