#!/usr/bin/env bash
# `gpusim sweep --output=FILE.sqlite`: the database holds the JSONL's results row by
# row (every key of every line, compared by Python's json and sqlite3 modules), the
# JSONL beside it is byte-identical to a plain JSONL sweep, --resume continues a
# killed sweep and rebuilds the journal from the database alone, an existing
# database is kept unless --resume or --force, and docs/sweep.md's query prints what the
# page shows. A build without SQLite must refuse the option with a clear message.
# Usage: cli_sweep_sqlite.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
data=$src/tests/data/sweep
same() { cmp -s "$2" "$3" && ok || bad "$1: $2 and $3 differ"; }

"$bin" sweep "$data/spec.json" --output="$tmp/probe.sqlite" --jobs=2 >"$tmp/out" 2>"$tmp/err"
if grep -qF "built without SQLite (apt-get install libsqlite3-dev" "$tmp/err"; then
  echo "this gpusim has no SQLite: checking the refusal only"
  expect 2 "this gpusim was built without SQLite" sweep "$data/spec.json" --output="$tmp/x.sqlite"
  cli_finish
  exit $?
fi

# ---- the same results as the JSONL
expect 0 "" sweep "$data/spec.json" --output="$tmp/ref.jsonl" --jobs=2
expect 0 "results in $tmp/r.sqlite" sweep "$data/spec.json" --output="$tmp/r.sqlite" --jobs=3
[ -s "$tmp/r.sqlite" ] && ok || bad "no database written"
same "the journal beside the database" "$tmp/ref.jsonl" "$tmp/r.jsonl"

# compare DB JSONL: every line is one row, in job order, every key its column
compare_rows() {
  python3 - "$1" "$2" <<'PY'
import json, re, sqlite3, sys
db, jsonl = sys.argv[1], sys.argv[2]

def flatten(obj, prefix="", top=True):
    for k, v in obj.items():
        name = "" if top and k in ("job", "result") else (prefix + "_" if prefix else "") + k
        if isinstance(v, dict):
            yield from flatten(v, name, False)
        elif name:
            # a column name needs no quoting: PyTorch's "allocation.all.peak" under stats
            # is stats_allocation_all_peak (none of these keys is an SQL keyword)
            yield re.sub(r"[^A-Za-z0-9_]", "_", name), v

lines = [l.rstrip("\n") for l in open(jsonl) if l.strip()]
con = sqlite3.connect(db)
cols = [r[1] for r in con.execute("PRAGMA table_info(jobs)")]
rows = con.execute("SELECT * FROM jobs ORDER BY job").fetchall()
problems = []
if len(rows) != len(lines):
    problems.append("%d rows for %d lines" % (len(rows), len(lines)))
keys = set()
for i, (text, row) in enumerate(zip(lines, rows), 1):
    r = dict(zip(cols, row))
    if r["job"] != i or r["line"] != text:
        problems.append("row %d: job %r, line differs: %s" % (i, r["job"], r["line"] != text))
    for k, v in flatten(json.loads(text)):
        keys.add(k)
        if isinstance(v, bool):
            v = int(v)
        elif isinstance(v, list):
            v = json.dumps(v, separators=(",", ":"))
        if k not in r and v is None:
            # a null that is an object elsewhere (first_oom): its fields' columns are null
            got = [r[c] for c in cols if c.startswith(k + "_") and r[c] is not None] or None
        else:
            got = r.get(k, "<no column>")
        if got != v:
            problems.append("row %d %s: %r, the JSONL has %r" % (i, k, got, v))
# every key is a column; the others are the job number, the line, and nothing else
extra = set(cols) - keys - {"job", "line"}
missing = {k for k in keys if k not in cols and not any(c.startswith(k + "_") for c in cols)}
if extra or missing:
    problems.append("columns: extra %s, missing %s" % (sorted(extra), sorted(missing)))
if not lines:
    problems.append("no lines")
print("\n".join(problems[:10]))
sys.exit(1 if problems else 0)
PY
}
if command -v python3 >/dev/null 2>&1; then
  if out=$(compare_rows "$tmp/r.sqlite" "$tmp/ref.jsonl" 2>&1); then ok; else bad "rows vs JSONL: $out"; fi
  python3 -c '
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
n, ooms, cause = con.execute("SELECT count(*), sum(ooms > 0), count(first_oom_cause) FROM jobs").fetchone()
# 5 traces x 27 device/strategy/option sets (tests/data/sweep/spec.json), some running out of memory
assert n == 135 and ooms > 0 and cause == ooms, (n, ooms, cause)' "$tmp/r.sqlite" && ok || bad "row count or OOM causes"
fi
# ---- node jobs (a "node" entry beside the devices): the same equality, and the node's columns
mkdir -p "$tmp/nodes"
cp -r "$data/jobs" "$tmp/nodes/jobs"
printf '{"traces": ["jobs"], "devices": ["1GiB"], "node": ["2x1GiB", "A100-40GB,T4"], "strategies": ["ideal", "greedy"]}' >"$tmp/nodes/n.json"
expect 0 "" sweep "$tmp/nodes/n.json" --output="$tmp/nodes/ref.jsonl" --jobs=2
expect 0 "" sweep "$tmp/nodes/n.json" --output="$tmp/nodes/n.sqlite" --jobs=2
same "node sweep: the journal beside the database" "$tmp/nodes/ref.jsonl" "$tmp/nodes/n.jsonl"
if command -v python3 >/dev/null 2>&1; then
  if out=$(compare_rows "$tmp/nodes/n.sqlite" "$tmp/nodes/ref.jsonl" 2>&1); then ok; else bad "node rows vs JSONL: $out"; fi
  # 5 traces x (1 device + 2 nodes) x 2 strategies; a node job has "node" where a device job has "device",
  # its GPUs' figures in "devices" (JSON text); greedy on 2x1GiB holds 799 MiB = 837812224 B on each GPU
  python3 -c '
import json, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
n, nodes, devs = con.execute("SELECT count(*), count(node), count(device) FROM jobs").fetchone()
assert (n, nodes, devs) == (30, 20, 10), (n, nodes, devs)
row = con.execute("SELECT node_gpus, gpus_used, headroom_bytes, devices FROM jobs WHERE node = ? AND strategy = ? AND trace = ?",
                  ("2x1GiB", "greedy", "jobs/job_001.jsonl")).fetchone()
assert row[:3] == (2, 2, 1073741824 - 837812224), row
assert [d["peak_used_bytes"] for d in json.loads(row[3])] == [837812224, 837812224], row[3]' "$tmp/nodes/n.sqlite" && ok ||
    bad "node columns"
fi
expect 0 "0 jobs run" sweep "$tmp/nodes/n.json" --output="$tmp/nodes/n.sqlite" --resume

# ---- the torch, async and planned models' statistics, whose keys hold dots
# (allocation.all.peak), are columns a query names without quotes
mkdir -p "$tmp/stats"
cp -r "$data/jobs" "$tmp/stats/jobs"
printf '{"traces": ["jobs"], "devices": ["1GiB"], "strategies": ["torch", "async", "planned"]}' >"$tmp/stats/s.json"
expect 0 "" sweep "$tmp/stats/s.json" --output="$tmp/stats/ref.jsonl"
expect 0 "" sweep "$tmp/stats/s.json" --output="$tmp/stats/s.sqlite"
if command -v python3 >/dev/null 2>&1; then
  if out=$(compare_rows "$tmp/stats/s.sqlite" "$tmp/stats/ref.jsonl" 2>&1); then ok; else bad "stats rows vs JSONL: $out"; fi
  python3 -c '
import json, re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in con.execute("PRAGMA table_info(jobs)")]
odd = [c for c in cols if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c)]
assert not odd, odd
# each torch row: the column is the line'"'"'s stats["allocation.all.peak"]
rows = con.execute("SELECT stats_allocation_all_peak, stats_reserved_bytes_all_peak, line FROM jobs WHERE strategy = ?",
                   ("torch",)).fetchall()
assert len(rows) == 5, len(rows)
for peak, reserved, line in rows:
    st = json.loads(line)["result"]["stats"]
    assert (peak, reserved) == (st["allocation.all.peak"], st["reserved_bytes.all.peak"]), (peak, reserved)' \
    "$tmp/stats/s.sqlite" && ok || bad "stats columns without quotes"
fi

# the JSONL line kept in the database is the JSONL
dump() { python3 -c 'import sqlite3,sys; [print(r[0]) for r in sqlite3.connect(sys.argv[1]).execute("SELECT line FROM jobs ORDER BY job")]' "$1"; }
if command -v python3 >/dev/null 2>&1; then
  dump "$tmp/r.sqlite" >"$tmp/r.dump" && same "the database's lines" "$tmp/ref.jsonl" "$tmp/r.dump"
fi

# ---- an existing database is kept unless --resume or --force
expect 2 "r.sqlite already holds results; use --resume" sweep "$data/spec.json" --output="$tmp/r.sqlite"
expect 0 "0 jobs run" sweep "$data/spec.json" --output="$tmp/r.sqlite" --resume
expect 0 "135 jobs run" sweep "$data/spec.json" --output="$tmp/r.sqlite" --force
same "after --force" "$tmp/ref.jsonl" "$tmp/r.jsonl"

# ---- resume: a killed sweep (test hook: 40 lines, a torn one, then SIGKILL)
(GPUSIM_SWEEP_TEST_CRASH_AFTER=40 "$bin" sweep "$data/spec.json" --output="$tmp/c.sqlite" --jobs=2 >/dev/null 2>&1) 2>/dev/null
[ ! -e "$tmp/c.sqlite" ] && ok || bad "a killed sweep left a database"
expect 0 "95 jobs run" sweep "$data/spec.json" --output="$tmp/c.sqlite" --resume --jobs=3
same "resumed journal" "$tmp/ref.jsonl" "$tmp/c.jsonl"
if command -v python3 >/dev/null 2>&1; then
  dump "$tmp/c.sqlite" >"$tmp/c.dump" && same "resumed database" "$tmp/ref.jsonl" "$tmp/c.dump"
  # only the database left: --resume rebuilds the journal from it and runs nothing
  rm -f "$tmp/c.jsonl"
  expect 0 "0 jobs run" sweep "$data/spec.json" --output="$tmp/c.sqlite" --resume
  same "journal rebuilt from the database" "$tmp/ref.jsonl" "$tmp/c.jsonl"
fi

# ---- docs/sweep.md's query and its pasted output
if command -v sqlite3 >/dev/null 2>&1; then
  readme=$src/docs/sweep.md
  query=$(awk '/^sqlite3 -header -column results.sqlite "$/ { on = 1; next } on && /^"$/ { exit } on { print }' "$readme")
  pasted=$(awk -v q=0 '/^sqlite3 -header -column results.sqlite "$/ { q = 1 } q == 1 && /^```$/ { q = 2; next }
    q == 2 && /^```$/ { q = 3; next } q == 3 && /^```$/ { exit } q == 3 && $0 != "..." { print }' "$readme")
  got=$(sqlite3 -header -column "$tmp/r.sqlite" "$query" | sed 's/ *$//' | head -n "$(printf '%s\n' "$pasted" | wc -l)")
  if [ -n "$query" ] && [ -n "$pasted" ] && [ "$got" = "$pasted" ]; then
    ok
  else
    bad "docs/sweep.md query: got $(printf '%s' "$got" | head -3), the page shows $(printf '%s' "$pasted" | head -3)"
  fi
else
  echo "no sqlite3 program: docs/sweep.md's query is not rerun"
fi
cli_finish
