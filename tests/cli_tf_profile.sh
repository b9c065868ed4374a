#!/usr/bin/env bash
# Records the TensorFlow memory profiles of tests/data/import/tf again (its make.py, with
# the frameworks' python that scripts/frameworks sets up: TensorFlow on the CPU) and
# checks that each still imports: against what TensorFlow recorded, the replay's peak
# and its in-use at every timeline point are equal (difference 0 B), over as many
# points as the profile's sampledTimelineSnapshots holds. Without
# $GPUSIM_FRAMEWORKS_PYTHON or TensorFlow it is skipped (exit 77, logged for
# scripts/test). Usage: cli_tf_profile.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
cli_framework_make tensorflow "$src/tests/data/import/tf/make.py"
for name in mlp_fit conv_fit transformer_fit mlp_fit.pruned; do
  f=$tmp/$name.memory_profile.json.gz
  [ -e "$f" ] || { bad "make.py did not write $name"; continue; }
  # the profile's own figures, read with Python alone: points, peakStats heap + stack
  read -r points peak < <("$py" - "$f" <<'PY'
import gzip, json, sys
(p,) = json.load(gzip.open(sys.argv[1]))["memoryProfilePerAllocator"].values()
s = p["profileSummary"]["peakStats"]
print(len(p["sampledTimelineSnapshots"]), int(s["heapAllocatedBytes"]) + int(s["stackReservedBytes"]))
PY
)
  expect_any 0 "\"events_compared\": $points, " replay "$f" --against-recorded --format=json
  grep -qF "\"recorded_peak_bytes\": $peak, \"peak_difference_bytes\": 0, \"max_abs_difference_bytes\": 0," "$tmp/out" &&
    ok || bad "$name: peak or in-use differs from the recording ($peak B): $(grep -o '"allocated": {.*}' "$tmp/out")"
  echo "$name: $points points, peak $peak B: $(grep -o '"peak_difference_bytes": [0-9-]*, "max_abs_difference_bytes": [0-9]*' "$tmp/out")"
  expect 0 "sampledTimelineSnapshots" replay "$f" --strategy=growth
done
cli_finish
