#!/usr/bin/env bash
# gpusim record: its usage errors, and with the frameworks' PyTorch
# ($GPUSIM_FRAMEWORKS_PYTHON) an unmodified training script recorded on the CPU:
# --steps stops it, CUDA answers as the --gpu card, the trace replays, and a script
# that fails exits 2 with its traceback and leaves no file (not even a temporary one).
# Without the frameworks' environment that part says SKIPPED (scripts/test lists it).
# Usage: cli_record.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

expect 0 "" record --help
grep -q -- "-- PYTHON SCRIPT" "$tmp/out" && ok || bad "record --help: no usage line"
expect 2 "no output file" record -- python x.py
expect 2 "expected -- PYTHON SCRIPT" record -o "$tmp/t.jsonl"
expect 2 "expected -- PYTHON SCRIPT" record -o "$tmp/t.jsonl" -- python
expect 2 "unknown GPU 'NOPE'" record -o "$tmp/t.jsonl" --gpu=NOPE -- python x.py
expect 2 "--steps: expected a number" record -o "$tmp/t.jsonl" --steps=two -- python x.py
expect 2 "--compute-capability: expected X.Y" record -o "$tmp/t.jsonl" --compute-capability=sm90 -- python x.py
expect 2 "unknown option '--stepz'" record -o "$tmp/t.jsonl" --stepz=1 -- python x.py
expect 2 "cannot run '$tmp/no-python'" record -o "$tmp/t.jsonl" -- "$tmp/no-python" x.py
[ ! -e "$tmp/t.jsonl" ] && ok || bad "a usage error wrote a trace"

py=${GPUSIM_FRAMEWORKS_PYTHON:-}
if [ -z "$py" ] || [ ! -x "$py" ] || ! "$py" -c "import torch" 2>/dev/null; then
  cli_skip_part "no frameworks' PyTorch (GPUSIM_FRAMEWORKS_PYTHON; scripts/frameworks sets it up): scripts not recorded"
  cli_finish
  exit
fi

mkdir "$tmp/work"
cat >"$tmp/work/train.py" <<'PY'
import sys
import torch
assert torch.cuda.is_available(), "CUDA should appear available"
print("device", torch.cuda.get_device_name(0), "args", sys.argv[1:])
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(1000):
    x = torch.randn(32, 64, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
PY
out="$tmp/work/train.jsonl"
expect 0 "2 optimizer steps" record -o "$out" --steps=2 --gpu=H100 -- "$py" "$tmp/work/train.py" one two
grep -q "device H100-80GB args \['one', 'two'\]" "$tmp/out" && ok || bad "the script saw $(cat "$tmp/out")"
head -n 1 "$out" | grep -q '"device":{"name":"H100-80GB","capacity_bytes":85029027840,"compute_capability":"9.0"}' &&
  ok || bad "header: $(head -n 1 "$out")"
marks=$(grep -o '"op":"mark","name":"[^"]*"' "$out" | sed 's/.*"name"://' | tr '\n' ' ')
[ "$marks" = '"model loaded" "optimizer step 1" "optimizer step 2" ' ] && ok || bad "marks: $marks"
# Hopper's cuBLAS workspace: 4096 KiB x 8 = 33554432 B, twice: the main thread's handle and
# the autograd engine's device thread's (backward), whatever the number of steps
[ "$(grep -c '"size":33554432,"tag":"cuBLAS workspace"' "$out")" = 2 ] && ok || bad "not two 32 MiB workspaces"
# the parameters, moved by .cuda(): 64*256*4 = 65536 B and 256*10*4 = 10240 B
grep -q '"size":65536,"tag":"_to_copy"' "$out" && grep -q '"size":10240,"tag":"_to_copy"' "$out" &&
  ok || bad "the parameters' copies are missing"
expect 0 "" replay "$out"
expect 0 "" replay "$out" --strategy=growth

# a script that fails: exit 2, its traceback, no trace and no temporary file
printf 'import torch\nx = torch.ones(4, device="cuda")\n1 / 0\n' >"$tmp/work/fails.py"
expect 2 "ZeroDivisionError" record -o "$tmp/work/fails.jsonl" -- "$py" "$tmp/work/fails.py"
grep -q "Traceback" "$tmp/err" && grep -q "no trace written" "$tmp/err" && ok || bad "no traceback: $(cat "$tmp/err")"
[ ! -e "$tmp/work/fails.jsonl" ] && ok || bad "a failed script left its trace"
[ -z "$(find "$tmp/work" -name '.gpusim-record-*')" ] && ok || bad "a temporary file was left"
# sys.exit(3) is a failure too; sys.exit(0) is not
printf 'import sys, torch\ntorch.ones(4, device="cuda")\nsys.exit(3)\n' >"$tmp/work/exit3.py"
expect 2 "exited with status 3" record -o "$tmp/work/exit3.jsonl" -- "$py" "$tmp/work/exit3.py"
[ ! -e "$tmp/work/exit3.jsonl" ] && ok || bad "sys.exit(3) left a trace"
printf 'import sys, torch\nkeep = torch.ones(4, device="cuda")\nsys.exit(0)\n' >"$tmp/work/exit0.py"
expect 0 "" record -o "$tmp/work/exit0.jsonl" -- "$py" "$tmp/work/exit0.py"
grep -q '"op":"alloc","id":1,"size":16,"tag":"ones"' "$tmp/work/exit0.jsonl" && ok || bad "sys.exit(0): $(cat "$tmp/work/exit0.jsonl")"
# .item() needs a value: the message names the op and says what to do
printf 'import torch\nif torch.ones(3, device="cuda").sum().item() > 1:\n    pass\n' >"$tmp/work/item.py"
expect 2 "aten._local_scalar_dense.default on a CUDA tensor: its result depends on the tensor's values" \
  record -o "$tmp/work/item.jsonl" -- "$py" "$tmp/work/item.py"
# gpusim.mark(stop=True) ends the recording there, the trace written
printf 'import torch, gpusim\na = torch.ones(4, device="cuda")\ngpusim.mark("enough", stop=True)\nb = torch.ones(8, device="cuda")\n' >"$tmp/work/mark.py"
expect 0 "" record -o "$tmp/work/mark.jsonl" -- "$py" "$tmp/work/mark.py"
tail -n 1 "$tmp/work/mark.jsonl" | grep -q '"name":"enough"' && ! grep -q '"size":32' "$tmp/work/mark.jsonl" &&
  ok || bad "mark(stop=True): $(cat "$tmp/work/mark.jsonl")"

# The CS336 snapshot recorded on a GPU from an empty allocator (../shared/realtraces), its
# workload recorded here on the CPU: the same allocations and frees in the same order but
# for the full sum's two kernel temporaries (a 256 B staging buffer and a 4 B semaphore of
# the multi-block reduction, freed within the kernel), and under torch with the recording's
# settings the same peaks: requested 3249143816 B, allocated 3249144832 B, reserved
# 3781165056 B (7 x 512 MiB + 20 MiB + 2 MiB segments), differences 0 B.
snap="$src/../shared/realtraces/torch_snapshot_cs336_from_empty.pickle"
if [ ! -f "$snap" ]; then
  cli_skip_part "no $snap: the CS336 comparison not run"
else
  expect 0 "" record -o "$tmp/work/cs336.jsonl" --gpu=A100-80GB -- "$py" "$src/tests/data/record/cs336_attention.py"
  expect 0 "" convert "$snap" -o "$tmp/work/snap.jsonl"
  if python3 - "$tmp/work/cs336.jsonl" "$tmp/work/snap.jsonl" >"$tmp/cmp.txt" 2>&1 <<'PY'
import json, sys
def seq(path):
    out, live = [], {}
    with open(path) as f:
        for line in list(f)[1:]:
            e = json.loads(line)
            if e["op"] == "alloc":
                live[e["id"]] = e["size"]
                out.append(("+", e["size"]))
            elif e["op"] == "free":
                out.append(("-", live.pop(e["id"])))
    return out
rec, real = seq(sys.argv[1]), seq(sys.argv[2])
temps = [("+", 256), ("+", 4), ("-", 4), ("-", 256)]
at = next(i for i in range(len(real)) if real[i:i + 4] == temps)
real = real[:at] + real[at + 4:]
if rec[:len(real)] != real:
    sys.exit("recorded %s\nreal     %s" % (rec, real))
PY
  then ok; else bad "CS336: the sequences differ: $(cat "$tmp/cmp.txt")"; fi
  for t in "$tmp/work/cs336.jsonl" "$snap"; do
    expect 0 "" replay "$t" --gpu=A100-80GB --format=json
    peaks=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]; print(r["peak_requested_bytes"], r["peak_allocated_bytes"], r["peak_reserved_bytes"])' "$tmp/out")
    [ "$peaks" = "3249143816 3249144832 3781165056" ] && ok || bad "CS336 $(basename "$t"): peaks $peaks"
  done
fi
cli_finish
