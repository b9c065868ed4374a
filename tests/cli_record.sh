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

# The CS336 snapshot recorded mid-run on an RTX 5090 (compute capability 12.0: one cuBLAS
# workspace of 4096 KiB x 2 + 16 KiB x 8 = 8519680 B), its workload written anew in
# tests/data/record/cs336_medium_inference.py: the "medium" LM (d_model 1024, d_ff 4096, 24
# layers, 16 heads, vocabulary 10000), batch 4 x 128 tokens, float32, 5 warm-up passes under
# inference_mode, then _record_memory_history (the recording's "memory history on" mark) and
# the measured pass. --skip-init leaves the weights' values out: same trace, 30 s less.
# (a) What is live at the mark is the snapshot's start state, 223 blocks, 1701310464 B
#     requested: the weights 2 x 40960000 (embedding, lm_head) + 24 x (4 x 4 MiB + 3 x 16 MiB)
#     + 49 x 4096 (norms) = 1692733440, the rotary cache 2*128*32*4 = 32768, the token ids
#     5*4*128*8 = 20480 and 4096, the workspace 8519680. The 2560 allocations and frees
#     after it are the snapshot's trace entries, size for size, in the same order.
# (b) Peaks, the recording replayed from an empty allocator under torch (the recording's
#     allocator_settings are PyTorch's defaults) = the snapshot replayed from its rebuilt
#     start state = the snapshot from empty: requested 1701310464 + 34 MiB (layer 1's SwiGLU:
#     the embedding, layer 0's output, attention output, residual and norm, 5 x 2 MiB, and
#     w1's output, its sigmoid and their product, 3 x 8 MiB) = 1736962048 B; allocated
#     1738928128 (the two 40960000 B weights each take a whole 40 MiB block: + 2 x 983040);
#     reserved 1763704832 = 98 segments: 2 x 40 MiB; 24 x 20 MiB holding the 96 4 MiB
#     weights and 6 of the 72 16 MiB ones (96*4 + 6*16 = 480 MiB), the other 66 in 16 MiB
#     segments of their own; 20 MiB for the workspace and 2 x 20 MiB, 3 x 2 MiB small ones
#     for the rest. Differences 0 B.
# (c) At the "memory history off" mark the replay holds the snapshot's final segments: the
#     same 98 segments, block for block (sizes and states; not their addresses, which CUDA
#     chose).
mid="$src/tests/data/import/torch_snapshot_cs336_midrun_inference.pickle"
expect_any 0 "Peak memory allocated: 1656.49609375 MB" record -o "$tmp/work/mid.jsonl" --gpu=RTX5090 -- \
  "$py" "$src/tests/data/record/cs336_medium_inference.py" --skip-init
expect 0 "" convert "$mid" -o "$tmp/work/midsnap.jsonl"
if python3 - "$tmp/work/mid.jsonl" "$tmp/work/midsnap.jsonl" >"$tmp/cmp.txt" 2>&1 <<'PY'
import json, sys
def load(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    return lines[0], lines[1:]
def seq(events, live):
    out = []
    for e in events:
        if e["op"] == "alloc":
            live[e["id"]] = e["size"]
            out.append(("+", e["size"]))
        elif e["op"] == "free":
            out.append(("-", live.pop(e["id"])))
    return out
_, rec = load(sys.argv[1])
head, real = load(sys.argv[2])
on = next(i for i, e in enumerate(rec) if e.get("name") == "memory history on")
off = next(i for i, e in enumerate(rec) if e.get("name") == "memory history off")
rec_live, real_live = {}, {}
seq(rec[:on], rec_live)
n = head["meta"]["imported_from"]["start_allocations"]
first = [i for i, e in enumerate(real) if e["op"] == "alloc"][n]
seq(real[:first], real_live)
if sorted(rec_live.values()) != sorted(real_live.values()) or sum(rec_live.values()) != 1701310464:
    sys.exit("live at the mark: %d blocks, %d B; the snapshot's start: %d, %d B"
             % (len(rec_live), sum(rec_live.values()), len(real_live), sum(real_live.values())))
a, b = seq(rec[on:off], rec_live), seq(real[first:], real_live)
if a != b or len(a) != 2560:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    sys.exit("%d and %d events; first difference at %d: %s / %s" % (len(a), len(b), i, a[i:i + 3], b[i:i + 3]))
PY
then ok; else bad "CS336 mid-run: $(cat "$tmp/cmp.txt")"; fi
for run in "$tmp/work/mid.jsonl" "$mid" "$mid --from-empty"; do
  # shellcheck disable=SC2086 # the options after the path split on purpose
  expect 0 "" replay $run --strategy=torch --gpu=RTX5090 --format=json
  peaks=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]; print(r["peak_requested_bytes"], r["peak_allocated_bytes"], r["peak_reserved_bytes"])' "$tmp/out")
  [ "$peaks" = "1736962048 1738928128 1763704832" ] && ok || bad "CS336 mid-run, replay $(basename "$run"): peaks $peaks"
done
sed -n '/"memory history off"/q;p' "$tmp/work/mid.jsonl" >"$tmp/work/mid-off.jsonl"
expect 0 "" replay "$tmp/work/mid-off.jsonl" --strategy=torch --gpu=RTX5090 --export-snapshot="$tmp/work/mid-off.pickle"
if python3 - "$tmp/work/mid-off.pickle" "$mid" >"$tmp/cmp.txt" 2>&1 <<'PY'
import collections, pickle, sys
class Plain(pickle.Unpickler):  # both are plain data: no class may be loaded
    def find_class(self, module, name):
        raise pickle.UnpicklingError("%s.%s in a snapshot" % (module, name))
def layout(path):
    with open(path, "rb") as f:
        segs = Plain(f).load()["segments"]
    return collections.Counter((s["total_size"], tuple((b["size"], b["state"]) for b in s["blocks"])) for s in segs)
a, b = layout(sys.argv[1]), layout(sys.argv[2])
if a != b or sum(a.values()) != 98:
    sys.exit("replay only: %s\nsnapshot only: %s" % (a - b, b - a))
PY
then ok; else bad "CS336 mid-run, the segments at the end: $(cat "$tmp/cmp.txt")"; fi
cli_finish
