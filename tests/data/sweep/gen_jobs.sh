#!/usr/bin/env bash
# Synthetic training jobs for sweeps (docs/sweep.md, tests): N traces in DIR, each
# a few training steps of a model of a random size (weights kept, activations
# allocated forward and freed backward, a workspace of odd size between steps).
# Deterministic: Park-Miller generator in awk, same files for the same seed.
# Usage: gen_jobs.sh N DIR [SEED] [STEPS] [MULT]   (MULT scales every size, default 1)
set -euo pipefail
n=$1
dir=$2
seed=${3:-1}
steps=${4:-3}
mult=${5:-1}
mkdir -p "$dir"
for i in $(seq 1 "$n"); do
  name=$(printf 'job_%03d' "$i")
  awk -v seed="$((seed * 7919 + i))" -v name="$name" -v steps="$steps" -v mult="$mult" '
    function rnd() { x = (x * 16807) % 2147483647; return x / 2147483647 }
    function mib(a, b) { return int((a + rnd() * (b - a)) * 1048576 * mult) }
    function ev(s) { print s; t += 1000 }
    BEGIN {
      x = seed; for (k = 0; k < 5; k++) rnd()
      scale = 2 ^ int(rnd() * 7)            # 1 .. 64: weights of 16 MiB .. 4 GiB
      layers = 4 + int(rnd() * 12)
      printf "{\"format\":\"gpusim-trace\",\"version\":1,\"name\":\"%s\",\"meta\":{\"scale\":%d,\"layers\":%d}}\n", name, scale, layers
      id = 0; t = 0
      for (l = 0; l < layers; l++) { id++; ev(sprintf("{\"op\":\"alloc\",\"id\":%d,\"size\":%d,\"t\":%d,\"tag\":\"weight\"}", id, mib(1, 4) * scale / 1, t)) }
      for (s = 0; s < steps; s++) {
        ev(sprintf("{\"op\":\"mark\",\"name\":\"step %d\",\"t\":%d}", s, t))
        base = id
        for (l = 0; l < layers; l++) { id++; ev(sprintf("{\"op\":\"alloc\",\"id\":%d,\"size\":%d,\"t\":%d,\"tag\":\"act\"}", id, int(mib(0.5, 6) * scale / 2) + 512 * int(rnd() * 50), t)) }
        id++; ws = id; ev(sprintf("{\"op\":\"alloc\",\"id\":%d,\"size\":%d,\"t\":%d,\"tag\":\"workspace\"}", ws, mib(1, 3) * scale + 4096 + int(rnd() * 100000), t))
        for (l = layers; l >= 1; l--) ev(sprintf("{\"op\":\"free\",\"id\":%d,\"t\":%d}", base + l, t))
        ev(sprintf("{\"op\":\"free\",\"id\":%d,\"t\":%d}", ws, t))
      }
      for (l = 1; l <= layers; l++) ev(sprintf("{\"op\":\"free\",\"id\":%d,\"t\":%d}", l, t))
    }' >"$dir/$name.jsonl"
done
