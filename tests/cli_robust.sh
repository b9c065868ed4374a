#!/usr/bin/env bash
# Robustness of the CLI: gtrace round trips and byte-identical results,
# determinism, no partial output on SIGINT/SIGTERM, a full disk or an unwritable
# path fails with exit 2 and a clear message.
# Usage: cli_robust.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

# A seeded random JSONL trace: N events, ids reused, deferred frees, tags, marks, two procs.
gen() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed); print "{\"format\":\"gpusim-trace\",\"version\":1,\"name\":\"rand\",\"time_unit\":\"us\"}";
    t = 0; nl[0] = 0; nl[1] = 0; id = 1;
    for (i = 0; i < n; i++) {
      t += int(rand() * 5); p = (rand() < 0.3) ? 1 : 0; pr = p ? ",\"proc\":\"b\"" : "";
      r = rand();
      if (r < 0.02) { printf "{\"op\":\"mark\",\"name\":\"step %d\",\"t\":%d%s}\n", i, t, pr; continue }
      if (r < 0.03) { printf "{\"op\":\"empty_cache\",\"t\":%d%s}\n", t, pr; continue }
      if (nl[p] > 0 && (r < 0.5 || nl[p] > 300)) {
        k = int(rand() * nl[p]); x = live[p, k]; live[p, k] = live[p, nl[p] - 1]; nl[p]--;
        if (rand() < 0.2) printf "{\"op\":\"free\",\"id\":%d,\"t\":%d,\"ready_t\":%d%s}\n", x, t, t + int(rand() * 20), pr;
        else printf "{\"op\":\"free\",\"id\":%d,\"t\":%d%s}\n", x, t, pr;
      } else {
        s = int(exp(log(64) + rand() * (log(256 * 1048576) - log(64))));
        tag = (rand() < 0.5) ? ",\"tag\":\"layer" int(rand() * 10) "\"" : "";
        printf "{\"op\":\"alloc\",\"id\":%d,\"size\":%d,\"t\":%d,\"stream\":%d%s%s}\n", id, s, t, int(rand() * 2), tag, pr;
        live[p, nl[p]] = id; nl[p]++; id++;
      }
    }
  }'
}

# --- gtrace: round trip and byte-identical results, for every strategy ---------
mkdir -p "$tmp/a" "$tmp/b" "$tmp/c"
gen 20000 7 >"$tmp/rand.jsonl"
for f in "$tmp/rand.jsonl" "$src"/traces/examples/*.json "$src"/tests/golden/*.json*; do
  name=$(basename "$f")
  "$bin" convert "$f" -o "$tmp/x.gtrace" || { bad "convert $name to gtrace"; continue; }
  "$bin" convert "$tmp/x.gtrace" -o "$tmp/x.jsonl" && "$bin" convert "$f" -o "$tmp/y.jsonl" || { bad "convert $name back"; continue; }
  cmp -s "$tmp/x.jsonl" "$tmp/y.jsonl" && ok || bad "$name: gtrace -> jsonl differs from the direct conversion"
  # the gtrace keeps the lines of the text it came from: compare with that text
  "$bin" convert "$tmp/y.jsonl" -o "$tmp/x.gtrace" && "$bin" convert "$tmp/y.jsonl" -o "$tmp/z.json" ||
    { bad "convert $name from JSONL"; continue; }
  # the same trace in three containers under one name: results must be byte-identical
  cp "$tmp/y.jsonl" "$tmp/a/trace"; cp "$tmp/x.gtrace" "$tmp/b/trace"; cp "$tmp/z.json" "$tmp/c/trace"
  for s in $("$bin" strategies | awk 'NR > 0 && $1 ~ /^[a-z]+$/ {print $1}'); do
    lim=""
    [ "$s" = "limit" ] && lim="--limit=2GiB" # an option of the limit strategy only
    for d in a b c; do
      # shellcheck disable=SC2086
      (cd "$tmp/$d" && "$bin" replay trace --strategy="$s" --capacity=4GiB $lim --on-oom=skip --format=json \
        >"$tmp/$d.out" 2>&1; echo "exit $?" >>"$tmp/$d.out")
    done
    if cmp -s "$tmp/a.out" "$tmp/b.out" && cmp -s "$tmp/a.out" "$tmp/c.out"; then ok; else
      bad "$name --strategy=$s: results differ between JSONL, gtrace and JSON: $(diff "$tmp/a.out" "$tmp/b.out" | head -5)"
    fi
  done
done

# --- determinism: the same input twice gives the same bytes --------------------
"$bin" replay "$tmp/rand.jsonl" --strategy=growth --format=json --output="$tmp/r1.json" --timeline="$tmp/t1.csv"
"$bin" replay "$tmp/rand.jsonl" --strategy=growth --format=json --output="$tmp/r2.json" --timeline="$tmp/t2.csv"
cmp -s "$tmp/r1.json" "$tmp/r2.json" && cmp -s "$tmp/t1.csv" "$tmp/t2.csv" && ok || bad "two identical replays differ"

# --- a damaged gtrace is an invalid trace (exit 3), naming the file -------------
"$bin" convert "$tmp/rand.jsonl" -o "$tmp/d.gtrace"
size=$(stat -c %s "$tmp/d.gtrace")
head -c $((size / 2)) "$tmp/d.gtrace" >"$tmp/half.gtrace"
"$bin" replay "$tmp/half.gtrace" --output="$tmp/none.json" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 3 ] && grep -q "half.gtrace.*corrupt gtrace: truncated" "$tmp/err" && [ ! -e "$tmp/none.json" ] && ok ||
  bad "truncated gtrace: exit $rc, $(cat "$tmp/err")"
printf '\x89GTRACE\n\x02\x00\x00\x00' >"$tmp/v2.gtrace"
"$bin" replay "$tmp/v2.gtrace" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 3 ] && grep -q "version 2 is not supported" "$tmp/err" && ok || bad "gtrace version 2: exit $rc, $(cat "$tmp/err")"

# --- full disk, unwritable paths: exit 2, a clear message ----------------------
if [ -w /dev/full ]; then
  for cmd in "replay $tmp/rand.jsonl --format=json --output=/dev/full" "convert $tmp/rand.jsonl -o /dev/full" \
    "convert $tmp/rand.jsonl -o /dev/full --to=gtrace" "replay $tmp/rand.jsonl --timeline=/dev/full"; do
    # shellcheck disable=SC2086
    "$bin" $cmd >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "/dev/full: write failed: No space left on device" "$tmp/err" && ok ||
      bad "gpusim $cmd: exit $rc, $(cat "$tmp/err")"
  done
fi
"$bin" replay "$tmp/rand.jsonl" --output="$tmp/no/such/dir/r.json" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "r.json: cannot write: No such file or directory" "$tmp/err" && ok || bad "missing dir: exit $rc, $(cat "$tmp/err")"
"$bin" convert "$tmp/rand.jsonl" -o "$tmp" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "cannot write: is a directory" "$tmp/err" && ok || bad "output is a directory: exit $rc, $(cat "$tmp/err")"
"$bin" replay "$tmp/rand.jsonl" >/dev/full 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "write failed" "$tmp/err" && ok || bad "stdout on a full disk: exit $rc, $(cat "$tmp/err")"

# --- SIGINT / SIGTERM while writing: no output file, no temporary file ----------
gen 1500000 3 >"$tmp/big.jsonl"
for sig in INT TERM; do
  for out in big.json big.gtrace; do
    rm -f "$tmp/$out" "$tmp/$out".tmp.*
    # a background job of a script starts with SIGINT ignored: restore the default
    env --default-signal=INT "$bin" convert "$tmp/big.jsonl" -o "$tmp/$out" &
    pid=$!
    # wait until the temporary file exists, then interrupt
    for _ in $(seq 1 200); do
      ls "$tmp/$out".tmp.* >/dev/null 2>&1 && break
      sleep 0.01
    done
    sleep 0.1
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    if [ "$rc" -ne $((128 + $(kill -l "$sig"))) ]; then
      bad "SIG$sig during convert -o $out: exit $rc (the conversion finished before the signal?)"
    elif [ -e "$tmp/$out" ] || ls "$tmp/$out".tmp.* >/dev/null 2>&1; then
      bad "SIG$sig during convert -o $out left a file: $(cd "$tmp" && echo ./*big*)"
    else
      ok
    fi
  done
done

cli_finish
