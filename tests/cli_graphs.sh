#!/usr/bin/env bash
# CLI tests of the CUDA graphs' answers (answers/graphs.h, reports/graphs.h) and of
# `synth serving`'s vLLM start-up (traces/synth/serving_startup.c): the lesson's hand
# trace worked out by hand, the what-if naming the best pool sharing and capture order,
# the refusals, and the generator's options.
# Usage: cli_graphs.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
cd "$src" || exit 2
lesson=tests/data/graphs/three_captures.jsonl
M=1048576

# json KEY-PATH FILE: one value of a JSON file (python3 reads it)
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[2])); print(eval('d' + sys.argv[1]))" "$1" "$2"; }
# want WHAT GOT WANTED
want() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }

# The lesson's trace (tests/data/graphs/three_captures.jsonl) on its 1 GiB card, no
# context: weights 100 MiB; the profiling pass's 160 MiB, freed and released by
# empty_cache; the KV cache 700 MiB (vLLM's rule at gpu_memory_utilization 0.9375:
# 0.9375 x 1024 - 100 - 160 = 700); then three decode graphs captured largest first into
# one shared pool, each allocating its activations (40 x b MiB) and its output (10 x b
# MiB) and freeing the activations inside the capture. Every request is >= 10 MiB, so
# PyTorch gives each new segment exactly its size (rounded to 2 MiB), and splits a
# cached block whose remainder is over 1 MiB:
#   b=4: act 160 -> new segment 160; out 40 -> new segment 40; act freed: 160 cached
#   b=2: act 80 -> the cached 160, split 80 + 80; out 20 -> the 80 left, split 20 + 60
#   b=1: act 40 -> best fit 60, split 40 + 20; out 10 -> best fit 20, split 10 + 10
# The pool holds 160 + 40 = 200 MiB; a pool each would hold 200 + 100 + 50 = 350 MiB; at
# the end of capture the process holds 100 + 700 + 200 = 1000 MiB.
"$bin" replay "$lesson" --context=0 --format=json >"$tmp/r.json" 2>"$tmp/err" || bad "replay of the lesson: $(cat "$tmp/err")"
want "the pool's high-water mark" "$(json "['cuda_graphs']['pools'][0]['peak_reserved_bytes']" "$tmp/r.json")" $((200 * M))
want "the graphs, a pool each" "$(json "['cuda_graphs']['pools'][0]['one_pool_per_graph_bytes']" "$tmp/r.json")" $((350 * M))
want "graphs in the pool" "$(json "['cuda_graphs']['pools'][0]['graphs']" "$tmp/r.json")" 3
want "reserved at the end of capture" "$(json "['cuda_graphs']['end_of_capture_reserved_bytes']" "$tmp/r.json")" $((1000 * M))
want "the trace's pools" "$(json "['cuda_graphs']['recorded_pools']" "$tmp/r.json")" shared
# Smallest first into the shared pool, nothing cached is big enough for the next act:
#   b=1: act 40 new, out 10 new (50); b=2: act 80 new, out 20 from the cached 40 (130);
#   b=4: act 160 new: 100 + 700 + 130 + 160 = 1090 MiB > 1024: out of memory in the
#   capture (no cache is released while a capture is underway), at 930 MiB reserved.
want "smallest first runs out" "$(json "['cuda_graphs']['whatif'][2]['completed']" "$tmp/r.json")" False
want "smallest first: reserved at the OOM" "$(json "['cuda_graphs']['whatif'][2]['peak_reserved_bytes']" "$tmp/r.json")" $((930 * M))
# A pool each, largest first: 100 + 700 + 200 = 1000, then b=2's act 80 needs a new
# segment in a new pool: 1080 > 1024.
want "a pool each runs out" "$(json "['cuda_graphs']['whatif'][3]['completed']" "$tmp/r.json")" False
want "the best pools" "$(json "['cuda_graphs']['best']['pools']" "$tmp/r.json")" shared
want "the best order" "$(json "['cuda_graphs']['best']['capture_order']" "$tmp/r.json")" "largest first"
# On a 2 GiB card every variant runs: smallest first ends with 50 + 80 + 160 = 290 MiB in
# the pool (its outputs 10, 20 and 40 MiB in the cached 40 and 80), 1090 MiB in all; a
# pool each 350 MiB, 1150 MiB in all.
"$bin" replay "$lesson" --context=0 --capacity=2GiB --format=json >"$tmp/r2.json" 2>"$tmp/err" || bad "2 GiB: $(cat "$tmp/err")"
want "smallest first's pool" "$(json "['cuda_graphs']['whatif'][2]['graph_pools_reserved_bytes']" "$tmp/r2.json")" $((290 * M))
want "smallest first in all" "$(json "['cuda_graphs']['whatif'][2]['end_of_capture_reserved_bytes']" "$tmp/r2.json")" $((1090 * M))
want "a pool each" "$(json "['cuda_graphs']['whatif'][3]['graph_pools_reserved_bytes']" "$tmp/r2.json")" $((350 * M))
want "a pool each in all" "$(json "['cuda_graphs']['whatif'][3]['end_of_capture_reserved_bytes']" "$tmp/r2.json")" $((1150 * M))
# the text names the best and the settings to paste; compare and tune say the same
expect_any 0 "best: shared pool, largest first (peak reserved 1000.00 MiB)" replay "$lesson" --context=0
expect_any 0 "1           3            200.00 MiB          200.00 MiB           350.00 MiB" replay "$lesson" --context=0
expect_any 0 "CUDA graphs under torch: 3 captures into one shared pool" compare "$lesson" --context=0 --strategies=torch,growth
expect_any 0 "torch.cuda.graph_pool_handle() once" tune "$lesson" --context=0
# a model without private pools has no such section
"$bin" replay "$lesson" --context=0 --strategy=growth >"$tmp/out" 2>&1
if grep -q "CUDA graphs" "$tmp/out"; then bad "growth printed a CUDA graphs section"; else ok; fi

# plan --gpu-memory-utilization: the trace's meta.vllm_startup records vLLM's rule (weights
# 100 MiB, activations 160 MiB, 1 MiB blocks, one KV tensor): KV(F) = floor(F x 1024) - 260
# MiB. Largest first into the shared pool, the end of capture holds 100 + KV + 200 MiB, so
# the capture survives while KV <= 724 MiB: F = 0.961 (floor(984.06) - 260 = 724, 1024 MiB
# at the end of capture); at 0.962 the KV is 725 MiB and b=4's output (100 + 725 + 160 +
# 40 = 1025 MiB) does not fit.
"$bin" plan "$lesson" --gpu-memory-utilization --strategies=torch --context=0 --format=json >"$tmp/k.json" 2>"$tmp/err" ||
  bad "plan --gpu-memory-utilization: $(cat "$tmp/err")"
want "the largest F" "$(json "['rows'][0]['largest_gpu_memory_utilization']" "$tmp/k.json")" 0.961
want "its KV cache" "$(json "['rows'][0]['kv_bytes']" "$tmp/k.json")" $((724 * M))
want "its end of start-up" "$(json "['rows'][0]['end_of_startup_reserved_bytes']" "$tmp/k.json")" $((1024 * M))
want "the F that fails" "$(json "['rows'][0]['fails_at']" "$tmp/k.json")" 0.962
want "where it fails" "$(json "['rows'][0]['failure']['tag']" "$tmp/k.json")" "graph b=4:out"
expect_re 3 "has no vllm_startup" plan traces/examples/mlp_train.json --gpu-memory-utilization --strategies=torch
expect_re 2 "not --node or --capacity" plan "$lesson" --gpu-memory-utilization --capacity=2GiB

# What cannot be reordered: b=4's output (id 5) freed between the first capture and the
# second fixes the order (in another order the free would come before its capture); the
# what-if says why, naming the event (line 14 of the file: the free)
python3 - "$lesson" "$tmp/fixed.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
out = [lines[0]]
added = False
for l in lines[1:]:
    e = json.loads(l)
    out.append(l)
    if e["op"] == "pool_end" and not added:  # after the first capture
        out.append(json.dumps({"op": "free", "id": 5, "t": e["t"]}))
        added = True
open(sys.argv[2], "w").write("\n".join(out) + "\n")
EOF
expect_any 0 "fixed.jsonl:14: the captures cannot be reordered: the free of id 5" replay "$tmp/fixed.jsonl" --context=0 \
  --capacity=2GiB

# synth serving's vLLM start-up: usage errors
expect_re 2 "--cuda-graphs: '...' continues a constant ratio" synth serving --gpu=A100-80GB --cuda-graphs=1,2,5,...,64 \
  -o "$tmp/x.jsonl"
expect_re 2 "--cuda-graphs: batch size 4 is given twice" synth serving --gpu=A100-80GB --cuda-graphs=1,2,4,4 -o "$tmp/x.jsonl"
expect_re 2 "--graph-pool: expected shared or separate" synth serving --gpu=A100-80GB --cuda-graphs=1,2 --graph-pool=some \
  -o "$tmp/x.jsonl"
expect_re 2 "--graph-pool needs --cuda-graphs" synth serving --gpu=A100-80GB --gpu-memory-utilization=0.9 \
  --graph-pool=separate -o "$tmp/x.jsonl"
expect_re 2 "--graph-warmups belongs to the vLLM start-up" synth serving --graph-warmups=2 -o "$tmp/x.jsonl"
expect_re 2 "give one" synth serving --gpu=A100-80GB --gpu-util=0.8 --gpu-memory-utilization=0.9 -o "$tmp/x.jsonl"
expect_re 2 "fewer than one request" synth serving --model=llama3-8b --gpu=T4 --cuda-graphs=1,2 -o "$tmp/x.jsonl"
expect_re 2 "KV cache is paged" synth serving --gpu=A100-80GB --kv=grow --gpu-memory-utilization=0.9 -o "$tmp/x.jsonl"
# 1,2,4,...,64 is seven graphs, captured largest first into pool 1; the header records the rule
expect_any 0 "7 CUDA graphs (shared pool, descending)" synth serving --gpu=A100-80GB --requests=5 \
  --cuda-graphs=1,2,4,...,64 -o "$tmp/s.jsonl"
n=$(grep -c '"op":"pool_begin","pool":1,' "$tmp/s.jsonl")
want "captures into the shared pool" "$n" 7
first=$(grep -o '"tag":"graph b=[0-9]*:embed"' "$tmp/s.jsonl" | head -1)
want "the largest captured first" "$first" '"tag":"graph b=64:embed"'
want "the header's rule" "$(head -1 "$tmp/s.jsonl" | python3 -c "import json,sys; print(json.load(sys.stdin)['meta']['vllm_startup']['cuda_graphs'])")" \
  "[1, 2, 4, 8, 16, 32, 64]"
"$bin" synth serving --gpu=A100-80GB --requests=5 --cuda-graphs=8,16,24,...,40 --graph-pool=separate \
  --capture-order=ascending -o "$tmp/p.jsonl" --quiet || bad "separate pools"
want "a pool per graph" "$(grep -o '"op":"pool_begin","pool":[0-9]*' "$tmp/p.jsonl" | sort -u | wc -l)" 5
first=$(grep -o '"tag":"graph b=[0-9]*:embed"' "$tmp/p.jsonl" | head -1)
want "the smallest captured first" "$first" '"tag":"graph b=8:embed"'
# --graph-memory=profiled (vLLM PR #30515): two profiling captures before the KV sizing;
# the KV cache shrinks by the estimate first + (graphs - 1) x max(second, 1 MiB), which the
# header records and plan subtracts too
expect_re 2 "--graph-memory needs --cuda-graphs" synth serving --gpu=A100-80GB --gpu-memory-utilization=0.9 \
  --graph-memory=profiled -o "$tmp/x.jsonl"
expect_re 2 "--graph-memory: expected uncounted or profiled" synth serving --gpu=A100-80GB --cuda-graphs=1,2 \
  --graph-memory=some -o "$tmp/x.jsonl"
"$bin" synth serving --gpu=A100-80GB --requests=5 --cuda-graphs=1,2,4,...,64 --graph-memory=profiled \
  -o "$tmp/g.jsonl" >"$tmp/g.out" 2>"$tmp/err" || bad "profiled: $(cat "$tmp/err")"
python3 - "$tmp/s.jsonl" "$tmp/g.jsonl" >"$tmp/g.check" <<'EOF'
import json, sys
def head_and_kv(path):
    lines = open(path).read().splitlines()
    meta = json.loads(lines[0])["meta"]["vllm_startup"]
    kv = sum(json.loads(l)["size"] for l in lines[1:] if '"tag":"kv:L' in l)
    return meta, kv
m0, kv0 = head_and_kv(sys.argv[1])
m1, kv1 = head_and_kv(sys.argv[2])
g = m1["graph_estimate_bytes"]
block = m1["block_bytes"]
requested = int(0.9 * 85899345920)
blocks = (requested - m1["weights_bytes"] - m1["activation_bytes"] - g) // block
print("uncounted" if "graph_estimate_bytes" not in m0 else "counted", g >= 6 * (1 << 20), kv1 == blocks * block, kv0 > kv1)
EOF
want "the profiled rule" "$(cat "$tmp/g.check")" "uncounted True True True"
expect_any 0 "the graphs' estimate" plan "$tmp/g.jsonl" --gpu-memory-utilization --strategies=torch --gpu=A100-80GB
# the profiling captures are a run of their own: the questions are about the real ones
expect_any 0 "CUDA graphs: 7 captures into one shared pool" replay "$tmp/g.jsonl" --gpu=A100-80GB
# a graph's output: vLLM keeps a weak reference, so it is freed inside its capture (released,
# the default); --graph-outputs=kept leaves it live past the capture
"$bin" synth serving --gpu=A100-80GB --requests=5 --cuda-graphs=1,2 --graph-outputs=kept -o "$tmp/k.jsonl" --quiet ||
  bad "kept outputs"
python3 - "$tmp/s.jsonl" "$tmp/k.jsonl" >"$tmp/o.check" <<'EOF'
import json, sys
def live_at_pool_end(path):
    live, open_, counts = set(), False, []
    for l in open(path).read().splitlines()[1:]:
        e = json.loads(l)
        if e["op"] == "pool_begin":
            open_, made = True, set()
        elif e["op"] == "pool_end":
            counts.append(len(made & live))
            open_ = False
        elif e["op"] == "alloc":
            live.add(e["id"])
            if open_:
                made.add(e["id"])
        elif e["op"] == "free":
            live.discard(e["id"])
    return counts
print(live_at_pool_end(sys.argv[1]), live_at_pool_end(sys.argv[2]))
EOF
want "outputs released, or kept" "$(cat "$tmp/o.check")" "[0, 0, 0, 0, 0, 0, 0] [1, 1]"
# the serving trace replays, and its own pools are answered
expect_any 0 "CUDA graphs: 7 captures into one shared pool" replay "$tmp/s.jsonl" --gpu=A100-80GB
cli_finish
