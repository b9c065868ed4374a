#!/usr/bin/env bash
# CLI tests of replaying real PyTorch snapshots as a new user finds them (issue 30):
# a state-only snapshot is its state, compare and plan start from a mid-run
# snapshot's rebuilt state as replay does, pending frees are neither allocated nor
# free, the ranks of one job replay as one node, and a Kineto trace without totals
# under --against-recorded is no usage error. Inputs: the real recordings shipped in
# tests/data/import and small snapshots written here as JSON.
# Usage: cli_recordings.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
d="$src/tests/data/import"
state="$d/torch_snapshot_flexgen_oom_state_only.pickle"
midrun="$d/torch_snapshot_cs336_midrun_inference.pickle"

# has NAME FILE TEXT...: every fixed TEXT is in FILE
has() {
  local name=$1 file=$2 t
  shift 2
  for t in "$@"; do
    if ! grep -qF -- "$t" "$file"; then
      bad "$name: '$t' not in $(head -c 600 "$file")"
      return
    fi
  done
  ok
}
# lacks NAME FILE TEXT: TEXT is not in FILE
lacks() {
  if grep -qF -- "$3" "$2"; then bad "$1: '$3' in $(head -c 600 "$2")"; else ok; fi
}

# ---------------------------------------------------------------- item 4: a state only
# The FlexGen snapshot was taken at an OOM with no trace after its state: 176 segments
# holding 11,844,714,496 B (the sum of their total_size), 460 active_allocated blocks of
# 11,840,159,744 B (the sum of their size; its one "snapshot" entry says the same size).
# Replayed, that state is the whole run: peak = final = those bytes, under torch
# (which starts from the state: no cudaMalloc during the replay) and in the allocated figure.
expect 0 "a state only: the snapshot holds no trace for device 0 after its state" replay "$state" --format=json
has "state only: the state is the peak and the end" "$tmp/out" '"peak_reserved_bytes": 11844714496' \
  '"final_reserved_bytes": 11844714496' '"peak_allocated_bytes": 11840159744' '"peak_requested_bytes": 11840159744' \
  '"num_device_allocs": 0'
lacks "state only: no ring buffer blamed" "$tmp/err" "ring buffer"
# its summary is PyTorch's memory_summary() of that state: 11,840,159,744 B = 11291 MiB
# allocated, 11,844,714,496 B = 11295.7, shown 11296 MiB, reserved, nothing freed
expect 0 "" replay "$state" --summary
has "state only: --summary shows the state" "$tmp/out" \
  "| Allocated memory      |  11291 MiB |  11291 MiB |  11291 MiB |      0 B   |" \
  "| GPU reserved memory   |  11296 MiB |  11296 MiB |  11296 MiB |      0 B   |"
lacks "state only: --summary is no OOM fallback" "$tmp/err" "no out-of-memory happened"
expect 0 "" replay "$state" --summary=peak
has "state only: --summary=peak is the state" "$tmp/out" "| GPU reserved memory   |  11296 MiB |  11296 MiB |"
expect 0 "" replay "$state" --summary --format=json
has "state only: memory_stats() of the state" "$tmp/out" '"reserved_bytes.all.current": 11844714496' \
  '"allocated_bytes.all.current": 11840159744' '"segment.all.current": 176' '"allocation.all.current": 460'
# the export is that state: 176 segments, 460 active blocks, and gpusim reads it back
# to the same figures
expect 0 "" replay "$state" --export-snapshot="$tmp/state.pickle"
if python3 -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
segs = d["segments"]
blocks = [b for s in segs for b in s["blocks"]]
act = [b for b in blocks if b["state"] == "active_allocated"]
assert len(segs) == 176, len(segs)
assert sum(s["total_size"] for s in segs) == 11844714496
assert len(act) == 460 and sum(b["size"] for b in act) == 11840159744, (len(act), sum(b["size"] for b in act))
' "$tmp/state.pickle"; then ok; else bad "state only: the export holds the state"; fi
expect 0 "" replay "$tmp/state.pickle" --format=json
has "state only: the export replays to the state" "$tmp/out" '"peak_reserved_bytes": 11844714496' \
  '"final_reserved_bytes": 11844714496'
# against the recording: the same peak and, block by block, the same end state (176
# segments tiled by 463 blocks: the 460 live ones and 3 free)
expect 0 "" replay "$state" --against-recorded --format=json
has "state only: the recorded peak and end state" "$tmp/out" '"predicted_peak_bytes": 11844714496, "recorded_peak_bytes": 11844714496' \
  '"end_state": {"recorded_blocks": 463, "predicted_blocks": 463, "matched": 463, "first_difference": null}' \
  '"allocated_at_end": {"predicted_bytes": 11840159744, "recorded_bytes": 11840159744}'
# an empty trace is still nothing: no state, no summary, said so
printf '{"format":"gpusim-trace","version":1,"events":[]}\n' >"$tmp/empty.json"
expect 0 "no event and no recorded state" replay "$tmp/empty.json" --summary

# ---------------------------------------------------------------- item 6: compare and plan start as replay
# mid.json, written here: one 100 MiB segment (at 0x7f0000000000) holding a live 10 MiB
# block and a free 90 MiB one, then a trace that allocates 4 MiB and frees it. From its
# state torch splits the 4 MiB off the free block at offset 10 MiB and reserves
# nothing more: 100 MiB = 104857600 B. From an empty allocator the live 10 MiB block is
# a 10 MiB segment and the 4 MiB request a 20 MiB one (1-10 MiB requests take 20 MiB):
# 30 MiB = 31457280 B. raw gets the live block as an allocation at the start, then the
# 4 MiB: 14 MiB = 14680064 B, from the state or not.
python3 - "$tmp/mid.json" <<'PY'
import json, sys
MiB, base = 1 << 20, 0x7f0000000000
def block(addr, size, req, state):
    return {"address": addr, "size": size, "requested_size": req, "state": state, "frames": []}
def entry(action, addr, size, t):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": []}
seg = {"device": 0, "address": base, "total_size": 100 * MiB, "allocated_size": 10 * MiB,
       "active_size": 10 * MiB, "requested_size": 10 * MiB, "stream": 0, "segment_type": "large",
       "segment_pool_id": [0, 0], "is_expandable": False, "frames": [],
       "blocks": [block(base, 10 * MiB, 10 * MiB, "active_allocated"),
                  block(base + 10 * MiB, 90 * MiB, 0, "inactive")]}
trace = [entry("alloc", base + 10 * MiB, 4 * MiB, 10), entry("free_requested", base + 10 * MiB, 4 * MiB, 20),
         entry("free_completed", base + 10 * MiB, 4 * MiB, 20)]
json.dump({"segments": [seg], "device_traces": [trace]}, open(sys.argv[1], "w"))
PY
expect 0 "torch starts from it" compare "$tmp/mid.json" --strategies=torch,raw --format=json
has "compare: torch from the recorded state, raw with its live block" "$tmp/out" '"peak_reserved_bytes": 104857600' \
  '"peak_reserved_bytes": 14680064'
expect 0 "" compare "$tmp/mid.json" --strategies=torch --format=json --from-empty
has "compare --from-empty: torch from an empty allocator" "$tmp/out" '"peak_reserved_bytes": 31457280'
expect 0 "" compare "$tmp/mid.json" --strategies=torch --report="$tmp/mid.html"
has "compare --report: the report's torch replay starts from the state too" "$tmp/mid.html" "100.00 MiB"
expect 0 "" plan "$tmp/mid.json" --strategies=torch --gpus=T4 --format=json
has "plan: torch from the recorded state" "$tmp/out" '"peak_reserved_bytes": 104857600'
expect 0 "" plan "$tmp/mid.json" --strategies=torch --gpus=T4 --format=json --from-empty
has "plan --from-empty: torch from an empty allocator" "$tmp/out" '"peak_reserved_bytes": 31457280'
# the real mid-run snapshot: plan's torch peak is the recorded one, 98 segments of
# 1,763,704,832 B that the trace never grows (replay --against-recorded agrees)
expect 0 "" plan "$midrun" --strategies=torch --gpus=T4 --format=json
has "plan: the recorded peak of a real mid-run snapshot" "$tmp/out" '"peak_reserved_bytes": 1763704832'
expect 0 "" replay "$midrun" --against-recorded --format=json
has "replay --against-recorded: the recorded peak" "$tmp/out" '"recorded_peak_bytes": 1763704832'

# ---------------------------------------------------------------- item 7: pending frees, no history
# pend.json, written here: one 20 MiB segment of a live 4 MiB block (active_allocated),
# a 4 MiB block whose free was requested before the trace and had not completed at the
# end (active_pending_free) and 12 MiB free; the trace allocates 2 MiB (at offset 8 MiB:
# the pending block is not reusable) and frees it. Recorded allocated at the end: the
# active_allocated blocks, 4 MiB = 4194304 B. The pending block is neither allocated
# nor free: allocated 4194304, active 8388608 (it is still active), reserved 20971520.
python3 - "$tmp/pend.json" <<'PY'
import json, sys
MiB, base = 1 << 20, 0x7f0000000000
def block(addr, size, req, state):
    return {"address": addr, "size": size, "requested_size": req, "state": state, "frames": []}
def entry(action, addr, size, t):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": []}
seg = {"device": 0, "address": base, "total_size": 20 * MiB, "allocated_size": 4 * MiB,
       "active_size": 8 * MiB, "requested_size": 8 * MiB, "stream": 0, "segment_type": "large",
       "segment_pool_id": [0, 0], "is_expandable": False, "frames": [],
       "blocks": [block(base, 4 * MiB, 4 * MiB, "active_allocated"),
                  block(base + 4 * MiB, 4 * MiB, 4 * MiB, "active_pending_free"),
                  block(base + 8 * MiB, 12 * MiB, 0, "inactive")]}
trace = [entry("alloc", base + 8 * MiB, 2 * MiB, 10), entry("free_requested", base + 8 * MiB, 2 * MiB, 20),
         entry("free_completed", base + 8 * MiB, 2 * MiB, 20)]
json.dump({"segments": [seg], "device_traces": [trace]}, open(sys.argv[1], "w"))
PY
expect 0 "1 blocks are active_pending_free with no free in the trace" replay "$tmp/pend.json" --against-recorded \
  --format=json
has "a pending free is not allocated at the end" "$tmp/out" \
  '"allocated_at_end": {"predicted_bytes": 4194304, "recorded_bytes": 4194304}' '"matched": 1'
expect 0 "" replay "$tmp/pend.json" --against-recorded --format=json --from-empty
has "a pending free is not allocated at the end, from empty either" "$tmp/out" \
  '"allocated_at_end": {"predicted_bytes": 4194304, "recorded_bytes": 4194304}'
expect 0 "" replay "$tmp/pend.json" --summary --format=json
has "a pending free is active, not allocated" "$tmp/out" '"allocated_bytes.all.current": 4194304' \
  '"active_bytes.all.current": 8388608' '"reserved_bytes.all.current": 20971520'
# a snapshot of segments with an empty trace was recorded without history: said so
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["device_traces"] = [[]]
json.dump(d, open(sys.argv[2], "w"))' "$tmp/pend.json" "$tmp/nohist.json"
expect 0 "a state only: the snapshot holds no trace for device 0 after its state" replay "$tmp/nohist.json" --format=json
lacks "no history: no ring buffer blamed" "$tmp/err" "ring buffer"
has "no history: the state is the run" "$tmp/out" '"peak_reserved_bytes": 20971520' '"final_reserved_bytes": 20971520'

# ---------------------------------------------------------------- item 10: nothing recorded to compare
# The Kineto excerpt of 2021 (PyTorch ~1.9) has no "Total Allocated" or "Total
# Reserved" on its [memory] events: --against-recorded has nothing to compare with.
# The command line is right and the file lacks it: exit 3 naming the file and what is
# missing, never 2 (usage).
expect 3 'this kineto file holds no numbers from the real allocator' replay "$d/kineto_nw0_excerpt.pt.trace.json" \
  --against-recorded
has "no totals: the message names the file" "$tmp/err" "kineto_nw0_excerpt.pt.trace.json: --against-recorded:" \
  '"Total Allocated"'
expect 3 'holds no numbers from the real allocator' replay "$d/native_small.json" --against-recorded --strategy=ideal
# the two full recordings when the team's copies are at hand (the excerpt above always is)
for f in "${GPUSIM_REALTRACES:-/nonexistent}"/kineto_resnet50_nw*.pt.trace.json.gz; do
  [ -e "$f" ] || continue
  expect 3 'this kineto file holds no numbers from the real allocator' replay "$f" --against-recorded
done

# ---------------------------------------------------------------- item 10: the export's frames
# The viewer shows a block's "frames" (else "This block has no frames"): the export
# gives each allocation one frame of ours, {filename: the trace's file, line: its
# alloc's event, name: its tag, else "alloc of id N"}, on its trace entries and on its
# block in the end state. tags.json: event 1 allocates id 1 (4 MiB, "embedding"),
# event 2 id 2 (2 MiB, no tag), event 3 frees id 1; id 2 is live at the end.
cat >"$tmp/tags.json" <<'JSON'
{"format": "gpusim-trace", "version": 1, "events": [
  {"op": "alloc", "id": 1, "size": 4194304, "t": 1000, "tag": "embedding"},
  {"op": "alloc", "id": 2, "size": 2097152, "t": 2000},
  {"op": "free", "id": 1, "t": 3000}]}
JSON
expect 0 "" replay "$tmp/tags.json" --strategy=torch --export-snapshot="$tmp/tags.pickle"
if python3 "$src/tests/support/snapshot_check.py" "$tmp/tags.pickle" >/dev/null && python3 -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
tr = d["device_traces"][0]
emb = [{"filename": "tags.json", "line": 1, "name": "embedding"}]
two = [{"filename": "tags.json", "line": 2, "name": "alloc of id 2"}]
got = [(e["action"], e.get("frames")) for e in tr if e["action"] in ("alloc", "free_requested", "free_completed")]
assert got == [("alloc", emb), ("alloc", two), ("free_requested", emb), ("free_completed", emb)], got
live = [b for s in d["segments"] for b in s["blocks"] if b["state"] != "inactive"]
assert [b["frames"] for b in live] == [two], live
assert all(b["frames"] == [] for s in d["segments"] for b in s["blocks"] if b["state"] == "inactive")
' "$tmp/tags.pickle"; then ok; else bad "export: each allocation's tag and event as its frames"; fi
# a recording's allocations keep where the program asked for them: the mid-run CS336
# snapshot's first alloc entry (event 224, after the 223 live blocks of its state) was
# placed at 0x776220000 from model.py line 54, in forward (its innermost Python frame)
expect 0 "" replay "$midrun" --export-snapshot="$tmp/midrun.pickle"
if python3 -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
first = [e for e in d["device_traces"][0] if e["action"] == "alloc"][0]
want = [{"filename": "torch_snapshot_cs336_midrun_inference.pickle", "line": 224,
         "name": "0x776220000 at model.py:54 in forward"}]
assert first["frames"] == want, first
' "$tmp/midrun.pickle"; then ok; else bad "export of a recording: its Python frame as the block's frame"; fi
# a recorded state: its blocks are named as live at the start
if python3 -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
live = [b for s in d["segments"] for b in s["blocks"] if b["state"] != "inactive"]
assert len(live) == 460 and all(len(b["frames"]) == 1 and b["frames"][0]["name"].startswith("live at the start (id ")
                                and b["frames"][0]["filename"] == "torch_snapshot_flexgen_oom_state_only.pickle"
                                for b in live)
' "$tmp/state.pickle"; then ok; else bad "export of a state: its live blocks carry frames"; fi

# ---------------------------------------------------------------- item 8: several ranks
# A directory of one job's snapshots (rank0, rank2, rank10: natural order, not
# rank10 before rank2; a README beside them is no snapshot) replays as one node, rank r
# on GPU r, each rank from its own recorded state: GPU 0 the mid-run snapshot's
# 1,763,704,832 B, GPU 1 the from-empty one's 3,781,165,056 B (its 9 segments), GPU 2
# the state-only one's 11,844,714,496 B. (--context=0 throughout: the allocator's figures
# alone, without the CUDA context each catalog GPU adds, which cli_context checks.)
mkdir "$tmp/job"
cp "$midrun" "$tmp/job/rank0.pickle"
cp "$d/torch_snapshot_cs336_from_empty.pickle" "$tmp/job/rank2.pickle"
cp "$state" "$tmp/job/rank10.pickle"
echo "not a snapshot" >"$tmp/job/README"
rows='"gpu": 0, "name": "H100-80GB", "capacity_bytes": 85029027840, "peak_used_bytes": 1763704832'
rows1='"gpu": 1, "name": "H100-80GB", "capacity_bytes": 85029027840, "peak_used_bytes": 3781165056'
rows2='"gpu": 2, "name": "H100-80GB", "capacity_bytes": 85029027840, "peak_used_bytes": 11844714496'
expect 0 "3 PyTorch snapshots are the ranks of one job: replayed as one node of 3 x H100-80GB" replay "$tmp/job" \
  --format=json --context=0
has "a directory of ranks: one node, a GPU per rank" "$tmp/out" "$rows" "$rows1" "$rows2" \
  '"ranks": 3, "traces": ["rank0.pickle", "rank2.pickle", "rank10.pickle"]'
expect 0 "ranks of one job" replay "$tmp/job/rank0.pickle" "$tmp/job/rank2.pickle" "$tmp/job/rank10.pickle" \
  --format=json --context=0
has "several snapshot files: the same node" "$tmp/out" "$rows" "$rows1" "$rows2"
expect 0 "" replay "$tmp/job" --gpu=A100-40GB
has "ranks on the GPU asked for" "$tmp/out" "node of 3 GPUs, strategy torch" "A100-40GB"
has "the note names each rank's file" "$tmp/err" "rank r on GPU r (0 rank0.pickle, 1 rank2.pickle, 2 rank10.pickle;"
# snapshots as JSON are ranks too; each from its recorded state (mid.json on GPU 0:
# 100 MiB), or from an empty allocator with --from-empty (30 MiB, as above)
expect 0 "" replay "$tmp/mid.json" "$tmp/pend.json" --format=json --context=0
has "ranks: each from its recorded state" "$tmp/out" '"gpu": 0, "name": "H100-80GB", "capacity_bytes": 85029027840, "peak_used_bytes": 104857600' \
  '"gpu": 1, "name": "H100-80GB", "capacity_bytes": 85029027840, "peak_used_bytes": 20971520'
expect 0 "" replay "$tmp/mid.json" "$tmp/pend.json" --format=json --from-empty --context=0
has "ranks --from-empty: from an empty allocator" "$tmp/out" '"gpu": 0, "name": "H100-80GB", "capacity_bytes": 85029027840, "peak_used_bytes": 31457280'
expect 2 "the snapshots are the ranks of one job, one GPU each" replay "$tmp/job" --summary
expect 2 "--node: 3 traces (ranks) but 2 visible GPUs" replay "$tmp/job" --node=2xA100-40GB
expect 0 "" replay "$tmp/job" --node=4xA100-40GB --format=json --context=0
has "ranks on a node given with --node" "$tmp/out" '"gpu": 2, "name": "A100-40GB", "capacity_bytes": 42505076736, "peak_used_bytes": 11844714496'
# plan of the ranks of one job asks which node of one GPU model per rank fits: 3xT4
# (15,842,934,784 B each) holds them, the highest peak the state-only rank's on GPU 2
expect 0 "planned on nodes of 3 GPUs of each model" plan "$tmp/job" --strategies=torch --gpus=T4,A100-40GB \
  --format=json --context=0
has "plan of ranks: a node per GPU model" "$tmp/out" '{"name": "3xT4", "gpus": 3,' '{"name": "3xA100-40GB", "gpus": 3,' \
  '"peak_used_bytes": 11844714496, "peak_gpu": 2' \
  '{"gpu": 1, "name": "T4", "capacity_bytes": 15842934784, "limit_bytes": 15842934784, "peak_used_bytes": 3781165056'
expect 2 "the snapshots are the ranks of one job" plan "$tmp/job" --capacity=24GiB
expect 2 "the 3 snapshots are the ranks of one job, one GPU each" compare "$tmp/job"
# plan --node takes the directory too, each rank from its recorded state: the torch
# row's highest peak is the state-only rank's, on GPU 2; and a mid-run rank alone
# starts from its state (mid.json: 100 MiB, not the 30 MiB from empty)
expect 0 "" plan "$tmp/job" --node=4xA100-40GB --strategies=torch --format=json --context=0
has "plan --node on a directory of ranks" "$tmp/out" '"peak_used_bytes": 11844714496, "peak_gpu": 2'
expect 0 "" plan "$tmp/mid.json" --node=1xA100-40GB --strategies=torch --format=json --context=0
has "plan --node: a rank from its recorded state" "$tmp/out" '"peak_used_bytes": 104857600'

# --device=N picks a device of a multi-device snapshot. two.json, written here: device 0
# holds a 20 MiB segment with a live 2 MiB block and no trace; device 1 a 40 MiB one
# with a live 8 MiB block and a trace that allocates 4 MiB there and frees it. The
# default is the device with the most trace entries (1); a device it lacks is a usage
# error listing what it holds.
python3 - "$tmp/two.json" <<'PY'
import json, sys
MiB = 1 << 20
def seg(dev, base, total, live):
    return {"device": dev, "address": base, "total_size": total, "allocated_size": live, "active_size": live,
            "requested_size": live, "stream": 0, "segment_type": "large", "segment_pool_id": [0, 0],
            "is_expandable": False, "frames": [],
            "blocks": [{"address": base, "size": live, "requested_size": live, "state": "active_allocated",
                        "frames": []},
                       {"address": base + live, "size": total - live, "requested_size": 0, "state": "inactive",
                        "frames": []}]}
b1 = 0x7f1000000000
trace1 = [{"action": a, "addr": b1 + 8 * MiB, "size": 4 * MiB, "stream": 0, "time_us": t, "frames": []}
          for a, t in (("alloc", 10), ("free_requested", 20), ("free_completed", 20))]
json.dump({"segments": [seg(0, 0x7f0000000000, 20 * MiB, 2 * MiB), seg(1, b1, 40 * MiB, 8 * MiB)],
           "device_traces": [[], trace1]}, open(sys.argv[1], "w"))
PY
expect 0 "the snapshot holds 2 devices" replay "$tmp/two.json" --format=json
has "two devices: the default is the one with a trace" "$tmp/out" '"peak_reserved_bytes": 41943040' \
  '"peak_requested_bytes": 12582912'
expect 0 "" replay "$tmp/two.json" --device=0 --format=json
has "--device=0: that device's state" "$tmp/out" '"peak_reserved_bytes": 20971520' '"peak_requested_bytes": 2097152'
expect 0 "" replay "$tmp/two.json" --device=1 --format=json
has "--device=1: that device's state and trace" "$tmp/out" '"peak_reserved_bytes": 41943040'
expect 2 "--device=2: the snapshot has no trace or segments for that device" replay "$tmp/two.json" --device=2

cli_finish
