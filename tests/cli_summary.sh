#!/usr/bin/env bash
# CLI tests of `gpusim replay --summary`: the framework views of reports/summary.h at
# the end, the peak and the OOM, against text written out by hand from the rules.
# Usage: cli_summary.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
g="$src/tests/golden"

same() { # NAME EXPECTED-FILE: the last output is exactly the file
  if cmp -s "$tmp/out" "$2"; then ok; else bad "$1:"; diff "$2" "$tmp/out" | head -20; fi
}

# tests/golden/summary_torch_rules.txt: torch_rules.jsonl under torch at the end
# (the segments and splits of tests/golden/torch.test). Sizes: a column's unit is KiB
# once the "all" row of that column is >= 768 KiB, values divided by 1024 and floored.
#  Allocated = Active (no deferred free): all 12582912 + 1024 + 2048 + 5242880 = 17828864
#    = 17411 KiB (peak, Tot Alloc, Tot Freed: each block is allocated and freed once);
#    large 12582912 + 5242880 = 17825792 = 17408 KiB; small 3072 B -> 3 KiB.
#  Requested: 16780217 -> 16386 KiB; large 11534337 + 5242880 = 16777217 -> 16384;
#    small 3000 -> 2 KiB.
#  Reserved: 12582912 + 2097152 + 20971520 = 35651584 = 34816 KiB; large 32768; small 2048.
#  Non-releasable (free blocks of split segments): e2 splits the small segment, rest
#    2096128 (2047 KiB, the small peak); e3 shrinks it by 2048 (freed 2048); e4 splits
#    the 20 MiB segment, rest 15728640 (15360 KiB); free(1) frees an unsplit segment
#    (no change); free(2) adds the 1024 block: 15728640 + 2094080 + 1024 = 17823744 =
#    17406 KiB, the peak; free(3) and free(4) merge whole segments. Tot Alloc: small
#    2096128 + 1024 = 2097152 = 2048 KiB, large 15360, all 17408 KiB; Tot Freed the same.
#  Counts: 4 allocations (2 large, 2 small), 3 segments (2 large, 1 small); inactive
#    splits: small rest (e2), large rest (e4), the freed 1024 block: peak 3 (1 + 2).
#  Current: everything freed and empty_cache released the segments: 0 everywhere.
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB --summary
same "torch summary at the end" "$g/summary_torch_rules.txt"
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB --summary=end
same "--summary=end is --summary" "$g/summary_torch_rules.txt"

# A real recording (CS336, from an empty allocator; tests/data/import): 36 allocations,
# 26 freed, so its segments hold 10 active blocks at the end (9 large, the 512 B one
# small) and 4 inactive pieces of split segments. Every free_completed there is the
# entry right after its free_requested, some one µs later: synchronous frees, which
# the importer makes plain frees (traces/IMPORT.md). Read as deferred frees, the last
# one (requested last, no allocation after it to poll it) stayed active: 11.
expect 0 "" replay "$src/tests/data/import/torch_snapshot_cs336_from_empty.pickle" --summary=end --format=json
if grep -q '"active.all.current": 10,' "$tmp/out" && grep -q '"allocation.all.current": 10,' "$tmp/out" &&
  grep -q '"inactive_split.all.current": 4,' "$tmp/out"; then ok; else
  bad "the CS336 recording's end: $(grep -E '"(active|allocation|inactive_split).all.current"' "$tmp/out")"; fi

# memory_stats() as JSON: sorted keys, the same numbers
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB --summary --format=json
if grep -q '"allocated_bytes.all.peak": 17828864' "$tmp/out" && grep -q '"segment.large_pool.allocated": 2' "$tmp/out" &&
   [ "$(grep -o '^ "[^"]*"' "$tmp/out")" = "$(grep -o '^ "[^"]*"' "$tmp/out" | LC_ALL=C sort)" ]; then ok
else bad "memory_stats JSON: $(head -c 300 "$tmp/out")"; fi

# async (PyTorch's backend:cudaMallocAsync) at the peak of async_streams.jsonl: reserved
# first reaches 6291456 at e4 (tests/golden/async.test), when UsedMemCurrent =
# UsedMemHigh = 5243904. getDeviceStats fills allocated_bytes.all and active_bytes.all
# from UsedMem (5243904 / 1024 = 5121 KiB) and reserved_bytes.all from ReservedMem
# (6291456 = 6144 KiB), current and peak; every other statistic is 0. The pool rows
# take the "all" row's unit (KiB) where it is >= 768 KiB, and 0 B where it is 0.
cat > "$tmp/want" <<'TEXT'
|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   5121 KiB |   5121 KiB |      0 B   |      0 B   |
|       from large pool |      0 KiB |      0 KiB |      0 B   |      0 B   |
|       from small pool |      0 KiB |      0 KiB |      0 B   |      0 B   |
|---------------------------------------------------------------------------|
| Active memory         |   5121 KiB |   5121 KiB |      0 B   |      0 B   |
|       from large pool |      0 KiB |      0 KiB |      0 B   |      0 B   |
|       from small pool |      0 KiB |      0 KiB |      0 B   |      0 B   |
|---------------------------------------------------------------------------|
| Requested memory      |      0 B   |      0 B   |      0 B   |      0 B   |
|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |
|       from small pool |      0 B   |      0 B   |      0 B   |      0 B   |
|---------------------------------------------------------------------------|
| GPU reserved memory   |   6144 KiB |   6144 KiB |      0 B   |      0 B   |
|       from large pool |      0 KiB |      0 KiB |      0 B   |      0 B   |
|       from small pool |      0 KiB |      0 KiB |      0 B   |      0 B   |
|---------------------------------------------------------------------------|
| Non-releasable memory |      0 B   |      0 B   |      0 B   |      0 B   |
|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |
|       from small pool |      0 B   |      0 B   |      0 B   |      0 B   |
|---------------------------------------------------------------------------|
| Allocations           |       0    |       0    |       0    |       0    |
|       from large pool |       0    |       0    |       0    |       0    |
|       from small pool |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| Active allocs         |       0    |       0    |       0    |       0    |
|       from large pool |       0    |       0    |       0    |       0    |
|       from small pool |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| GPU reserved segments |       0    |       0    |       0    |       0    |
|       from large pool |       0    |       0    |       0    |       0    |
|       from small pool |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| Non-releasable allocs |       0    |       0    |       0    |       0    |
|       from large pool |       0    |       0    |       0    |       0    |
|       from small pool |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| Oversize allocations  |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| Oversize GPU segments |       0    |       0    |       0    |       0    |
|===========================================================================|
TEXT
expect 0 "" replay "$g/async_streams.jsonl" --strategy=async --capacity=1GiB --summary=peak
same "async summary at the peak" "$tmp/want"

# At the OOM of async_streams.jsonl on 5 MiB (async.test: event 4 fails): the pool holds
# chunk A (4 MiB = 4096 KiB); used = 3146752 (e2; the pending free still counts) = 3073 KiB.
expect 0 "" replay "$g/async_streams.jsonl" --strategy=async --capacity=5MiB --summary=oom
if grep -q '^| Allocated memory      |   3073 KiB |   3073 KiB |' "$tmp/out" &&
   grep -q '^| GPU reserved memory   |   4096 KiB |   4096 KiB |' "$tmp/out"; then ok
else bad "async summary at the OOM: $(head -c 900 "$tmp/out")"; fi

# BFC: TensorFlow's get_memory_info, XLA's memory_stats() and AllocatorStats::DebugString
# (the "Stats:" block of TensorFlow's OOM log: labels padded to 18, values to 20).
# torch_rules.jsonl under greedy on 16 GiB: BFC rounds to 256 B: 11534592 + 1024 + 2048
# + 5242880 = 16780544 at the peak, the largest 11534592; TF's limit 16 GiB - 1.5 GiB
# reserve = 15569256448, taken as one region (Reserved), all of it free at the end.
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=greedy --capacity=16GiB --summary
cat > "$tmp/want" <<'TEXT'
tf.config.experimental.get_memory_info('GPU:0'): {'current': 0, 'peak': 16780544}
jax.devices()[0].memory_stats(): {'num_allocs': 4, 'bytes_in_use': 0, 'peak_bytes_in_use': 16780544, 'largest_alloc_size': 11534592, 'bytes_limit': 15569256448, 'pool_bytes': 15569256448, 'peak_pool_bytes': 15569256448, 'largest_free_block_bytes': 15569256448}
Stats: 
Limit:                     15569256448
InUse:                               0
MaxInUse:                     16780544
NumAllocs:                           4
MaxAllocSize:                 11534592
Reserved:                  15569256448
PeakReserved:              15569256448
LargestFreeBlock:          15569256448
TEXT
same "BFC views" "$tmp/want"

# At a BFC OOM, TensorFlow's warning comes first: torch_rules.jsonl under `limit` with
# --limit=12MiB: one region of 12582912; the first request (11534337 -> 11534592) takes
# its only chunk whole, because BFC splits a chunk only when it is at least twice the
# request or the rest is at least 128 MiB (12582912 - 11534592 = 1048320 is neither):
# InUse 12582912. The second, 1000 B (rounded to 1024), finds nothing: the OOM.
# HumanReadableNumBytes(1000) = 1000B (below 1 KiB: whole bytes).
expect 0 "" replay "$g/torch_rules.jsonl" --strategy=limit --limit=12MiB --capacity=16GiB --summary=oom
if grep -qxF "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1000B (rounded to 1024)" "$tmp/out" &&
   grep -qx "InUse: *12582912" "$tmp/out" && grep -qx "LargestFreeBlock: *0" "$tmp/out"; then ok
else bad "BFC OOM lines: $(head -c 900 "$tmp/out")"; fi

# No OOM: said on stderr, the summary is the end's.
expect 0 "no out-of-memory happened" replay "$g/torch_rules.jsonl" --strategy=torch --capacity=16GiB --summary=oom
same "--summary=oom without an OOM" "$g/summary_torch_rules.txt"
expect 2 "expected end, peak or oom" replay "$g/torch_rules.jsonl" --summary=middle

# Every strategy's statistics reach a summary (planned's "order" is text, which a
# --summary sink does not take: it once crashed here)
for s in $(cli_strategies); do
  lim=()
  [ "$s" != limit ] || lim=(--limit=1GiB)
  expect 0 "" replay "$g/torch_rules.jsonl" --strategy="$s" --capacity=16GiB "${lim[@]}" --summary
  expect 0 "" replay "$g/torch_rules.jsonl" --strategy="$s" --capacity=16GiB "${lim[@]}" --summary --format=json
done
cli_finish
