#!/usr/bin/env bash
# PyTorch's own memory viewer on gpusim's exports: MemoryViz.js (the script behind
# pytorch.org/memory_viz and the pages _memory_viz.py writes), taken from Debian's
# PyTorch 2.6 source package with the d3 5 it imports
# (validate/upstream/torch/fetch-viewer.sh, into the cache; nothing of it is in the
# repository), runs in headless Chromium on `replay --export-snapshot` files of each
# strategy that runs out of memory, in each of its four views: no script error, every
# view draws, the history lists every entry of the export, and at the OOM the viewer's
# own text gives the allocated (live requested) and reserved bytes, the request and
# the device's free memory that gpusim's first_oom says.  tests/browser/memoryviz_probe.js
# does the clicking.  Skips (exit 77, listed by scripts/test) without Chromium or the viewer.
# Usage: cli_memoryviz.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

cli_chromium
cache=$(bash -c '. "$1"/scripts/lib.sh; gpusim_cache_dir' _ "$src")/upstream-torch
viewer=$(sh "$src/validate/upstream/torch/fetch-viewer.sh" "$cache" 2>"$tmp/fetch.err") ||
  cli_skip "PyTorch's MemoryViz.js could not be fetched: $(tail -n 1 "$tmp/fetch.err")"

# the viewer as a module whose CDN imports are the d3 bundle's globals
sed -e 's#^import \* as d3 from "https://cdn\.skypack\.dev/d3@5";#const d3 = window.d3;#' \
    -e 's#^import {\([^}]*\)} from "https://cdn\.skypack\.dev/d3-[a-z]*@1";#const {\1} = window.d3;#' \
    "$viewer/MemoryViz.js" >"$tmp/viewer.mjs"
if grep -n '^import' "$tmp/viewer.mjs" >"$tmp/imports"; then
  bad "MemoryViz.js imports what the test does not provide: $(cat "$tmp/imports")"
else
  ok
fi

# view NAME TRACE OPTIONS...: export the replay under OPTIONS, open it in the viewer.
# A replay without an OOM is looked at after its last entry, where the viewer must
# say $end_allocated (the live requested bytes then) and the final reserved bytes;
# $pools, when set, is the segment_pool_id list the export's segments must carry
view() {
  local name=$1 trace=$2
  shift 2
  if ! "$bin" replay "$trace" "$@" --format=json --export-snapshot="$tmp/$name.pickle" >"$tmp/$name.json" 2>"$tmp/$name.err"; then
    bad "$name: replay failed: $(head -c 300 "$tmp/$name.err")"
    return
  fi
  # what the viewer must say, from gpusim's own result: at the first OOM the live
  # requested bytes, reserved, the request and the device's free memory; the number
  # of trace entries in the export
  if ! end_allocated=${end_allocated:-} pools=${pools:-} \
       python3 - "$tmp/$name.json" "$tmp/$name.pickle" "$name" >"$tmp/$name.probe.json" 2>"$tmp/$name.err" <<'PY'; then
import base64, json, os, pickle, sys
r = json.load(open(sys.argv[1]))["result"]
raw = open(sys.argv[2], "rb").read()
snap = pickle.loads(raw)
trace = snap["device_traces"][0]
if os.environ["pools"]:
    got = sorted(tuple(g["segment_pool_id"]) for g in snap["segments"])
    want = sorted(tuple(p) for p in json.loads(os.environ["pools"]))
    if got != want:
        sys.exit("segment_pool_id of the segments: %s, want %s" % (got, want))
o = r.get("first_oom")
if not o and not os.environ["end_allocated"]:
    sys.exit("the replay did not run out of memory")
if not o:
    o = {"live_requested_bytes": int(os.environ["end_allocated"]), "reserved_bytes": r["final_reserved_bytes"]}
print(json.dumps({
    "name": sys.argv[3] + ".pickle",
    "base64": base64.b64encode(raw).decode(),
    # the history lists a free_requested followed at once by its free_completed as
    # one "free" (annotate_snapshot in MemoryViz.js)
    "entries": len(trace) - sum(1 for a, b in zip(trace, trace[1:])
                                if a["action"] == "free_requested" and b["action"] == "free_completed"
                                and a["addr"] == b["addr"]),
    "views": ["Active Memory Timeline", "Allocator State History", "Active Cached Segment Timeline",
              "Allocator Settings"],
    # the viewer's "allocated" sums the live blocks' requested sizes
    "allocated": o["live_requested_bytes"],
    "reserved": o["reserved_bytes"],
    "oom": {"size": o["size"], "device_free": o["device_free_bytes"]} if "size" in o else None,
}))
PY
    bad "$name: $(tail -n 1 "$tmp/$name.err")"
    return
  fi
  {
    printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head><body>\n<script>\n'
    printf 'window.PROBE_ERRORS = [];\n'
    printf 'addEventListener("error", e => PROBE_ERRORS.push(String(e.message)));\n'
    printf 'addEventListener("unhandledrejection", e => PROBE_ERRORS.push(String(e.reason)));\n'
    printf 'window.PROBE = %s;\n</script>\n<script>\n' "$(cat "$tmp/$name.probe.json")"
    cat "$viewer/d3.js"
    printf '\n</script>\n<script type="module">\n'
    cat "$tmp/viewer.mjs" "$src/tests/browser/memoryviz_probe.js"
    printf '</script></body></html>\n'
  } >"$tmp/$name.html"
  chrome --window-size=1400,1000 --virtual-time-budget=60000 --dump-dom "file://$tmp/$name.html" >"$tmp/$name.dom"
  sed -n '/<pre id="probe">/,/<\/pre>/p' "$tmp/$name.dom" | sed 's/<[^>]*>//g' >"$tmp/$name.probe"
  if grep -qx DONE "$tmp/$name.probe"; then ok; else bad "$name: the probe did not finish: $(tail -3 "$tmp/chrome.log")"; fi
  local n=0 verdict rest
  while read -r verdict rest; do
    case $verdict in
      OK) ok; n=$((n + 1)) ;;
      FAIL) bad "$name: $rest" ;;
    esac
  done <"$tmp/$name.probe"
  # four views ran and drew, the history's count and the OOM's text: nine checks
  if [ "$n" -ge 9 ]; then ok; else bad "$name: $n checks passed, want 9: $(cat "$tmp/$name.probe")"; fi
}

ser="$src/traces/examples/serving-16gb.jsonl"
view torch "$ser" --strategy=torch --capacity=12GiB
view torch_expandable "$ser" --strategy=torch --capacity=10GiB --alloc-conf=expandable_segments:True
view growth "$ser" --strategy=growth --capacity=12GiB
view greedy "$ser" --strategy=greedy --capacity=12GiB
view async "$ser" --strategy=async --capacity=12GiB
view raw "$ser" --strategy=raw --capacity=6GiB
view planned "$ser" --strategy=planned --capacity=12GiB
# a snapshot with private pools (tests/data/import/make_synthetic.py): its segments
# keep their pools, (0, 1) and the CUDA graph's (1, 0), and the pool_id of their
# entries; PyTorch 2.6's viewer has no pool view, so what it must do is open the
# export and draw it: at the end 8388608 + 6291456 + 512 + 1000 + 4194304 + 2097152
# = 20973032 B live requested (X, c, Y, e, a, d), 42 MiB reserved
end_allocated=20973032 pools='[[0, 0], [0, 1], [1, 0]]' \
  view torch_pools "$src/tests/data/import/snapshot_pools.json" --strategy=torch
cli_finish
