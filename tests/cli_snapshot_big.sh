#!/usr/bin/env bash
# CLI tests of reading large snapshot pickles (traces/import_pickle.h): a pickle in a
# regular file is mapped and the pages read are handed back as the reader goes on
# (64 MiB at a time); the same pickle gzipped is read whole into memory and never
# handed back. Both must give byte-identical results, also when the lean reading gives
# up at the very end and reads the file again exactly, after pages were handed back.
# Usage: cli_snapshot_big.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"

# same_read NAME FILE OPTIONS...: FILE and FILE.gz replay to the same JSON and messages
same_read() {
  local name=$1 f=$2
  shift 2
  gzip -1 -c "$f" >"$f.gz"
  expect 0 "" replay "$f" "$@" --format=json
  cp "$tmp/out" "$tmp/mapped.json"
  cp "$tmp/err" "$tmp/mapped.err"
  expect 0 "" replay "$f.gz" "$@" --format=json
  # the gzipped file's name is in the result and the messages: take the .gz off
  sed 's/\.pickle\.gz/.pickle/g' "$tmp/out" >"$tmp/read.json"
  sed 's/\.pickle\.gz/.pickle/g' "$tmp/err" >"$tmp/read.err"
  if cmp -s "$tmp/mapped.json" "$tmp/read.json" && cmp -s "$tmp/mapped.err" "$tmp/read.err"; then
    ok
  else
    bad "$name: the mapped and the gzipped file read differently: $(diff "$tmp/mapped.json" "$tmp/read.json" | head -5)"
  fi
}

# A generated recording of 70 MB (a call stack per entry; tests/bench/make_big_snapshot.py)
python3 "$src/tests/bench/make_big_snapshot.py" "$tmp/rec.pickle" 70 2>/dev/null || bad "make_big_snapshot.py"
same_read "recording" "$tmp/rec.pickle" --strategy=ideal
# 1.3 M entries and, at the end, the call stack list of "frames" kept again under "y"
# (one object, a memo reference): the lean reading gives up there, 70 MB into the
# file, and the exact one reads it all again, the pages handed back included
python3 - "$tmp/again.pickle" <<'PY'
import pickle, sys
stack = [{"name": "f%d" % i, "filename": "??", "line": i} for i in range(3)]
entries = [{"action": "alloc" if i % 2 == 0 else "free_completed", "addr": 0x7F0000000000 + (i // 2 % 64) * (1 << 27),
            "size": 512 * (1 + i // 2 % 100), "stream": 0, "time_us": 1700000000000000 + i, "frames": stack,
            "note": "n%d" % i} for i in range(1300000)]
with open(sys.argv[1], "wb") as f:
    pickle.dump({"device_traces": [entries], "segments": [], "frames": stack, "y": stack}, f, protocol=4)
PY
size=$(stat -c %s "$tmp/again.pickle")
if [ "$size" -gt $((64 << 20)) ]; then ok; else bad "again.pickle is $size bytes, not past the first 64 MiB handed back"; fi
same_read "read again" "$tmp/again.pickle" --strategy=ideal

cli_finish
