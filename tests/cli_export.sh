#!/usr/bin/env bash
# CLI tests of `gpusim replay --export-snapshot=FILE.pickle` (reports/snapshot_export.h):
# the file is plain data that a restricted unpickler reads with the keys and spellings
# pytorch.org/memory_viz needs, the viewer's reconstruction works at every entry
# (tests/support/snapshot_check.py), gpusim's own importer replays it to the same
# results (the round trip), and errors leave no file.
# Usage: cli_export.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
g="$src/tests/golden"
ex="$src/traces/examples"
check="$src/tests/support/snapshot_check.py"

# check FILE EXPECTED-COUNTS: the snapshot passes snapshot_check.py with those counts
check() {
  local got
  if ! got=$(python3 "$check" "$1" 2>&1); then
    bad "$1: $got"
  elif [ -n "$2" ] && [ "$got" != "$2" ]; then
    bad "$1: counts '$got', want '$2'"
  else
    ok
  fi
}

# same_results NAME A.json B.json: the result keys a round trip must keep (but those
# named in RT_SKIP, space-separated)
same_results() {
  local d
  d=$(python3 - "$2" "$3" "${RT_SKIP:-}" <<'EOF'
import json, sys
keys = ["completed", "peak_requested_bytes", "peak_allocated_bytes", "peak_reserved_bytes", "peak_device_bytes",
        "final_reserved_bytes", "num_device_allocs", "num_device_frees", "ooms", "fragmentation",
        "reserved_unallocated_at_peak_bytes"]
keys = [k for k in keys if k not in sys.argv[3].split()]
a = json.load(open(sys.argv[1]))["result"]
b = json.load(open(sys.argv[2]))["result"]
print(" ".join("%s: %s != %s" % (k, a[k], b[k]) for k in keys if a[k] != b[k]))
EOF
)
  if [ -z "$d" ]; then ok; else bad "$1: $d"; fi
}

# roundtrip NAME TRACE OPTIONS...: export under OPTIONS, replay the export under the same
# OPTIONS, and compare
roundtrip() {
  local name=$1 trace=$2
  shift 2
  expect 0 "" replay "$trace" "$@" --format=json --export-snapshot="$tmp/rt.pickle"
  cp "$tmp/out" "$tmp/rt.orig.json"
  check "$tmp/rt.pickle" ""
  expect 0 "" replay "$tmp/rt.pickle" "$@" --format=json
  same_results "$name" "$tmp/rt.orig.json" "$tmp/out"
  # and the end state, block by block: the replay of the export against its own segments
  # (RT_END=off: not compared, the segments are expandable ones' mapped ranges)
  expect 0 "" replay "$tmp/rt.pickle" "$@" --against-recorded --format=json
  local es
  es=$(python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["against_recorded"]["end_state"]
print("off" if e is None else "same %d" % e["matched"] if e["first_difference"] is None and e["matched"] == e["recorded_blocks"] == e["predicted_blocks"] else e)' "$tmp/out")
  case "${RT_END:-same}:$es" in
    "same:same "* | "off:off") ok ;;
    *) bad "$name: end state after the round trip: $es" ;;
  esac
}

# torch_rules.jsonl under torch (tests/golden/torch.test): 11 MiB + 1 B is a 12 MiB
# segment at the first fresh base, 2 MiB (2097152); 1000 B and 2000 B share one 2 MiB
# small segment at 2097152 + 12582912 = 14680064, the second block at + 1024 (1000 B
# rounded to 512 B); 5 MiB takes a 20 MiB segment at 14680064 + 2097152 = 16777216.
# Four frees, each requested and completed at once; empty_cache releases the three
# segments: nothing is left at the end.
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB --export-snapshot="$tmp/t.pickle"
check "$tmp/t.pickle" "alloc=4 free_completed=4 free_requested=4 segment_alloc=3 segment_free=3"
got=$(python3 -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
t = d["device_traces"][0]
print([e["addr"] for e in t if e["action"] == "alloc"], [e["size"] for e in t if e["action"] == "segment_alloc"],
      len(d["segments"]), d["allocator_settings"]["expandable_segments"], d["allocator_settings"]["gpusim_strategy"])
' "$tmp/t.pickle")
want="[2097152, 14680064, 14681088, 16777216] [12582912, 2097152, 20971520] 0 False torch"
if [ "$got" = "$want" ]; then ok; else bad "torch_rules export: $got, want $want"; fi

# The export only watches: the result is byte-identical with and without it
expect 0 "" replay "$ex/mlp_train.json" --strategy=torch --format=json
cp "$tmp/out" "$tmp/plain.json"
expect 0 "" replay "$ex/mlp_train.json" --strategy=torch --format=json --export-snapshot="$tmp/m.pickle"
if cmp -s "$tmp/out" "$tmp/plain.json"; then ok; else bad "--export-snapshot changed the result"; fi

# Round trips: every allocation and free comes back (not empty_cache: a snapshot has no
# such entry, only the segment_free it caused; so these traces have none)
roundtrip "torch" "$ex/small-model-12gb.jsonl" --strategy=torch --capacity=24GiB
roundtrip "growth" "$ex/small-model-12gb.jsonl" --strategy=growth --capacity=24GiB
RT_END=off roundtrip "torch, expandable segments" "$ex/serving-16gb.jsonl" --strategy=torch --capacity=24GiB \
  --alloc-conf=expandable_segments:True
roundtrip "greedy" "$g/bfc_worked_example.json" --strategy=greedy
roundtrip "planned" "$ex/small-model-12gb.jsonl" --strategy=planned --capacity=24GiB
# XLA's colocated buffers ("share", design.md §3): scan_loop's buffers 38, 48, 53 (ids 1,
# 2, 4, live from 0 to 9) are one 4 B block at 33024 and exported once; 25 and 59 (ids 7,
# 9, from 10 to 17) one again. A snapshot has no shares, so the round trip re-plans the
# block as plain buffers, which XLA's planner may place elsewhere (the group was placed
# against all its members' intervals at once): here the peaks come back, the holes
# (fragmentation) do not.
expect 0 "" convert "$src/tests/data/import/xla/scan_loop.hlo.pb" -o "$tmp/scan.jsonl"
RT_SKIP=fragmentation roundtrip "planned, xla shares" "$tmp/scan.jsonl" --strategy=planned --planner=xla
check "$tmp/rt.pickle" "alloc=6 free_completed=6 free_requested=6 segment_alloc=1"
# A shared block grows and shrinks with its largest live member. Under xla (alignment
# 256) the group {1, 2} needs 768 B over 0..5, planned first by size: 1024 B at 0, the
# group at 1024 + 512 = 1536 after 512 B at 1024; heap 2304. Entries: id 1's 256 B at
# 1536; id 2 joins, the block is 768 B (freed, allocated again as 768 B); id 2 freed, back
# to 256 B; id 1 freed, the block's free. Allocated peaks at 4 us: 256 + 512 + 1024.
cat >"$tmp/share.jsonl" <<'EOF'
{"format": "gpusim-trace", "version": 1, "name": "a shared block", "time_unit": "us"}
{"op": "alloc", "id": 1, "size": 256, "t": 0}
{"op": "alloc", "id": 2, "size": 768, "t": 1, "share": 1}
{"op": "alloc", "id": 3, "size": 512, "t": 2}
{"op": "free", "id": 2, "t": 3}
{"op": "alloc", "id": 4, "size": 1024, "t": 4}
{"op": "free", "id": 1, "t": 5}
{"op": "free", "id": 3, "t": 6}
{"op": "free", "id": 4, "t": 7}
EOF
expect 0 "" replay "$tmp/share.jsonl" --strategy=planned --planner=xla --format=json --export-snapshot="$tmp/sh.pickle"
cp "$tmp/out" "$tmp/sh.orig.json"
check "$tmp/sh.pickle" "alloc=5 free_completed=5 free_requested=5 segment_alloc=1"
got=$(python3 -c '
import pickle, sys
t = pickle.load(open(sys.argv[1], "rb"))["device_traces"][0]
print(" ".join("%s@%d:%d" % (e["action"][:6], e["addr"], e["size"]) for e in t if e["action"] != "free_requested"))
' "$tmp/sh.pickle")
want="segmen@0:2304 alloc@1536:256 free_c@1536:256 alloc@1536:768 alloc@1024:512 free_c@1536:768 alloc@1536:256"
want="$want alloc@0:1024 free_c@1536:256 free_c@1024:512 free_c@0:1024"
if [ "$got" = "$want" ]; then ok; else bad "shared block export: $got, want $want"; fi
# the round trip keeps the allocated bytes (re-planned without the share, the heap is 1792:
# 1024 + 512 + 256); requests match here as id 1 is alone in its block at the peak
expect 0 "" replay "$tmp/sh.pickle" --strategy=planned --planner=xla --format=json
got=$(python3 -c '
import json, sys
a, b = (json.load(open(f))["result"] for f in sys.argv[1:3])
print(a["peak_allocated_bytes"], b["peak_allocated_bytes"], a["peak_requested_bytes"], b["peak_requested_bytes"],
      a["peak_reserved_bytes"], b["peak_reserved_bytes"])
' "$tmp/sh.orig.json" "$tmp/out")
if [ "$got" = "1792 1792 1792 1792 2304 1792" ]; then ok; else bad "shared block round trip: $got"; fi
# The block outlives the member that made it: {1, 2, 3, 4} is one group (2 shares 1, 3
# shares 2, 4 shares 3) placed at 0 with room for 1024 B, 100 B at 1024 (heap 1124). Id 1
# freed leaves id 2's 256 B; id 3 grows it to 1024 B, id 4 joins (1024 B still), id 3's
# free shrinks it to id 4's 300 B; id 2 freed changes nothing; id 4's free ends it. Every
# entry of the block names id 1's alloc (event 1), the member that made it.
cat >"$tmp/share3.jsonl" <<'EOF'
{"format": "gpusim-trace", "version": 1, "name": "a block outliving its first member"}
{"op": "alloc", "id": 1, "size": 512, "t": 0}
{"op": "alloc", "id": 2, "size": 256, "t": 1, "share": 1}
{"op": "alloc", "id": 5, "size": 100, "t": 1}
{"op": "free", "id": 1, "t": 2}
{"op": "alloc", "id": 3, "size": 1024, "t": 3, "share": 2}
{"op": "alloc", "id": 4, "size": 300, "t": 4, "share": 3}
{"op": "free", "id": 3, "t": 5}
{"op": "free", "id": 2, "t": 6}
{"op": "free", "id": 5, "t": 6}
{"op": "free", "id": 4, "t": 7}
EOF
expect 0 "" replay "$tmp/share3.jsonl" --strategy=planned --planner=xla --export-snapshot="$tmp/sh3.pickle"
check "$tmp/sh3.pickle" "alloc=5 free_completed=5 free_requested=5 segment_alloc=1"
got=$(python3 -c '
import pickle, sys
t = pickle.load(open(sys.argv[1], "rb"))["device_traces"][0]
print(" ".join("%s@%d:%d" % (e["action"][:6], e["addr"], e["size"]) for e in t if e["action"] != "free_requested"),
      sorted(set(e["frames"][0]["line"] for e in t if e["addr"] == 0 and e.get("frames"))))
' "$tmp/sh3.pickle")
want="segmen@0:1124 alloc@0:512 alloc@1024:100 free_c@0:512 alloc@0:256 free_c@0:256 alloc@0:1024 free_c@0:1024"
want="$want alloc@0:300 free_c@1024:100 free_c@0:300 [1]"
if [ "$got" = "$want" ]; then ok; else bad "block outliving its first member: $got, want $want"; fi
RT_SKIP="peak_requested_bytes fragmentation" roundtrip "planned, a block outliving its first member" \
  "$tmp/share3.jsonl" --strategy=planned --planner=xla
# deferred frees in whole microseconds (the snapshot's unit), on two streams: the free
# of id 1 is requested at 2 us and completes at 10 us, after alloc 3 reused nothing
cat >"$tmp/deferred.jsonl" <<'EOF'
{"format": "gpusim-trace", "version": 1, "name": "deferred frees", "time_unit": "us"}
{"op": "alloc", "id": 1, "size": 4194304, "t": 0}
{"op": "alloc", "id": 2, "size": 1000, "t": 1, "stream": 1}
{"op": "free", "id": 1, "t": 2, "ready_t": 10}
{"op": "alloc", "id": 3, "size": 4194304, "t": 3}
{"op": "alloc", "id": 4, "size": 2097152, "t": 11}
{"op": "free", "id": 2, "t": 12, "ready_t": 13}
{"op": "free", "id": 3, "t": 14}
{"op": "free", "id": 4, "t": 15}
EOF
for s in torch growth raw; do
  roundtrip "deferred frees under $s" "$tmp/deferred.jsonl" --strategy="$s"
done
# async reuses id 1's block for id 3 at once (same stream, stream-ordered): one address
# cannot hold two blocks in a snapshot, so the export completes id 1's free at 3 us,
# where the pool took the memory back (a round trip then counts it freed from there)
expect 0 "" replay "$tmp/deferred.jsonl" --strategy=async --export-snapshot="$tmp/a.pickle"
check "$tmp/a.pickle" "alloc=4 free_completed=4 free_requested=4 segment_alloc=3"
# under torch the two deferred frees are free_requested at 2 and 12 us; PyTorch records a
# completion when it polls the free's event, at its next malloc: id 1 (ready at 10 us) at
# the alloc of id 4 (11 us); no malloc follows id 2's ready_t (13 us), so it is still
# pending at the end (no free_completed, active_pending_free in segments). The others
# complete at once.
expect 0 "" replay "$tmp/deferred.jsonl" --strategy=torch --export-snapshot="$tmp/d.pickle"
got=$(python3 -c '
import pickle, sys
t = pickle.load(open(sys.argv[1], "rb"))["device_traces"][0]
print([(e["action"][5:], e["time_us"]) for e in t if e["action"].startswith("free")], sorted({e["stream"] for e in t}))
' "$tmp/d.pickle")
pend=$(python3 -c '
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))["segments"]
print([b["size"] for g in s for b in g["blocks"] if b["state"] == "active_pending_free"])
' "$tmp/d.pickle")
if [ "$pend" = "[1024]" ]; then ok; else bad "deferred export: pending blocks at the end $pend, want [1024]"; fi
want="[('requested', 2), ('completed', 11), ('requested', 12), ('requested', 14), ('completed', 14), ('requested', 15), ('completed', 15)] [0, 1]"
if [ "$got" = "$want" ]; then ok; else bad "deferred export: $got, want $want"; fi

# The real CS336 recordings (tests/data/import) replayed under torch and exported: the
# export's segments are the recording's, block by block at the recorded addresses (20
# blocks from empty, 230 mid-run), as the viewer would show both
for f in torch_snapshot_cs336_from_empty.pickle torch_snapshot_cs336_midrun_inference.pickle; do
  expect 0 "" replay "$src/tests/data/import/$f" --export-snapshot="$tmp/real.pickle"
  same=$(python3 - "$src/tests/data/import/$f" "$tmp/real.pickle" <<'EOF2'
import pickle, sys
class Plain(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("a class in a snapshot: %s.%s" % (module, name))
def blocks(path):
    with open(path, "rb") as f:
        s = Plain(f).load()
    return sorted((b["address"], b["size"], b["state"]) for g in s["segments"] for b in g["blocks"])
a, b = blocks(sys.argv[1]), blocks(sys.argv[2])
print("same %d" % len(a) if a == b else "recorded %d blocks, exported %d, first different %s" %
      (len(a), len(b), next((x, y) for x, y in zip(a + [None] * len(b), b + [None] * len(a)) if x != y)))
EOF2
)
  case "$f:$same" in
    *from_empty*:"same 20" | *midrun*:"same 230") ok ;;
    *) bad "$f exported: $same" ;;
  esac
done

# Every strategy but ideal: a valid snapshot whose segments at the end hold what the
# allocator held then (final_reserved_bytes), and whose segment_alloc/segment_free
# count what it asked the device for and gave back (num_device_allocs/frees)
for s in $(cli_strategies); do
  [ "$s" = ideal ] && continue
  opts=(--strategy="$s" --capacity=24GiB)
  [ "$s" = limit ] && opts+=(--limit=8GiB)
  expect 0 "" replay "$ex/mlp_train.json" "${opts[@]}" --format=json --export-snapshot="$tmp/s.pickle"
  check "$tmp/s.pickle" ""
  got=$(python3 -c '
import json, pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
r = json.load(open(sys.argv[2]))["result"]
t = d["device_traces"][0]
n = lambda a: sum(1 for e in t if e["action"] == a)
print(sum(s["total_size"] for s in d["segments"]) == r["final_reserved_bytes"],
      n("segment_alloc") == r["num_device_allocs"], n("segment_free") == r["num_device_frees"],
      n("alloc") == 64, n("free_completed") == 64)
' "$tmp/s.pickle" "$tmp/out")
  if [ "$got" = "True True True True True" ]; then ok; else bad "$s: segments/counters/allocs: $got"; fi
done

# An OOM (bert-large-train on 12 GiB under torch): the trace ends with the oom entry
# and the segments are those held at the OOM; the round trip replays up to it
expect 0 "" replay "$ex/bert-large-train.jsonl" --strategy=torch --capacity=12GiB --format=json \
  --export-snapshot="$tmp/o.pickle"
check "$tmp/o.pickle" ""
got=$(python3 -c '
import json, pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
r = json.load(open(sys.argv[2]))["result"]
t = d["device_traces"][0]
print(t[-1]["action"], t[-1]["size"] == r["first_oom"]["size"],
      sum(s["total_size"] for s in d["segments"]) == r["final_reserved_bytes"])
' "$tmp/o.pickle" "$tmp/out")
if [ "$got" = "oom True True" ]; then ok; else bad "oom export: $got"; fi

# With the other observers: --summary and --report still work, the export too
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB --summary \
  --export-snapshot="$tmp/sum.pickle" --report="$tmp/r.html"
if cmp -s "$tmp/out" "$g/summary_torch_rules.txt" && [ -s "$tmp/r.html" ]; then ok; else bad "--summary/--report with export"; fi
check "$tmp/sum.pickle" "alloc=4 free_completed=4 free_requested=4 segment_alloc=3 segment_free=3"

# --window=T0:T1 and --export-min-size (the view of a long replay): the entries of the
# ticks from T0 to T1 and of the first one after T1 (whose state the segments show).
# deferred.jsonl under torch, window 3..11 us: alloc 3 at 3 us, id 1's deferred free
# completing at 11 (requested at 2, before the window; ready at 10, polled at the next
# malloc, as above), alloc 4 at 11, and the first tick after 11, id 2's free requested
# at 12; at the end id 2's 1024 B block is pending,
# ids 4 (2 MiB at 0) and 3 (4 MiB at 4 MiB) are allocated, the 20 MiB segment's 2 MiB
# at 2 MiB and 12 MiB at 8 MiB are free. 3us:0.011ms is the same window.
edump() {
  python3 -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
print([(e["action"], e["time_us"], e["size"]) for e in d["device_traces"][0]],
      [(b["address"] - s["address"], b["size"], b["state"][:8]) for s in d["segments"] for b in s["blocks"]])
' "$1"
}
want="[('alloc', 3, 4194304), ('free_completed', 11, 4194304), ('alloc', 11, 2097152), ('free_requested', 12, 1000)] \
[(0, 2097152, 'active_a'), (2097152, 2097152, 'inactive'), (4194304, 4194304, 'active_a'), \
(8388608, 12582912, 'inactive'), (0, 1024, 'active_p'), (1024, 2096128, 'inactive')]"
for w in 3:11 3us:0.011ms; do
  expect 0 "" replay "$tmp/deferred.jsonl" --strategy=torch --export-snapshot="$tmp/w.pickle" --window="$w"
  check "$tmp/w.pickle" "alloc=2 free_completed=1 free_requested=1"
  got=$(edump "$tmp/w.pickle")
  if [ "$got" = "$want" ]; then ok; else bad "--window=$w: $got, want $want"; fi
done
# window up to 2 us, allocations of at least 4 MiB: id 2 (1000 B, on stream 1) has no
# entry when made at 1 us, and being live when the window ends (the tick at 3 us, alloc
# 3) gets its alloc there, so the viewer never sees two blocks at one address; its 2 MiB
# small segment is still taken at 1 us, and its block is in the segments
want="[('segment_alloc', 0, 20971520), ('alloc', 0, 4194304), ('segment_alloc', 1, 2097152), \
('free_requested', 2, 4194304), ('alloc', 3, 4194304), ('alloc', 3, 1000)] \
[(0, 4194304, 'active_p'), (4194304, 4194304, 'active_a'), (8388608, 12582912, 'inactive'), \
(0, 1024, 'active_a'), (1024, 2096128, 'inactive')]"
expect 0 "" replay "$tmp/deferred.jsonl" --strategy=torch --export-snapshot="$tmp/w.pickle" --window=:2 \
  --export-min-size=4MiB
check "$tmp/w.pickle" "alloc=3 free_requested=1 segment_alloc=2"
got=$(edump "$tmp/w.pickle")
if [ "$got" = "$want" ]; then ok; else bad "--window=:2 --export-min-size=4MiB: $got, want $want"; fi
# A long replay (serving-16gb, 240 s, 35,561 entries): windows and decimation the viewer's
# reconstruction accepts, gpusim reads back (its rebuilt start state holds, no warning that
# it cannot), with every entry in the window (or the one tick after it) and every alloc
# entry at least the minimum size but those made live at the window's end
for opts in "--window=100s:150s" "--window=:1s" "--window=200000000:" "--export-min-size=64MiB" \
    "--window=50s:120s --export-min-size=16MiB" "--window=1000s:2000s"; do
  # shellcheck disable=SC2086 # opts is a list of options
  expect 0 "" replay "$ex/serving-16gb.jsonl" --strategy=torch --export-snapshot="$tmp/w.pickle" $opts
  check "$tmp/w.pickle" ""
  got=$(python3 -c '
import pickle, re, sys
opts = sys.argv[2]
t0, t1, m = 0, float("inf"), 0
w = re.search(r"--window=([0-9]*)(s?):([0-9]*)(s?)", opts)
if w:
    scale = lambda v, u: float(v) * (1e6 if u else 1)
    t0 = scale(w.group(1), w.group(2)) if w.group(1) else 0
    t1 = scale(w.group(3), w.group(4)) if w.group(3) else float("inf")
if "min-size" in opts:
    m = int(re.search(r"min-size=([0-9]+)MiB", opts).group(1)) << 20
t = pickle.load(open(sys.argv[1], "rb"))["device_traces"][0]
after = sorted({e["time_us"] for e in t if e["time_us"] > t1})
last = t[-1]["time_us"] if t else 0
print(all(e["time_us"] >= t0 for e in t), len(after) <= 1,
      all(e["size"] >= m or e["time_us"] == last for e in t if e["action"] == "alloc"))
' "$tmp/w.pickle" "$opts")
  if [ "$got" = "True True True" ]; then ok; else bad "serving $opts: $got"; fi
  expect 0 "" replay "$tmp/w.pickle" --strategy=torch --format=json
  if grep -q "cannot be rebuilt" "$tmp/err"; then bad "serving $opts: $(cat "$tmp/err")"; else ok; fi
done

# Errors: exit 2 (3 for an invalid trace) and no file, not even a temporary one
mkdir "$tmp/e"
expect 2 "give --export-snapshot=FILE.pickle too" replay "$g/torch_rules.jsonl" --window=1:2
expect 2 "give --export-snapshot=FILE.pickle too" replay "$g/torch_rules.jsonl" --export-min-size=1MiB
expect 2 "--window: expected T0:T1, not '5'" replay "$g/torch_rules.jsonl" --window=5 --export-snapshot="$tmp/e/w.pickle"
expect 2 "--window: '1h' is not a time" replay "$g/torch_rules.jsonl" --window=0:1h --export-snapshot="$tmp/e/w.pickle"
expect 2 "--window: 5:4 ends before it starts" replay "$g/torch_rules.jsonl" --window=5:4 \
  --export-snapshot="$tmp/e/w.pickle"
expect 2 "--export-min-size" replay "$g/torch_rules.jsonl" --export-min-size=lots --export-snapshot="$tmp/e/w.pickle"
expect 2 "cannot write" replay "$g/torch_rules.jsonl" --export-snapshot="$tmp/e/no/such/dir/x.pickle"
expect 2 "is a directory" replay "$g/torch_rules.jsonl" --export-snapshot="$tmp/e"
expect 2 "ideal is a lower bound" replay "$g/torch_rules.jsonl" --strategy=ideal --export-snapshot="$tmp/e/i.pickle"
expect 2 "give it a file name" replay "$g/torch_rules.jsonl" --export-snapshot=-
expect 2 "2 traces are 2 processes" replay "$g/job_a.json" "$g/job_b.json" --export-snapshot="$tmp/e/j.pickle"
expect 2 "the replay has 2 processes" replay "$g/two_procs.jsonl" --export-snapshot="$tmp/e/p.pickle"
expect 2 "describe one GPU" replay "$g/job_a.json" --node=2xA100-40GB --export-snapshot="$tmp/e/n.pickle"
expect 3 "" replay "$g/unknown_free.jsonl" --export-snapshot="$tmp/e/u.pickle"
left=$(find "$tmp/e" -mindepth 1 | head -5)
if [ -z "$left" ]; then ok; else bad "files left after errors: $left"; fi

cli_finish
