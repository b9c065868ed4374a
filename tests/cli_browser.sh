#!/usr/bin/env bash
# The report in a real browser: renders `replay --report` and `compare --report` in
# headless Chromium (Debian's chromium; scripts/test installs it), checks the DOM
# Chromium built from the page without its script (the SVG pictures, axis labels, the peak value,
# the OOM marker, the memory map, the hover texts as <title>s) and that the
# screenshot is not blank (tests/browser/pngstat.c counts non-white pixels and
# colours); then, with scripts on at a 1000 px window, tests/browser/probe.js
# appended to a copy of the page hovers a block of the memory map and a timeline
# column, brushes the timeline, and checks the labels' boxes, the marks' lanes and
# the colours (its "OK"/"FAIL" lines are read back from the DOM). Skips (exit 77,
# listed by scripts/test) when no Chromium exists.
# GPUSIM_SCREENSHOT_OUT=FILE.png copies the replay report's screenshot there
# (docs/report.png is made that way). Usage: cli_browser.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

cli_chromium
if ! cc -O2 -o "$tmp/pngstat" "$src/tests/browser/pngstat.c" -lz 2>"$tmp/ccerr"; then
  echo "FAIL: cannot build tests/browser/pngstat.c: $(cat "$tmp/ccerr")"
  echo "0 passed, 1 failed"
  exit 1
fi

# render NAME HTML: the DOM of the page without its script (as with scripts off:
# headless --dump-dom needs scripts on) into NAME.dom, the screenshot into NAME.png
render() {
  local name=$1 html=$2
  sed '/^<script>$/,/<\/script>/d' "$html" >"$tmp/$name.noscript.html"
  if grep -q '<script' "$tmp/$name.noscript.html"; then bad "$name: the script is not where render expects it"; fi
  chrome --dump-dom "file://$tmp/$name.noscript.html" >"$tmp/$name.dom"
  chrome --window-size=1000,1500 --screenshot="$tmp/$name.png" "file://$html" >/dev/null
  if [ -s "$tmp/$name.dom" ]; then ok; else bad "$name: Chromium produced no DOM: $(tail -5 "$tmp/chrome.log")"; fi
  if [ -s "$tmp/$name.png" ]; then ok; else bad "$name: Chromium produced no screenshot: $(tail -5 "$tmp/chrome.log")"; fi
}

# probe NAME HTML EXPECT WANT...: the page with tests/browser/probe.js after its own
# script (window.PROBE_EXPECT = EXPECT), at 1000 px; every check it ran must be OK and
# each WANT among them
probe() {
  local name=$1 html=$2 expect=$3
  shift 3
  {
    sed 's|</body></html>||' "$html"
    printf '<script>window.PROBE_EXPECT=%s;\n' "$expect"
    cat "$src/tests/browser/probe.js"
    printf '</script></body></html>\n'
  } >"$tmp/$name.probe.html"
  chrome --window-size=1000,1500 --dump-dom "file://$tmp/$name.probe.html" >"$tmp/$name.probe.dom"
  sed -n '/<pre id="probe">/,/<\/pre>/p' "$tmp/$name.probe.dom" | sed 's/<[^>]*>//g' >"$tmp/$name.probe"
  if [ -s "$tmp/$name.probe" ]; then ok; else bad "$name: the probe wrote nothing: $(tail -5 "$tmp/chrome.log")"; fi
  while read -r verdict rest; do
    case $verdict in
      OK) ok ;;
      FAIL) bad "$name (scripts on, 1000 px): $rest" ;;
    esac
  done <"$tmp/$name.probe"
  local w
  for w in "$@"; do
    if grep -qx "OK $w" "$tmp/$name.probe"; then ok; else bad "$name: the probe did not check $w"; fi
  done
}

has() { # NAME "text" "what"
  if grep -qF -- "$2" "$tmp/$1.dom"; then ok; else bad "$1: the DOM lacks $3 ($2)"; fi
}

count_at_least() { # NAME "text" N "what"
  local c
  c=$(grep -oF -- "$2" "$tmp/$1.dom" | wc -l)
  if [ "$c" -ge "$3" ]; then ok; else bad "$1: $c of '$2' in the DOM, want at least $3 ($4)"; fi
}

not_blank() { # NAME
  read -r w h nonwhite distinct < <("$tmp/pngstat" "$tmp/$1.png")
  if [ "${w:-0}" -eq 1000 ] && [ "${h:-0}" -eq 1500 ]; then ok; else bad "$1: screenshot is ${w}x${h}"; fi
  # a blank page is one colour; the report has curves, bars and text on white
  if [ "${nonwhite:-0}" -gt $((w * h / 50)) ] && [ "${distinct:-0}" -ge 16 ]; then
    ok
  else
    bad "$1: screenshot looks blank ($nonwhite non-white pixels, $distinct colours)"
  fi
}

# 1. replay: an inference server that runs out of memory from fragmentation
ser="$src/traces/examples/serving-16gb.jsonl"
"$bin" replay "$ser" --strategy=growth --report="$tmp/replay.html" --format=json >"$tmp/replay.json"
peak=$(grep -o '"peak_reserved_bytes": [0-9]*' "$tmp/replay.json" | head -1 | grep -o '[0-9]*$')
render replay "$tmp/replay.html"
count_at_least replay "<svg" 3 "timeline, fragmentation, memory map"
has replay 'class="timeline"' "the memory timeline"
has replay 'class="fragmentation"' "the fragmentation chart"
has replay 'class="memory-map"' "the memory map"
count_at_least replay 'class="series ' 4 "requested/allocated/reserved/fragmentation curves"
has replay '>memory</text>' "the y axis label"
has replay '>event</text>' "the x axis label"
has replay '>fragmentation</text>' "the fragmentation axis label"
has replay 'GiB</text>' "size tick labels"
has replay "($peak B)" "the peak reserved value"
has replay 'OOM (fragmentation)' "the OOM marker"
has replay 'class="capacity"' "the device capacity line"
count_at_least replay 'class="mark-tick"' 1 "marks"
count_at_least replay 'class="blk"' 3 "blocks of the memory map"
has replay 'weight:' "tags of live allocations"
# the run OOMs: the map and the live table are taken at the OOM, the failing request drawn
# beside the largest free piece, and the peak view follows as a second section
has replay 'Memory map at the OOM (event 19446)' "the map at the OOM"
has replay 'class="memory-map memory-map-oom"' "the OOM's memory map"
has replay 'class="oom-request"' "the failing request drawn"
has replay 'class="largest-free"' "the largest free piece drawn"
has replay 'At event 19446 (t = 215779895011 ns)' "the live table at the OOM"
has replay 'At event 1106 ' "the live table at the peak"
if awk '/Memory map at the OOM/{o=NR} /Memory map at the peak/{p=NR} END{exit !(o && p && o < p)}' "$tmp/replay.dom"; then
  ok
else
  bad "replay: the OOM view does not come before the peak view"
fi
has replay 'effective allocator limit <span class="limit-value">14.76 GiB</span>' "the effective limit in the header"
"$bin" replay "$ser" --memory-fraction=0.8 --report="$tmp/fraction.html" >/dev/null
render fraction "$tmp/fraction.html"
# 0.8 of the V100-16GB's 15.78 GiB: the limit PyTorch enforces, not the capacity
has fraction 'effective allocator limit <span class="limit-value">12.62 GiB</span>' "the fraction's limit"
has fraction '"memory_fraction": "0.8' "the settings"
has fraction 'what if --alloc-conf=expandable_segments:True: the trace completes' "the what-if answer"
# two processes: the title names both traces
"$bin" replay "$src/traces/examples/two-jobs-a.jsonl" "$src/traces/examples/two-jobs-b.jsonl" --strategy=greedy \
  --report="$tmp/two.html" >/dev/null
render two "$tmp/two.html"
has two '<h1>gpusim report: job A: ResNet-50 training + job B: BERT-base training</h1>' "both traces in the title"
# --x=time: the trace's time on the x axis (the serving trace spans 216 s: ticks in min)
"$bin" replay "$ser" --strategy=growth --report="$tmp/time.html" --x=time >/dev/null
render time "$tmp/time.html"
count_at_least time '>time</text>' 2 "the time axis title on both charts"
count_at_least time ' min</text>' 2 "time tick labels"
count_at_least two 'class="series process-reserved"' 2 "one reserved curve per process"
has two 'p1 = jobA-resnet50; p2 = jobB-bert' "the processes named under the chart"
has replay 'fill="#ffffff" stroke="#777"' "the unmapped swatch outlined"
# one file: one inline script, nothing fetched
if [ "$(grep -c '<script' "$tmp/replay.html")" -eq 1 ] && ! grep -qE '<script[^>]* src=|<link|<img|@import|url\(http' "$tmp/replay.html"; then
  ok
else
  bad "replay: the report is not one self-contained file with one inline script"
fi
# scripts off: the hover texts are there as SVG titles
has replay '<title>used block ' "a block's title"
# growth locates its allocations (ops->locate): the map names every used block by its
# allocation (the 98.16 MiB embedding is id 1), none is left "not known"
has replay 'allocation id 1, tag weight:wte.weight; requested 98.16 MiB (102926336 B), slack 29.84 MiB' \
  "a block named by its allocation"
unnamed=$(grep -o '<title>used block [^<]*' "$tmp/replay.dom" | grep -vc 'allocation id')
if [ "$unnamed" -eq 0 ] && ! grep -qF '(which one is not known)' "$tmp/replay.dom"; then
  ok
else
  bad "replay: $unnamed used blocks of the map without their allocation"
fi
count_at_least replay 'class="col"' 100 "the timeline's hover columns"
has replay 'what if --strategy=greedy: ' "the BFC what-if: greedy"
has replay 'what if --strategy=limit --limit=16160MiB: ' "the BFC what-if: limit (all of the 15.78 GiB device, in MiB)"
has fraction 'allocation id ' "torch's blocks named by their allocation"
probe fraction "$tmp/fraction.html" '{named:true}' labels-inside boxes-inside colours-one-meaning hover-block \
  tooltip-inside hover-column brush-zooms dblclick-resets marks-in-plot
probe two "$tmp/two.html" '{lanes:2}' labels-inside boxes-inside lanes-count lanes-one-y-each lanes-distinct \
  marks-in-plot hover-column
has two 'class="lane-label"' "the lanes named p1, p2"
not_blank replay
if [ -n "${GPUSIM_SCREENSHOT_OUT:-}" ]; then cp "$tmp/replay.png" "$GPUSIM_SCREENSHOT_OUT"; fi

# 2. compare: every strategy side by side
ex="$src/traces/examples/mlp_train.json"
"$bin" compare "$ex" --report="$tmp/compare.html" >/dev/null
render compare "$tmp/compare.html"
has compare 'class="overlay"' "the side-by-side chart"
nstrat=$(awk '/^  strategy /{on=1; next} on && /^  \(/{on=0} on {n++} END {print n}' < <("$bin" compare "$ex"))
count_at_least compare 'class="strategy-section"' "$nstrat" "one section per strategy"
count_at_least compare 'class="timeline"' "$nstrat" "one timeline per strategy"
has compare '(2147483648 B)' "growth's peak reserved value"
has compare 'layer0.weight' "tags"
not_blank compare
probe compare "$tmp/compare.html" '{named:true}' labels-inside colours-one-meaning strategy-colours-apart hover-block \
  labels-apart overlay-nested

# 3. compare where most strategies run out of memory (bert-large-train on 12 GiB): every
# curve visible where they coincide, every strategy's OOM marked on the side-by-side
# chart in its colour, their labels apart, and torch's section quoting PyTorch's own
# message (the result's allocator_message)
bert="$src/traces/examples/bert-large-train.jsonl"
"$bin" compare "$bert" --capacity=12GiB --format=json >"$tmp/ooms.json"
ooms=$(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
print(json.dumps([r["strategy"] for r in rows if r["result"]["ooms"] > 0]))' "$tmp/ooms.json")
torch_msg=$(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
print([r for r in rows if r["strategy"] == "torch"][0]["result"]["first_oom"]["allocator_message"].split(". ")[0])
' "$tmp/ooms.json")
"$bin" compare "$bert" --capacity=12GiB --report="$tmp/ooms.html" >/dev/null
render ooms "$tmp/ooms.html"
has ooms "the allocator's own message: <code>$torch_msg" "PyTorch's OOM text in torch's section"
probe ooms "$tmp/ooms.html" "{ooms:$ooms}" labels-inside labels-apart overlay-nested overlay-ooms

cli_finish
